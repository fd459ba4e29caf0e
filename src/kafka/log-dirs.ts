/**
 * Sizes of topics on disk (DescribeLogDirs). One request per broker, whatever the number of
 * topics: the request names no topic, which asks the broker for every partition it holds.
 * (The client's own describeLogDirs wants every topic and partition listed.)
 *
 * DescribeLogDirs v1+ request: [topics: [name, [partition]]] (null: all)
 * response: results: [errorCode, logDir, topics: [name, partitions: [partitionIndex, partitionSize,
 * offsetLag, isFutureKey]], totalBytes, usableBytes]
 */

import { callApi, num } from "./client.ts";
import type { KafkaConnection } from "./connection.ts";

interface LogDirsResponse {
  results: Array<{
    errorCode: number;
    topics: Array<{ name: string; partitions: Array<{ partitionIndex: number; partitionSize: bigint; isFutureKey: boolean }> }>;
  }>;
}

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
}
