/**
 * Which topics are internal: the machinery of Kafka, of each configured Connect cluster and
 * schema registry, and of Loupe itself. Their records are configs, offsets, statuses, schemas,
 * changelogs: writing one is changing that service behind its API (a connector config written
 * into Connect's config topic runs as if the proxy had accepted it), and reading one shows what
 * the API masks or scopes (connector secrets, other teams' subjects). So only an unrestricted
 * admin reads or writes their data, whatever path it takes (see Scope.topicRoles), and the same
 * list marks them in the topic list.
 *
 * Known from the config (Connect's storage topics, the registry's), from well-known defaults
 * that hold even when nothing is configured (a Connect cluster or registry Loupe is not told of
 * still uses its defaults most of the time), and from Loupe's own prefixes. Pure: no Kafka.
 */
import type { Config } from "../../config/schema.ts";

/** Whose machinery an internal topic is: said in messages and in the topic list. */
export type InternalOwner = "Kafka" | "Kafka Connect" | "the schema registry" | "Loupe" | "MirrorMaker";

interface Rule {
  owner: InternalOwner;
  /** Exact names. */
  names: string[];
  prefixes: string[];
  suffixes: string[];
}

/** Connect's defaults (`config.storage.topic`, ...), the registries' (Confluent, Apicurio 2 and 3). */
export const CONNECT_DEFAULT_TOPICS = ["connect-configs", "connect-offsets", "connect-status"];
export const REGISTRY_DEFAULT_TOPICS = ["_schemas", "kafkasql-journal", "kafkasql-snapshots", "registry-events"];

export interface InternalTopicsSpec {
  /** Each configured Connect cluster's storage topics (configs, offsets, statuses). */
  connect?: readonly string[];
  /** The schema registry's storage topics. */
  registry?: readonly string[];
  /** The processors' prefix: their changelog and repartition topics are `<prefix>-<id>-...`. */
  processorPrefix?: string;
}

export class InternalTopics {
  readonly #rules: Rule[];

  constructor(spec: InternalTopicsSpec = {}) {
    this.#rules = [
      // Kafka's own (__consumer_offsets, __transaction_state, __share_group_state, __remote_log_metadata, ...)
      // and Confluent's components' (_confluent-*, _confluent-command, ...).
      { owner: "Kafka", names: [], prefixes: ["__", "_confluent"], suffixes: [] },
      { owner: "Kafka Connect", names: [...CONNECT_DEFAULT_TOPICS, ...(spec.connect ?? [])], prefixes: [], suffixes: [] },
      { owner: "the schema registry", names: [...REGISTRY_DEFAULT_TOPICS, ...(spec.registry ?? [])], prefixes: [], suffixes: [] },
      {
        owner: "Loupe",
        names: [],
        prefixes: ["_loupe", ...(spec.processorPrefix ? [`${spec.processorPrefix}-`] : [])],
        suffixes: [],
      },
      // MirrorMaker 2's offset syncs and checkpoints (`mm2-offset-syncs.<alias>.internal`, `<alias>.checkpoints.internal`).
      { owner: "MirrorMaker", names: [], prefixes: [], suffixes: [".internal"] },
    ];
  }

  /** Whose machinery the topic is, or undefined for a topic of the users'. */
  ownerOf(topic: string): InternalOwner | undefined {
    for (const r of this.#rules)
      if (r.names.includes(topic) || r.prefixes.some((p) => topic.startsWith(p)) || r.suffixes.some((s) => topic.endsWith(s)))
        return r.owner;
    return undefined;
  }

  has(topic: string): boolean {
    return this.ownerOf(topic) !== undefined;
  }

  /** The rules as globs (`name`, `prefix*`, `*suffix`) with their owner: for checks of topic patterns. */
  patterns(): { owner: InternalOwner; glob: string }[] {
    return this.#rules.flatMap((r) => [
      ...r.names.map((n) => ({ owner: r.owner, glob: n })),
      ...r.prefixes.map((p) => ({ owner: r.owner, glob: `${p}*` })),
      ...r.suffixes.map((x) => ({ owner: r.owner, glob: `*${x}` })),
    ]);
  }
}

/** The internal topics of a configuration: its Connect clusters', its registry's and its processors'. */
export function internalTopicsOf(config: Pick<Config, "connect" | "schemaRegistry" | "processors">): InternalTopics {
  return new InternalTopics({
    connect: config.connect.clusters.flatMap((c) => [c.topics.configs, c.topics.offsets, c.topics.statuses]),
    registry: config.schemaRegistry?.topics ?? [],
    processorPrefix: config.processors.prefix,
  });
}

/** Why a non-admin may not touch an internal topic's records: the message of every path's refusal. */
export function internalTopicMessage(topic: string, owner: InternalOwner): string {
  return `Topic '${topic}' is internal to ${owner}: only an admin without limits may read or write its records`;
}
