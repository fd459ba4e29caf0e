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
   * One ListOffsets request per partition leader for every TOPICS_PER_CALL topics. The Kafka
   * client matches answers to topics by searching lists, quadratic in the topics of one call:
   * at 10,000 topics one call spent 5 s in that search alone; in slices it is linear.
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
      const slices: Array<typeof topics> = [];
      for (let i = 0; i < topics.length; i += TOPICS_PER_CALL) slices.push(topics.slice(i, i + TOPICS_PER_CALL));
      const found = new Map<string, ListedOffset>();
      let next = 0;
      const worker = async () => {
        while (next < slices.length) {
          const asked = slices[next++]!;
          const ask = (topics: typeof asked) =>
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
          for (const t of result) {
            for (const p of t.partitions) {
              found.set(`${t.name}\u0000${p.partitionIndex}`, {
                topic: t.name,
                partition: p.partitionIndex,
                offset: num(p.offset),
                timestamp: typeof spec === "number" ? num(p.timestamp) : -1,
              });
            }
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(SLICES_IN_FLIGHT, slices.length) }, worker));
      return partitions.map((r) => found.get(`${r.topic}\u0000${r.partition}`) ?? { ...r, offset: -1, timestamp: -1 });
    });
  }

  /**
   * ListOffsets sent by hand to each partition's leader, from Metadata read with its errors:
   * partitions with no leader are left out (they answer -1).
   */
  async #listDirect(
    md: MetadataResponse,
    topics: Array<[string, TopicPartitionRef[]]>,
    timestamp: bigint,
  ): Promise<Array<{ name: string; partitions: Array<{ partitionIndex: number; offset: bigint; timestamp: bigint }> }>> {
    const byName = new Map(md.topics.map((t) => [t.name, t]));
    const perLeader = new Map<
      number,
      Array<{ name: string; partitions: Array<{ partitionIndex: number; currentLeaderEpoch: number; timestamp: bigint }> }>
    >();
    for (const [name, refs] of topics) {
      const parts = new Map((byName.get(name)?.partitions ?? []).map((p) => [p.partitionIndex, p]));
      for (const r of refs) {
        const p = parts.get(r.partition);
        if (!p || p.leaderId < 0 || p.errorCode === LEADER_NOT_AVAILABLE) continue;
        const list = perLeader.get(p.leaderId) ?? [];
        perLeader.set(p.leaderId, list);
        let entry = list.find((t) => t.name === name);
        if (!entry) list.push((entry = { name, partitions: [] }));
        entry.partitions.push({ partitionIndex: r.partition, currentLeaderEpoch: p.leaderEpoch, timestamp });
      }
    }
    const answers = await Promise.all(
      [...perLeader].map(([leader, asked]) =>
        callApi<{ topics: Array<{ name: string; partitions: Array<{ partitionIndex: number; offset: bigint; timestamp: bigint }> }> }>(
          this.#conn.admin,
          "ListOffsets",
          md.brokers.find((b) => b.nodeId === leader) ?? null,
          -1,
          0,
          asked,
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
