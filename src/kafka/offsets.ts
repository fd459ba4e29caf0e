/**
 * Offsets of partitions: by time or at either end of the log (ListOffsets), and moving the
 * log start (DeleteRecords).
 */

import { AppError } from "../errors.ts";
import { byTopic, callApi, num } from "./client.ts";
import type { KafkaConnection, MetadataResponse } from "./connection.ts";
import { LEADER_NOT_AVAILABLE, metadataWithErrors } from "./describe-cluster.ts";
import { toAppError } from "./errors.ts";
import { KAFKA_INTERNAL_TOPICS, type TopicOps, unknownTopics } from "./topics.ts";
import type { DeletedRecords, ListedOffset, OffsetSpec, TopicPartitionRef } from "./types.ts";

function offsetTimestamp(spec: OffsetSpec): bigint {
  if (spec === "earliest") return -2n;
  if (spec === "latest") return -1n;
  if (!Number.isSafeInteger(spec) || spec < 0) throw new AppError("BAD_REQUEST", `Invalid offset timestamp ${spec}`);
  return BigInt(spec);
}

/** Topics per ListOffsets call of the Kafka client, and such calls in flight at once. */
const TOPICS_PER_CALL = 250;
const SLICES_IN_FLIGHT = 4;

/** Topics to ask and their partitions. */
type AskedTopics = Array<[string, TopicPartitionRef[]]>;

/** A topic of a ListOffsets answer. */
interface ListOffsetsTopic {
  name: string;
  partitions: Array<{ partitionIndex: number; offset: bigint; timestamp: bigint; errorCode?: number }>;
}

/** A topic of a ListOffsets request to one leader. */
interface LeaderAsk {
  name: string;
  partitions: Array<{ partitionIndex: number; currentLeaderEpoch: number; timestamp: bigint }>;
}

/**
 * The request of each partition leader for the topics, from the metadata: per leader, each
 * topic's refs and its entry. Partitions with no leader (or unknown) are left out.
 */
function perLeader(md: MetadataResponse, topics: AskedTopics, timestamp: bigint): Map<number, Array<[TopicPartitionRef[], LeaderAsk]>> {
  const byName = new Map(md.topics.map((t) => [t.name, t]));
  const out = new Map<number, Array<[TopicPartitionRef[], LeaderAsk]>>();
  for (const [name, refs] of topics) {
    const parts = new Map((byName.get(name)?.partitions ?? []).map((p) => [p.partitionIndex, p]));
    const entries = new Map<number, LeaderAsk>();
    for (const r of refs) {
      const p = parts.get(r.partition);
      if (!p || p.leaderId < 0 || p.errorCode === LEADER_NOT_AVAILABLE) continue;
      let entry = entries.get(p.leaderId);
      if (!entry) {
        entry = { name, partitions: [] };
        entries.set(p.leaderId, entry);
        const list = out.get(p.leaderId) ?? [];
        out.set(p.leaderId, list);
        list.push([refs, entry]);
      }
      entry.partitions.push({ partitionIndex: r.partition, currentLeaderEpoch: p.leaderEpoch, timestamp });
    }
  }
  return out;
}

/** Topics with a partition that has no leader now. */
function leaderlessOf(md: MetadataResponse): Set<string> {
  const out = new Set<string>();
  for (const t of md.topics)
    if (t.name && t.partitions.some((p) => p.leaderId < 0 || p.errorCode === LEADER_NOT_AVAILABLE)) out.add(t.name);
  return out;
}

export class OffsetOps {
  readonly #conn: KafkaConnection;
  readonly #topics: TopicOps;

  constructor(conn: KafkaConnection, topics: TopicOps) {
    this.#conn = conn;
    this.#topics = topics;
  }

