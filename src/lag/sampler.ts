/**
 * The end-offset sampler: every `intervalMs` it reads the end offset of every partition of
 * every configured cluster (one Metadata request plus one ListOffsets request per partition
 * leader), and keeps the samples of the last `windowMs`. Rates (messages per second) and
 * lag-in-seconds estimates come from this history, so no request ever sleeps to measure a
 * rate, and the cost does not grow with the number of callers.
 */

import type { KafkaPool } from "../kafka/index.ts";
import type { Logger } from "../log/logger.ts";
import type { RunObserver } from "../util/background.ts";
import type { Inventory } from "./inventory.ts";
import { MAX_READS_PER_TICK, readUnreadTimes, type UnreadRef, unreadKey } from "./record-times.ts";

export interface Sample {
  /** Epoch ms when the offsets were read. */
  t: number;
  /** End offset per `topic\0partition`. */
  ends: Map<string, number>;
}

export const partitionKey = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

/** Rates are taken over at most this much recent history, so they follow changes of pace. */
const RATE_SPAN_MS = 60_000;

/**
 * A sample's end offsets by topic, then partition, built on first use and dropped when the sample
 * changes. The topic list asks the rate of every topic: without it each asking scanned every
 * partition of the sample, quadratic in the topics (38 s for the list at 10,000 topics).
 */
const byTopicCache = new WeakMap<Sample, Map<string, Map<number, number>>>();

function byTopic(sample: Sample): Map<string, Map<number, number>> {
  let index = byTopicCache.get(sample);
  if (index) return index;
  index = new Map();
  for (const [key, offset] of sample.ends) {
    const cut = key.lastIndexOf("\u0000");
    const topic = key.slice(0, cut);
    let partitions = index.get(topic);
    if (!partitions) index.set(topic, (partitions = new Map()));
    partitions.set(Number(key.slice(cut + 1)), offset);
  }
  byTopicCache.set(sample, index);
  return index;
}

/** How an append time was found (see appendTimeOf). */
export type AppendTimeSource = "history" | "record" | "bound";

export class OffsetSampler {
  readonly #history = new Map<string, Sample[]>();
  /** Per cluster, timestamps of records older than the history, by unreadKey (null: no record there). */
  readonly #unread = new Map<string, Map<string, number | null>>();
  #timer: ReturnType<typeof setInterval> | null = null;
  #running = new Map<string, Promise<void>>();
  #stopped = false;
  readonly #listeners: Array<(cluster: string, sample: Sample) => Promise<void>> = [];
  /**
   * The clock samples are stamped with (epoch ms). Rates and lag seconds are differences of
   * its readings, so a test that sets it moves time instead of waiting for it to pass.
   */
  readonly now: () => number;

