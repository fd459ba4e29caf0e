/**
 * Lag history outlives the process: a Loupe server samples a real consumer group that lags (a
 * member read part of a topic, committed and left), is killed with SIGKILL, and a new server on
 * the same data directory answers the points from before.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { uniqueTopic } from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { createReadyTopic } from "../helpers/topics.ts";
import { pollFor } from "../helpers/wait.ts";
import { joinGroup } from "../kafka/helpers.ts";

let rt: TestRuntime;
const topics: string[] = [];
const groups: string[] = [];
const servers: ServerProcess[] = [];

beforeAll(async () => {
  rt = await testRuntime({ lag: { cacheTtl: 0, sampleInterval: 0 } });
});
afterAll(async () => {
  for (const s of servers) await s.stop().catch(() => {});
  await rt.dispose({ topics, groups });
});

type History = {
  intervalMs: number;
  downsampled: boolean;
  points: Array<{ t: number; lag: number; lagMin?: number; lagSeconds: number | null; topics: Record<string, number> }>;
};

async function history(server: ServerProcess, group: string, window: string): Promise<History> {
  const res = await server.request(`/api/consumers/${encodeURIComponent(group)}/lag-history?window=${window}`, { role: "read" });
  expect(res.status).toBe(200);
  return (await res.json()) as History;
}

test("26: lag history survives a restart: the points sampled before a SIGKILL are answered by the next process on the same data directory", async () => {
  const kafka = rt.kafka.default();
  const topic = await createReadyTopic(kafka, { prefix: "lh-restart", partitions: 2, track: topics });
  await kafka.writes.produce(
    topic,
    Array.from({ length: 10 }, (_, i) => ({ partition: i % 2, value: `v${i}` })),
  );
  const group = uniqueTopic("lh-restart-group");
  groups.push(group);
  // A real member reads the topic and commits after its second record of partition 0, then leaves.
  const member = joinGroup(kafka, { groupId: group, topics: [topic], sessionTimeoutMs: 6_000, heartbeatIntervalMs: 500, maxWaitMs: 200 });
  try {
    let read = 0;
    for await (const m of member.records()) {
      read++;
      if (m.partition === 0 && m.offset === 1) await m.commit();
      if (read === 10) break;
    }
  } finally {
    await member.close();
  }
  // Partition 0: committed 2 of 5; partition 1: nothing committed, so no lag counted there.
  const lag = 3;

  const config = { lag: { sampleInterval: 300, cacheTtl: 0 } };
  const first = await startServerProcess(config);
  servers.push(first);
  const before = await pollFor("three points before the restart", async () => {
    const h = await history(first, group, "5m");
    return h.points.length >= 3 && h.points;
  });
  expect(before.map((p) => p.lag)).toEqual(before.map(() => lag));
  expect(before[0]!.topics).toEqual({ [topic]: lag });
  await first.kill();

  const second = await startServerProcess(config, { dir: first.dir });
  servers.splice(servers.indexOf(first), 1, second);
  const after = await history(second, group, "5m");
  // Every point of before is still there, the same; new ones follow them.
  for (const p of before) expect(after.points.find((q) => q.t === p.t)).toEqual(p);
  expect(after.downsampled).toBe(false);
  expect(after.intervalMs).toBe(300);

  // The 30-day answer comes from the hourly tier, which the first process wrote too.
  const month = await history(second, group, "30d");
  expect(month.downsampled).toBe(true);
  expect(month.intervalMs).toBe(3_600_000);
  expect(month.points.length).toBeGreaterThanOrEqual(1);
  expect(month.points.at(-1)).toMatchObject({ lag, lagMin: lag, topics: { [topic]: lag } });
  expect(month.points[0]!.t).toBeLessThanOrEqual(before[0]!.t);
}, 120_000);
