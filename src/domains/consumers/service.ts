import { conflict, notFound } from "../../errors.ts";
import type { GroupDescription, GroupSummary, KafkaCluster, KafkaPool, TopicPartitionRef } from "../../kafka/index.ts";
import type { LagEngine, PartitionLag } from "../../lag/engine.ts";
import type { LagHistory, LagPoint } from "../../lag/history.ts";
import type { Inventory } from "../../lag/inventory.ts";
import { matches, pageOf } from "../shared/paging.ts";
import { groupOutsideScope, isVisible, requireTopics, type TopicFilter } from "../topics/visibility.ts";
import { type OffsetReset, resetTarget } from "./reset-target.ts";
import type { ConsumerGroupDetail, ConsumerGroupLagHistory, ConsumerGroupOffset, ConsumerGroupSummary, GroupListQuery } from "./schemas.ts";
import { ShareGroupService } from "./share-groups.ts";

export type { ConsumerGroupDetail, ConsumerGroupLagHistory, ConsumerGroupOffset, ConsumerGroupSummary, OffsetReset };

/** A page of the group list, with the counts its headers tell. */
export interface GroupPage {
  items: ConsumerGroupSummary[];
  /** Groups that match the search. */
  total: number;
  /** Groups the caller may see, before the search. */
  unfiltered: number;
}

/** A group as the list sorts it: listed (a consumer group, described for its page) or a share group's finished row. */
interface Candidate {
  id: string;
  listed?: GroupSummary;
  row?: ConsumerGroupSummary;
  state: string;
  members: number;
  lag: number;
}

/** Partitions whose oldest unread record is read for lag in seconds; beyond, the sampler's estimate. */
const MAX_TIMESTAMP_READS = 200;

export class ConsumerService {
  /** Kafka 4 share groups, listed with the consumer groups. */
  readonly shares: ShareGroupService;

  constructor(
    private readonly pool: KafkaPool,
    private readonly lag: LagEngine,
    private readonly history: LagHistory | null = null,
    private readonly sampleIntervalMs = 0,
    /** Told of the groups Loupe deletes or gives offsets, so the next list shows it; none in tests of the service alone. */
    private readonly inventory: Inventory | null = null,
  ) {
    this.shares = new ShareGroupService(pool);
  }

