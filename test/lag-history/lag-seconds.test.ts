/**
 * The lag-seconds line of a group's chart against the table beside it. The table reads the
 * record at each committed offset; the chart's points came from the end-offset sampler alone,
 * which dates a record only within its window (`lag.sampleWindow`, 10 minutes): an older unread
 * record was "there at the first sample", so the line stopped near 600 s while the table said
 * 1,678 s. Now such records are dated by their own timestamp, read once per committed offset.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { LagHistory } from "../../src/lag/history.ts";
import { LagHistoryStore } from "../../src/lag/history-store.ts";
import { OffsetSampler } from "../../src/lag/sampler.ts";
import { uniqueTopic } from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { createReadyTopic } from "../helpers/topics.ts";

let rt: TestRuntime;
const topics: string[] = [];
const groups: string[] = [];
const CLUSTER = "local";

beforeAll(async () => {
  // The sampler ticks when a test says; its window is the default ten minutes.
  rt = await testRuntime({ lag: { cacheTtl: 0, sampleInterval: 0 } });
});
afterAll(async () => {
  await rt.dispose({ topics, groups });
});

/** A topic whose records were written `ageMs` ago (their timestamps), and a group with no member at offset 0. */
async function stuckGroup(ageMs: number, now = Date.now()): Promise<{ topic: string; group: string; written: number }> {
  const kafka = rt.kafka.default();
  const topic = await createReadyTopic(kafka, { prefix: "lag-seconds", partitions: 2, track: topics });
  const written = now - ageMs;
  await kafka.writes.produce(
    topic,
    Array.from({ length: 10 }, (_, i) => ({ partition: i % 2, value: `v${i}`, timestamp: written + i })),
  );
  const group = uniqueTopic("lag-seconds-group");
  groups.push(group);
  await kafka.groups.alterOffsets(group, [
    { topic, partition: 0, offset: 0 },
    { topic, partition: 1, offset: 3 },
  ]);
  return { topic, group, written };
}

type Point = { t: number; lag: number; lagSeconds: number | null };

test("23: the chart's lag in seconds agrees with the group's table when the oldest unread record is older than the sampler's window (1,700 s, not the window)", async () => {
  const { topic, group } = await stuckGroup(1_700_000);
  await rt.sampler.sampleNow(CLUSTER);
  await rt.sampler.sampleNow(CLUSTER);

  const table = await rt.request(`/api/consumers/${group}`, { role: "read" });
  expect(table.status).toBe(200);
  const offsets = ((await table.json()) as { offsets: Array<{ lagSeconds: number | null }> }).offsets;
  const tableAge = Math.max(...offsets.map((o) => o.lagSeconds ?? 0));
  expect(tableAge).toBeGreaterThanOrEqual(1_700);

  const res = await rt.request(`/api/consumers/${group}/lag-history`, { role: "read" });
  expect(res.status).toBe(200);
  const last = ((await res.json()) as { points: Point[] }).points.at(-1)!;
  expect(last.lag).toBe(10 - 3);
  expect(last.lagSeconds).not.toBeNull();
  // Same record, same age: the two answers are a few seconds apart at most.
  expect(Math.abs(last.lagSeconds! - tableAge)).toBeLessThan(10);

  // /metrics takes the same dating (the shared lag snapshot): partition 0's record is the oldest.
  const metrics = await (await rt.request("/metrics")).text();
  const line = metrics.split("\n").find((l) => l.startsWith(`svc_partition_consumer_lag_seconds{topic="${topic}",partition="0"`));
  expect(line).toBeDefined();
  expect(Math.abs(Number(line!.split(" ").at(-1)) - tableAge)).toBeLessThan(10);
}, 60_000);

test("23: a stuck group's lag in seconds keeps growing past the sampler's window instead of flattening at it", async () => {
  // The sampler's clock is the test's: twenty minutes pass over five ticks, with a ten-minute window.
  const start = Date.now();
  const { group, written } = await stuckGroup(0, start);
  let now = start;
  const sampler = new OffsetSampler(rt.kafka, { intervalMs: 0, windowMs: 600_000, now: () => now });
  const history = new LagHistory(rt.kafka, sampler, new LagHistoryStore(rt.store.db));
  const minutes = [1, 5, 10, 15, 20];
  for (const m of minutes) {
    now = start + m * 60_000;
    await sampler.sampleNow(CLUSTER);
  }
  const ages = (await history.points(CLUSTER, group, 3_600_000))!.points.map((p) => p.lagSeconds);
  // The first record unread is the one written at `written` (partition 0, offset 0).
  expect(ages).toEqual(minutes.map((m) => Math.round((start + m * 60_000 - written) / 100) / 10));
  sampler.stop();
}, 60_000);
