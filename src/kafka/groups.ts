/**
 * Consumer groups: list, describe, their committed offsets and coordinators, resetting and
 * deleting them. Loupe never joins a group itself (reads.ts reads without one).
 */

import { FindCoordinatorKeyTypes, legacyConsumerGroupStates } from "@platformatic/kafka";
import { AppError } from "../errors.ts";
import { byTopic, callApi, num } from "./client.ts";
import type { KafkaConnection } from "./connection.ts";
import type { BrokerInfo, CommittedOffset, GroupDescription, GroupState, GroupSummary, TopicPartitionRef } from "./types.ts";

const GROUP_STATES: Record<string, GroupState> = {
  ...Object.fromEntries(Object.entries(legacyConsumerGroupStates).map(([k, v]) => [k, v as GroupState])),
};

/** ConsumerGroupDescribe's answer, as far as Loupe reads it. */
interface ConsumerGroupDescribeResponse {
  groups: Array<{
    errorCode: number;
    groupId: string;
    groupState: string;
    assignorName: string;
    members: Array<{
      memberId: string;
      instanceId: string | null;
      clientId: string;
      clientHost: string;
      assignment: { topicPartitions: Array<{ topicName: string; partitions: number[] }> };
    }>;
  }>;
}

function groupState(state: string): GroupState {
  return GROUP_STATES[state] ?? (state as GroupState);
}

export class GroupOps {
  readonly #conn: KafkaConnection;

  constructor(conn: KafkaConnection) {
    this.#conn = conn;
  }

