/**
 * Lag history of consumer groups: one point per tick of the end-offset sampler, from the
 * committed offsets read at that tick. The runtime's sampler does not run on its own here
 * (sampleInterval 0): each test ticks it, so points appear when the test says, not when a
 * timer fires.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LagHistory } from "../../src/lag/history.ts";
import { LagHistoryStore } from "../../src/lag/history-store.ts";
import { OffsetSampler, partitionKey } from "../../src/lag/sampler.ts";
import { uniqueTopic } from "../cluster/cluster.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { openTestStore } from "../helpers/store.ts";
import { createReadyTopic } from "../helpers/topics.ts";

let rt: TestRuntime;
const topics: string[] = [];
const groups: string[] = [];
const CLUSTER = "local";

beforeAll(async () => {
  rt = await testRuntime({ lag: { cacheTtl: 0, sampleInterval: 0 } });
});
afterAll(async () => {
  await rt.dispose({ topics, groups });
});

/** A topic with `counts[p]` records in partition p, and a group with no member committed at `at[p]`. */
async function lagging(counts: number[], at: number[]): Promise<{ topic: string; group: string }> {
  const kafka = rt.kafka.default();
  const topic = await createReadyTopic(kafka, { prefix: "lh", partitions: counts.length, track: topics });
  const records = counts.flatMap((n, partition) => Array.from({ length: n }, (_, i) => ({ partition, value: `v${i}` })));
  await kafka.writes.produce(topic, records);
  const group = uniqueTopic("lh-group");
  groups.push(group);
  await kafka.groups.alterOffsets(
    group,
    at.map((offset, partition) => ({ topic, partition, offset })),
  );
  return { topic, group };
}

type History = {
  group: string;
  windowMs: number;
  intervalMs: number;
  downsampled: boolean;
  points: Array<{ t: number; lag: number; lagSeconds: number | null; topics: Record<string, number> }>;
};

async function history(group: string, query = "", headers: Record<string, string> = {}): Promise<History> {
  const res = await rt.request(`/api/consumers/${encodeURIComponent(group)}/lag-history${query}`, { role: "read", headers });
  expect(res.status).toBe(200);
  return (await res.json()) as History;
}

describe("GET /api/consumers/{group}/lag-history", () => {
  test("a lagging group gets one point per tick; the lag falls once its offsets are reset", async () => {
    const { topic, group } = await lagging([5, 3], [1, 0]);
    // Known to the cluster but not yet seen by a tick: no points, not an error.
    expect((await history(group)).points).toEqual([]);

    await rt.sampler.sampleNow(CLUSTER);
    await rt.sampler.sampleNow(CLUSTER);
    let h = await history(group);
    expect(h.group).toBe(group);
    expect(h.points.map((p) => p.lag)).toEqual([7, 7]);
    expect(h.points[1]!.topics).toEqual({ [topic]: 7 });
    expect(h.points[0]!.t).toBeLessThan(h.points[1]!.t);
    // The records were there before the first sample: their age is at least the time between ticks.
    expect(h.points[1]!.lagSeconds).not.toBeNull();
    expect(h.points[1]!.lagSeconds!).toBeGreaterThanOrEqual(h.points[0]!.lagSeconds!);

    const reset = await rt.request(`/api/consumers/${group}/offsets`, {
      method: "PUT",
      role: "write",
      body: JSON.stringify({ offsets: [{ topic, partition: 0, offset: 4 }] }),
    });
    expect(reset.status).toBe(200);
    await rt.sampler.sampleNow(CLUSTER);
    h = await history(group);
    expect(h.points.map((p) => p.lag)).toEqual([7, 7, 4]);

    const latest = await rt.request(`/api/consumers/${group}/offsets`, {
      method: "PUT",
      role: "write",
      body: JSON.stringify({ to: "latest" }),
    });
    expect(latest.status).toBe(200);
    await rt.sampler.sampleNow(CLUSTER);
    h = await history(group);
    expect(h.points.at(-1)).toMatchObject({ lag: 0, lagSeconds: 0, topics: { [topic]: 0 } });
  }, 60_000);

  test("honours x-service-cluster like the other consumer routes", async () => {
    const { group } = await lagging([2], [0]);
    await rt.sampler.sampleNow(CLUSTER);
    expect((await history(group, "", { "x-service-cluster": CLUSTER })).points.at(-1)!.lag).toBe(2);
    const other = await rt.request(`/api/consumers/${group}/lag-history`, { role: "read", headers: { "x-service-cluster": "nowhere" } });
    expect(other.status).toBeGreaterThanOrEqual(400);
    expect(other.status).toBeLessThan(500);
    await errorOf(other);
  }, 60_000);

  test("unknown group is 404; a bad window is 400", async () => {
    const missing = await rt.request(`/api/consumers/${uniqueTopic("lh-nobody")}/lag-history`, { role: "read" });
    expect(missing.status).toBe(404);
    expect((await errorOf(missing)).message).toContain("does not exist");

    for (const window of ["abc", "-5m", "0s", "15x", "99999999h", "31d", "721h"]) {
      const res = await rt.request(`/api/consumers/any/lag-history?window=${encodeURIComponent(window)}`, { role: "read" });
      expect({ window, status: res.status }).toEqual({ window, status: 400 });
      await errorOf(res);
    }
  }, 30_000);

  test("26: the window reaches 30 days; past 6 hours the answer is downsampled, past a day hourly", async () => {
    const { group } = await lagging([2], [0]);
    await rt.sampler.sampleNow(CLUSTER);
    const expected: Array<[string, boolean, number | null]> = [
      ["5m", false, null],
      ["6h", false, null],
      ["24h", true, 300_000],
      ["7d", true, 3_600_000],
      ["30d", true, 3_600_000],
    ];
    for (const [window, downsampled, interval] of expected) {
      const h = await history(group, `?window=${window}`);
      expect({ window, downsampled: h.downsampled, points: h.points.map((p) => p.lag) }).toEqual({ window, downsampled, points: [2] });
      if (interval !== null) expect({ window, intervalMs: h.intervalMs }).toEqual({ window, intervalMs: interval });
    }
  }, 30_000);

  test("a deleted group's history goes with it", async () => {
    const { group } = await lagging([1], [0]);
    await rt.sampler.sampleNow(CLUSTER);
    expect((await history(group)).points.length).toBe(1);
    const del = await rt.request(`/api/consumers/${group}`, { method: "DELETE", role: "write" });
    expect(del.status).toBe(200);
    const res = await rt.request(`/api/consumers/${group}/lag-history`, { role: "read" });
    expect(res.status).toBe(404);
  }, 30_000);
});

describe("LagHistory bounds", () => {
  test("beyond maxGroups (lag.historyGroups), the groups with the most lag are the ones stored", async () => {
    const { topic, group } = await lagging([3], [0]);
    const dir = mkdtempSync(join(tmpdir(), "loupe-lh-"));
    const store = await openTestStore(dir);
    const lh = new LagHistory(rt.kafka, new OffsetSampler(rt.kafka, { intervalMs: 0, windowMs: 60_000 }), new LagHistoryStore(store.db), 1);
    // A sample that knows only this test's topic: every other group of the shared broker lags 0 in it.
    const t = Date.now();
    await lh.record(CLUSTER, { t, ends: new Map([[partitionKey(topic, 0), 3]]) });
    expect(await lh.size(CLUSTER)).toBe(1);
    expect((await lh.points(CLUSTER, group, 60_000))!.points.map((p) => p.lag)).toEqual([3]);
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }, 30_000);
});
