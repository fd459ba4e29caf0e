/**
 * The lag history's store: what the history records at each sampler tick, kept on disk so that
 * a restart (when an operator most wants to look back) loses nothing.
 *
 * Two tiers (migration 0012):
 *  - raw: one row per group, topic and sample (lag in records, age in ms), kept RAW_KEEP_MS;
 *  - hourly: one row per group, topic and hour, and one for the group's total (topic ''):
 *    minimum and maximum of the lag, maximum of the age, samples; kept HOURS_KEEP_MS.
 * The hourly rows are upserted at each tick, in the same transaction as the raw rows, so the
 * downsampled tier is always current (no roll-up job to run, nothing lost when Loupe stops in
 * the middle of an hour). Maxima, not averages: a spike of lag is what an operator looks for a
 * month later, and an average would flatten it; the minimum says whether the group caught up.
 *
 * Only portable SQL through Kysely (INSERT ... ON CONFLICT, CASE), so the store may also be
 * PostgreSQL. A tick of 2,000 groups is one transaction of a few multi-row statements.
 */

import { sql } from "kysely";
import type { Db } from "../db/index.ts";

/** The raw tier: the sampler's resolution, one day. */
export const RAW_KEEP_MS = 86_400_000;
/** The hourly tier: 30 days (and the hour under way). */
export const HOUR_MS = 3_600_000;
export const HOURS_KEEP_MS = 30 * 86_400_000 + HOUR_MS;

/** One group's lag at one sample: the total and each topic's. */
export interface StoredLag {
  lag: number;
  /** Age of the oldest unread record (ms); null when unknown. */
  lagMs: number | null;
  topics: Record<string, { lag: number; lagMs: number | null }>;
}

/** A point read back: at a sample (raw) or over a bucket (maxima, and the minimum of the total). */
export interface StoredPoint {
  t: number;
  lag: number;
  /** The bucket's smallest total lag; absent for a raw sample. */
  lagMin?: number;
  lagMs: number | null;
  topics: Record<string, number>;
  /** Each topic's age (ms; a bucket's maximum); null when unknown. */
  topicsMs: Record<string, number | null>;
}

/** Rows per INSERT: 4 to 6 parameters each, well under SQLite's 32,766. */
const CHUNK = 1_000;

/** Series per DELETE when pruning: a day of 15 s samples of 20 series is about 115,000 rows. */
const PRUNE_SERIES = 20;

const seriesKey = (cluster: string, group: string, topic: string) => `${cluster}\u0000${group}\u0000${topic}`;

export class LagHistoryStore {
  /** Series ids by seriesKey: names are written once, rows carry the id. */
  #ids = new Map<string, number>();

  constructor(private readonly db: Db) {}

  /** Records one tick of a cluster (every group given) in one transaction. */
  async write(cluster: string, t: number, groups: Map<string, StoredLag>): Promise<void> {
    if (groups.size === 0) return;
    const hour = Math.floor(t / HOUR_MS) * HOUR_MS;
    await this.db.transaction().execute(async (trx) => {
      const wanted: Array<{ group: string; topic: string }> = [];
      for (const [group, g] of groups) {
        wanted.push({ group, topic: "" });
        for (const topic of Object.keys(g.topics)) wanted.push({ group, topic });
      }
      const ids = await this.#seriesIds(trx, cluster, wanted);
      const raw: Array<{ series_id: number; t: number; lag: number; lag_ms: number | null }> = [];
      const hours: Array<{ series_id: number; t: number; lag_min: number; lag_max: number; lag_ms_max: number | null; samples: number }> =
        [];
      for (const [group, g] of groups) {
        hours.push({
          series_id: ids.get(seriesKey(cluster, group, ""))!,
          t: hour,
          lag_min: g.lag,
          lag_max: g.lag,
          lag_ms_max: g.lagMs,
          samples: 1,
        });
        for (const [topic, v] of Object.entries(g.topics)) {
          const id = ids.get(seriesKey(cluster, group, topic))!;
          raw.push({ series_id: id, t, lag: v.lag, lag_ms: v.lagMs });
          hours.push({ series_id: id, t: hour, lag_min: v.lag, lag_max: v.lag, lag_ms_max: v.lagMs, samples: 1 });
        }
      }
      for (let i = 0; i < raw.length; i += CHUNK)
        await trx
          .insertInto("lag_points")
          .values(raw.slice(i, i + CHUNK))
          .onConflict((oc) => oc.columns(["series_id", "t"]).doNothing())
          .execute();
      for (let i = 0; i < hours.length; i += CHUNK)
        await trx
          .insertInto("lag_hours")
          .values(hours.slice(i, i + CHUNK))
          .onConflict((oc) =>
            oc.columns(["series_id", "t"]).doUpdateSet({
              lag_min: sql`CASE WHEN excluded.lag_min < lag_hours.lag_min THEN excluded.lag_min ELSE lag_hours.lag_min END`,
              lag_max: sql`CASE WHEN excluded.lag_max > lag_hours.lag_max THEN excluded.lag_max ELSE lag_hours.lag_max END`,
              lag_ms_max: sql`CASE WHEN lag_hours.lag_ms_max IS NULL OR excluded.lag_ms_max > lag_hours.lag_ms_max THEN excluded.lag_ms_max ELSE lag_hours.lag_ms_max END`,
              samples: sql`lag_hours.samples + 1`,
            }),
          )
          .execute();
    });
  }

