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
 * Kept on disk (history-store.ts): a restart loses nothing. At most `maxGroups` groups per
 * cluster are written at a tick (those with the most lag at that tick win when there are more),
 * which bounds the store with the retention of its two tiers (a day of samples, 30 days of
 * hours): docs/operations.md states the size.
 */

import type { KafkaPool } from "../kafka/index.ts";
import type { Logger } from "../log/logger.ts";
import type { RunObserver } from "../util/background.ts";
import { HOUR_MS, type LagHistoryStore, RAW_KEEP_MS, type StoredLag, type StoredPoint } from "./history-store.ts";
import type { Inventory } from "./inventory.ts";
import type { UnreadRef } from "./record-times.ts";
import { type OffsetSampler, partitionKey, type Sample } from "./sampler.ts";

export interface LagPoint {
  /** Epoch ms of the end-offset sample, or of the bucket's start. */
  t: number;
  /** Records the group has still to read, over all its committed partitions (a bucket's maximum). */
  lag: number;
  /** A bucket's smallest lag; absent for a point of one sample. */
  lagMin?: number;
  /** Age of the oldest unread record over the group's partitions (sampler's estimate); null when unknown. */
  lagSeconds: number | null;
  /** Lag per topic, in records (a bucket's maximum per topic). */
  topics: Record<string, number>;
  /** Age of each topic's oldest unread record (a bucket's maximum); null when unknown. */
  topicLagSeconds: Record<string, number | null>;
}

/** A group's history over a window, at the resolution the window calls for. */
export interface LagSeries {
  /** Time between two points: the sampler's interval, or a bucket's width. */
  intervalMs: number;
  /** Points are buckets (maxima) rather than samples. */
  downsampled: boolean;
  points: LagPoint[];
}

/** Up to this window, one point per sample; to a day, 5-minute buckets of the samples; beyond, the hourly tier. */
export const RAW_WINDOW_MS = 6 * HOUR_MS;
export const BUCKET_MS = 300_000;
/** The longest window the history answers. */
export const MAX_WINDOW_MS = 30 * 86_400_000;

export class LagHistory {
  /** Hears of each point recorded, or failed (see start). */
  #runs: RunObserver | undefined;
  /** Whether this instance writes the history now (one of those sharing the store does); absent: always. */
  #elected: (() => Promise<boolean>) | undefined;
  #stopped = false;
  /** Ticks being recorded: a stop waits for them, so none writes to a store closed after it. */
  readonly #writing = new Set<Promise<void>>();

