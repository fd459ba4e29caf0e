import type { ConfigEntry, KafkaPool } from "../../kafka/index.ts";
import { type BrokerConfigView, type BrokerView, CONFIG_SOURCES } from "./schemas.ts";

/**
 * The brokers of a cluster (Metadata), their log dirs (DescribeLogDirs, one request per broker)
 * and the active controller (the KRaft quorum's leader); a broker's configs with where each
 * value comes from. Changes go through the broker config routes (`/api/configs/brokers`).
 */
export class BrokerService {
  constructor(private readonly pool: KafkaPool) {}

  async list(cluster: string): Promise<BrokerView[]> {
    const kafka = this.pool.get(cluster);
    const [state, quorum, dirs] = await Promise.all([
      kafka.brokers(),
      kafka.quorum().catch(() => null),
      kafka.logDirs.brokerDirs().then(
        (d) => ({ byBroker: new Map(d.map((b) => [b.brokerId, b.dirs])), error: null }),
        (e: unknown) => ({ byBroker: null, error: (e as Error).message }),
      ),
    ]);
    const controller = quorum?.leaderId ?? state.controllerId;
    return state.brokers.map((b) => ({
      id: b.id,
      host: b.host,
      port: b.port,
      rack: b.rack,
      isController: b.id === controller,
      logDirs: dirs.byBroker?.get(b.id) ?? null,
      logDirsError: dirs.error ?? (dirs.byBroker?.has(b.id) ? null : "the broker did not answer"),
    }));
  }

  /** Every config of broker `brokerId`, by name; secrets without their value. */
  async configs(cluster: string, brokerId: number): Promise<BrokerConfigView[]> {
    const entries = await this.pool.get(cluster).configs.describeBroker(brokerId);
    return entries.map(viewOf).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}

function viewOf(e: ConfigEntry): BrokerConfigView {
  const from = (source: ConfigEntry["source"]) => e.synonyms.find((s) => s.source === source)?.value ?? null;
  const source = (CONFIG_SOURCES as readonly string[]).includes(e.source) ? (e.source as BrokerConfigView["source"]) : "UNKNOWN";
  return {
    name: e.name,
    value: e.sensitive ? null : e.value,
    source,
    type: e.type,
    sensitive: e.sensitive,
    dynamic: !e.readOnly,
    brokerValue: e.sensitive ? null : from("DYNAMIC_BROKER_CONFIG"),
    clusterDefault: e.sensitive ? null : from("DYNAMIC_DEFAULT_BROKER_CONFIG"),
    staticValue: e.sensitive ? null : from("STATIC_BROKER_CONFIG"),
    defaultValue: e.sensitive ? null : from("DEFAULT_CONFIG"),
    documentation: e.documentation,
  };
}
