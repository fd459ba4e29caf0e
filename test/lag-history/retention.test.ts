// @postgres
/**
 * Thirty days of lag history, with the sampler's clock injected: the test moves time instead of
 * waiting for it. A real group lags on the real broker; the sampler ticks every twelve hours of
 * the test's clock over 31 days (and twice within one hour, for a spike), the history is pruned,
 * and the answers come from the tier each window calls for.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Store } from "../../src/db/index.ts";
import { ConsumerService } from "../../src/domains/consumers/service.ts";
import { LagEngine } from "../../src/lag/engine.ts";
import { LagHistory } from "../../src/lag/history.ts";
import { HOUR_MS, LagHistoryStore, RAW_KEEP_MS } from "../../src/lag/history-store.ts";
import { OffsetSampler } from "../../src/lag/sampler.ts";
import { uniqueTopic } from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { openTestStore, rowsOf } from "../helpers/store.ts";
import { createReadyTopic } from "../helpers/topics.ts";

const CLUSTER = "local";
const DAY = 86_400_000;
let rt: TestRuntime;
let store: Store;
let dir: string;
const topics: string[] = [];
const groups: string[] = [];

beforeAll(async () => {
  rt = await testRuntime({ lag: { cacheTtl: 0, sampleInterval: 0 } });
  dir = mkdtempSync(join(tmpdir(), "loupe-lh-retention-"));
  store = await openTestStore(dir);
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  await rt.dispose({ topics, groups });
});

test("26: 30 days of lag history answer from the hourly tier after a day of samples is pruned; a spike keeps its height in its hour", async () => {
  const kafka = rt.kafka.default();
  const topic = await createReadyTopic(kafka, { prefix: "lh-month", partitions: 1, track: topics });
  await kafka.writes.produce(
    topic,
    Array.from({ length: 60 }, (_, i) => ({ partition: 0, value: `v${i}` })),
  );
  const group = uniqueTopic("lh-month-group");
  groups.push(group);
  const commit = (offset: number) => kafka.groups.alterOffsets(group, [{ topic, partition: 0, offset }]);
  await commit(50);

  // Day 0 starts at an hour, 31 days before the end of the run.
  const start = Math.floor(Date.now() / HOUR_MS) * HOUR_MS - 31 * DAY;
  let now = start;
  const sampler = new OffsetSampler(rt.kafka, { intervalMs: 15_000, windowMs: 600_000, now: () => now });
  const history = new LagHistory(rt.kafka, sampler, new LagHistoryStore(store.db));
  const service = new ConsumerService(rt.kafka, new LagEngine(rt.kafka, sampler, { ttlMs: 0 }), history, 15_000);
  const tick = async (at: number) => {
    now = at;
    await sampler.sampleNow(CLUSTER);
  };
  const spikeHour = start + 10 * DAY;
  for (let t = start; t <= start + 31 * DAY; t += DAY / 2) {
    if (t === spikeHour) {
      // Within one hour: lag 60, then 10 at its end.
      await commit(0);
      await tick(t);
      await commit(50);
      await tick(t + 30 * 60_000);
      continue;
    }
    await tick(t);
  }
  // The last hours, sampled at the sampler's pace: the raw tier's answer.
  const end = start + 31 * DAY;
  for (let i = 1; i <= 4; i++) await tick(end + i * 15_000);
  const pruned = await history.prune();
  expect(pruned.raw).toBeGreaterThan(0);
  expect(pruned.hours).toBeGreaterThan(0);

  // Nothing older than its tier's retention is left on disk.
  const [oldestRaw] = await rowsOf<{ t: number }>(store, "SELECT min(t) AS t FROM lag_points");
  expect(Number(oldestRaw!.t)).toBeGreaterThanOrEqual(now - RAW_KEEP_MS);
  const [oldestHour] = await rowsOf<{ t: number }>(store, "SELECT min(t) AS t FROM lag_hours");
  expect(Number(oldestHour!.t)).toBeGreaterThanOrEqual(now - 30 * DAY - HOUR_MS);

  const month = await service.lagHistory(CLUSTER, group, 30 * DAY);
  expect(month).toMatchObject({ group, windowMs: 30 * DAY, intervalMs: HOUR_MS, downsampled: true });
  // One point per hour that had a sample, the oldest within the first half-day of the 30.
  expect(month.points[0]!.t).toBeGreaterThanOrEqual(now - 30 * DAY - HOUR_MS);
  expect(month.points[0]!.t).toBeLessThan(now - 29.5 * DAY);
  expect(month.points.length).toBe(61);
  const spike = month.points.find((p) => p.t === spikeHour)!;
  expect(spike).toMatchObject({ lag: 60, lagMin: 10, topics: { [topic]: 60 } });
  expect(spike.topicLagSeconds[topic]).toBe(spike.lagSeconds);
  expect(month.points.filter((p) => p.t !== spikeHour).every((p) => p.lag === 10 && p.lagMin === 10)).toBe(true);

  // A week: the same tier, fewer hours.
  const week = await service.lagHistory(CLUSTER, group, 7 * DAY);
  expect(week.intervalMs).toBe(HOUR_MS);
  expect(week.points.every((p) => p.t >= now - 7 * DAY - HOUR_MS)).toBe(true);

  // A day: 5-minute buckets of the samples; five minutes: the samples themselves.
  const day = await service.lagHistory(CLUSTER, group, DAY);
  expect(day).toMatchObject({ intervalMs: 300_000, downsampled: true });
  expect(day.points.every((p) => p.t % 300_000 === 0)).toBe(true);
  const recent = await service.lagHistory(CLUSTER, group, 300_000);
  expect(recent).toMatchObject({ intervalMs: 15_000, downsampled: false });
  expect(recent.points.map((p) => p.t)).toEqual([0, 1, 2, 3, 4].map((i) => end + i * 15_000));
  expect(recent.points.every((p) => p.lag === 10 && p.lagMin === undefined)).toBe(true);
  sampler.stop();
}, 120_000);
