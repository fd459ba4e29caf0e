/**
 * Sizes of topics and of brokers' log dirs on disk (DescribeLogDirs). One request per broker,
 * whatever the number of topics: the request names no topic, which asks the broker for every
 * partition it holds.
 * (The client's own describeLogDirs wants every topic and partition listed.)
 *
 * DescribeLogDirs v1+ request: [topics: [name, [partition]]] (null: all; empty: none, the dirs alone)
 * response: results: [errorCode, logDir, topics: [name, partitions: [partitionIndex, partitionSize,
 * offsetLag, isFutureKey]], totalBytes, usableBytes]
 */

import { callApi, num } from "./client.ts";
import type { KafkaConnection } from "./connection.ts";
import type { BrokerLogDirs } from "./types.ts";

interface LogDirsResponse {
  results: Array<{
    errorCode: number;
    logDir: string;
    topics: Array<{ name: string; partitions: Array<{ partitionIndex: number; partitionSize: bigint; isFutureKey: boolean }> }>;
    /** v4 and later; -1 when the broker cannot tell. */
    totalBytes?: bigint;
    usableBytes?: bigint;
  }>;
}

/** Kafka's KAFKA_STORAGE_ERROR: a log dir the broker took offline. */
const KAFKA_STORAGE_ERROR = 56;
const bytesOrNull = (v: bigint | undefined): number | null => (v === undefined || v < 0n ? null : num(v));

export class LogDirOps {
  readonly #conn: KafkaConnection;

  constructor(conn: KafkaConnection) {
    this.#conn = conn;
  }

  /**
   * Bytes of every topic: per partition the largest of its replicas (one copy of the data, as a
   * user thinks of a topic's size; replicas behind the leader are smaller), summed per topic.
   * Future replicas (a move between log dirs under way) are left out.
   */
  topicSizes(): Promise<Map<string, number>> {
    return this.#conn.call("Cannot describe log dirs", async () => {
      const md = await this.#conn.metadata([]);
      const answers = await Promise.all(md.brokers.map((b) => callApi<LogDirsResponse>(this.#conn.admin, "DescribeLogDirs", b, null)));
      const partitions = new Map<string, number>();
      for (const answer of answers)
        for (const dir of answer.results) {
          if (dir.errorCode !== 0) continue;
          for (const t of dir.topics)
            for (const p of t.partitions) {
              if (p.isFutureKey) continue;
              const key = `${t.name}\u0000${p.partitionIndex}`;
              partitions.set(key, Math.max(partitions.get(key) ?? 0, num(p.partitionSize)));
            }
        }
      const sizes = new Map<string, number>();
      for (const [key, bytes] of partitions) {
        const topic = key.slice(0, key.indexOf("\u0000"));
        sizes.set(topic, (sizes.get(topic) ?? 0) + bytes);
      }
      return sizes;
    });
  }

  /**
   * Each broker's log dirs: path, disk size and free space, and the bytes and partitions held there.
   * `partitions: false` names no topic (an empty list, not null): each dir with its disk's size and
   * free space but no partition, a small answer whatever the number of partitions (bytes and
   * partitions are then 0).
   */
  brokerDirs(opts: { partitions?: boolean } = {}): Promise<BrokerLogDirs[]> {
    const topics = opts.partitions === false ? [] : null;
    return this.#conn.call("Cannot describe log dirs", async () => {
      const md = await this.#conn.metadata([]);
      const brokers = [...md.brokers].sort((a, b) => a.nodeId - b.nodeId);
      return Promise.all(
        brokers.map(async (b): Promise<BrokerLogDirs> => {
          const answer = await callApi<LogDirsResponse>(this.#conn.admin, "DescribeLogDirs", b, topics);
          const dirs = answer.results.map((d) => {
            let bytes = 0;
            let partitions = 0;
            for (const t of d.topics)
              for (const p of t.partitions) {
                bytes += num(p.partitionSize);
                partitions++;
              }
            const error =
              d.errorCode === 0 ? null : d.errorCode === KAFKA_STORAGE_ERROR ? "offline (storage error)" : `error ${d.errorCode}`;
            return {
              path: d.logDir,
              bytes,
              partitions,
              totalBytes: bytesOrNull(d.totalBytes),
              usableBytes: bytesOrNull(d.usableBytes),
              error,
            };
          });
          return { brokerId: b.nodeId, dirs: dirs.sort((x, y) => (x.path < y.path ? -1 : 1)) };
        }),
      );
    });
  }
}
