// @no-services
/**
 * The lag history's size on disk at 2,000 groups, measured: the store's own write path fills a
 * real store (2,000 groups of one topic each: an hour at the default 15 s sampling, then one
 * sample an hour for two days more), SQLite's dbstat gives the bytes of each table and index,
 * and the bytes per row give the size at full retention (a day of samples, 30 days of hours).
 * docs/operations.md states the figures; this test keeps them true.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../src/db/index.ts";
import { HOUR_MS, HOURS_KEEP_MS, LagHistoryStore, RAW_KEEP_MS, type StoredLag } from "../../src/lag/history-store.ts";

const dir = mkdtempSync(join(tmpdir(), "loupe-lh-size-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const GROUPS = 2_000;
const INTERVAL_MS = 15_000;
const MB = 1024 * 1024;

test("26: at 2,000 groups of one topic, a day of 15 s samples and 30 days of hours take less than 400 MB; a tick of 2,000 groups is one transaction of well under a second", async () => {
  const store = await openStore(dir);
  const history = new LagHistoryStore(store.db);
  const start = Math.floor(Date.UTC(2026, 0, 1) / HOUR_MS) * HOUR_MS;
  // Lags of realistic widths: most groups small, some in the millions.
  const round = (n: number) => {
    const groups = new Map<string, StoredLag>();
    for (let g = 0; g < GROUPS; g++) {
      const lag = g % 10 === 0 ? 1_000_000 + ((g * 7919 + n * 104_729) % 9_000_000) : (g * 31 + n * 17) % 5_000;
      const lagMs = lag === 0 ? 0 : 1_000 + ((g * 13 + n) % 3_600_000);
      groups.set(`payments-service-consumer-${g}`, { lag, lagMs, topics: { [`orders.events.v1-${g % 200}`]: { lag, lagMs } } });
    }
    return groups;
  };
  const rounds: number[] = [];
  const at = async (t: number, n: number) => {
    const groups = round(n);
    const t0 = performance.now();
    await history.write("production", t, groups);
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
  expect(rawRows).toBe(GROUPS * (HOUR_MS / INTERVAL_MS + 48));
  expect(hourRows).toBe(GROUPS * 2 * 49);
  const perRaw = bytes(["lag_points"]) / rawRows;
  const perHour = bytes(["lag_hours"]) / hourRows;
  const series = bytes(["lag_series", "sqlite_autoindex_lag_series_1"]);

  // At full retention: a day of samples per group and topic, 30 days and an hour of hours per
  // group (its total) and topic.
  const rawFull = perRaw * (RAW_KEEP_MS / INTERVAL_MS) * GROUPS;
  const hoursFull = perHour * (HOURS_KEEP_MS / HOUR_MS) * 2 * GROUPS;
  const total = rawFull + hoursFull + series;
  const sorted = [...rounds].sort((a, b) => a - b);
  const p50 = sorted[Math.floor(sorted.length / 2)]!;
  const max = sorted.at(-1)!;
  console.log(
    `lag history at ${GROUPS} groups: ${perRaw.toFixed(1)} B per sample row, ${perHour.toFixed(1)} B per hour row; ` +
      `a day of samples ${(rawFull / MB).toFixed(0)} MB, 30 days of hours ${(hoursFull / MB).toFixed(0)} MB, names ${(series / MB).toFixed(2)} MB, ` +
      `total ${(total / MB).toFixed(0)} MB (${(total / GROUPS / 30 / 1024).toFixed(1)} KB per group-day over 30 days); ` +
      `a tick of ${GROUPS} groups: median ${p50.toFixed(0)} ms, max ${max.toFixed(0)} ms`,
  );
  expect(total).toBeLessThan(400 * MB);
  expect(p50).toBeLessThan(1_000);

  // Pruning a day later empties the raw tier of those samples and keeps the hours.
  const pruned = await history.prune(start + 48 * HOUR_MS + RAW_KEEP_MS);
  expect(pruned.raw).toBe(rawRows - GROUPS);
  expect(pruned.hours).toBe(0);
  await store.close();
}, 600_000);
