/**
 * Lag history of consumer groups: at each tick of the end-offset sampler, the committed
 * offsets of every group are read and subtracted from the end offsets of that very sample.
 *
 * Why this way: lag at time t needs both ends of the subtraction at t. The sampler already
 * pays for the end offsets of every partition at every tick; committed offsets cost one
 * ListGroups per broker and one batched OffsetFetch per group coordinator more, whatever the
 * number of groups. Recording the lags the engine computes instead would cost nothing, but
 * gives points only when someone happens to look, so a chart opened after an incident would
 * be empty exactly where it matters.
 *
 * Memory is bounded: at most `maxGroups` groups per cluster (those with the most lag at the
 * latest tick win when there are more; a group that falls out loses its series), and per group
 * a ring of at most `maxPoints` points no older than `windowMs`.
 */

import type { KafkaPool } from "../kafka/index.ts";
import type { Logger } from "../log/logger.ts";
import type { RunObserver } from "../util/background.ts";
import type { UnreadRef } from "./record-times.ts";
import { type OffsetSampler, partitionKey, type Sample } from "./sampler.ts";

export interface LagPoint {
  /** Epoch ms of the end-offset sample. */
  t: number;
  /** Records the group has still to read, over all its committed partitions. */
  lag: number;
  /** Age of the oldest unread record over the group's partitions (sampler's estimate); null when unknown. */
  lagSeconds: number | null;
  /** Lag per topic, in records. */
  topics: Record<string, number>;
}

export interface LagHistoryOptions {
  windowMs: number;
  maxGroups: number;
  maxPoints: number;
}

export const LAG_HISTORY_DEFAULTS: LagHistoryOptions = { windowMs: 3_600_000, maxGroups: 500, maxPoints: 720 };

export class LagHistory {
  /** cluster -> group -> points, oldest first. */
  readonly #rings = new Map<string, Map<string, LagPoint[]>>();
  readonly opts: LagHistoryOptions;
  /** Hears of each point recorded, or failed (see start). */
  #runs: RunObserver | undefined;
  #stopped = false;

  /** Follows the sampler's ticks from now (start() only adds whom it tells; stop() ends it). */
  constructor(
    private readonly pool: KafkaPool,
    private readonly sampler: OffsetSampler,
    opts: Partial<LagHistoryOptions> = {},
    private readonly log?: Logger,
  ) {
    this.opts = { ...LAG_HISTORY_DEFAULTS, ...opts };
    sampler.onSample(async (cluster, sample) => {
      if (this.#stopped) return;
      try {
        await this.record(cluster, sample);
        this.#runs?.ran();
      } catch (e) {
        this.log?.debug("lag history tick failed", { cluster, error: (e as Error).message });
        this.#runs?.failed(new Error(`cluster '${cluster}': ${(e as Error).message}`));
      }
    });
  }

  /** Records at each sampler tick (again, after a stop), telling `runs` of each. */
  start(runs?: RunObserver): void {
    this.#stopped = false;
    this.#runs = runs;
  }

  /** Records no more points (those kept stay). */
  stop(): void {
    this.#stopped = true;
  }

  /** Reads every group's committed offsets and adds one point per group, at the sample's time. */
  async record(cluster: string, sample: Sample): Promise<void> {
    const kafka = this.pool.get(cluster);
    const groups = await kafka.groups.list();
    const committed = await kafka.groups.committedOffsets(groups.map((g) => g.groupId));
    // Unread records older than the sampler's history are dated by their own timestamp (read
    // once per committed offset), as the group's page does: the sampler alone would stop the
    // age at its window (10 minutes) while the group falls further behind.
    const undated: UnreadRef[] = [];
    for (const offsets of committed.values())
      for (const c of offsets) {
        const end = sample.ends.get(partitionKey(c.topic, c.partition));
        if (end === undefined || end <= c.offset) continue;
        if (this.sampler.appendTimeOf(cluster, c.topic, c.partition, c.offset)?.source !== "history")
          undated.push({ topic: c.topic, partition: c.partition, offset: c.offset, end });
      }
    await this.sampler.dateUnread(cluster, undated);
    const points = new Map<string, LagPoint>();
    for (const [group, offsets] of committed) {
      if (offsets.length === 0) continue;
      const point: LagPoint = { t: sample.t, lag: 0, lagSeconds: null, topics: {} };
      let known = true;
      let oldest = 0;
      for (const c of offsets) {
        const end = sample.ends.get(partitionKey(c.topic, c.partition));
        if (end === undefined) continue;
        const lag = Math.max(0, end - c.offset);
        point.lag += lag;
        point.topics[c.topic] = (point.topics[c.topic] ?? 0) + lag;
        if (lag === 0) continue;
        const appended = this.sampler.appendTimeOf(cluster, c.topic, c.partition, c.offset);
        if (appended) oldest = Math.max(oldest, sample.t - appended.t);
        else known = false;
      }
      if (known) point.lagSeconds = Math.round(oldest / 100) / 10;
      points.set(group, point);
    }
    this.#add(cluster, points);
  }

  #add(cluster: string, points: Map<string, LagPoint>): void {
    const rings = this.#rings.get(cluster) ?? new Map<string, LagPoint[]>();
    this.#rings.set(cluster, rings);
    // Groups gone from the cluster take their history with them.
    for (const group of rings.keys()) if (!points.has(group)) rings.delete(group);
    let kept = [...points];
    if (kept.length > this.opts.maxGroups) {
      kept = kept.sort((a, b) => b[1].lag - a[1].lag).slice(0, this.opts.maxGroups);
      const keep = new Set(kept.map(([g]) => g));
      for (const group of rings.keys()) if (!keep.has(group)) rings.delete(group);
    }
    for (const [group, point] of kept) {
      const ring = rings.get(group) ?? [];
      ring.push(point);
      const cutoff = point.t - this.opts.windowMs;
      let drop = Math.max(0, ring.length - this.opts.maxPoints);
      while (drop < ring.length && ring[drop]!.t < cutoff) drop++;
      if (drop > 0) ring.splice(0, drop);
      rings.set(group, ring);
    }
  }

  /** The group's points of the last `windowMs` (before its latest); null when the group is not followed. */
  points(cluster: string, group: string, windowMs = this.opts.windowMs): LagPoint[] | null {
    const ring = this.#rings.get(cluster)?.get(group);
    if (!ring) return null;
    const last = ring.at(-1);
    if (!last) return [];
    const cutoff = last.t - windowMs;
    return ring.filter((p) => p.t >= cutoff);
  }

  /** Drops a deleted group's history at once rather than at the next tick. */
  forget(cluster: string, group: string): void {
    this.#rings.get(cluster)?.delete(group);
  }

  /** Groups followed on the cluster (a figure for tests and the memory bound in docs/api.md). */
  size(cluster: string): number {
    return this.#rings.get(cluster)?.size ?? 0;
  }
}
