/**
 * Compacted targets: a compacted topic refuses a record without a key, and one such record
 * fails the whole transaction it is in. Programs are checked against it when created or
 * validated (see the stream analyzer), and runners against it when they start.
 */
import type { KafkaCluster } from "../../kafka/index.ts";
import { streamTarget, type TopicCompacted } from "../../sql/index.ts";

/** Whether the topic's cleanup.policy compacts it (`compact`, or `compact,delete`). */
export async function isCompacted(kafka: KafkaCluster, topic: string): Promise<boolean> {
  const entries = await kafka.configs.describeTopic(topic);
  const policy = entries.find((e) => e.name === "cleanup.policy")?.value ?? "";
  return policy.split(",").some((p) => p.trim() === "compact");
}

/** Longest wait for a target's configs: validation must not wait on a cluster that does not answer. */
const LOOKUP_WAIT_MS = 3_000;

/**
 * Whether the program's target is compacted, asked of the cluster when it exists; unknown when
 * the program does not parse, the target does not exist (the analyzer knows what creating it
 * makes) or the cluster cannot be asked.
 */
export async function compactionOf(
  kafka: KafkaCluster,
  sql: string,
  catalog: { topicExists(name: string): boolean } | null,
): Promise<TopicCompacted> {
  const target = streamTarget(sql);
  if (target === null || catalog === null || !catalog.topicExists(target)) return () => undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), LOOKUP_WAIT_MS);
  });
  const compacted = await Promise.race([isCompacted(kafka, target).catch(() => undefined), late]);
  clearTimeout(timer);
  return (topic) => (topic === target ? compacted : undefined);
}
