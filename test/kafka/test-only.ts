/**
 * Kafka operations only the tests need (Loupe itself never adds partitions, deletes a group's
 * offsets or joins a group), and a broker's configs read over a connection of their own. Each call opens its own connection to
 * the cluster and closes it again, so these add nothing to what the cluster under test keeps.
 */

import { byTopic } from "../../src/kafka/client.ts";
import type { KafkaCluster } from "../../src/kafka/cluster.ts";
import { ConfigOps } from "../../src/kafka/configs.ts";
import { KafkaConnection } from "../../src/kafka/connection.ts";
import type { ClusterDescription, ConfigEntry, TopicPartitionRef } from "../../src/kafka/types.ts";

async function withConnection<T>(kafka: KafkaCluster, context: string, fn: (conn: KafkaConnection) => Promise<T>): Promise<T> {
  const conn = new KafkaConnection(kafka.config);
  try {
    return await conn.call(context, () => fn(conn));
  } finally {
    await conn.close();
  }
}

export function describeCluster(kafka: KafkaCluster): Promise<ClusterDescription> {
  return withConnection(kafka, "Cannot describe the cluster", async (conn) => {
    const md = await conn.metadata([]);
    return {
      clusterId: md.clusterId ?? null,
      controllerId: md.controllerId,
      brokers: md.brokers.map((b) => ({ id: b.nodeId, host: b.host, port: b.port, rack: b.rack ?? null })).sort((a, b) => a.id - b.id),
    };
  });
}

/** Adds partitions: `count` is the new total. The brokers' metadata shows them a moment later. */
export function createPartitions(kafka: KafkaCluster, topic: string, count: number, opts: { validateOnly?: boolean } = {}): Promise<void> {
  return withConnection(kafka, `Cannot add partitions to topic '${topic}'`, (conn) =>
    conn.admin.createPartitions({ topics: [{ name: topic, count, assignments: null }], validateOnly: opts.validateOnly ?? false }),
  );
}

export function describeBrokerConfigs(kafka: KafkaCluster, brokerId: number): Promise<ConfigEntry[]> {
  return withConnection(kafka, `Cannot describe the configs of broker ${brokerId}`, (conn) => new ConfigOps(conn).describeBroker(brokerId));
}

export function deleteGroupOffsets(kafka: KafkaCluster, groupId: string, partitions: TopicPartitionRef[]): Promise<void> {
  return withConnection(kafka, `Cannot delete the offsets of group '${groupId}'`, async (conn) => {
    if (partitions.length === 0) return;
    await conn.admin.deleteConsumerGroupOffsets({
      groupId,
      topics: [...byTopic(partitions)].map(([name, list]) => ({ name, partitionIndexes: list.map((p) => p.partition) })),
    });
  });
}
