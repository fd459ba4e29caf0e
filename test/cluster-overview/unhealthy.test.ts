/**
 * GET /api/cluster on a cluster that loses a broker: a private two-broker cluster (node 1 is
 * broker and controller, node 2 a broker), whose node 2 is killed. Its replicas of topics
 * replicated twice fall out of sync (under-replicated), and the partitions only it held lose
 * their leader (offline). Metadata answers those with an error code per partition, which the
 * client refuses by default: the overview must still answer, and list them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { ClusterOverview } from "../../src/domains/cluster/schemas.ts";
import { PARTITION_LIST_LIMIT } from "../../src/domains/cluster/service.ts";
import { type Cluster, killService, startCluster, uniqueTopic } from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { waitFor } from "../helpers/wait.ts";
import { waitForLeaders } from "../kafka/helpers.ts";

let cluster: Cluster | undefined;
let rt: TestRuntime | undefined;
/** Replicated on both nodes, more partitions than the list holds. */
const replicated = uniqueTopic("overview-rf2");
const REPLICATED_PARTITIONS = PARTITION_LIST_LIMIT + 10;
/** One replica each, spread over both nodes. */
const single = uniqueTopic("overview-rf1");
const SINGLE_PARTITIONS = 6;

beforeAll(async () => {
  cluster = await startCluster({ services: ["kafka"], ownerPid: process.pid, kafkaBrokers: 2 });
  rt = await testRuntime({
    lag: { cacheTtl: 0 },
    kafka: { clusters: [{ name: "local", bootstrapServers: [cluster.env.KAFKA_BOOTSTRAP!], default: true }] },
  });
  const kafka = rt.kafka.default();
  await kafka.topics.create({ name: replicated, partitions: REPLICATED_PARTITIONS, replication: 2 });
  await kafka.topics.create({ name: single, partitions: SINGLE_PARTITIONS, replication: 1 });
  await waitForLeaders(kafka, replicated, REPLICATED_PARTITIONS, 60_000);
  await waitForLeaders(kafka, single, SINGLE_PARTITIONS, 60_000);
}, 240_000);

afterAll(async () => {
  await rt?.dispose();
  await cluster?.stop({ graceMs: 2_000 });
}, 30_000);

async function overview(): Promise<ClusterOverview> {
  const res = await rt!.request("/api/cluster", { role: "read" });
  expect(res.status).toBe(200);
  return (await res.json()) as ClusterOverview;
}

