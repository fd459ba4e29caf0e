/**
 * The lag engine: consumer lag of every group of a cluster, computed with a fixed number of
 * broker requests whatever the number of groups, and shared by every caller (topics,
 * consumer groups, /metrics, alerts) for `ttlMs`.
 *
 * One snapshot costs:
 *  - ListGroups and Metadata: none while the inventory's listing is fresh (inventory.ts), else one
 *    ListGroups per broker and one Metadata request;
 *  - FindCoordinator + OffsetFetch: one batched request each per group coordinator;
 *  - ListOffsets (latest): one request per partition leader;
 *  - share groups (Kafka 4): ListGroups per broker, then FindCoordinator and
 *    DescribeShareGroupOffsets per coordinator, ListOffsets per leader (waited for at most
 *    SHARE_LAG_WAIT_MS: a slower answer serves the next snapshot).
 * Concurrent callers join the snapshot under way; callers within `ttlMs` reuse the last one.
 */

import type { GroupSummary, KafkaPool } from "../kafka/index.ts";
import { Inventory } from "./inventory.ts";
import { type OffsetSampler, partitionKey } from "./sampler.ts";

export interface PartitionLag {
  group: string;
  topic: string;
  partition: number;
  /** The group's committed offset: the next record it will read. */
  committed: number;
  /** Log end offset (high watermark). */
  end: number;
  lag: number;
  /** Estimated age of the oldest unread record, from the sampler's history; null when unknown. */
  lagSeconds: number | null;
}

export interface LagSnapshot {
  cluster: string;
  takenAt: number;
  groups: GroupSummary[];
  /** Every committed partition of every group, sorted by group, topic, partition. */
  partitions: PartitionLag[];
  /**
   * Kafka 4 share groups' lag per partition (records from the start offset to the end not yet
   * acknowledged); empty on a cluster without share groups or when they could not be read.
   */
  shares: ShareGroupLag[];
  /**
   * When `shares` was read: before `takenAt` when the broker took longer than SHARE_LAG_WAIT_MS
   * and the snapshot took the last figures (null: never read).
   */
  sharesAt: number | null;
  /** End offsets of the committed partitions, by partitionKey(). */
  ends: Map<string, number>;
  /** Broker requests the snapshot needed (approximate when other calls run at the same time). */
  brokerRequests: number;
  durationMs: number;
}

export interface ShareGroupLag {
  group: string;
  topic: string;
  partition: number;
  lag: number;
}

export interface TopicGroupLag {
  group: string;
  topic: string;
  lag: number;
  partitions: PartitionLag[];
}

/**
 * How long a snapshot waits for the share groups' lag. A broker answers DescribeShareGroupOffsets
 * in about 2 s while a group's share state is being written (seen right after its start offsets
 * were reset); /metrics and the overview must not wait for that: the snapshot takes the last
 * figures instead, and the answer, when it comes, serves the next one.
 */
export const SHARE_LAG_WAIT_MS = 500;

/** The share groups' lag last read of a cluster, when, and the read under way. */
interface ShareRead {
  last: ShareGroupLag[];
  at: number | null;
  reading?: Promise<ShareGroupLag[]> | undefined;
}

export class LagEngine {
  readonly #cache = new Map<string, { snapshot: LagSnapshot; at: number }>();
  readonly #running = new Map<string, Promise<LagSnapshot>>();
  /** Per cluster: the share groups' lag last read, and the read under way. */
  readonly #shares = new Map<string, ShareRead>();
  /** The sampler's clock by default: lag seconds subtract its sample times from this one. */
  readonly #now: () => number;
  /** The topics and groups a snapshot reads (listed on the inventory's cadence). */
  readonly #inventory: Inventory;

  constructor(
    private readonly pool: KafkaPool,
    private readonly sampler: OffsetSampler | null,
    private readonly opts: { ttlMs: number; now?: () => number; inventory?: Inventory },
  ) {
    this.#now = opts.now ?? sampler?.now ?? Date.now;
    this.#inventory = opts.inventory ?? new Inventory(pool, { intervalMs: 0 });
  }

