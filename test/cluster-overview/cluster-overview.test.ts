/**
 * GET /api/cluster against the real test broker: its brokers and controller as Metadata gives
 * them, topic and partition counts that match the cluster, a created topic counted and healthy,
 * the total consumer lag of a group with committed offsets, and the errors of a cluster that is
 * not configured or not reachable.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { ClusterOverview } from "../../src/domains/cluster/schemas.ts";
import { uniqueTopic } from "../cluster/cluster.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { createReadyTopic } from "../helpers/topics.ts";
import { waitFor } from "../helpers/wait.ts";
import { describeCluster } from "../kafka/test-only.ts";

let rt: TestRuntime;
const topics: string[] = [];
const groups: string[] = [];
let topic: string;

beforeAll(async () => {
  rt = await testRuntime({
    lag: { cacheTtl: 0 },
    kafka: {
      clusters: [
        { name: "local", bootstrapServers: [process.env.KAFKA_BOOTSTRAP!], default: true },
        // Nothing listens on port 1: the connection is refused at once.
        { name: "nowhere", bootstrapServers: ["127.0.0.1:1"] },
      ],
    },
  });
  topic = await createReadyTopic(rt.kafka.default(), { prefix: "overview", partitions: 3, track: topics });
});
afterAll(async () => {
  await rt.dispose({ topics, groups });
});

async function overview(headers: Record<string, string> = {}): Promise<ClusterOverview> {
  const res = await rt.request("/api/cluster", { role: "nodata", headers });
  expect(res.status).toBe(200);
  return (await res.json()) as ClusterOverview;
}

describe("GET /api/cluster", () => {
  test("brokers and controller are those Metadata names", async () => {
    const [body, md] = await Promise.all([overview(), describeCluster(rt.kafka.default())]);
    expect(body.cluster).toBe("local");
    expect(body.clusterId).toBe(md.clusterId);
    expect(body.controllerId).toBe(md.controllerId);
    expect(body.brokers.map(({ id, host, port, rack }) => ({ id, host, port, rack }))).toEqual(md.brokers);
    // The test broker is node 1 on rack-1, and leads the topic created here.
    expect(body.brokers[0]).toMatchObject({ id: 1, rack: "rack-1" });
    expect(body.brokers[0]!.leaders).toBeGreaterThanOrEqual(3);
    expect(body.brokers[0]!.replicas).toBeGreaterThanOrEqual(body.brokers[0]!.leaders);
  });

  test("the KRaft controller quorum: node 1 leads and votes, caught up with the high watermark", async () => {
    const { quorum, quorumError } = await overview();
    expect(quorumError).toBeNull();
    // The test broker is one node, broker and controller: the quorum's only voter and its leader.
    expect(quorum).toMatchObject({ leaderId: 1, voters: [{ id: 1 }] });
    expect(quorum!.leaderEpoch).toBeGreaterThan(0);
    expect(quorum!.highWatermark).toBeGreaterThan(0);
    const leader = quorum!.voters[0]!;
    expect(leader.logEndOffset).toBeGreaterThanOrEqual(quorum!.highWatermark);
    expect(leader.lag).toBe(0);
    expect(Math.abs(Date.now() - leader.lastCaughtUpTimestamp!)).toBeLessThan(60_000);
  });

  test("topic and partition counts are the cluster's, the created topic among them, healthy", async () => {
    // Other tests create and delete topics at the same time: compare with listings taken just
    // before and just after, and retry until nothing changed in between.
    const kafka = rt.kafka.default();
    const key = (list: Awaited<ReturnType<typeof kafka.topics.list>>) => list.map((t) => `${t.name}:${t.partitions}`).join();
    const seen = await waitFor(
      async () => {
        const before = await kafka.topics.list({ includeInternal: true });
        const body = await overview();
        const after = await kafka.topics.list({ includeInternal: true });
        return key(before) === key(after) ? { body, list: after } : null;
      },
      { timeoutMs: 20_000, intervalMs: 100, what: "an overview taken while the topic list stood still" },
    );
    const { body, list } = seen;
    expect(list.some((t) => t.name === topic && t.partitions === 3)).toBe(true);
    // Internal as the topic list marks them: Kafka's, and those of Connect, the registry and Loupe.
    const internal = (t: (typeof list)[number]) => t.internal || rt.internalTopics.has(t.name);
    expect(body.topics).toBe(list.filter((t) => !internal(t)).length);
    expect(body.internalTopics).toBe(list.filter(internal).length);
    expect(body.partitions).toBe(list.reduce((n, t) => n + t.partitions, 0));
    // Replication 1 on one live broker: nothing can be under-replicated or offline.
    expect(body.underReplicated).toEqual({ count: 0, partitions: [] });
    expect(body.offline).toEqual({ count: 0, partitions: [] });
  });

  test("the total consumer lag counts a group's committed lag", async () => {
    const kafka = rt.kafka.default();
    await kafka.writes.produce(
      topic,
      Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: `v${i}`, partition: 0 })),
    );
    const group = uniqueTopic("overview-group");
    groups.push(group);
    // Committed at offset 4 of the 10 records: 6 behind.
    await kafka.groups.alterOffsets(group, [{ topic, partition: 0, offset: 4 }]);
    const body = await overview();
    expect(body.lagError).toBeNull();
    expect(body.lag).not.toBeNull();
    expect(body.lag!.total).toBeGreaterThanOrEqual(6);
    expect(body.lag!.groups).toBeGreaterThanOrEqual(1);
    expect(Math.abs(Date.now() - body.lag!.takenAt)).toBeLessThan(60_000);
  });

  test("an unknown cluster name is a 404 naming it", async () => {
    const res = await rt.request("/api/cluster", { role: "nodata", headers: { "x-service-cluster": "no-such-cluster" } });
    expect(res.status).toBe(404);
    expect((await errorOf(res)).message).toBe("Unknown cluster 'no-such-cluster'");
  });

  test("a configured cluster that cannot be reached is a 503 saying so, in bounded time", async () => {
    const t0 = performance.now();
    const res = await rt.request("/api/cluster", { role: "nodata", headers: { "x-service-cluster": "nowhere" } });
    const body = await errorOf(res);
    expect(res.status).toBe(503);
    expect(body.code).toBe("UNAVAILABLE");
    expect(body.message).toStartWith("Cannot describe the cluster: cannot reach the cluster");
    expect(performance.now() - t0).toBeLessThan(30_000);
  }, 40_000);
});
