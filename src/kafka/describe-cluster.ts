/**
 * The cluster as a whole from one Metadata request of every topic: brokers, controller,
 * counts, and the partitions that are under-replicated or offline. One round trip whatever the
 * number of topics, so the overview can ask for it every few seconds.
 */

import type { KafkaConnection, MetadataResponse } from "./connection.ts";
import type { ClusterState, PartitionHealth } from "./types.ts";

/** Kafka's LEADER_NOT_AVAILABLE: what a partition without a leader carries in Metadata. */
export const LEADER_NOT_AVAILABLE = 5;

/**
 * Metadata of every topic, errors included: the client refuses an answer that
 * carries any error code, and an offline partition carries one (LEADER_NOT_AVAILABLE), so one
 * offline partition would fail every listing. The parsed answer rides on the error; only a
 * failure without one is thrown. The caller reads each topic's and partition's `errorCode`.
 */
export async function metadataWithErrors(conn: KafkaConnection): Promise<MetadataResponse> {
  try {
    return await conn.metadata(null);
  } catch (err) {
    const answer = (err as { response?: Partial<MetadataResponse> }).response;
    if (!Array.isArray(answer?.topics) || !Array.isArray(answer.brokers)) throw err;
    return answer as MetadataResponse;
  }
}

/**
 * `isInternal`: topics counted as internal beside those Kafka marks (the companions' and Loupe's).
 * `visible`: when given, only the topics it lets through are counted, in every figure (the
 * brokers' leaders and replicas too): what an identity limited to some topics is shown.
 */
export function describeCluster(
  conn: KafkaConnection,
  isInternal?: (topic: string) => boolean,
  visible?: ((topic: string) => boolean) | null,
): Promise<ClusterState> {
  return conn.call("Cannot describe the cluster", async () => {
    const md = await metadataWithErrors(conn);
    const leaders = new Map<number, number>();
    const replicas = new Map<number, number>();
    const underReplicated: PartitionHealth[] = [];
    const offline: PartitionHealth[] = [];
    const preferred = new Map<number, { preferred: number; led: number }>();
    let topics = 0;
    let internalTopics = 0;
    let partitions = 0;
    for (const t of md.topics) {
      // A topic the broker could not describe (being deleted, not authorized) has no partitions to count.
      if (t.errorCode !== 0 && t.partitions.length === 0) continue;
      if (visible && !visible(t.name ?? "")) continue;
      if (t.isInternal || isInternal?.(t.name ?? "") === true) internalTopics++;
      else topics++;
      for (const p of t.partitions) {
        partitions++;
        const health: PartitionHealth = {
          topic: t.name ?? "",
          partition: p.partitionIndex,
          leader: p.leaderId,
          replicas: p.replicaNodes,
          isr: p.isrNodes,
          offlineReplicas: p.offlineReplicas,
        };
        if (p.leaderId < 0 || p.errorCode === LEADER_NOT_AVAILABLE) offline.push(health);
        else leaders.set(p.leaderId, (leaders.get(p.leaderId) ?? 0) + 1);
        if (p.isrNodes.length < p.replicaNodes.length) underReplicated.push(health);
        const first = p.replicaNodes[0];
        if (first !== undefined && p.replicaNodes.length > 1 && p.leaderId >= 0) {
          const counts = preferred.get(first) ?? { preferred: 0, led: 0 };
          counts.preferred++;
          if (p.leaderId === first) counts.led++;
          preferred.set(first, counts);
        }
        for (const r of p.replicaNodes) replicas.set(r, (replicas.get(r) ?? 0) + 1);
      }
    }
    const byPlace = (a: PartitionHealth, b: PartitionHealth) => a.topic.localeCompare(b.topic) || a.partition - b.partition;
    return {
      clusterId: md.clusterId ?? null,
      controllerId: md.controllerId,
      brokers: md.brokers
        .map((b) => ({
          id: b.nodeId,
          host: b.host,
          port: b.port,
          rack: b.rack ?? null,
          leaders: leaders.get(b.nodeId) ?? 0,
          replicas: replicas.get(b.nodeId) ?? 0,
        }))
        .sort((a, b) => a.id - b.id),
      topics,
      internalTopics,
      partitions,
      underReplicated: underReplicated.sort(byPlace),
      offline: offline.sort(byPlace),
      // Of the brokers up: one that is down leads nothing, which broker down (1000) says.
      preferredLeaders: md.brokers
        .filter((b) => preferred.has(b.nodeId))
        .map((b) => ({ broker: b.nodeId, ...preferred.get(b.nodeId)! }))
        .sort((a, b) => a.broker - b.broker),
    };
  });
}
