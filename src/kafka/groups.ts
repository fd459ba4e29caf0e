/**
 * Consumer groups: list, describe, their committed offsets and coordinators, resetting and
 * deleting them. Loupe never joins a group itself (reads.ts reads without one).
 */

import { FindCoordinatorKeyTypes, legacyConsumerGroupStates } from "@platformatic/kafka";
import { AppError } from "../errors.ts";
import { byTopic, num } from "./client.ts";
import type { KafkaConnection } from "./connection.ts";
import type { BrokerInfo, CommittedOffset, GroupDescription, GroupState, GroupSummary, TopicPartitionRef } from "./types.ts";

const GROUP_STATES: Record<string, GroupState> = {
  ...Object.fromEntries(Object.entries(legacyConsumerGroupStates).map(([k, v]) => [k, v as GroupState])),
};

function groupState(state: string): GroupState {
  return GROUP_STATES[state] ?? (state as GroupState);
}

export class GroupOps {
  readonly #conn: KafkaConnection;

  constructor(conn: KafkaConnection) {
    this.#conn = conn;
  }

  list(): Promise<GroupSummary[]> {
    return this.#conn.call("Cannot list consumer groups", async () => {
      const groups = await this.#conn.admin.listGroups();
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
      const asked = ids.filter((id) => !other(id));
      const groups = asked.length ? await this.#conn.admin.describeGroups({ groups: asked }) : undefined;
      return ids.map((id) => {
        if (other(id)) {
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