  /** The cluster's lag, at most `ttlMs` old (or `maxAgeMs` when given: 0 forces a fresh one). */
  async snapshot(cluster: string, opts: { maxAgeMs?: number } = {}): Promise<LagSnapshot> {
    const maxAge = opts.maxAgeMs ?? this.opts.ttlMs;
    const cached = this.#cache.get(cluster);
    if (cached && this.#now() - cached.at <= maxAge) return cached.snapshot;
    const running = this.#running.get(cluster);
    if (running) return running;
    const p = this.#compute(cluster).finally(() => this.#running.delete(cluster));
    this.#running.set(cluster, p);
    const snapshot = await p;
    this.#cache.set(cluster, { snapshot, at: this.#now() });
    return snapshot;
  }

  /**
   * Fresh lag of a few named groups (a group's detail page), by the same batched path as a
   * snapshot: one OffsetFetch for all of them, one ListOffsets per leader.
   */
  async groupLag(cluster: string, groupIds: string[]): Promise<PartitionLag[]> {
    return (await this.#compute(cluster, groupIds)).partitions;
  }

  /** Drops the cached snapshot (after a change of offsets or groups). */
  invalidate(cluster: string): void {
    this.#cache.delete(cluster);
  }

  /** Per group and topic sums of a snapshot. */
  static byTopic(snapshot: LagSnapshot): TopicGroupLag[] {
    const out = new Map<string, TopicGroupLag>();
    for (const p of snapshot.partitions) {
      const key = `${p.group}\u0000${p.topic}`;
      let entry = out.get(key);
      if (!entry) out.set(key, (entry = { group: p.group, topic: p.topic, lag: 0, partitions: [] }));
      entry.lag += p.lag;
      entry.partitions.push(p);
    }
    return [...out.values()];
  }

  /** The share groups' lag, or the last read when the broker takes longer than SHARE_LAG_WAIT_MS. */
  #shareLag(cluster: string): Promise<{ lag: ShareGroupLag[]; at: number | null }> {
    const entry: ShareRead = this.#shares.get(cluster) ?? { last: [], at: null };
    this.#shares.set(cluster, entry);
    entry.reading ??= this.pool
      .get(cluster)
      .shareGroups.lag()
      // A failure (a cluster before Kafka 4) leaves them out.
      .catch(() => [])
      .then((lag) => {
        entry.last = lag;
        entry.at = this.#now();
        entry.reading = undefined;
        return lag;
      });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, SHARE_LAG_WAIT_MS);
    });
    return Promise.race([entry.reading, late])
      .then(() => ({ lag: entry.last, at: entry.at }))
      .finally(() => clearTimeout(timer));
  }

  async #compute(cluster: string, only?: string[]): Promise<LagSnapshot> {
    const kafka = this.pool.get(cluster);
    const t0 = performance.now();
    const before = kafka.requestCount();
    const [groups, topics, shares] = await Promise.all([
      only
        ? only.map((groupId) => ({ groupId, state: "Unknown" as const, type: null, protocolType: "" }))
        : this.#inventory.groups(cluster),
      // Internal topics stay out: the Kafka client's ListOffsets cannot look them up.
      this.#inventory.topics(cluster),
      // Share groups' lag is their broker's own figure; a failure (a cluster before Kafka 4) leaves it out.
      only ? { lag: [], at: null } : this.#shareLag(cluster),
    ]);
    const partitionsOf = new Map(topics.map((t) => [t.name, t.partitions]));
    const committed = await kafka.groups.committedOffsets(groups.map((g) => g.groupId));
    const refs = new Map<string, { topic: string; partition: number }>();
    for (const list of committed.values()) {
      for (const c of list) {
        if (c.partition >= (partitionsOf.get(c.topic) ?? 0)) continue;
        refs.set(partitionKey(c.topic, c.partition), { topic: c.topic, partition: c.partition });
      }
    }
    let listed: Awaited<ReturnType<typeof kafka.offsets.list>>;
    for (let attempt = 1; ; attempt++) {
      try {
        listed = await kafka.offsets.list([...refs.values()], "latest");
        break;
      } catch (e) {
        // A topic deleted since the listing (the inventory's, up to one interval old) fails the
        // whole request: leave out the topics Kafka no longer has and ask again, rather than fail
        // every caller's lag.
        if ((e as { code?: string }).code !== "NOT_FOUND" || attempt >= 3) throw e;
        this.#inventory.invalidate(cluster);
        const present = new Set((await kafka.topics.list()).map((t) => t.name));
        for (const [key, ref] of refs) if (!present.has(ref.topic)) refs.delete(key);
      }
    }
    const takenAt = this.#now();
    const ends = new Map<string, number>();
    for (const o of listed) if (o.offset >= 0) ends.set(partitionKey(o.topic, o.partition), o.offset);

    const partitions: PartitionLag[] = [];
    for (const g of groups) {
      for (const c of committed.get(g.groupId) ?? []) {
        const end = ends.get(partitionKey(c.topic, c.partition));
        if (end === undefined) continue;
        const lag = Math.max(0, end - c.offset);
        partitions.push({
          group: g.groupId,
          topic: c.topic,
          partition: c.partition,
          committed: c.offset,
          end,
          lag,
          lagSeconds: lag === 0 ? 0 : this.#lagSeconds(cluster, c.topic, c.partition, c.offset, takenAt),
        });
      }
    }
    partitions.sort((a, b) => a.group.localeCompare(b.group) || a.topic.localeCompare(b.topic) || a.partition - b.partition);
    return {
      cluster,
      takenAt,
      groups,
      partitions,
      shares: shares.lag,
      sharesAt: shares.at,
      ends,
      brokerRequests: kafka.requestCount() - before,
      durationMs: Math.round((performance.now() - t0) * 10) / 10,
    };
  }

  #lagSeconds(cluster: string, topic: string, partition: number, committed: number, now: number): number | null {
    const appended = this.sampler?.appendTimeOf(cluster, topic, partition, committed);
    if (!appended) return null;
    return Math.max(0, Math.round((now - appended.t) / 100) / 10);
  }
}
