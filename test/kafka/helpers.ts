/**
 * Shared by the src/kafka tests: one pool on the broker test/setup.ts started, and topics
 * that are removed again after the file's tests.
 */

import { afterAll } from "bun:test";
import { createKafkaPool, type KafkaCluster, type KafkaPool } from "../../src/kafka/index.ts";
import { kafkaBootstrap, uniqueTopic } from "../cluster/cluster.ts";
import { eventually as waitUntil } from "../helpers/wait.ts";

export { type GroupMember, type GroupMemberOptions, joinGroup } from "./group-member.ts";
export { createPartitions, deleteGroupOffsets, describeBrokerConfigs, describeCluster } from "./test-only.ts";

export function testPool(): KafkaPool {
  return createKafkaPool([{ name: "test", bootstrapServers: [kafkaBootstrap()], clientId: "loupe-test", default: true }]);
}

/** A pool, its default cluster, and a topic factory whose topics are deleted after the file. */
export function kafkaFixture(): {
  pool: KafkaPool;
  kafka: KafkaCluster;
  topic(prefix: string, partitions?: number, configs?: Record<string, string>): Promise<string>;
} {
  const pool = testPool();
  const kafka = pool.default();
  const created: string[] = [];
  afterAll(async () => {
    for (const t of created) await kafka.topics.delete(t).catch(() => {});
    await pool.close();
  });
  return {
    pool,
    kafka,
    async topic(prefix, partitions = 1, configs) {
      const name = uniqueTopic(prefix);
      await kafka.topics.create({ name, partitions, replication: 1, configs });
      created.push(name);
      await waitForLeaders(kafka, name, partitions);
      return name;
    },
  };
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of iterable) out.push(x);
  return out;
}

export const text = (b: Uint8Array | null): string | null => (b === null ? null : Buffer.from(b).toString("utf8"));

/** Rejects with the AppError an async call throws, so tests can assert its fields. */
export async function rejection(p: Promise<unknown>): Promise<{ code: string; status: number; message: string; details?: unknown }> {
  try {
    await p;
  } catch (err) {
    return err as { code: string; status: number; message: string; details?: unknown };
  }
  throw new Error("expected the call to fail, it succeeded");
}

/** Polls `check` until it answers true or `ms` pass (test/helpers/wait.ts); answers the last result. */
export function eventually(check: () => Promise<boolean>, ms = 5_000): Promise<boolean> {
  return waitUntil(check, { timeoutMs: ms });
}

/**
 * Waits until the client sees `partitions` partitions of `topic`, each with a leader that
 * serves it (answers ListOffsets): the controller answers CreateTopics before the brokers'
 * metadata shows the new partitions, and the metadata shows a leader before it has opened the
 * partition's log (regression: a raw Fetch right after met NOT_LEADER_OR_FOLLOWER).
 */
export async function waitForLeaders(kafka: KafkaCluster, topic: string, partitions: number, ms = 10_000): Promise<void> {
  const led = async () => {
    const [t] = await kafka.topics.describe([topic]).catch(() => []);
    if (t === undefined || t.partitions !== partitions || t.partitionDetails.some((p) => p.leader < 0)) return false;
    const ends = await kafka.offsets
      .list(
        t.partitionDetails.map((p) => ({ topic, partition: p.partition })),
        "latest",
      )
      .catch(() => []);
    return ends.length === partitions && ends.every((e) => e.offset >= 0);
  };
  if (!(await eventually(led, ms)))
    throw new Error(`topic '${topic}': not every one of its ${partitions} partitions has a leader after ${ms} ms`);
}