  /**
   * The group's lag over time, from the history stored at each tick of the end-offset sampler:
   * one point per sample up to six hours, buckets (maxima) beyond (see LagHistory.points).
   * A group that exists but has no history yet (new since the last tick) has no points.
   * Given a filter, each point holds the visible topics only (see `visiblePoint`), and a group
   * with no visible topic is 403.
   */
  async lagHistory(cluster: string, group: string, windowMs: number, visible: TopicFilter = null): Promise<ConsumerGroupLagHistory> {
    const kafka = this.pool.get(cluster);
    const series = (await this.history?.points(cluster, group, windowMs)) ?? null;
    let points = series?.points ?? null;
    // The points name the topics the group committed on: one visible among them shows the
    // group without asking Kafka. Otherwise its assignments may still show it.
    const seen = visible && points?.some((p) => Object.keys(p.topics).some(visible));
    if (points === null || (visible && !seen)) {
      const [d, committed] = await Promise.all([this.#describe(kafka, group), kafka.groups.committedOffsets([group])]);
      const offsets = committed.get(group) ?? [];
      if (visible) this.#requireVisible(group, visible, [...offsets.map((o) => o.topic), ...assignedTopics(d)]);
      else if (d.state === "Dead" && offsets.length === 0) throw notFound(`Consumer group '${group}' does not exist`);
      points ??= [];
    }
    if (visible) points = points.map((p) => visiblePoint(p, visible));
    return {
      group,
      windowMs: this.history ? windowMs : 0,
      intervalMs: series?.intervalMs ?? this.sampleIntervalMs,
      downsampled: series?.downsampled ?? false,
      points,
    };
  }

  /**
   * Every group, or (given a filter) those with a committed offset or an assignment on a
   * visible topic, each with its visible topics and their lag only; searched, sorted and cut to
   * the page `q` asks (every match without `page`). A group on no topic at all names nothing a
   * scope could allow, so only an unfiltered caller sees it. Groups come from the inventory and
   * lag from the shared snapshot; DescribeGroups asks for the page's groups only, unless the
   * filter or the order (members) needs every matching group's members.
   */
  async list(cluster: string, visible: TopicFilter = null, q: GroupListQuery = {}): Promise<GroupPage> {
    const kafka = this.pool.get(cluster);
    const [snapshot, inventoried, shares] = await Promise.all([
      this.lag.snapshot(cluster),
      // The inventory's listing, which may be newer than the snapshot's (a new group shows at once, its lag with the next snapshot).
      this.inventory?.groups(cluster),
      this.shares.list(cluster, visible),
    ]);
    const listed = inventoried ?? snapshot.groups;
    const byGroup = new Map<string, PartitionLag[]>();
    for (const p of snapshot.partitions) {
      if (!isVisible(visible, p.topic)) continue;
      const list = byGroup.get(p.group);
      if (list) list.push(p);
      else byGroup.set(p.group, [p]);
    }
    const described = new Map<string, GroupDescription>();
    // The listing gives the groups' protocols: they need not be asked again.
    const describe = async (ids: string[]) => {
      const asked = ids.filter((id) => !described.has(id));
      const answers = await kafka.groups.describe(asked, listed);
      for (const [i, id] of asked.entries()) described.set(id, answers[i]!);
    };
    // A scoped caller's groups are known once every group's assignments are.
    if (visible) await describe(listed.map((g) => g.groupId));
    const searched = listed.filter((g) => matches(q.search, g.groupId));
    if (q.orderBy === "members") await describe(searched.map((g) => g.groupId));
    const topicsOf = (g: GroupSummary) => {
      const topics = new Set((byGroup.get(g.groupId) ?? []).map((l) => l.topic));
      const d = described.get(g.groupId);
      if (d) for (const t of assignedTopics(d)) if (isVisible(visible, t)) topics.add(t);
      return topics;
    };
    const rows: Candidate[] = searched
      .filter((g) => !visible || topicsOf(g).size > 0)
      .map((g) => ({
        id: g.groupId,
        listed: g,
        state: g.state,
        members: described.get(g.groupId)?.members.length ?? 0,
        lag: (byGroup.get(g.groupId) ?? []).reduce((s, l) => s + l.lag, 0),
      }));
    const shared = shares
      .filter((g) => matches(q.search, g.id))
      .map((g) => ({ id: g.id, row: g, state: g.state, members: g.members, lag: g.lag }));
    // The inventory lists groups by id; share groups join them in that order.
    const all: Candidate[] = shared.length ? [...rows, ...shared].sort((a, b) => a.id.localeCompare(b.id)) : rows;
    const page = pageOf(all, q, q.orderBy && q.orderBy !== "name" ? (c) => c[q.orderBy as "state" | "members" | "lag"] : undefined);
    await describe(page.flatMap((c) => (c.listed ? [c.id] : [])));
    const items = page.map((c): ConsumerGroupSummary => {
      if (c.row) return c.row;
      const g = c.listed!;
      const d = described.get(c.id)!;
      return {
        id: g.groupId,
        state: d.state === "Dead" ? g.state : d.state,
        type: g.type ?? "classic",
        protocolType: g.protocolType,
        protocol: d.protocol,
        members: d.members.length,
        topics: [...topicsOf(g)].sort(),
        lag: c.lag,
      };
    });
    // The groups the caller may see, before the search (share groups come filtered by scope).
    const seen = visible ? listed.filter((g) => topicsOf(g).size > 0).length : listed.length;
    return { items, total: all.length, unfiltered: seen + shares.length };
  }

  /** 403 naming the group when none of its topics is visible (a group on no topic included). */
  #requireVisible(group: string, visible: (topic: string) => boolean, topics: string[]): void {
    if (!topics.some(visible)) throw groupOutsideScope(group);
  }

  async #describe(kafka: KafkaCluster, group: string): Promise<GroupDescription> {
    const [d] = await kafka.groups.describe([group]);
    return d!;
  }