  /** Follows the sampler's ticks from now (start() only adds whom it tells; stop() ends it). */
  constructor(
    private readonly pool: KafkaPool,
    private readonly sampler: OffsetSampler,
    private readonly store: LagHistoryStore,
    /** Groups written per tick and cluster (lag.historyGroups), the most lagging first. */
    readonly maxGroups = 2_000,
    private readonly log?: Logger,
    /** Where the groups are listed at each tick; without one, Kafka is asked. */
    private readonly inventory?: Inventory,
  ) {
    sampler.onSample(async (cluster, sample) => {
      if (this.#stopped) return;
      const run = (async () => {
        try {
          if (this.#elected && !(await this.#elected())) return;
          await this.record(cluster, sample);
          this.#runs?.ran();
        } catch (e) {
          this.log?.debug("lag history tick failed", { cluster, error: (e as Error).message });
          this.#runs?.failed(new Error(`cluster '${cluster}': ${(e as Error).message}`));
        }
      })();
      this.#writing.add(run);
      await run.finally(() => this.#writing.delete(run));
    });
  }

  /** The clock of windows and pruning: the sampler's, so a test that sets it moves both. */
  now(): number {
    return this.sampler.now();
  }

  /**
   * Records at each sampler tick (again, after a stop), telling `runs` of each; with `elected`,
   * only the ticks at which it answers true (the instance holding the history's lease).
   */
  start(runs?: RunObserver, elected?: () => Promise<boolean>): void {
    this.#stopped = false;
    this.#runs = runs;
    this.#elected = elected;
  }

  /** Records no more points (those kept stay); resolves once the ticks under way are written. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all(this.#writing);
  }

  /** Reads every group's committed offsets and stores one point per group and topic, at the sample's time. */
  async record(cluster: string, sample: Sample): Promise<void> {
    const kafka = this.pool.get(cluster);
    const groups = this.inventory ? await this.inventory.groups(cluster) : await kafka.groups.list();
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
    const points = new Map<string, StoredLag>();
    for (const [group, offsets] of committed) {
      if (offsets.length === 0) continue;
      const point: StoredLag = { lag: 0, lagMs: 0, topics: {} };
      for (const c of offsets) {
        const end = sample.ends.get(partitionKey(c.topic, c.partition));
        if (end === undefined) continue;
        const lag = Math.max(0, end - c.offset);
        point.lag += lag;
        const topic = (point.topics[c.topic] ??= { lag: 0, lagMs: 0 });
        topic.lag += lag;
        if (lag === 0) continue;
        const appended = this.sampler.appendTimeOf(cluster, c.topic, c.partition, c.offset);
        const age = appended ? Math.max(0, sample.t - appended.t) : null;
        topic.lagMs = age === null || topic.lagMs === null ? null : Math.max(topic.lagMs, age);
        point.lagMs = age === null || point.lagMs === null ? null : Math.max(point.lagMs, age);
      }
      points.set(group, point);
    }
    let kept = [...points];
    if (kept.length > this.maxGroups) kept = kept.sort((a, b) => b[1].lag - a[1].lag).slice(0, this.maxGroups);
    await this.store.write(cluster, sample.t, new Map(kept));
  }

  /**
   * The group's points of the last `windowMs` (to the clock's now): one per sample up to six
   * hours, 5-minute buckets of the samples up to a day, hourly buckets beyond. null when the
   * store holds nothing of the group.
   */
  async points(cluster: string, group: string, windowMs: number): Promise<LagSeries | null> {
    const from = this.now() - Math.min(windowMs, MAX_WINDOW_MS);
    if (windowMs > RAW_KEEP_MS) {
      const hours = await this.store.hours(cluster, group, from);
      if (hours.length === 0 && !(await this.store.has(cluster, group))) return null;
      return { intervalMs: HOUR_MS, downsampled: true, points: hours.map(lagPoint) };
    }
    const raw = await this.store.raw(cluster, group, from);
    if (raw.length === 0 && !(await this.store.has(cluster, group))) return null;
    if (windowMs <= RAW_WINDOW_MS) return { intervalMs: this.sampler.intervalMs, downsampled: false, points: raw.map(lagPoint) };
    return { intervalMs: BUCKET_MS, downsampled: true, points: buckets(raw, BUCKET_MS).map(lagPoint) };
  }

  /** Drops a deleted group's history at once. */
  forget(cluster: string, group: string): Promise<void> {
    return this.store.forget(cluster, group);
  }

  /** Deletes what is past the retention of each tier (the lag-history-prune job). */
  prune(): Promise<{ raw: number; hours: number; series: number }> {
    return this.store.prune(this.now());
  }

  /** Groups with a history on the cluster (a figure for tests). */
  size(cluster: string): Promise<number> {
    return this.store.groupCount(cluster);
  }
}

function lagPoint(p: StoredPoint): LagPoint {
  return {
    t: p.t,
    lag: p.lag,
    ...(p.lagMin === undefined ? {} : { lagMin: p.lagMin }),
    lagSeconds: seconds(p.lagMs),
    topics: p.topics,
    topicLagSeconds: Object.fromEntries(Object.entries(p.topicsMs).map(([topic, ms]) => [topic, seconds(ms)])),
  };
}

const seconds = (ms: number | null) => (ms === null ? null : Math.round(ms / 100) / 10);

/** The larger of two ages, an unknown one ignored. */
const maxKnown = (a: number | null, b: number | null) => (a === null || b === null ? (a ?? b) : Math.max(a, b));

/** Samples into buckets of `width` ms: the maxima of each, and the smallest total. */
function buckets(points: StoredPoint[], width: number): StoredPoint[] {
  const out: StoredPoint[] = [];
  for (const p of points) {
    const t = Math.floor(p.t / width) * width;
    const b = out.at(-1);
    if (b?.t !== t) {
      out.push({ t, lag: p.lag, lagMin: p.lag, lagMs: p.lagMs, topics: { ...p.topics }, topicsMs: { ...p.topicsMs } });
      continue;
    }
    b.lag = Math.max(b.lag, p.lag);
    b.lagMin = Math.min(b.lagMin!, p.lag);
    b.lagMs = maxKnown(b.lagMs, p.lagMs);
    for (const [topic, lag] of Object.entries(p.topics)) b.topics[topic] = Math.max(b.topics[topic] ?? 0, lag);
    for (const [topic, ms] of Object.entries(p.topicsMs)) b.topicsMs[topic] = maxKnown(b.topicsMs[topic] ?? null, ms);
  }
  return out;
}
