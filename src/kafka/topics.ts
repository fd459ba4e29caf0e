/**
 * Topics: list, describe, create, add partitions, delete. Metadata and CreateTopics go out as raw requests
 * (client.ts callApi): the client's own methods drop topic ids, internal flags and
 * validateOnly.
 */

import { AppError } from "../errors.ts";
import { callApi } from "./client.ts";
import type { KafkaConnection, MetadataResponse } from "./connection.ts";
import { LEADER_NOT_AVAILABLE, metadataWithErrors } from "./describe-cluster.ts";
import type { CreatedTopic, CreateTopicRequest, TopicDescription, TopicSummary } from "./types.ts";

/** Kafka's own internal topics (the client's metadata cache does not hold them). */
const UNKNOWN_TOPIC_OR_PARTITION = 3;

export const KAFKA_INTERNAL_TOPICS: ReadonlySet<string> = new Set(["__consumer_offsets", "__transaction_state", "__share_group_state"]);

function topicSummary(t: MetadataResponse["topics"][number]): TopicDescription {
  const partitions = [...t.partitions].sort((a, b) => a.partitionIndex - b.partitionIndex);
  return {
    name: t.name ?? "",
    topicId: t.topicId,
    internal: t.isInternal,
    partitions: partitions.length,
    replicationFactor: partitions[0]?.replicaNodes.length ?? -1,
    partitionDetails: partitions.map((p) => ({
      partition: p.partitionIndex,
      // An answer read off the error of an offline partition may still name its old leader.
      leader: p.errorCode === LEADER_NOT_AVAILABLE ? -1 : p.leaderId,
      leaderEpoch: p.leaderEpoch,
      replicas: p.replicaNodes,
      isr: p.isrNodes,
      offlineReplicas: p.offlineReplicas,
    })),
  };
}

/** A topic of a CreateTopics request: the broker's defaults where `req` names none. */
function creatableTopic(req: CreateTopicRequest) {
  return {
    name: req.name,
    numPartitions: req.partitions ?? -1,
    replicationFactor: req.replication ?? -1,
    assignments: [],
    configs: Object.entries(req.configs ?? {}).map(([name, value]) => ({ name, value })),
  };
}

/**
 * Which of `names` the broker does not know, asked by name. The client's own "Unknown topic"
 * error picks the name by the missing topic's place in the broker's answer, which need not be
 * its place in the request, so it can name a topic that exists.
 */
export async function unknownTopics(conn: KafkaConnection, names: string[]): Promise<string[]> {
  let md: MetadataResponse;
  try {
    md = await conn.metadata(names);
  } catch (err) {
    // A per-topic error fails the parse; the parsed answer rides on the error.
    const answer = (err as { response?: Partial<MetadataResponse> }).response;
    if (!Array.isArray(answer?.topics)) throw err;
    md = answer as MetadataResponse;
  }
  const unknown = new Set(md.topics.filter((t) => t.errorCode === UNKNOWN_TOPIC_OR_PARTITION).map((t) => t.name));
  return names.filter((n) => unknown.has(n));
}

export class TopicOps {
  readonly #conn: KafkaConnection;

  constructor(conn: KafkaConnection) {
    this.#conn = conn;
  }

