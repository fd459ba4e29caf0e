/**
 * The Kafka 4 share groups (KIP-932) reading a topic, for the topic page's consumers beside its
 * consumer groups, in the same shape (type "share"). A share group has no committed position:
 * a partition's `currentOffset` is its start offset (the first record not yet acknowledged by
 * every member, -1 before it is initialised), its lag the share group lag the lag snapshot
 * read, and each partition may be read by several members at once (the one named is the first
 * assigned).
 */

import type { BrokerInfo, KafkaCluster, ShareGroupMember } from "../../kafka/index.ts";
import type { ShareGroupLag } from "../../lag/engine.ts";
import type { ClientGroupState, TopicConsumerGroup, TopicConsumerPartition } from "./schemas.ts";

/** Kafka's share group states in the clients' names. */
const SHARE_STATES: Record<string, ClientGroupState> = { Stable: "Stable", Empty: "NoActiveMembers", Dead: "Dead" };

/** The share groups with lag on `topic` (from the lag snapshot), described; `ends`: the topic's end offset per partition. */
export async function shareConsumers(
  kafka: KafkaCluster,
  topic: string,
  lags: ShareGroupLag[],
  ends: Map<number, number>,
): Promise<TopicConsumerGroup[]> {
  const ids = [...new Set(lags.map((l) => l.group))];
  if (ids.length === 0) return [];
  const [described, starts, coordinators] = await Promise.all([
    kafka.shareGroups.describe(ids),
    kafka.shareGroups.startOffsets(ids),
    kafka.groups.coordinators(ids).catch(() => new Map<string, BrokerInfo>()),
  ]);
  return described.map((g): TopicConsumerGroup => {
    const reader = new Map<number, ShareGroupMember>();
    const members = new Set<string>();
    for (const m of g.members)
      for (const a of m.assignments)
        if (a.topic === topic) {
          if (!reader.has(a.partition)) reader.set(a.partition, m);
          members.add(m.memberId);
        }
    const startOf = new Map((starts.get(g.groupId) ?? []).filter((o) => o.topic === topic).map((o) => [o.partition, o.startOffset]));
    const partitions = lags
      .filter((l) => l.group === g.groupId)
      .map((l) => {
        const m = reader.get(l.partition);
        return {
          topic,
          partition: l.partition,
          currentOffset: startOf.get(l.partition) ?? -1,
          logEndOffset: ends.get(l.partition) ?? 0,
          lag: l.lag,
          consumerId: m?.memberId ?? null,
          clientId: m?.clientId ?? null,
          host: m?.host ?? null,
        };
      });
    return topicConsumer({
      id: g.groupId,
      type: "share",
      coordinator: coordinators.get(g.groupId),
      active: g.members.length > 0,
      state: SHARE_STATES[g.state] ?? "Unknown",
      kafkaState: g.state,
      members: [...members],
      partitions,
    });
  });
}

/**
 * A group reading the topic in the clients' shape, from its parts: its lag, least and most are
 * its partitions'; a group whose coordinator cannot be found is CoordinatorNotFound.
 */
export function topicConsumer(g: {
  id: string;
  type: "classic" | "consumer" | "share" | null;
  coordinator: BrokerInfo | undefined;
  active: boolean;
  state: ClientGroupState;
  kafkaState: string;
  members: string[];
  partitions: TopicConsumerPartition[];
}): TopicConsumerGroup {
  const lags = g.partitions.map((p) => p.lag);
  const co = g.coordinator;
  return {
    id: g.id,
    ...(g.type ? { type: g.type } : {}),
    coordinator: co ? { id: co.id, host: co.host, port: co.port, rack: co.rack } : null,
    active: g.active,
    state: co ? g.state : "CoordinatorNotFound",
    kafkaState: g.kafkaState,
    consumers: g.members,
    consumersCount: g.members.length,
    topicPartitionsCount: g.partitions.length,
    lag: lags.reduce((s, x) => s + x, 0),
    minLag: lags.length ? Math.min(...lags) : 0,
    maxLag: lags.length ? Math.max(...lags) : 0,
    partitions: g.partitions,
  };
}