  /**
   * Consumer groups of both protocols: classic and KIP-848's ("consumer"; the client asks for
   * classic ones only by default, and Kafka 4's consumers default to the new protocol). Share
   * groups are share-groups.ts's. A broker before ListGroups v5 lists every group, type null.
   */
  list(): Promise<GroupSummary[]> {
    return this.#conn.call("Cannot list consumer groups", async () => {
      const groups = await this.#conn.admin.listGroups({ types: ["classic", "consumer"] });
      return [...groups.values()]
        .map((g) => ({ groupId: g.id, state: groupState(g.state), type: g.groupType ?? null, protocolType: g.protocolType }))
        .sort((a, b) => a.groupId.localeCompare(b.groupId));
    });
  }

  /**
   * In the order asked. A group the broker does not know comes back in state "Dead". `listed`:
   * the groups as a recent listing gave them, when the caller has one; otherwise (or when it
   * misses one of `ids`) the groups are listed here.
   */
  describe(ids: string[], listed?: readonly GroupSummary[]): Promise<GroupDescription[]> {
    return this.#conn.call("Cannot describe consumer groups", async () => {
      if (ids.length === 0) return [];
      // The client reads every member's metadata as the consumer protocol's, and a member of
      // another protocol (a Kafka Connect worker: "connect") makes it throw where the promise
      // never settles. Only consumer groups are described; the others are answered from the
      // group list, without members.
      const known = new Map((listed ?? []).map((g) => [g.groupId, g]));
      if (ids.some((id) => !known.has(id))) for (const g of await this.list()) known.set(g.groupId, g);
      const other = (id: string) => {
        const type = known.get(id)?.protocolType ?? "";
        return type !== "" && type !== "consumer";
      };
      // DescribeGroups answers a KIP-848 group as Dead: those are asked with ConsumerGroupDescribe.
      const modern = (id: string) => known.get(id)?.type === "consumer";
      const asked = ids.filter((id) => !other(id) && !modern(id));
      const [groups, described] = await Promise.all([
        asked.length ? this.#conn.admin.describeGroups({ groups: asked }) : undefined,
        this.#describeModern(ids.filter(modern)),
      ]);
      return ids.map((id) => {
        const d = described.get(id);
        if (d) return d;
        if (other(id) || modern(id)) {
          const l = known.get(id)!;
          return { groupId: id, state: l.state, protocolType: l.protocolType, protocol: "", members: [] };
        }
        const g = groups?.get(id);
        if (!g) return { groupId: id, state: "Dead" as GroupState, protocolType: "", protocol: "", members: [] };
        return {
          groupId: g.id,
          state: groupState(g.state),
          protocolType: g.protocolType,
          protocol: g.protocol,
          members: [...g.members.values()].map((m) => ({
            memberId: m.id,
            groupInstanceId: m.groupInstanceId ?? null,
            clientId: m.clientId,
            host: m.clientHost,
            assignments: [...(m.assignments?.values() ?? [])].flatMap((a) =>
              a.partitions.map((partition) => ({ topic: a.topic, partition })),
            ),
          })),
        };
      });
    });
  }

  /**
   * KIP-848 groups by ConsumerGroupDescribe, at each group's coordinator. A coordinator that
   * cannot answer leaves its groups out: they are shown as listed, without members.
   */
  async #describeModern(ids: string[]): Promise<Map<string, GroupDescription>> {
    const out = new Map<string, GroupDescription>();
    if (ids.length === 0) return out;
    const found = await this.#conn.admin.findCoordinator({ keyType: FindCoordinatorKeyTypes.GROUP, keys: ids });
    const byBroker = new Map<string, { host: string; port: number; ids: string[] }>();
    for (const c of found) {
      const key = `${c.host}:${c.port}`;
      const entry = byBroker.get(key) ?? { host: c.host, port: c.port, ids: [] };
      entry.ids.push(c.key);
      byBroker.set(key, entry);
    }
    const answers = await Promise.all(
      [...byBroker.values()].map((b) =>
        callApi<ConsumerGroupDescribeResponse>(
          this.#conn.admin,
          "ConsumerGroupDescribe",
          { host: b.host, port: b.port },
          b.ids,
          false,
        ).catch(() => null),
      ),
    );
    for (const g of answers.flatMap((a) => a?.groups ?? [])) {
      if (g.errorCode !== 0) continue;
      out.set(g.groupId, {
        groupId: g.groupId,
        state: groupState(g.groupState),
        protocolType: "consumer",
        protocol: g.assignorName,
        members: g.members.map((m) => ({
          memberId: m.memberId,
          groupInstanceId: m.instanceId ?? null,
          clientId: m.clientId,
          host: m.clientHost,
          assignments: m.assignment.topicPartitions.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topicName, partition }))),
        })),
      });
    }
    return out;
  }

  /**
   * Committed offsets of many groups: one OffsetFetch request per group coordinator (brokers
   * from Kafka 3.0 take many groups in one request). Partitions without a commit are left out.
   */
  committedOffsets(groupIds: string[]): Promise<Map<string, CommittedOffset[]>> {
    return this.#conn.call("Cannot fetch committed offsets", async () => {
      const out = new Map<string, CommittedOffset[]>(groupIds.map((g) => [g, []]));
      if (groupIds.length === 0) return out;
      const groups = await this.#conn.admin.listConsumerGroupOffsets({ groups: groupIds });
      for (const g of groups) {
        const list = out.get(g.groupId) ?? [];
        for (const t of g.topics) {
          for (const p of t.partitions) {
            if (p.committedOffset < 0n) continue;
            list.push({ topic: t.name, partition: p.partitionIndex, offset: num(p.committedOffset), metadata: p.metadata ?? null });
          }
        }
        list.sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition);
        out.set(g.groupId, list);
      }
      return out;
    });
  }

  /**
   * The coordinator broker of each group, from one batched FindCoordinator request; its rack from
   * the cluster metadata (FindCoordinator names none), asked at the same time.
   */
  coordinators(groupIds: string[]): Promise<Map<string, BrokerInfo>> {
    return this.#conn.call("Cannot find group coordinators", async () => {
      const out = new Map<string, BrokerInfo>();
      if (groupIds.length === 0) return out;
      const [found, md] = await Promise.all([
        this.#conn.admin.findCoordinator({ keyType: FindCoordinatorKeyTypes.GROUP, keys: groupIds }),
        this.#conn.metadata([]),
      ]);
      const racks = new Map(md.brokers.map((b) => [b.nodeId, b.rack ?? null]));
      for (const c of found) out.set(c.key, { id: c.nodeId, host: c.host, port: c.port, rack: racks.get(c.nodeId) ?? null });
      return out;
    });
  }

  /** Only for groups without live members (the broker answers CONFLICT otherwise). */
  alterOffsets(groupId: string, offsets: Array<TopicPartitionRef & { offset: number }>): Promise<void> {
    return this.#conn.call(`Cannot change the offsets of group '${groupId}'`, async () => {
      if (offsets.length === 0) return;
      for (const o of offsets) {
        if (!Number.isSafeInteger(o.offset) || o.offset < 0) throw new AppError("BAD_REQUEST", `Invalid offset ${o.offset}`);
      }
      await this.#conn.admin.alterConsumerGroupOffsets({
        groupId,
        topics: [...byTopic(offsets)].map(([name, list]) => ({
          name,
          partitionOffsets: list.map((o) => ({ partition: o.partition, offset: BigInt(o.offset) })),
        })),
      });
    });
  }

  delete(ids: string[]): Promise<void> {
    const list = ids.map((n) => `'${n}'`).join(", ");
    return this.#conn.call(`Cannot delete consumer group${ids.length === 1 ? "" : "s"} ${list}`, async () => {
      if (ids.length > 0) await this.#conn.admin.deleteGroups({ groups: ids });
    });
  }
}
