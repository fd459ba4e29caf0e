/**
 * Configs of topics and brokers: described with their sources, defaults, documentation and
 * synonyms, changed key by key (IncrementalAlterConfigs).
 *
 * A broker's own configs are answered only by that broker (any other answers INVALID_REQUEST
 * "Unexpected broker id"), and the client's own methods read the empty name of the
 * cluster-wide defaults as broker 0: broker requests therefore go out raw (client.ts callApi),
 * to the broker named, or to any broker for the cluster-wide defaults.
 */

import {
  type Broker,
  ConfigResourceTypes,
  ConfigSources,
  ConfigTypes,
  type describeConfigsV4,
  IncrementalAlterConfigOperationTypes,
} from "@platformatic/kafka";
import { AppError } from "../errors.ts";
import { callApi } from "./client.ts";
import type { KafkaConnection } from "./connection.ts";
import type { AlterConfigOp, ConfigEntry, ConfigSource, ConfigType } from "./types.ts";

type DescribeConfigsResponse = describeConfigsV4.DescribeConfigsResponse;
type DescribeConfigsResponseConfig = describeConfigsV4.DescribeConfigsResponseConfig;

const configSourceNames = new Map<number, ConfigSource>(
  Object.entries(ConfigSources)
    .filter(([k]) => k !== "TOPIC_CONFIG")
    .map(([k, v]) => [v as number, k as ConfigSource]),
);
const configTypeNames = new Map<number, ConfigType>(Object.entries(ConfigTypes).map(([k, v]) => [v as number, k as ConfigType]));

/**
 * A resource's configs as Loupe shows them, sorted by name. `own` is the source of the
 * resource's own setting (a topic's override, a broker's per-broker or the cluster-wide
 * dynamic value): any other source is a default.
 */
