/**
 * Whole-cluster listings while a topic is deleted under them: the real deletion, timed right
 * after a listing's first topic list (before the offsets, committed offsets or types that follow
 * it), as the topic list's own test does (list-columns.test.ts). Each page answers whole.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { uniqueTopic } from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { createReadyTopic } from "../helpers/topics.ts";
import { waitFor } from "../helpers/wait.ts";

let rt: TestRuntime;
const topics: string[] = [];
const groups: string[] = [];

beforeAll(async () => {
  // No cached lag: each listing computes its snapshot, so the deletion meets it.
  rt = await testRuntime({ lag: { cacheTtl: 0, sampleInterval: 0 } });
});
afterAll(async () => {
  await rt.dispose({ topics, groups });
});

/**
 * Two topics, `stays` and `goes`, with a group committed on both; `goes` is deleted right after
 * the next topic listing anyone makes (the app's own client), before that listing returns.
 * `restore` puts the listing back; `deleted` says whether the deletion happened.
 */
async function deleteMidListing(prefix: string) {
  const kafka = rt.kafka.default();
  const stays = await createReadyTopic(kafka, { prefix: `${prefix}-stays`, partitions: 1, track: topics });
  const goes = await createReadyTopic(kafka, { prefix: `${prefix}-goes`, partitions: 1, track: topics });
  await kafka.writes.produce(stays, [
    { partition: 0, value: "a" },
    { partition: 0, value: "b" },
  ]);
  await kafka.writes.produce(goes, [{ partition: 0, value: "c" }]);
  const group = uniqueTopic(`${prefix}-group`);
  groups.push(group);
  await kafka.groups.alterOffsets(group, [
    { topic: stays, partition: 0, offset: 0 },
    { topic: goes, partition: 0, offset: 0 },
  ]);
  const list = kafka.topics.list.bind(kafka.topics);
  const state = { stays, goes, group, deleted: false, restore: () => void (kafka.topics.list = list) };
  kafka.topics.list = async (...args: Parameters<typeof list>) => {
    const listed = await list(...args);
    if (!state.deleted) {
      state.deleted = true;
      await kafka.topics.delete(goes);
      await waitFor(async () => !(await list({ includeInternal: true })).some((t) => t.name === goes), { what: "the topic gone" });
    }
    return listed;
  };
  return state;
}

test("24: the cluster overview answers whole, its lag included, when a topic is deleted mid-listing", async () => {
  const race = await deleteMidListing("mid-overview");
  try {
    const res = await rt.request("/api/cluster", { role: "nodata" });
    expect(race.deleted).toBe(true);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { lag: { total: number } | null; lagError: string | null };
    expect(body.lagError).toBeNull();
    expect(body.lag?.total).toBeGreaterThanOrEqual(2);
  } finally {
    race.restore();
  }
}, 60_000);

test("24: the consumer groups list answers whole when a topic its groups read is deleted mid-listing", async () => {
  const race = await deleteMidListing("mid-groups");
  try {
    const res = await rt.request("/api/consumers", { role: "read" });
    expect(race.deleted).toBe(true);
    expect(res.status).toBe(200);
    const group = ((await res.json()) as { id: string; topics: string[]; lag: number }[]).find((g) => g.id === race.group);
    expect(group).toMatchObject({ topics: [race.stays], lag: 2 });
  } finally {
    race.restore();
  }
}, 60_000);

test("24: the JDBC table listing answers whole when a topic is deleted mid-listing", async () => {
  const race = await deleteMidListing("mid-jdbc");
  try {
    const res = await rt.request("/api/jdbc/metadata/table", { role: "read" });
    expect(race.deleted).toBe(true);
    expect(res.status).toBe(200);
    const names = ((await res.json()) as { name: string }[]).map((t) => t.name);
    expect(names).toContain(race.stays);
  } finally {
    race.restore();
  }
}, 60_000);
