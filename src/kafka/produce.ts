/**
 * Writes records and reports the offset of each. Loupe picks the partitions itself (before
 * the client does) so it knows where every record went: keyed records use Kafka's Java
 * partitioner (murmur2 of the key, positive), so Loupe puts a key where Java producers do;
 * records without key and partition rotate over the partitions.
 */

import { type MessageToProduce, ProduceAcks, type Producer } from "@platformatic/kafka";
import { AppError } from "../errors.ts";
import type { KafkaConnection } from "./connection.ts";
import { type ConnectionFacts, toAppError } from "./errors.ts";
import { partitionForKey } from "./murmur2.ts";
import type { ProducedRecord, ProduceRecord } from "./types.ts";

function bytes(v: string | Uint8Array | null | undefined): Buffer | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v === "string") return Buffer.from(v, "utf8");
  return Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

const roundRobin = new WeakMap<Producer, Map<string, number>>();

export async function produceRecords(
  producer: Producer,
  cluster: string,
  topic: string,
  records: ProduceRecord[],
  facts: () => ConnectionFacts = () => ({}),
): Promise<ProducedRecord[]> {
  const context = `Cannot write to topic '${topic}'`;
  if (records.length === 0) return [];
  try {
    const partitionCount = async (forceUpdate: boolean) =>
      (await producer.metadata({ topics: [topic], forceUpdate })).topics.get(topic)?.partitionsCount ?? 0;
    let partitions = await partitionCount(false);
    // The client keeps a topic's metadata for its metadata max age (5 s): partitions added
    // meanwhile are not in it. Ask the broker once before refusing a record that names one.
    if (records.some((r) => r.partition !== undefined && Number.isInteger(r.partition) && r.partition >= partitions)) {
      partitions = await partitionCount(true);
    }
    if (partitions === 0) throw new AppError("NOT_FOUND", `${context}: Topic '${topic}' does not exist.`);
    const counters = roundRobin.get(producer) ?? new Map<string, number>();
    roundRobin.set(producer, counters);

    const messages: MessageToProduce[] = records.map((r, i) => {
      const key = bytes(r.key);
      let partition = r.partition;
      if (partition === undefined) {
        if (key) partition = partitionForKey(key, partitions);
        else {
          const n = counters.get(topic) ?? 0;
          counters.set(topic, n + 1);
          partition = n % partitions;
        }
      } else if (!Number.isInteger(partition) || partition < 0 || partition >= partitions) {
        throw new AppError("BAD_REQUEST", `${context}: record ${i} names partition ${partition}, but the topic has ${partitions}`);
      }
      const headers = new Map<Buffer, Buffer>();
      const entries = Array.isArray(r.headers) ? r.headers : Object.entries(r.headers ?? {});
      // Keys are distinct Buffer objects: a key given twice stays twice.
      for (const [k, v] of entries) headers.set(Buffer.from(k, "utf8"), bytes(v) ?? Buffer.alloc(0));
      return {
        topic,
        partition,
        key,
        value: bytes(r.value),
        headers,
        timestamp: r.timestamp === undefined ? undefined : BigInt(r.timestamp),
      };
    });

    const result = await producer.send({ messages, acks: ProduceAcks.ALL });
    // One batch per partition: its base offset plus the record's place among that partition's records.
    const base = new Map<number, bigint>();
    for (const o of result.offsets ?? []) if (o.topic === topic) base.set(o.partition, o.offset);
    const seen = new Map<number, number>();
    return messages.map((m) => {
      const partition = m.partition!;
      const index = seen.get(partition) ?? 0;
      seen.set(partition, index + 1);
      const first = base.get(partition);
      if (first === undefined) throw new AppError("BAD_GATEWAY", `${context}: the broker reported no offset for partition ${partition}`);
      return { topic, partition, offset: Number(first) + index };
    });
  } catch (err) {
    throw toAppError(err, context, cluster, facts());
  }
}

export class WriteOps {
  readonly #conn: KafkaConnection;

  constructor(conn: KafkaConnection) {
    this.#conn = conn;
  }

  produce(topic: string, records: ProduceRecord[]): Promise<ProducedRecord[]> {
    return produceRecords(this.#conn.producer, this.#conn.name, topic, records, () => this.#conn.facts());
  }
}