  /**
   * The group's members, offsets and lag. Given a filter: only the visible topics' partitions,
   * lag and assignments; a group with no visible topic is 403, whether it exists or not, so a
   * scoped caller cannot probe for group names either.
   */
  async get(cluster: string, group: string, visible: TopicFilter = null): Promise<ConsumerGroupDetail> {
    const kafka = this.pool.get(cluster);
    const [d, allLags] = await Promise.all([this.#describe(kafka, group), this.lag.groupLag(cluster, [group])]);
    if (visible) this.#requireVisible(group, visible, [...allLags.map((l) => l.topic), ...assignedTopics(d)]);
    else if (d.state === "Dead" && allLags.length === 0) throw notFound(`Consumer group '${group}' does not exist`);
    const lags = visible ? allLags.filter((l) => visible(l.topic)) : allLags;
    const owner = new Map<string, { memberId: string; clientId: string; host: string }>();
    for (const m of d.members)
      for (const a of m.assignments)
        owner.set(`${a.topic}\u0000${a.partition}`, { memberId: m.memberId, clientId: m.clientId, host: m.host });
    const seconds = await this.#lagSeconds(kafka, lags);
    const offsets = lags.map((l) => {
      const o = owner.get(`${l.topic}\u0000${l.partition}`);
      return {
        topic: l.topic,
        partition: l.partition,
        currentOffset: l.committed,
        logEndOffset: l.end,
        lag: l.lag,
        lagSeconds: seconds.get(`${l.topic}\u0000${l.partition}`) ?? l.lagSeconds,
        memberId: o?.memberId ?? null,
        clientId: o?.clientId ?? null,
        host: o?.host ?? null,
      };
    });
    return {
      id: group,
      state: d.state === "Dead" ? "Empty" : d.state,
      protocolType: d.protocolType,
      protocol: d.protocol,
      members: d.members.map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        host: m.host,
        assignments: visible ? m.assignments.filter((a) => visible(a.topic)) : m.assignments,
      })),
      offsets,
      lag: offsets.reduce((s, o) => s + o.lag, 0),
    };
  }

  /** Reads the record at each lagging partition's committed offset: its age is the lag in seconds. */
  async #lagSeconds(kafka: KafkaCluster, lags: PartitionLag[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const lagging = lags.filter((l) => l.lag > 0).slice(0, MAX_TIMESTAMP_READS);
    const byTopic = new Map<string, PartitionLag[]>();
    for (const l of lagging) byTopic.set(l.topic, [...(byTopic.get(l.topic) ?? []), l]);
    const now = Date.now();
    await Promise.all(
      [...byTopic].map(async ([topic, list]) => {
        const abort = new AbortController();
        const timer = setTimeout(() => abort.abort(), 3_000);
        const wanted = new Set(list.map((l) => l.partition));
        try {
          for await (const r of kafka.reads.records({
            topic,
            partitions: list.map((l) => ({ partition: l.partition, from: l.committed, to: l.committed + 1 })),
            signal: abort.signal,
            maxWaitMs: 100,
          })) {
            if (!wanted.delete(r.partition)) continue;
            out.set(`${topic}\u0000${r.partition}`, Math.max(0, Math.round((now - r.timestamp) / 100) / 10));
            if (wanted.size === 0) abort.abort();
          }
        } catch {
          /* keep what was read; the sampler's estimate fills the rest */
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    return out;
  }

  /**
   * Moves the group's committed offsets. Only for a group without live members: Kafka refuses
   * otherwise, and a running consumer would overwrite the change at its next commit.
   */
  async resetOffsets(
    cluster: string,
    group: string,
    reset: OffsetReset,
    /** Topics the caller may change offsets of; null: all. */
    allowed: TopicFilter = null,
  ): Promise<Array<TopicPartitionRef & { offset: number }>> {
    // Topics named in the request are checked before Kafka is asked anything.
    requireTopics(allowed, "offsets" in reset ? reset.offsets.map((o) => o.topic) : (reset.topics ?? []));
    const kafka = this.pool.get(cluster);
    const d = await this.#describe(kafka, group);
    if (d.members.length > 0 || !["Empty", "Dead"].includes(d.state))
      throw conflict(
        `Consumer group '${group}' is ${d.state} with ${d.members.length} member${d.members.length === 1 ? "" : "s"}: ` +
          `offsets can only be changed while the group is empty; stop its consumers first`,
        { state: d.state, members: d.members.length },
      );

    const current = async () => {
      const committed = (await kafka.groups.committedOffsets([group])).get(group) ?? [];
      return [...new Set(committed.map((c) => c.topic))];
    };
    const target = await resetTarget(kafka, reset, current, allowed, `Consumer group '${group}'`);
    await kafka.groups.alterOffsets(group, target);
    // Offsets given to a group that did not exist make it one: listed at once, not a cadence later.
    this.inventory?.invalidate(cluster);
    this.lag.invalidate(cluster);
    return target;
  }

  /**
   * Given a filter, every topic the group holds offsets or assignments on must pass it: deleting
   * the group drops its offsets on all of them.
   */
  async delete(cluster: string, group: string, allowed: TopicFilter = null, scoped = allowed !== null): Promise<void> {
    const kafka = this.pool.get(cluster);
    if (allowed) {
      const [d, committed] = await Promise.all([this.#describe(kafka, group), kafka.groups.committedOffsets([group])]);
      const topics = [...new Set([...(committed.get(group) ?? []).map((o) => o.topic), ...assignedTopics(d)])].sort();
      if (topics.length === 0 && scoped) throw groupOutsideScope(group);
      requireTopics(allowed, topics);
    }
    await kafka.groups.delete([group]);
    this.inventory?.invalidate(cluster);
    this.lag.invalidate(cluster);
    await this.history?.forget(cluster, group);
  }
}

function assignedTopics(d: GroupDescription): string[] {
  return d.members.flatMap((m) => m.assignments.map((a) => a.topic));
}

/**
 * A history point with only the visible topics. Its age (lagSeconds) is over every partition of
 * the group, so it is kept only when no hidden topic was lagging at that point: otherwise it
 * may be a hidden topic's age, and the point says unknown.
 */
function visiblePoint(p: LagPoint, visible: (topic: string) => boolean): LagPoint {
  // Every topic visible: the point as it is (a bucket's total maximum is not the sum of its
  // topics' maxima, which peak at different times).
  if (Object.keys(p.topics).every(visible)) return p;
  const topics: Record<string, number> = {};
  const topicLagSeconds: Record<string, number | null> = {};
  let lag = 0;
  let hiddenLag = false;
  for (const [t, n] of Object.entries(p.topics)) {
    if (visible(t)) {
      topics[t] = n;
      topicLagSeconds[t] = p.topicLagSeconds[t] ?? null;
      lag += n;
    } else if (n > 0) hiddenLag = true;
  }
  return { t: p.t, lag, lagSeconds: hiddenLag ? null : p.lagSeconds, topics, topicLagSeconds };
}
