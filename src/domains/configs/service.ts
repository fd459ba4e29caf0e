import { randomBytes } from "node:crypto";
import { AppError } from "../../errors.ts";
import type { JsonText } from "../../http/route.ts";
import type { AlterConfigOp, ConfigEntry, KafkaPool } from "../../kafka/index.ts";
import { configsJson } from "./values.ts";

/** What a broker config change may name at once. */
export const MAX_CONFIG_KEYS = 100;

export type BrokerConfigBody = Record<string, string | number | boolean | null>;

/** A checked change of broker configs. */
export interface BrokerConfigPlan {
  brokerId: number | null;
  ops: AlterConfigOp[];
  /** What changes, for the audit entry: new values (secrets masked) or "(removed)". */
  configs: Record<string, string>;
}

export interface KafkaConfigOptions {
  /**
   * The name of the topic whose creation is only validated to learn the topic config names
   * (the broker answers the configs the topic would get). Tests name an existing topic to
   * exercise the fallback.
   */
  probeTopicName?: () => string;
}

export const targetName = (brokerId: number | null) => (brokerId === null ? "the cluster-wide broker defaults" : `broker ${brokerId}`);

/** Zero values mean "not given": the Go client sends every key it knows, unset ones as 0 or "". */
const isUnset = (v: string | number | boolean | null) => v === null || v === 0 || v === "";

/**
 * Topic config names and dynamic broker configs (`/api/configs/...`). A change is checked
 * against the configs the broker knows before it is sent: the brokers themselves accept and
 * store names they do not know, and refuse only values and non-dynamic keys.
 */
export class KafkaConfigService {
  readonly #probeName: () => string;

  constructor(
    private readonly pool: KafkaPool,
    opts: KafkaConfigOptions = {},
  ) {
    this.#probeName = opts.probeTopicName ?? (() => `loupe-config-probe-${randomBytes(8).toString("hex")}`);
  }

  /**
   * The names of the configs a topic has on this cluster's brokers, sorted. Asked of the
   * brokers, so they match their version: a topic creation that is only validated answers
   * the configs the topic would get; where that is refused (a creation policy, no CREATE
   * right), an existing topic's configs are described instead.
   */
  async topicConfigKeys(cluster: string): Promise<string[]> {
    const kafka = this.pool.get(cluster);
    let names: string[];
    try {
      names = Object.keys((await kafka.topics.create({ name: this.#probeName(), validateOnly: true })).configs);
      if (names.length === 0) throw new AppError("UNSUPPORTED", "The brokers answered no configs for a new topic");
    } catch (e) {
      if (e instanceof AppError && (e.code === "UNAVAILABLE" || e.code === "GATEWAY_TIMEOUT")) throw e;
      const any = (await kafka.topics.list({ includeInternal: true }))[0];
      if (!any) throw e;
      names = (await kafka.configs.describeTopic(any.name)).map((c) => c.name);
    }
    return [...new Set(names)].sort();
  }

  /**
   * A broker's configs as a JSON object of name to value typed by the config's Kafka type
   * (values.ts); `brokerId` null: the cluster-wide dynamic defaults that are set. Secrets
   * and valueless configs are left out.
   */
  async brokerConfigsJson(cluster: string, brokerId: number | null): Promise<JsonText<Record<string, string | number | boolean>>> {
    return configsJson(await this.pool.get(cluster).configs.describeBroker(brokerId));
  }

  /**
   * Checks a change of dynamic configs of a broker or (null) the cluster-wide defaults, and
   * answers what `apply` sends. Checked and described first, so that the audit entry names the
   * change, secrets masked, before it is made.
   */
  async planUpdate(cluster: string, brokerId: number | null, body: BrokerConfigBody): Promise<BrokerConfigPlan> {
    const given = Object.entries(body).filter(([, v]) => !isUnset(v));
    if (given.length === 0)
      throw new AppError(
        "BAD_REQUEST",
        `Nothing to change on ${targetName(brokerId)}: every value is empty (0 and "" mean "not given"; send "0" to set zero)`,
      );
    const known = await this.#checkKeys(
      cluster,
      brokerId,
      given.map(([k]) => k),
    );
    const ops = given.map(([key, v]) => ({ key, value: String(v) }));
    return { brokerId, ops, configs: Object.fromEntries(ops.map((o) => [o.key, masked(known.get(o.key)!, o.value)])) };
  }

  /**
   * Checks a removal of dynamic settings: the broker then falls back to the cluster-wide
   * default, the cluster-wide default to the broker's static config.
   */
  async planRemoval(cluster: string, brokerId: number | null, keys: string[]): Promise<BrokerConfigPlan> {
    const unique = [...new Set(keys)];
    await this.#checkKeys(cluster, brokerId, unique);
    return { brokerId, ops: unique.map((key) => ({ key, value: null })), configs: Object.fromEntries(unique.map((k) => [k, "(removed)"])) };
  }

  /** Makes a checked change. The brokers apply it a moment after this answers. */
  async apply(cluster: string, plan: BrokerConfigPlan): Promise<void> {
    await this.pool.get(cluster).configs.alterBroker(plan.brokerId, plan.ops);
  }

  /** 400 naming every key the broker does not know or cannot change while it runs. */
  async #checkKeys(cluster: string, brokerId: number | null, keys: string[]): Promise<Map<string, ConfigEntry>> {
    const known = new Map((await this.pool.get(cluster).configs.knownBrokerConfigs(brokerId)).map((c) => [c.name, c]));
    const unknown = keys.filter((k) => !known.has(k));
    const fixed = keys.filter((k) => known.get(k)?.readOnly === true);
    const problems: string[] = [];
    if (unknown.length) problems.push(`unknown broker config${unknown.length > 1 ? "s" : ""} ${list(unknown)}`);
    if (fixed.length) problems.push(`${list(fixed)} cannot change while the broker runs (not dynamic; set in its server.properties)`);
    if (problems.length)
      throw new AppError("BAD_REQUEST", `Cannot change ${targetName(brokerId)}: ${problems.join("; ")}`, { details: { unknown, fixed } });
    return known;
  }
}

/**
 * Names of configs whose values are secrets (Kafka's PASSWORD configs: `*.password`,
 * `ssl.keystore.key`, `sasl.jaas.config`, ...), for a change refused before the broker said
 * which configs are secret.
 */
const SECRET_NAME = /password|secret|credential|jaas|(^|\.)key$/i;

/**
 * A requested change as the audit entry names it when it is refused before it is checked:
 * every name, with values that may be secrets masked.
 */
export function requestedChange(body: BrokerConfigBody | string[]): Record<string, string> {
  if (Array.isArray(body)) return Object.fromEntries(body.map((k) => [k, "(removed)"]));
  return Object.fromEntries(
    Object.entries(body)
      .filter(([, v]) => !isUnset(v))
      .map(([k, v]) => [k, SECRET_NAME.test(k) ? "********" : String(v)]),
  );
}

const list = (keys: string[]) => keys.map((k) => `'${k}'`).join(", ");

function masked(entry: ConfigEntry, value: string): string {
  return entry.sensitive || entry.type === "PASSWORD" ? "********" : value;
}
