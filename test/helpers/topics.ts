/**
 * Topics a test can use at once. Kafka answers CreateTopics and CreatePartitions when its
 * controller has committed the change; the broker applies it afterwards, in two steps: its
 * metadata shows the partitions and their leader first, and only then does the leader open
 * the partitions' logs. In between, Metadata can still show the old partition count, and
 * Produce or ListOffsets to a partition answer NOT_LEADER_OR_FOLLOWER. A test that creates
 * a topic (or adds partitions) and acts on it at once therefore waits here until the
 * partitions are both visible and served.
 */

import type { KafkaCluster, TopicDescription } from "../../src/kafka/index.ts";
import { uniqueTopic } from "../cluster/cluster.ts";
import { type WaitOptions, waitFor } from "./wait.ts";

/**
 * Resolves once the topic's metadata shows `partitions` partitions (any count when absent),
 * each with a leader, and ListOffsets answers an offset for every one of them.
 */
export async function waitForTopic(
  kafka: KafkaCluster,
  name: string,
  opts: { partitions?: number } & WaitOptions = {},
): Promise<TopicDescription> {
  const want = opts.partitions;
  return waitFor(
    async () => {
      const [t] = await kafka.topics.describe([name]);
      if (!t || t.partitions === 0 || (want !== undefined && t.partitions !== want)) return null;
      if (t.partitionDetails.some((p) => p.leader < 0)) return null;
      const ends = await kafka.offsets.list(
        t.partitionDetails.map((p) => ({ topic: name, partition: p.partition })),
        "latest",
      );
      return ends.length === t.partitions && ends.every((e) => e.offset >= 0) ? t : null;
    },
    { timeoutMs: 30_000, intervalMs: 50, what: `topic '${name}' with ${want ?? "all its"} partitions led and answering`, ...opts },
  );
}

/**
 * Creates a topic through the real client and returns its name once every partition is led
 * and answers (see waitForTopic). The name goes into `track` first, so a test's cleanup
 * finds it even when the wait fails.
 */
export async function createReadyTopic(
  kafka: KafkaCluster,
  opts: { prefix?: string; name?: string; partitions?: number; configs?: Record<string, string>; track?: string[] } = {},
): Promise<string> {
  const name = opts.name ?? uniqueTopic(opts.prefix ?? "t");
  opts.track?.push(name);
  const partitions = opts.partitions ?? 1;
  await kafka.topics.create({ name, partitions, replication: 1, ...(opts.configs ? { configs: opts.configs } : {}) });
  await waitForTopic(kafka, name, { partitions });
  return name;
}