function toEntries(configs: DescribeConfigsResponseConfig[], own: number): ConfigEntry[] {
  return configs
    .map((c) => {
      const inherited = c.synonyms.find((s) => s.source !== own);
      const source = configSourceNames.get(c.configSource) ?? "UNKNOWN";
      return {
        name: c.name,
        value: c.value ?? null,
        defaultValue: inherited?.value ?? null,
        isDefault: c.configSource !== own,
        source,
        type: configTypeNames.get(c.configType) ?? "UNKNOWN",
        readOnly: c.readOnly,
        sensitive: c.isSensitive,
        documentation: c.documentation ?? null,
        synonyms: c.synonyms.map((s) => ({ name: s.name, value: s.value ?? null, source: configSourceNames.get(s.source) ?? "UNKNOWN" })),
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** SET (default) or DELETE per key, as IncrementalAlterConfigs wants them. */
function alterations(ops: AlterConfigOp[]) {
  return ops.map((o) => {
    const op = o.op ?? (o.value === null ? "DELETE" : "SET");
    if (op === "DELETE") return { name: o.key, configOperation: IncrementalAlterConfigOperationTypes.DELETE };
    if (o.value === null) throw new AppError("BAD_REQUEST", `Config '${o.key}': ${op} needs a value`);
    return { name: o.key, configOperation: IncrementalAlterConfigOperationTypes[op], value: o.value };
  });
}

/** A broker's name as a config resource: its id, or "" for the cluster-wide defaults. */
const brokerResource = (brokerId: number | null) => (brokerId === null ? "" : String(brokerId));
const brokerWhat = (brokerId: number | null) => (brokerId === null ? "the cluster-wide broker defaults" : `broker ${brokerId}`);

export class ConfigOps {
  readonly #conn: KafkaConnection;

  constructor(conn: KafkaConnection) {
    this.#conn = conn;
  }

  describeTopic(name: string): Promise<ConfigEntry[]> {
    return this.#conn.call(`Cannot describe the configs of topic '${name}'`, async () => {
      const [result] = await this.#conn.admin.describeConfigs({
        resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: name }],
        includeSynonyms: true,
        includeDocumentation: true,
      });
      return toEntries(result?.configs ?? [], ConfigSources.DYNAMIC_TOPIC_CONFIG);
    });
  }

  /** IncrementalAlterConfigs: only the named keys change; a null value removes the override. */
  alterTopic(name: string, ops: AlterConfigOp[], opts: { validateOnly?: boolean } = {}): Promise<void> {
    return this.#conn.call(`Cannot change the configs of topic '${name}'`, async () => {
      if (ops.length === 0) return;
      await this.#conn.admin.incrementalAlterConfigs({
        validateOnly: opts.validateOnly ?? false,
        resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: name, configs: alterations(ops) }],
      });
    });
  }

  /**
   * A group's configs (Kafka 4's GROUP resource: `share.*` of a share group, `consumer.*` of a
   * consumer group), each with its source: the group's own setting (GROUP_CONFIG) or the broker's
   * default. A group need not exist to have configs.
   */
  describeGroup(group: string): Promise<ConfigEntry[]> {
    return this.#conn.call(`Cannot describe the configs of group '${group}'`, async () => {
      const [result] = await this.#conn.admin.describeConfigs({
        resources: [{ resourceType: ConfigResourceTypes.GROUP, resourceName: group }],
        includeSynonyms: true,
        includeDocumentation: true,
      });
      return toEntries(result?.configs ?? [], ConfigSources.GROUP_CONFIG);
    });
  }

  /** IncrementalAlterConfigs of a group: only the named keys change; a null value removes the group's setting. */
  alterGroup(group: string, ops: AlterConfigOp[], opts: { validateOnly?: boolean } = {}): Promise<void> {
    return this.#conn.call(`Cannot change the configs of group '${group}'`, async () => {
      if (ops.length === 0) return;
      await this.#conn.admin.incrementalAlterConfigs({
        validateOnly: opts.validateOnly ?? false,
        resources: [{ resourceType: ConfigResourceTypes.GROUP, resourceName: group, configs: alterations(ops) }],
      });
    });
  }

  /**
   * A broker's configs, every one with its source; `brokerId` null: the cluster-wide dynamic
   * defaults, only those that are set. NOT_FOUND for an id that is not in the cluster.
   */
  describeBroker(brokerId: number | null): Promise<ConfigEntry[]> {
    return this.#conn.call(`Cannot describe the configs of ${brokerWhat(brokerId)}`, async () => {
      const broker = await this.#broker(brokerId);
      const response = await callApi<DescribeConfigsResponse>(
        this.#conn.admin,
        "DescribeConfigs",
        broker,
        [{ resourceType: ConfigResourceTypes.BROKER, resourceName: brokerResource(brokerId), configurationKeys: null }],
        true,
        true,
      );
      const own = brokerId === null ? ConfigSources.DYNAMIC_DEFAULT_BROKER_CONFIG : ConfigSources.DYNAMIC_BROKER_CONFIG;
      return toEntries(response.results[0]?.configs ?? [], own);
    });
  }

  /**
   * Dynamic broker configs of one broker, or (`brokerId` null) the cluster-wide defaults every
   * broker falls back to. Only the named keys change; a null value removes the setting. The
   * brokers apply a committed change a moment later.
   */
  alterBroker(brokerId: number | null, ops: AlterConfigOp[], opts: { validateOnly?: boolean } = {}): Promise<void> {
    return this.#conn.call(`Cannot change the configs of ${brokerWhat(brokerId)}`, async () => {
      if (ops.length === 0) return;
      const broker = await this.#broker(brokerId);
      await callApi(
        this.#conn.admin,
        "IncrementalAlterConfigs",
        broker,
        [{ resourceType: ConfigResourceTypes.BROKER, resourceName: brokerResource(brokerId), configs: alterations(ops) }],
        opts.validateOnly ?? false,
      );
    });
  }

  /**
   * Every config a broker knows, with its type and whether it can change while the broker runs
   * (`readOnly` false): of broker `brokerId`, or for the cluster-wide defaults (null) of the
   * controller, else any broker. What a change is checked against: the brokers accept and
   * store config names they do not know.
   */
  knownBrokerConfigs(brokerId: number | null): Promise<ConfigEntry[]> {
    if (brokerId !== null) return this.describeBroker(brokerId);
    return this.#conn.call("Cannot describe the configs of the brokers", async () => {
      const md = await this.#conn.metadata([]);
      const broker = md.brokers.find((b) => b.nodeId === md.controllerId) ?? md.brokers[0];
      if (!broker) throw new AppError("UNAVAILABLE", "The cluster names no broker");
      return this.describeBroker(broker.nodeId);
    });
  }

  /** The broker that answers for `brokerId`'s configs; null (any broker) for the cluster-wide ones. */
  async #broker(brokerId: number | null): Promise<Broker | null> {
    if (brokerId === null) return null;
    const md = await this.#conn.metadata([]);
    const broker = md.brokers.find((b) => b.nodeId === brokerId);
    if (!broker)
      throw new AppError("NOT_FOUND", `Broker ${brokerId} is not in the cluster (brokers: ${md.brokers.map((b) => b.nodeId).join(", ")})`);
    return broker;
  }
}
