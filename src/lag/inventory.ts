/**
 * The inventory of each cluster: its topics (name, partitions, replication, internal) and its
 * consumer groups (id, state, type, protocol type), kept in memory and refreshed on a cadence
 * (`inventory.refreshInterval`) instead of on every request. At 10,000 topics and 10,000 groups
 * a listing is one Metadata request and one ListGroups per broker, whatever reads it: the topic
 * and group lists, the lag engine (so /metrics and the overview), the sampler and lag history.
 *
 * A read within the interval takes the last listing; an older one (no background refresh, or
 * a failing one) refreshes first. Concurrent refreshes join. Loupe's own changes (a topic
 * created, deleted or grown, a group deleted or given offsets) `invalidate` the cluster, so the
 * next read lists again and its user sees the change at once; a refresh that started before
 * the change is not joined nor kept. An interval of 0 lists on every read (joined), as before.
 *
 * Callers that need the broker's present state (waiting for a created topic to be described,
 * a deleted one to be gone) ask Kafka directly, not the inventory.
 */

import type { GroupSummary, KafkaPool, TopicSummary } from "../kafka/index.ts";

export interface ClusterInventory {
  /** When the listing was taken (the inventory's clock). */
  at: number;
  /** Every topic, internal ones included, by name. */
  topics: TopicSummary[];
  /** Consumer groups of both protocols (share groups are listed apart), by id. */
  groups: GroupSummary[];
}

interface Refresh {
  generation: number;
  promise: Promise<ClusterInventory>;
}

export class Inventory {
  readonly #cache = new Map<string, ClusterInventory>();
  readonly #running = new Map<string, Refresh>();
  /** Per cluster, bumped by invalidate(): a refresh of an older generation is neither joined nor kept. */
  readonly #generation = new Map<string, number>();
  readonly #now: () => number;

  constructor(
    private readonly pool: KafkaPool,
    private readonly opts: { intervalMs: number; now?: () => number },
  ) {
    this.#now = opts.now ?? Date.now;
  }

  get intervalMs(): number {
    return this.opts.intervalMs;
  }

  /** The cluster's listing, at most one interval old. */
  async get(cluster: string): Promise<ClusterInventory> {
    const cached = this.#cache.get(cluster);
    if (cached && this.opts.intervalMs > 0 && this.#now() - cached.at < this.opts.intervalMs) return cached;
    return this.refresh(cluster);
  }

  /** Topics by name; internal ones only when asked. */
  async topics(cluster: string, opts: { includeInternal?: boolean } = {}): Promise<TopicSummary[]> {
    const { topics } = await this.get(cluster);
    return opts.includeInternal ? topics : topics.filter((t) => !t.internal);
  }

  async groups(cluster: string): Promise<GroupSummary[]> {
    return (await this.get(cluster)).groups;
  }

  /** Lists the cluster now (joins a refresh under way that started after the last invalidation). */
  refresh(cluster: string): Promise<ClusterInventory> {
    const generation = this.#generation.get(cluster) ?? 0;
    const running = this.#running.get(cluster);
    if (running && running.generation === generation) return running.promise;
    const kafka = this.pool.get(cluster);
    const promise = Promise.all([kafka.topics.list({ includeInternal: true }), kafka.groups.list()])
      .then(([topics, groups]) => {
        const listed = { at: this.#now(), topics, groups };
        if ((this.#generation.get(cluster) ?? 0) === generation) this.#cache.set(cluster, listed);
        return listed;
      })
      .finally(() => {
        if (this.#running.get(cluster)?.promise === promise) this.#running.delete(cluster);
      });
    this.#running.set(cluster, { generation, promise });
    return promise;
  }

  /** Forgets the cluster's listing: the next read lists again (after a change Loupe made). */
  invalidate(cluster: string): void {
    this.#generation.set(cluster, (this.#generation.get(cluster) ?? 0) + 1);
    this.#cache.delete(cluster);
  }

  /**
   * The background cadence: refreshes the clusters read so far (an idle Loupe sends nothing).
   * Every cluster is tried; the first failure is thrown for the job's status.
   */
  async refreshAll(): Promise<void> {
    const clusters = [...new Set([...this.#cache.keys(), ...this.#generation.keys()])];
    const results = await Promise.allSettled(clusters.map((c) => this.refresh(c)));
    const failed = results.find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
  }
}