  /**
   * Offsets of the partitions. Up to TOPICS_PER_CALL topics: the Kafka client's ListOffsets (it
   * finds the leaders and retries one that moved). More (a lag snapshot of a large cluster): one
   * Metadata of the cluster and one ListOffsets per partition leader, sent directly; the topics
   * of a leader whose answer fails are then asked through the client. (The client matches
   * answers to topics by searching lists, quadratic in the topics of one call, and asks Metadata
   * for each call: at 10,000 topics it took 40 calls of 250 topics, each with its Metadata.)
   */
  list(partitions: TopicPartitionRef[], spec: OffsetSpec): Promise<ListedOffset[]> {
    const context = "Cannot list offsets";
    return this.#conn.call(context, async () => {
      // The client's metadata cache leaves out Kafka's internal topics, and its listOffsets
      // then throws outside any promise (the process dies). Never hand it one: they answer -1.
      const askable = partitions.filter((p) => !KAFKA_INTERNAL_TOPICS.has(p.topic));
      if (askable.length === 0) return partitions.map((r) => ({ ...r, offset: -1, timestamp: -1 }));
      const timestamp = offsetTimestamp(spec);
      const topics = [...byTopic(askable)];
      const found = new Map<string, ListedOffset>();
      const keep = (result: ListOffsetsTopic[]) => {
        for (const t of result)
          for (const p of t.partitions)
            found.set(`${t.name}\u0000${p.partitionIndex}`, {
              topic: t.name,
              partition: p.partitionIndex,
              offset: num(p.offset),
              timestamp: typeof spec === "number" ? num(p.timestamp) : -1,
            });
      };
      const rest = topics.length > TOPICS_PER_CALL ? await this.#listMany(topics, timestamp, keep, context) : topics;
      if (rest.length > 0) await this.#viaClient(rest, timestamp, keep, context);
      return partitions.map((r) => found.get(`${r.topic}\u0000${r.partition}`) ?? { ...r, offset: -1, timestamp: -1 });
    });
  }

  /** The client's ListOffsets, TOPICS_PER_CALL topics a call, SLICES_IN_FLIGHT calls at once. */
  async #viaClient(topics: AskedTopics, timestamp: bigint, keep: (result: ListOffsetsTopic[]) => void, context: string): Promise<void> {
    const slices: AskedTopics[] = [];
    for (let i = 0; i < topics.length; i += TOPICS_PER_CALL) slices.push(topics.slice(i, i + TOPICS_PER_CALL));
    let next = 0;
    const worker = async () => {
      while (next < slices.length) {
        const asked = slices[next++]!;
        const ask = (topics: AskedTopics) =>
          this.#conn.admin.listOffsets({
            topics: topics.map(([name, refs]) => ({
              name,
              partitions: refs.map((r) => ({ partitionIndex: r.partition, timestamp })),
            })),
          });
        const result = await ask(asked).catch(async (err: unknown) => {
          // A partition without a leader (its broker lost) fails the client's whole call, and
          // any later one naming its topic: those topics are asked directly, without it (it
          // answers -1); the others through the client again.
          const md = await metadataWithErrors(this.#conn).catch(() => null);
          const leaderless = md ? leaderlessOf(md) : new Set<string>();
          const hit = (name: string) => leaderless.has(name);
          if (!md || !asked.some(([name]) => hit(name)))
            throw await this.#nameUnknown(
              err,
              context,
              asked.map(([name]) => name),
            );
          const clean = asked.filter(([name]) => !hit(name));
          const [direct, rest] = await Promise.all([
            this.#listDirect(
              md,
              asked.filter(([name]) => hit(name)),
              timestamp,
            ),
            clean.length === 0 ? [] : ask(clean),
          ]);
          return [...direct, ...rest];
        });
        keep(result as ListOffsetsTopic[]);
      }
    };
    await Promise.all(Array.from({ length: Math.min(SLICES_IN_FLIGHT, slices.length) }, worker));
  }

  /**
   * Many topics at once: one Metadata of the cluster, one ListOffsets per leader. A topic the
   * cluster does not have is NOT_FOUND, as the client says it. Answers to `keep`; the topics
   * still to ask (those of a leader whose answer failed, or with no leader in the metadata).
   */
  async #listMany(
    topics: AskedTopics,
    timestamp: bigint,
    keep: (result: ListOffsetsTopic[]) => void,
    context: string,
  ): Promise<AskedTopics> {
    const md = await metadataWithErrors(this.#conn);
    const known = new Set(md.topics.map((t) => t.name));
    const missing = topics.find(([name]) => !known.has(name));
    if (missing) throw new AppError("NOT_FOUND", `${context}: Topic '${missing[0]}' does not exist.`);
    const leaderless = leaderlessOf(md);
    const later: AskedTopics = topics.filter(([name]) => leaderless.has(name));
    const plan = perLeader(
      md,
      topics.filter(([name]) => !leaderless.has(name)),
      timestamp,
    );
    await Promise.all(
      [...plan].map(async ([leader, asked]) => {
        const broker = md.brokers.find((b) => b.nodeId === leader) ?? null;
        try {
          const answer = await callApi<{ topics: ListOffsetsTopic[] }>(
            this.#conn.admin,
            "ListOffsets",
            broker,
            -1,
            0,
            asked.map(([, t]) => t),
          );
          // A partition whose leader moved meanwhile answers an error: its topic is asked again.
          const failed = new Set(answer.topics.filter((t) => t.partitions.some((p) => (p.errorCode ?? 0) !== 0)).map((t) => t.name));
          keep(answer.topics.filter((t) => !failed.has(t.name)));
          for (const [refs, t] of asked) if (failed.has(t.name)) later.push([t.name, refs]);
        } catch {
          for (const [refs, t] of asked) later.push([t.name, refs]);
        }
      }),
    );
    return later;
  }

  /**
   * ListOffsets sent by hand to each partition's leader, from Metadata read with its errors:
   * partitions with no leader are left out (they answer -1).
   */
  async #listDirect(md: MetadataResponse, topics: AskedTopics, timestamp: bigint): Promise<ListOffsetsTopic[]> {
    const answers = await Promise.all(
      [...perLeader(md, topics, timestamp)].map(([leader, asked]) =>
        callApi<{ topics: ListOffsetsTopic[] }>(
          this.#conn.admin,
          "ListOffsets",
          md.brokers.find((b) => b.nodeId === leader) ?? null,
          -1,
          0,
          asked.map(([, t]) => t),
        ),
      ),
    );
    return answers.flatMap((a) => a.topics);
  }

  /**
   * The error for a failed ListOffsets. When a topic is unknown, the client's error can name
   * another of the asked topics (see unknownTopics): ask the broker which one it is.
   */
  async #nameUnknown(err: unknown, context: string, topics: string[]): Promise<unknown> {
    const mapped = toAppError(err, context, this.#conn.name, this.#conn.facts());
    if (mapped.code !== "NOT_FOUND" || topics.length < 2) return mapped;
    const missing = await unknownTopics(this.#conn, topics).catch(() => []);
    if (missing.length === 0) return mapped;
    return new AppError("NOT_FOUND", `${context}: Topic '${missing[0]}' does not exist.`, { details: mapped.details, cause: err });
  }

  /** Earliest and latest offsets of every partition of the topics. */
  bounds(topics: string[]): Promise<Array<TopicPartitionRef & { earliest: number; latest: number }>> {
    return this.#conn.call("Cannot list offsets", async () => {
      const described = await this.#topics.describe(topics);
      const refs = described.flatMap((t) => t.partitionDetails.map((p) => ({ topic: t.name, partition: p.partition })));
      const [earliest, latest] = await Promise.all([this.list(refs, "earliest"), this.list(refs, "latest")]);
      return refs.map((r, i) => ({ ...r, earliest: earliest[i]!.offset, latest: latest[i]!.offset }));
    });
  }

  /** Deletes the records before `offset` (-1: all); answers the new log start. */
  deleteRecords(topic: string, partition: number, offset: number): Promise<DeletedRecords> {
    return this.#conn.call(`Cannot delete records of topic '${topic}' partition ${partition}`, async () => {
      if (!Number.isInteger(partition) || partition < 0) throw new AppError("BAD_REQUEST", `Invalid partition ${partition}`);
      if (!Number.isSafeInteger(offset) || offset < -1) throw new AppError("BAD_REQUEST", `Invalid offset ${offset}`);
      const [result] = await this.#conn.admin.deleteRecords({
        topics: [{ name: topic, partitions: [{ partition, offset: BigInt(offset) }] }],
      });
      const p = result?.partitions.find((x) => x.partition === partition);
      return { topic, partition, lowWatermark: p ? num(p.lowWatermark) : -1 };
    });
  }
}
