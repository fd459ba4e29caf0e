/**
 * The KRaft controller quorum (DescribeQuorum): its leader, epoch and high watermark, and each
 * voter's and observer's position in the metadata log. A broker forwards the request to the
 * active controller. A ZooKeeper cluster has no quorum: its brokers do not speak the API.
 *
 * DescribeQuorum Request (0-2) => [topics] TAG_BUFFER
 *   topics => topic_name [partitions]          __cluster_metadata, partition 0
 * DescribeQuorum Response (0-2) => error_code error_message [topics] [nodes] TAG_BUFFER
 *   partitions => partition_index error_code error_message leader_id leader_epoch high_watermark
 *                 [current_voters] [observers]
 *     replica => replica_id replica_directory_id log_end_offset last_fetch_timestamp
 *                last_caught_up_timestamp       timestamps -1 when unknown (v0: absent)
 */

import { callApi, num } from "./client.ts";
import type { KafkaConnection } from "./connection.ts";
import type { QuorumReplica, QuorumState } from "./types.ts";

interface QuorumAnswer {
  errorCode: number;
  errorMessage?: string | null;
  topics: Array<{
    partitions: Array<{
      errorCode: number;
      errorMessage?: string | null;
      leaderId: number;
      leaderEpoch: number;
      highWatermark: bigint;
      currentVoters: Array<{ replicaId: number; logEndOffset: bigint; lastFetchTimestamp?: bigint; lastCaughtUpTimestamp?: bigint }>;
      observers: Array<{ replicaId: number; logEndOffset: bigint; lastFetchTimestamp?: bigint; lastCaughtUpTimestamp?: bigint }>;
    }>;
  }>;
}

const METADATA_TOPIC = "__cluster_metadata";

const time = (t: bigint | undefined): number | null => (t === undefined || t < 0n ? null : num(t));

/** The quorum, or null when the cluster has none (its brokers do not speak DescribeQuorum). */
export function describeQuorum(conn: KafkaConnection): Promise<QuorumState | null> {
  return conn.call("Cannot describe the controller quorum", async () => {
    if (!(await conn.supportsApi("DescribeQuorum"))) return null;
    const answer = await callApi<QuorumAnswer>(conn.admin, "DescribeQuorum", null, [
      { topicName: METADATA_TOPIC, partitions: [{ partitionIndex: 0 }] },
    ]);
    const p = answer.topics[0]?.partitions[0];
    if (!p) return null;
    const highWatermark = num(p.highWatermark);
    const replica = (r: QuorumAnswer["topics"][number]["partitions"][number]["currentVoters"][number]): QuorumReplica => {
      const logEndOffset = num(r.logEndOffset);
      return {
        id: r.replicaId,
        logEndOffset,
        // Behind the high watermark; the leader's own end can run ahead of it (not yet committed).
        lag: Math.max(0, highWatermark - logEndOffset),
        lastFetchTimestamp: time(r.lastFetchTimestamp),
        lastCaughtUpTimestamp: time(r.lastCaughtUpTimestamp),
      };
    };
    return {
      leaderId: p.leaderId,
      leaderEpoch: p.leaderEpoch,
      highWatermark,
      voters: p.currentVoters.map(replica).sort((a, b) => a.id - b.id),
      observers: p.observers.map(replica).sort((a, b) => a.id - b.id),
    };
  });
}