describe("a cluster that loses a broker", () => {
  test("while both nodes run: two brokers, every partition led and in sync", async () => {
    const body = await waitFor(
      async () => {
        const b = await overview();
        return b.underReplicated.count === 0 ? b : null;
      },
      { timeoutMs: 30_000, intervalMs: 250, what: "every replica in sync" },
    );
    expect(body.brokers.map((b) => ({ id: b.id, rack: b.rack }))).toEqual([
      { id: 1, rack: "rack-1" },
      { id: 2, rack: "rack-2" },
    ]);
    expect(body.offline.count).toBe(0);
    // This cluster is the test's own: nothing else creates topics on it.
    const all = await rt!.kafka.default().topics.list({ includeInternal: true });
    expect(body.topics).toBe(2);
    expect(body.internalTopics).toBe(all.filter((t) => t.internal).length);
    expect(body.partitions).toBe(all.reduce((n, t) => n + t.partitions, 0));
    // Every replica is held by a broker: their counts add up to every partition's replicas.
    expect(body.brokers.reduce((n, b) => n + b.replicas, 0)).toBe(all.reduce((n, t) => n + t.partitions * t.replicationFactor, 0));
    expect(body.brokers.reduce((n, b) => n + b.leaders, 0)).toBe(body.partitions);
    // The quorum: node 1 votes and leads; node 2, a broker only, follows the metadata log as an observer.
    expect(body.quorum).toMatchObject({ leaderId: 1, voters: [{ id: 1, lag: 0 }] });
    const observer = await waitFor(async () => (await overview()).quorum?.observers.find((o) => o.id === 2 && o.lag === 0), {
      timeoutMs: 30_000,
      intervalMs: 250,
      what: "node 2 caught up as an observer",
    });
    expect(Math.abs(Date.now() - observer.lastFetchTimestamp!)).toBeLessThan(30_000);
  }, 60_000);

  test("node 2 killed: its replicas are out of sync, the partitions only it held are offline, and the overview still answers", async () => {
    const [described] = await rt!.kafka.default().topics.describe([single]);
    const onNode2 = described!.partitionDetails.filter((p) => p.replicas.join() === "2").map((p) => p.partition);
    expect(onNode2.length).toBeGreaterThan(0);

    const killedAt = Date.now();
    await killService(cluster!.brokers[1]!);
    // Once the controller fences node 2 (its session timeout), Metadata says so.
    const body = await waitFor(
      async () => {
        const b = await overview();
        return b.offline.count === onNode2.length && b.underReplicated.count >= REPLICATED_PARTITIONS ? b : null;
      },
      { timeoutMs: 60_000, intervalMs: 500, what: "node 2's partitions offline and its replicas out of sync" },
    );
    expect(body.brokers.map((b) => b.id)).toEqual([1]);
    expect(body.offline.partitions.map((p) => ({ topic: p.topic, partition: p.partition, leader: p.leader }))).toEqual(
      onNode2.map((partition) => ({ topic: single, partition, leader: -1 })),
    );
    // Every partition replicated twice lost a replica: counted all, listed up to the limit, in order.
    const replicatedOnes = body.underReplicated.partitions.filter((p) => p.topic === replicated);
    expect(body.underReplicated.count).toBeGreaterThanOrEqual(REPLICATED_PARTITIONS);
    expect(body.underReplicated.partitions.length).toBe(PARTITION_LIST_LIMIT);
    expect(replicatedOnes.map((p) => p.partition)).toEqual(replicatedOnes.map((_, i) => i));
    for (const p of replicatedOnes) {
      expect(p.replicas.toSorted()).toEqual([1, 2]);
      expect(p.isr).toEqual([1]);
      expect(p.leader).toBe(1);
    }
    // Fencing node 2 wrote to the metadata log: the observer it was has fallen behind (or is gone).
    const node2 = body.quorum!.observers.find((o) => o.id === 2);
    if (node2) {
      expect(node2.lag).toBeGreaterThan(0);
      expect(node2.lastFetchTimestamp!).toBeLessThanOrEqual(killedAt + 1_000);
    }
    expect(body.quorum!.voters).toMatchObject([{ id: 1, lag: 0 }]);
  }, 90_000);

  test("regression: one offline partition failed the Kafka layer's topic list, and with it every consumer lag (the overview's total)", async () => {
    const body = await overview();
    expect(body.offline.count).toBeGreaterThan(0);
    expect(body.lagError).toBeNull();
    expect(body.lag).toMatchObject({ total: 0, groups: 0 });
    // The topic list of the Kafka layer, which the lag engine reads.
    const listed = await rt!.kafka.default().topics.list();
    expect(listed.map((t) => [t.name, t.partitions])).toEqual(
      [
        [single, SINGLE_PARTITIONS],
        [replicated, REPLICATED_PARTITIONS],
      ].sort(),
    );
  }, 30_000);

  test("regression: one offline partition made GET /api/topics and the topic's own answer 503 (their offsets are read without it)", async () => {
    const list = await rt!.request("/api/topics", { role: "read" });
    expect(list.status).toBe(200);
    const topics = (await list.json()) as Array<{ topicName: string; partitions: number }>;
    expect(topics.find((t) => t.topicName === single)?.partitions).toBe(SINGLE_PARTITIONS);
    const res = await rt!.request(`/api/topics/${single}`, { role: "read" });
    expect(res.status).toBe(200);
    const topic = (await res.json()) as { messagesPerPartition: Array<{ partition: number; leader: number; begin: number; end: number }> };
    const offline = topic.messagesPerPartition.filter((p) => p.leader < 0);
    expect(offline.length).toBeGreaterThan(0);
    // Without a leader no offset can be read: -1, as Kafka says; the led ones have theirs.
    for (const p of offline) expect([p.begin, p.end]).toEqual([-1, -1]);
    for (const p of topic.messagesPerPartition.filter((x) => x.leader >= 0)) expect(p.end).toBeGreaterThanOrEqual(0);
  }, 30_000);
});