  /** Ids of the series, created when missing (names are inserted once per series, ever). */
  async #seriesIds(trx: Db, cluster: string, wanted: Array<{ group: string; topic: string }>): Promise<Map<string, number>> {
    const missing = wanted.filter((w) => !this.#ids.has(seriesKey(cluster, w.group, w.topic)));
    if (missing.length > 0) {
      for (let i = 0; i < missing.length; i += CHUNK)
        await trx
          .insertInto("lag_series")
          .values(missing.slice(i, i + CHUNK).map((w) => ({ cluster, group_name: w.group, topic: w.topic })))
          .onConflict((oc) => oc.columns(["cluster", "group_name", "topic"]).doNothing())
          .execute();
      const groups = [...new Set(missing.map((w) => w.group))];
      for (let i = 0; i < groups.length; i += CHUNK) {
        const rows = await trx
          .selectFrom("lag_series")
          .select(["id", "group_name", "topic"])
          .where("cluster", "=", cluster)
          .where("group_name", "in", groups.slice(i, i + CHUNK))
          .execute();
        for (const r of rows) this.#ids.set(seriesKey(cluster, r.group_name, r.topic), Number(r.id));
      }
    }
    return this.#ids;
  }

  /** Whether the store holds anything of the group. */
  async has(cluster: string, group: string): Promise<boolean> {
    const row = await this.db
      .selectFrom("lag_series")
      .select("id")
      .where("cluster", "=", cluster)
      .where("group_name", "=", group)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** The group's raw samples since `from` (epoch ms), oldest first, with its topics summed per sample. */
  async raw(cluster: string, group: string, from: number): Promise<StoredPoint[]> {
    const rows = await this.db
      .selectFrom("lag_points as p")
      .innerJoin("lag_series as s", "s.id", "p.series_id")
      .select(["s.topic", "p.t", "p.lag", "p.lag_ms"])
      .where("s.cluster", "=", cluster)
      .where("s.group_name", "=", group)
      .where("p.t", ">=", from)
      .orderBy("p.t")
      .execute();
    const out: StoredPoint[] = [];
    for (const r of rows) {
      const t = Number(r.t);
      let point = out.at(-1);
      if (point?.t !== t) out.push((point = { t, lag: 0, lagMs: 0, topics: {}, topicsMs: {} }));
      const lag = Number(r.lag);
      point.lag += lag;
      point.topics[r.topic] = lag;
      point.topicsMs[r.topic] = r.lag_ms === null ? null : Number(r.lag_ms);
      // The group's age is its oldest topic's; unknown when a lagging topic's is.
      if (r.lag_ms === null) {
        if (lag > 0) point.lagMs = null;
      } else if (point.lagMs !== null) point.lagMs = Math.max(point.lagMs, Number(r.lag_ms));
    }
    return out;
  }

  /** The group's hours since `from` (epoch ms; the hour holding it included), oldest first. */
  async hours(cluster: string, group: string, from: number): Promise<StoredPoint[]> {
    const rows = await this.db
      .selectFrom("lag_hours as h")
      .innerJoin("lag_series as s", "s.id", "h.series_id")
      .select(["s.topic", "h.t", "h.lag_min", "h.lag_max", "h.lag_ms_max"])
      .where("s.cluster", "=", cluster)
      .where("s.group_name", "=", group)
      .where("h.t", ">=", Math.floor(from / HOUR_MS) * HOUR_MS)
      .orderBy("h.t")
      .execute();
    const byHour = new Map<number, StoredPoint>();
    for (const r of rows) {
      const t = Number(r.t);
      let point = byHour.get(t);
      if (!point) byHour.set(t, (point = { t, lag: 0, lagMin: 0, lagMs: null, topics: {}, topicsMs: {} }));
      if (r.topic === "") {
        point.lag = Number(r.lag_max);
        point.lagMin = Number(r.lag_min);
        point.lagMs = r.lag_ms_max === null ? null : Number(r.lag_ms_max);
      } else {
        point.topics[r.topic] = Number(r.lag_max);
        point.topicsMs[r.topic] = r.lag_ms_max === null ? null : Number(r.lag_ms_max);
      }
    }
    return [...byHour.values()].sort((a, b) => a.t - b.t);
  }

  /** Drops a group's history (the group was deleted through Loupe). */
  async forget(cluster: string, group: string): Promise<void> {
    const ids = (
      await this.db.selectFrom("lag_series").select("id").where("cluster", "=", cluster).where("group_name", "=", group).execute()
    ).map((r) => Number(r.id));
    if (ids.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom("lag_points").where("series_id", "in", ids).execute();
      await trx.deleteFrom("lag_hours").where("series_id", "in", ids).execute();
      await trx.deleteFrom("lag_series").where("id", "in", ids).execute();
    });
    for (const key of [...this.#ids.keys()]) if (key.startsWith(`${cluster}\u0000${group}\u0000`)) this.#ids.delete(key);
  }

  /**
   * Deletes raw rows older than a day, hours older than 30 days, and the series left with no
   * row (groups gone for 30 days). The deletes go by series (the primary key's first column), so
   * no index on time alone is needed on disk, and a few series at a time, letting other work
   * run in between: the store is synchronous, and the first pass after a long stop may have a
   * day of samples to delete.
   */
  async prune(now: number): Promise<{ raw: number; hours: number; series: number }> {
    const ids = (await this.db.selectFrom("lag_series").select("id").execute()).map((r) => Number(r.id));
    let raw = 0;
    let hours = 0;
    for (let i = 0; i < ids.length; i += PRUNE_SERIES) {
      const chunk = ids.slice(i, i + PRUNE_SERIES);
      const r = await this.db
        .deleteFrom("lag_points")
        .where("series_id", "in", chunk)
        .where("t", "<", now - RAW_KEEP_MS)
        .executeTakeFirst();
      const h = await this.db
        .deleteFrom("lag_hours")
        .where("series_id", "in", chunk)
        .where("t", "<", now - HOURS_KEEP_MS)
        .executeTakeFirst();
      raw += Number(r.numDeletedRows);
      hours += Number(h.numDeletedRows);
      await new Promise((resolve) => setImmediate(resolve));
    }
    // Forgotten before the delete: a tick writing in between looks its series up again, in its
    // own transaction, so no point is written for a series this delete removes.
    this.#ids.clear();
    const empty = await this.db
      .deleteFrom("lag_series")
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom("lag_hours").select("lag_hours.series_id").whereRef("lag_hours.series_id", "=", "lag_series.id"))),
      )
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom("lag_points").select("lag_points.series_id").whereRef("lag_points.series_id", "=", "lag_series.id"))),
      )
      .executeTakeFirst();
    return { raw, hours, series: Number(empty.numDeletedRows) };
  }

  /** Groups with a history on the cluster. */
  async groupCount(cluster: string): Promise<number> {
    const row = await this.db
      .selectFrom("lag_series")
      .select((eb) => eb.fn.count<number>("id").as("n"))
      .where("cluster", "=", cluster)
      .where("topic", "=", "")
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }
}
