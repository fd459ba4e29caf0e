/**
 * The lag history's size on disk, measured: the store's own write path fills a real store with
 * `groups` groups of one topic each (an hour at the default 15 s sampling, then one sample an
 * hour for two days more), SQLite's dbstat gives the bytes of each table and index, and the
 * bytes per row give the size at full retention (a day of samples, 30 days of hours).
 *
 *   bun bench/lag-history-size.ts [--groups=2000]
 *
 * docs/operations.md states the figures at 2,000 groups; test/lag-history/store-size.test.ts
 * measures a tenth of that on every run and holds the projection to them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../src/db/index.ts";
import { HOUR_MS, HOURS_KEEP_MS, LagHistoryStore, RAW_KEEP_MS, type StoredLag } from "../src/lag/history-store.ts";
import { arg } from "./common.ts";

const INTERVAL_MS = 15_000;
const MB = 1024 * 1024;

export interface LagHistorySize {
  groups: number;
  rawRows: number;
  hourRows: number;
  perRaw: number;
  perHour: number;
  /** Bytes of the series names per group. */
  seriesPerGroup: number;
  /** Bytes at full retention for `atGroups` groups of one topic. */
  totalFor(atGroups: number): number;
  /** Milliseconds of each write of a round (one transaction). */
  rounds: number[];
  /** What pruning a day after the last sample removed. */
  pruned: { raw: number; hours: number };
}

export async function measureLagHistory(groups: number): Promise<LagHistorySize> {
  const dir = mkdtempSync(join(tmpdir(), "loupe-lh-size-"));
  try {
    const store = await openStore(dir);
    const history = new LagHistoryStore(store.db);
    const start = Math.floor(Date.UTC(2026, 0, 1) / HOUR_MS) * HOUR_MS;
    // Lags of realistic widths: most groups small, some in the millions.
    const round = (n: number) => {
      const out = new Map<string, StoredLag>();
      for (let g = 0; g < groups; g++) {
        const lag = g % 10 === 0 ? 1_000_000 + ((g * 7919 + n * 104_729) % 9_000_000) : (g * 31 + n * 17) % 5_000;
        const lagMs = lag === 0 ? 0 : 1_000 + ((g * 13 + n) % 3_600_000);
        out.set(`payments-service-consumer-${g}`, { lag, lagMs, topics: { [`orders.events.v1-${g % 200}`]: { lag, lagMs } } });
      }
      return out;
    };
    const rounds: number[] = [];
    const at = async (t: number, n: number) => {
      const batch = round(n);
      const t0 = performance.now();
      await history.write("production", t, batch);
      rounds.push(performance.now() - t0);
    };
    let n = 0;
    for (let t = start; t < start + HOUR_MS; t += INTERVAL_MS) await at(t, n++);
    for (let h = 1; h <= 48; h++) await at(start + h * HOUR_MS, n++);

    const bytes = (names: string[]) => {
      const rows = store.sqlite
        .query(`SELECT name, sum(pgsize) AS b FROM dbstat WHERE name IN (${names.map(() => "?").join(",")}) GROUP BY name`)
        .all(...names) as Array<{ b: number }>;
      return rows.reduce((s, r) => s + r.b, 0);
    };
    const count = (table: string) => (store.sqlite.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    const rawRows = count("lag_points");
    const hourRows = count("lag_hours");
    const perRaw = bytes(["lag_points"]) / rawRows;
    const perHour = bytes(["lag_hours"]) / hourRows;
    const seriesPerGroup = bytes(["lag_series", "sqlite_autoindex_lag_series_1"]) / groups;
    // Pruning a day later empties the raw tier of those samples and keeps the hours.
    const pruned = await history.prune(start + 48 * HOUR_MS + RAW_KEEP_MS);
    await store.close();
    return {
      groups,
      rawRows,
      hourRows,
      perRaw,
      perHour,
      seriesPerGroup,
      // A day of samples per group and topic, 30 days and an hour of hours per group (its total) and topic.
      totalFor: (g) => perRaw * (RAW_KEEP_MS / INTERVAL_MS) * g + perHour * (HOURS_KEEP_MS / HOUR_MS) * 2 * g + seriesPerGroup * g,
      rounds,
      pruned,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function describeSize(m: LagHistorySize, atGroups: number): string {
  const sorted = [...m.rounds].sort((a, b) => a - b);
  const total = m.totalFor(atGroups);
  return (
    `lag history measured at ${m.groups} groups: ${m.perRaw.toFixed(1)} B per sample row, ${m.perHour.toFixed(1)} B per hour row; ` +
    `at ${atGroups} groups a day of samples ${((m.perRaw * (RAW_KEEP_MS / INTERVAL_MS) * atGroups) / MB).toFixed(0)} MB, ` +
    `total ${(total / MB).toFixed(0)} MB (${(total / atGroups / 30 / 1024).toFixed(1)} KB per group-day over 30 days); ` +
    `a tick of ${m.groups} groups: median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms`
  );
}

if (import.meta.main) {
  const groups = Number(arg("groups", "2000"));
  console.log(describeSize(await measureLagHistory(groups), groups));
}