  list(opts: { includeInternal?: boolean } = {}): Promise<TopicSummary[]> {
    return this.#conn.call("Cannot list topics", async () => {
      const md = await metadataWithErrors(this.#conn);
      return md.topics
        .filter((t) => (opts.includeInternal || !t.isInternal) && (t.errorCode === 0 || t.partitions.length > 0))
        .map((t) => {
          const { partitionDetails: _, ...summary } = topicSummary(t);
          return summary;
        })
        .sort((a, b) => a.name.localeCompare(b.name));
    });
  }

  /** In the order asked; an unknown topic is NOT_FOUND. */
  describe(names: string[]): Promise<TopicDescription[]> {
    const list = names.map((n) => `'${n}'`).join(", ");
    const context = `Cannot describe topic${names.length === 1 ? "" : "s"} ${list}`;
    const notFound = (name: string) => new AppError("NOT_FOUND", `${context}: Topic '${name}' does not exist.`);
    return this.#conn.call(context, async () => {
      if (names.length === 0) return [];
      let md: MetadataResponse;
      try {
        md = await this.#conn.metadata(names);
      } catch (err) {
        // An answer whose only errors are partitions without a leader (a broker lost) is the
        // topics as they are: describe them, leaderless partitions shown with leader -1.
        const answer = (err as { response?: Partial<MetadataResponse> }).response;
        const topics = Array.isArray(answer?.topics) ? answer.topics : [];
        if (
          topics.length > 0 &&
          topics.every((t) => t.errorCode === 0 || t.errorCode === LEADER_NOT_AVAILABLE) &&
          Array.isArray(answer?.brokers)
        )
          md = answer as MetadataResponse;
        else {
          // The error names the topic by its place in the request only: find which one is missing.
          const missing = await this.#missing(names);
          if (missing.length > 0) throw notFound(missing[0]!);
          throw err;
        }
      }
      const byName = new Map(md.topics.map((t) => [t.name, topicSummary(t)]));
      return names.map((n) => {
        const t = byName.get(n);
        if (!t) throw notFound(n);
        return t;
      });
    });
  }

  async #missing(names: string[]): Promise<string[]> {
    try {
      const md = await this.#conn.metadata(null);
      const known = new Set(md.topics.map((t) => t.name));
      return names.filter((n) => !known.has(n));
    } catch {
      return [];
    }
  }

  create(req: CreateTopicRequest): Promise<CreatedTopic> {
    return this.#conn.call(`Cannot create topic '${req.name}'`, async () => {
      const admin = this.#conn.admin;
      // Topic changes go to the controller (KRaft brokers forward; older clusters need it).
      const md = await this.#conn.metadata([]);
      const controller = md.brokers.find((b) => b.nodeId === md.controllerId) ?? null;
      const response = await callApi<{
        topics: Array<{
          name: string;
          topicId: string;
          numPartitions: number;
          replicationFactor: number;
          configs: Array<{ name: string; value: string | null }> | null;
        }>;
      }>(admin, "CreateTopics", controller, [creatableTopic(req)], this.#conn.config.requestTimeoutMs ?? 30_000, req.validateOnly ?? false);
      const t = response.topics[0]!;
      return {
        name: t.name,
        topicId: t.topicId,
        partitions: t.numPartitions,
        replication: t.replicationFactor,
        configs: Object.fromEntries((t.configs ?? []).map((c) => [c.name, c.value])),
      };
    });
  }

  /**
   * Many topics in one CreateTopics request, which the controller commits together: how a
   * script fills a cluster with thousands (a request a topic waits for a commit each). Fails
   * whole when the broker refuses any of them.
   */
  createMany(reqs: CreateTopicRequest[]): Promise<void> {
    return this.#conn.call(`Cannot create ${reqs.length} topics`, async () => {
      const md = await this.#conn.metadata([]);
      const controller = md.brokers.find((b) => b.nodeId === md.controllerId) ?? null;
      await callApi(
        this.#conn.admin,
        "CreateTopics",
        controller,
        reqs.map(creatableTopic),
        this.#conn.config.requestTimeoutMs ?? 30_000,
        false,
      );
    });
  }

  /**
   * Grows the topic to `count` partitions (CreatePartitions; Kafka never removes one). The
   * broker refuses a count that is not larger (INVALID_PARTITIONS), with its own message.
   */
  createPartitions(name: string, count: number): Promise<void> {
    return this.#conn.call(`Cannot add partitions to topic '${name}'`, () =>
      this.#conn.admin.createPartitions({ topics: [{ name, count, assignments: null }] }),
    );
  }

  delete(name: string): Promise<void> {
    return this.#conn.call(`Cannot delete topic '${name}'`, () => this.#conn.admin.deleteTopics({ topics: [name] }));
  }
}
