/**
 * Where an offset reset moves a group, for consumer groups (committed offsets) and share groups
 * (start offsets) alike: earliest, latest, the first record at or after a time, or explicit
 * offsets checked against each partition's bounds. Internal topics are refused.
 */

import { badRequest, notFound } from "../../errors.ts";
import type { KafkaCluster, TopicPartitionRef } from "../../kafka/index.ts";
import { requireTopics, type TopicFilter } from "../topics/visibility.ts";

export type OffsetReset =
  | { to: "earliest" | "latest"; topics?: string[] }
  | { timestamp: number; topics?: string[] }
  | { offsets: Array<{ topic: string; partition: number; offset: number }> };

export type OffsetTarget = TopicPartitionRef & { offset: number };

/**
 * The offsets `reset` asks for. Without topics named, `current()` gives the group's topics (and
 * their check against `allowed`); `what` names the group in the error when it has none.
 */
export async function resetTarget(
  kafka: KafkaCluster,
  reset: OffsetReset,
  current: () => Promise<string[]>,
  allowed: TopicFilter,
  what: string,
): Promise<OffsetTarget[]> {
  const internal = async (topics: string[]) => {
    const described = await kafka.topics.describe(topics);
    const bad = described.filter((t) => t.internal).map((t) => t.name);
    if (bad.length) throw badRequest(`Offsets on internal topics cannot be reset: ${bad.join(", ")}`);
    return described;
  };
  if ("offsets" in reset) {
    const topics = [...new Set(reset.offsets.map((o) => o.topic))];
    await internal(topics);
    const bounds = await kafka.offsets.bounds(topics);
    const byKey = new Map(bounds.map((b) => [`${b.topic}\u0000${b.partition}`, b]));
    for (const o of reset.offsets) {
      const b = byKey.get(`${o.topic}\u0000${o.partition}`);
      if (!b) throw notFound(`Topic '${o.topic}' has no partition ${o.partition}`);
      if (o.offset < b.earliest || o.offset > b.latest)
        throw badRequest(`Offset ${o.offset} of topic '${o.topic}' partition ${o.partition} is outside ${b.earliest}..${b.latest}`);
    }
    return reset.offsets;
  }
  let topics = reset.topics;
  if (!topics?.length) {
    topics = await current();
    if (topics.length === 0) throw badRequest(`${what} has no committed offsets: name the topics to reset`);
    requireTopics(allowed, [...topics].sort());
  }
  const described = await internal(topics);
  const refs = described.flatMap((t) => t.partitionDetails.map((p) => ({ topic: t.name, partition: p.partition })));
  if ("to" in reset) {
    return (await kafka.offsets.list(refs, reset.to)).map((o) => ({ topic: o.topic, partition: o.partition, offset: o.offset }));
  }
  const [byTime, latest] = await Promise.all([kafka.offsets.list(refs, reset.timestamp), kafka.offsets.list(refs, "latest")]);
  // No record at or after the timestamp: the end of the partition.
  return byTime.map((o, i) => ({ topic: o.topic, partition: o.partition, offset: o.offset >= 0 ? o.offset : latest[i]!.offset }));
}
