/**
 * The infrastructure alerts the evaluation raises on a private three-broker cluster (node 1
 * broker and controller, nodes 2 and 3 brokers; three replicas, two in sync by default): node 3
 * stopped raises 1000 (broker down) within two evaluation intervals of leaving the metadata,
 * with 1005 (its replicas out of sync) and 1006 (the partitions only it held), each once and
 * seen in Alertmanager's own `GET /api/v2/alerts`; node 3 started again resolves all three, and
 * the resolutions reach Alertmanager with their `endsAt`. Back, node 3 leads none of the
 * partitions it is the preferred leader of (the controller moved them away and rebalances only
 * every five minutes): leader imbalance (1014, turned on here) is raised for it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Cluster, requireEnv, restartService, startCluster, stopService, uniqueTopic } from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { waitFor } from "../helpers/wait.ts";
import { waitForLeaders } from "../kafka/helpers.ts";

/** The evaluation's interval here: the broker-down alert must come within two of them. */
const INTERVAL = 1_000;

let cluster: Cluster | undefined;
let rt: TestRuntime | undefined;
let amUrl: string;
const clusterName = `brokers-${crypto.randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  amUrl = requireEnv("ALERTMANAGER_URL");
  cluster = await startCluster({ services: ["kafka"], ownerPid: process.pid, kafkaBrokers: 3 });
  rt = await testRuntime({
    kafka: { clusters: [{ name: clusterName, bootstrapServers: [cluster.env.KAFKA_BOOTSTRAP!], default: true }] },
    // A long re-send interval: an alert leaves Alertmanager's active list only by its resolution
    // (else it would hold until four re-send intervals after its last delivery).
    alerts: { evaluationInterval: INTERVAL, resendInterval: 600_000, alertmanagers: [amUrl], initialBackoff: 50, maxBackoff: 500 },
  });
  const kafka = rt.kafka.default();
  // The cluster's defaults: three replicas (each node one), two in sync to take a write.
  const replicated = uniqueTopic("alerts-rf3");
  await kafka.topics.create({ name: replicated, partitions: 3 });
  const single = uniqueTopic("alerts-rf1");
  await kafka.topics.create({ name: single, partitions: 3, replication: 1 });
  await waitForLeaders(kafka, replicated, 3, 60_000);
  await waitForLeaders(kafka, single, 3, 60_000);
  const [described] = await kafka.topics.describe([replicated]);
  expect(described!.partitionDetails.map((p) => p.replicas.length)).toEqual([3, 3, 3]);
  expect((await rt.request("/api/alerts/settings/1014", { method: "PUT", role: "admin" })).status).toBe(200);
}, 240_000);

afterAll(async () => {
  await rt?.dispose();
  await cluster?.stop({ graceMs: 2_000 });
}, 30_000);

interface Notification {
  alertId: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string | null;
}

async function infrastructure(): Promise<Notification[]> {
  const res = await rt!.request("/api/alerts?category=Infrastructure&limit=10000", { role: "read" });
  expect(res.status).toBe(200);
  return (await res.json()) as Notification[];
}

/** The alertnames Alertmanager lists as active for this cluster (a resolved alert is not listed). */
async function activeInAlertmanager(): Promise<string> {
  const res = await fetch(`${amUrl}/api/v2/alerts?active=true&filter=${encodeURIComponent(`cluster="${clusterName}"`)}`);
  const alerts = (await res.json()) as { labels: Record<string, string>; endsAt: string }[];
  return alerts
    .filter((a) => Date.parse(a.endsAt) > Date.now())
    .map((a) => a.labels.alertname)
    .sort()
    .join();
}

describe("a broker lost and back", () => {
  test("node 3 stopped raises 1000 within two intervals, 1005 and 1006, once each and in Alertmanager; started again, all three resolve there too, and 1014 is raised", async () => {
    const kafka = rt!.kafka.default();
    // The three brokers seen by a pass, every replica in sync: nothing raised.
    await waitFor(
      async () => {
        const state = await kafka.describe();
        return state.brokers.length === 3 && state.underReplicated.length === 0;
      },
      { timeoutMs: 60_000, what: "three brokers in sync" },
    );
    const before = Date.now();
    await waitFor(() => (rt!.background.status().find((j) => j.name === "alert-evaluation")?.lastRunAt ?? 0) > before, {
      timeoutMs: 10_000,
      what: "an evaluation pass with three brokers",
    });
    expect((await infrastructure()).filter((n) => n.endsAt === null)).toEqual([]);

    // Stopped as an operator stops a broker (SIGTERM: a controlled shutdown), its data kept.
    const node3 = cluster!.brokers[2]!;
    expect(node3.nodeId).toBe(3);
    const stopping = stopService(node3, { keepDir: true, graceMs: 30_000 });
    const goneAt = await waitFor(async () => ((await kafka.describe()).brokers.some((b) => b.id === 3) ? null : Date.now()), {
      timeoutMs: 30_000,
      intervalMs: 50,
      what: "node 3 gone from the metadata",
    });
    await stopping;
    const raised = await waitFor(
      async () => {
        const active = (await infrastructure()).filter((n) => n.endsAt === null);
        return active
          .map((n) => n.alertId)
          .sort()
          .join() === "1000,1005,1006"
          ? active
          : null;
      },
      { timeoutMs: 60_000, intervalMs: 100, what: "1000, 1005 and 1006 raised" },
    );
    const down = raised.find((n) => n.alertId === 1000)!;
    expect(down.labels).toMatchObject({ alertname: "BrokerDown", severity: "CRITICAL", cluster: clusterName });
    expect(down.labels.instance).toStartWith("broker 3 (127.0.0.1:");
    expect(Date.parse(down.startsAt) - goneAt).toBeLessThanOrEqual(2 * INTERVAL);
    expect(raised.find((n) => n.alertId === 1005)!.annotations.summary).toMatch(/under-replicated/);
    expect(raised.find((n) => n.alertId === 1006)!.annotations.summary).toMatch(/offline/);
    await waitFor(async () => (await activeInAlertmanager()) === "BrokerDown,OfflinePartitions,UnderReplicatedPartitions", {
      timeoutMs: 15_000,
      what: "the three active in Alertmanager",
    });

    await restartService(node3);
    const broker = (n: Notification) => [1000, 1005, 1006].includes(n.alertId);
    const resolved = await waitFor(
      async () => {
        const all = (await infrastructure()).filter(broker);
        return all.length === 3 && all.every((n) => n.endsAt !== null) ? all : null;
      },
      { timeoutMs: 90_000, intervalMs: 250, what: "all three resolved" },
    );
    expect(resolved.map((n) => n.alertId).sort()).toEqual([1000, 1005, 1006]);
    // Raised once each: nothing more than the three was ever raised for the broker.
    expect((await infrastructure()).filter(broker).length).toBe(3);
    const imbalance = await waitFor(async () => (await infrastructure()).find((n) => n.alertId === 1014 && n.endsAt === null), {
      timeoutMs: 30_000,
      what: "1014 raised for node 3",
    });
    expect(imbalance.labels).toMatchObject({ alertname: "LeaderImbalance", instance: "broker 3" });
    expect(imbalance.annotations.summary).toMatch(
      /^Broker 3 leads 0 of the \d+ partitions it is the preferred leader of \(100 % imbalance/,
    );
    // Alertmanager got the resolutions: without them, the three would stay active for 40 minutes.
    await waitFor(async () => (await activeInAlertmanager()) === "LeaderImbalance", {
      timeoutMs: 15_000,
      what: "the three resolved in Alertmanager",
    });
  }, 240_000);
});