  constructor(
    private readonly pool: KafkaPool,
    private readonly opts: {
      intervalMs: number;
      windowMs: number;
      now?: () => number;
      /** Where the topics are listed (the first try of a tick); without one, Kafka is asked. */
      inventory?: Inventory;
    },
    private readonly log?: Logger,
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** Time between two ticks (0: no timer; callers tick). */
  get intervalMs(): number {
    return this.opts.intervalMs;
  }

  /** Starts sampling every cluster now and every `intervalMs`; `runs` hears of each tick (failed when a cluster's sample did). */
  start(runs?: RunObserver): void {
    if (this.#timer || this.opts.intervalMs <= 0) return;
    this.#stopped = false;
    const tick = () => {
      const names = this.pool.names();
      void Promise.allSettled(names.map((name) => this.sampleNow(name))).then((results) => {
        const i = results.findIndex((r) => r.status === "rejected");
        if (i < 0) runs?.ran();
        else runs?.failed(new Error(`cluster '${names[i]}': ${((results[i] as PromiseRejectedResult).reason as Error)?.message}`));
      });
    };
    this.#timer = setInterval(tick, this.opts.intervalMs);
    this.#timer.unref?.();
    tick();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** Reads one sample of `cluster` (joins a sample already under way). */
  sampleNow(cluster: string): Promise<void> {
    const running = this.#running.get(cluster);
    if (running) return running;
    const p = (async () => {
      try {
        const kafka = this.pool.get(cluster);
        for (let attempt = 1; ; attempt++) {
          // Internal topics stay out: the Kafka client's ListOffsets cannot look them up. A retry
          // asks Kafka itself: the inventory's listing had a topic since deleted.
          const topics = attempt === 1 && this.opts.inventory ? await this.opts.inventory.topics(cluster) : await kafka.topics.list();
          const refs = topics.flatMap((t) => Array.from({ length: t.partitions }, (_, partition) => ({ topic: t.name, partition })));
          const t = this.now();
          try {
            const ends = await kafka.offsets.list(refs, "latest");
            if (this.#stopped) return;
            this.record(cluster, t, ends);
            const sample = this.samples(cluster).at(-1);
            // Awaited so that a tick is over when its readers are (a test ticks, then reads).
            if (sample) await Promise.allSettled(this.#listeners.map((l) => l(cluster, sample)));
            return;
          } catch (e) {
            // A topic deleted between the listing and ListOffsets fails the whole request: list
            // again rather than lose the sample (topics come and go all the time on busy clusters).
            if ((e as { code?: string }).code !== "NOT_FOUND" || attempt >= 3) throw e;
          }
        }
      } catch (e) {
        this.log?.debug("end-offset sample failed", { cluster, error: (e as Error).message });
        throw e;
      } finally {
        this.#running.delete(cluster);
      }
    })();
    this.#running.set(cluster, p);
    return p;
  }

  /**
   * Called after each full sample (every partition of the cluster), not after the partial ones
   * callers add through record(): the lag history reads committed offsets at the same tick.
   */
  onSample(listener: (cluster: string, sample: Sample) => Promise<void>): void {
    this.#listeners.push(listener);
  }

  /** Adds a sample; also used by callers that read end offsets anyway (GET topic). */
  record(cluster: string, t: number, ends: Array<{ topic: string; partition: number; offset: number }>): void {
    const map = new Map<string, number>();
    for (const e of ends) if (e.offset >= 0) map.set(partitionKey(e.topic, e.partition), e.offset);
    const list = this.#history.get(cluster) ?? [];
    // A partial sample (one topic) must not replace a full one: merge into the latest when
    // close in time. Only what the latest lacks is added: its own readings belong to its time,
    // and a later, higher one stamped with it would hide the records written in between.
    const last = list.at(-1);
    if (last && t - last.t < Math.min(1_000, this.opts.intervalMs / 2)) {
      for (const [k, v] of map) if (!last.ends.has(k)) last.ends.set(k, v);
      byTopicCache.delete(last);
    } else {
      list.push({ t, ends: map });
    }
    const cutoff = t - this.opts.windowMs;
    while (list.length > 2 && list[0]!.t < cutoff) list.shift();
    this.#history.set(cluster, list);
  }

  samples(cluster: string): readonly Sample[] {
    return this.#history.get(cluster) ?? [];
  }

  /**
   * Messages per second of a topic over the recent history, ending at `now` (current end
   * offsets the caller just read) or at the latest sample. 0 until two points exist.
   */
  rate(cluster: string, topic: string, now?: { t: number; ends: Array<{ partition: number; offset: number }> }): number {
    const history = this.samples(cluster);
    const hasTopic = (s: Sample) => byTopic(s).has(topic);
    // Partial samples (one topic, from a GET) sit between full ones: use the latest that has it.
    const latest = now ? undefined : history.findLast(hasTopic);
    const endT = now ? now.t : latest?.t;
    const ends = now ? new Map(now.ends.map((e) => [e.partition, e.offset])) : latest && byTopic(latest).get(topic);
    if (endT === undefined || !ends) return 0;
    // The oldest recent sample that knows the topic (a new topic is absent from older ones).
    const from = history.find((s) => s.t >= endT - RATE_SPAN_MS && endT - s.t >= 500 && hasTopic(s));
    if (!from) return 0;
    const before = byTopic(from).get(topic)!;
    let messages = 0;
    let seen = false;
    for (const [partition, offset] of ends) {
      const was = before.get(partition);
      if (was === undefined) continue;
      seen = true;
      messages += Math.max(0, offset - was);
    }
    if (!seen) return 0;
    return Math.round((messages / ((endT - from.t) / 1000)) * 1000) / 1000;
  }

  /**
   * When the record at `offset` was appended, estimated from the history of end offsets: it
   * arrived between the last sample whose end was at or below it and the next one
   * (interpolated linearly; source "history"). Older than every sample: the record's own
   * timestamp when dateUnread() read it ("record"), else the first sample's time, which only
   * says the record is at least that old ("bound"). null when newer than the latest sample, or
   * the partition is in no sample.
   */
  appendTimeOf(cluster: string, topic: string, partition: number, offset: number): { t: number; source: AppendTimeSource } | null {
    const history = this.samples(cluster);
    const key = partitionKey(topic, partition);
    let after: { t: number; end: number } | null = null;
    for (let i = history.length - 1; i >= 0; i--) {
      const s = history[i]!;
      const end = s.ends.get(key);
      if (end === undefined) continue;
      if (end <= offset) {
        if (!after) return null;
        const span = after.end - end;
        const frac = span > 0 ? (offset - end + 1) / span : 1;
        return { t: Math.round(s.t + frac * (after.t - s.t)), source: "history" };
      }
      after = { t: s.t, end };
    }
    const read = this.#unread.get(cluster)?.get(unreadKey({ topic, partition, offset }));
    if (typeof read === "number") return { t: read, source: "record" };
    return after ? { t: after.t, source: "bound" } : null;
  }

  /**
   * Dates the unread records the history cannot (`refs`: committed offsets of lagging groups,
   * older than every sample) by reading each one's record, at most MAX_READS_PER_TICK new ones
   * a call; a record read once is not read again while its offset is asked. Keeps only what
   * `refs` asks, so what it holds is bounded by the groups' partitions of now.
   */
  async dateUnread(cluster: string, refs: UnreadRef[]): Promise<void> {
    const known = this.#unread.get(cluster) ?? new Map<string, number | null>();
    const kept = new Map<string, number | null>();
    const missing = new Map<string, UnreadRef>();
    for (const r of refs) {
      const key = unreadKey(r);
      const value = known.get(key);
      if (value !== undefined) kept.set(key, value);
      else if (missing.size < MAX_READS_PER_TICK) missing.set(key, r);
    }
    if (missing.size > 0) {
      const read = await readUnreadTimes(this.pool.get(cluster), [...missing.values()]).catch(() => new Map<string, number | null>());
      for (const [key, value] of read) kept.set(key, value);
    }
    this.#unread.set(cluster, kept);
  }
}
