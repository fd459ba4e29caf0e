/**
 * A live member of a consumer group, for tests of what Loupe shows of groups: joins the
 * group, is assigned partitions by the group protocol, reads from them and commits offsets.
 * Loupe's own reads need no group (src/kafka/reads.ts).
 */

import { Consumer } from "@platformatic/kafka";
import { clientOptions } from "../../src/kafka/client.ts";
import type { KafkaCluster } from "../../src/kafka/cluster.ts";
import { RequestCounter } from "../../src/kafka/metrics.ts";

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
  /** The group protocol: classic (the default) or KIP-848's consumer protocol. */
  protocol?: "classic" | "consumer";
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

/** Joins the group on `kafka`'s cluster; the caller closes the member. */
export function joinGroup(kafka: KafkaCluster, opts: GroupMemberOptions): GroupMember {
  const consumer = new Consumer({
    ...clientOptions(kafka.config, new RequestCounter()),
    groupId: opts.groupId,
    ...(opts.clientId ? { clientId: opts.clientId } : {}),
    autocommit: false,
    sessionTimeout: opts.sessionTimeoutMs ?? 10_000,
    heartbeatInterval: opts.heartbeatIntervalMs ?? 1_000,
    maxWaitTime: opts.maxWaitMs ?? 500,
    ...(opts.protocol === "consumer" ? { groupProtocol: "consumer" as const } : {}),
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
