// @no-services
// @postgres
/**
 * The lag history's store on its own, with times given: what the hourly tier keeps of a mixed
 * hour (peaks, minimum, an unknown age), and what pruning removes (rows past their tier, then
 * the names of a group with nothing left), on the real store (SQLite, and PostgreSQL: @postgres) and its migrations.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import type { Store } from "../../src/db/index.ts";
import { HOUR_MS, LagHistoryStore, type StoredLag } from "../../src/lag/history-store.ts";
import { openTestStore } from "../helpers/store.ts";

const DAY = 86_400_000;
const dirs: string[] = [];
const stores: Store[] = [];
/** A store of its own per test: pruning is store-wide. */
async function freshStore(): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), "loupe-lh-store-"));
  dirs.push(dir);
  const store = await openTestStore(dir);
  stores.push(store);
  return store;
}
afterAll(async () => {
  for (const s of stores) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const one = (topics: Record<string, [number, number | null]>): StoredLag => {
  const entries = Object.entries(topics);
  const lag = entries.reduce((s, [, [n]]) => s + n, 0);
  const ages = entries.filter(([, [n]]) => n > 0).map(([, [, ms]]) => ms);
  return {
    lag,
    lagMs: ages.includes(null) ? null : Math.max(0, ...(ages as number[])),
    topics: Object.fromEntries(entries.map(([t, [n, ms]]) => [t, { lag: n, lagMs: ms }])),
  };
};

test("26: an hour keeps the peak of the total (not the sum of the topics' peaks), its minimum, and the largest known age, per topic too", async () => {
  const store = await freshStore();
  const history = new LagHistoryStore(store.db);
  const hour = Date.UTC(2026, 5, 1, 10);
  await history.write("c", hour + 0, new Map([["g", one({ a: [10, 1_000], b: [0, 0] })]]));
  await history.write("c", hour + 60_000, new Map([["g", one({ a: [0, 0], b: [7, null] })]]));
  await history.write("c", hour + 120_000, new Map([["g", one({ a: [3, 4_000], b: [2, 2_000] })]]));
  const [h] = await history.hours("c", "g", hour);
  expect(h).toEqual({ t: hour, lag: 10, lagMin: 5, lagMs: 4_000, topics: { a: 10, b: 7 }, topicsMs: { a: 4_000, b: 2_000 } });
  // The samples themselves, summed per sample; the unknown age of a lagging topic makes the group's unknown.
  expect(await history.raw("c", "g", hour)).toEqual([
    { t: hour, lag: 10, lagMs: 1_000, topics: { a: 10, b: 0 }, topicsMs: { a: 1_000, b: 0 } },
    { t: hour + 60_000, lag: 7, lagMs: null, topics: { a: 0, b: 7 }, topicsMs: { a: 0, b: null } },
    { t: hour + 120_000, lag: 5, lagMs: 4_000, topics: { a: 3, b: 2 }, topicsMs: { a: 4_000, b: 2_000 } },
  ]);
});

test("26: pruning drops samples after a day, hours after 30 days, then the names of a group with nothing left; a group written again starts afresh", async () => {
  const store = await freshStore();
  const history = new LagHistoryStore(store.db);
  const t0 = Date.UTC(2026, 6, 1);
  await history.write("c", t0, new Map([["gone", one({ x: [4, 100] })]]));
  expect(await history.prune(t0 + DAY - 1)).toEqual({ raw: 0, hours: 0, series: 0 });
  expect(await history.prune(t0 + DAY + 1)).toMatchObject({ raw: 1, hours: 0, series: 0 });
  expect((await history.hours("c", "gone", t0)).map((p) => p.lag)).toEqual([4]);
  expect(await history.prune(t0 + 31 * DAY + HOUR_MS)).toMatchObject({ hours: 2, series: 2 });
  expect(await history.has("c", "gone")).toBe(false);
  // Its ids were forgotten with its names: a new write names it again.
  await history.write("c", t0 + 32 * DAY, new Map([["gone", one({ x: [1, 10] })]]));
  expect((await history.raw("c", "gone", t0 + 32 * DAY)).map((p) => p.lag)).toEqual([1]);
  await history.forget("c", "gone");
  expect(await history.has("c", "gone")).toBe(false);
  const orphans = await sql<{
    n: number;
  }>`SELECT count(*) AS n FROM lag_points p LEFT JOIN lag_series s ON s.id = p.series_id WHERE s.id IS NULL`.execute(store.db);
  expect(orphans.rows).toEqual([{ n: 0 }]);
});
