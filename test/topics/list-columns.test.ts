/**
 * The topic list's size and lag columns: bytes from DescribeLogDirs (one request per broker)
 * and lag from the shared lag snapshot, both read in batch for the whole list.
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
  rt = await testRuntime({ lag: { cacheTtl: 0, sampleInterval: 0 } });
});
afterAll(async () => {
  await rt.dispose({ topics, groups });
});

type Item = { topicName: string; totalMessages: number; sizeBytes: number | null; lag: number | null };

async function listed(name: string): Promise<Item> {
  const res = await rt.request("/api/topics", { role: "nodata" });
  expect(res.status).toBe(200);
  const item = ((await res.json()) as Item[]).find((t) => t.topicName === name);
  if (!item) throw new Error(`${name} not listed`);
  return item;
}

test("GET /api/topics gives each topic's size in bytes and the lag of the groups reading it", async () => {
  const kafka = rt.kafka.default();
  const full = await createReadyTopic(kafka, { prefix: "cols", partitions: 2, track: topics });
  const empty = await createReadyTopic(kafka, { prefix: "cols-empty", partitions: 1, track: topics });
  await kafka.writes.produce(
    full,
    Array.from({ length: 20 }, (_, i) => ({ partition: i % 2, value: "x".repeat(200) })),
  );
  const a = uniqueTopic("cols-a");
  const b = uniqueTopic("cols-b");
  groups.push(a, b);
  await kafka.groups.alterOffsets(a, [
    { topic: full, partition: 0, offset: 2 },
    { topic: full, partition: 1, offset: 10 },
  ]);
  await kafka.groups.alterOffsets(b, [{ topic: full, partition: 0, offset: 0 }]);

  // Sizes come from the brokers' log dirs, which count a batch once it is on disk.
  const item = await waitFor(
    async () => {
      const i = await listed(full);
      return (i.sizeBytes ?? 0) >= 20 * 200 ? i : null;
    },
    { what: "the topic's size to count its records" },
  );
  expect(item).toMatchObject({ totalMessages: 20, lag: 8 + 10 });
  expect(await listed(empty)).toMatchObject({ totalMessages: 0, sizeBytes: 0, lag: 0 });
}, 60_000);

test("24: a topic deleted between the listing and its offsets leaves the list whole, without it", async () => {
  const kafka = rt.kafka.default();
  const stays = await createReadyTopic(kafka, { prefix: "mid-list-stays", partitions: 1, track: topics });
  const goes = await createReadyTopic(kafka, { prefix: "mid-list-goes", partitions: 1, track: topics });
  // The real deletion, timed: right after the service's first listing, before its offsets.
  const list = kafka.topics.list.bind(kafka.topics);
  let deleted = false;
  kafka.topics.list = async (...args: Parameters<typeof list>) => {
    const listed = await list(...args);
    if (!deleted) {
      deleted = true;
      await kafka.topics.delete(goes);
      await waitFor(async () => !(await list({ includeInternal: false })).some((t) => t.name === goes), { what: "the topic gone" });
    }
    return listed;
  };
  try {
    const res = await rt.request("/api/topics", { role: "nodata" });
    expect(res.status).toBe(200);
    const names = ((await res.json()) as Item[]).map((t) => t.topicName);
    expect(deleted).toBe(true);
    expect(names).toContain(stays);
    expect(names).not.toContain(goes);
  } finally {
    kafka.topics.list = list;
  }
}, 60_000);
