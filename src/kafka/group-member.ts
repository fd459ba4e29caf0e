/**
 * A member of a consumer group: joins the group, is assigned partitions by the group
 * protocol, reads from them and commits offsets. Long-running readers (stream processors)
 * and tests that need a real, live group member use this; one-off reads use
 * KafkaCluster.consume, which needs no group.
 */

import { Consumer } from "@platformatic/kafka";
import { clientOptions } from "./client.ts";
import type { RequestCounter } from "./metrics.ts";
import type { KafkaClusterConfig } from "./types.ts";

export interface GroupMemberOptions {
  groupId: string;
  topics: string[];
  /** The member's client id as the group shows it; the cluster's client id otherwise. */
  clientId?: string;
  /** Where a partition without a committed offset starts. */
  from?: "earliest" | "latest" | "committed";
  sessionTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  /** Longest wait of one fetch for new records. */
  maxWaitMs?: number;
}

export interface GroupRecord {
  topic: string;
  partition: number;
  offset: number;
  timestamp: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
  /** Commits this record's position (the next offset to read) for its partition. */
  commit(): Promise<void>;
}

export interface GroupMember {
  records(): AsyncIterable<GroupRecord>;
  /** Leaves the group and closes the member's connections. */
  close(): Promise<void>;
}

export function createGroupMember(config: KafkaClusterConfig, counter: RequestCounter, opts: GroupMemberOptions): GroupMember {
  const consumer = new Consumer({
    ...clientOptions(config, counter),
    groupId: opts.groupId,
    ...(opts.clientId ? { clientId: opts.clientId } : {}),
    autocommit: false,
    sessionTimeout: opts.sessionTimeoutMs ?? 10_000,
    heartbeatInterval: opts.heartbeatIntervalMs ?? 1_000,
    maxWaitTime: opts.maxWaitMs ?? 500,
  });
  return {
    async *records() {
      const stream = await consumer.consume({ topics: opts.topics, mode: opts.from ?? "earliest" });
      for await (const m of stream) {
        yield {
          topic: m.topic,
          partition: m.partition,
          offset: Number(m.offset),
          timestamp: Number(m.timestamp),
          key: (m.key as Uint8Array | null | undefined) ?? null,
          value: (m.value as Uint8Array | null | undefined) ?? null,
          commit: async () => {
            await m.commit();
          },
        };
      }
    },
    close: () => consumer.close(true),
  };
}
