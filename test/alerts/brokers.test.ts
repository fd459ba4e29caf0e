/**
 * The infrastructure alerts the evaluation raises on a private two-broker cluster (node 1 broker
 * and controller, node 2 a broker): node 2 killed raises 1000 (broker down), 1005
 * (under-replicated partitions) and 1006 (offline partitions), each once and seen in
 * Alertmanager; node 2 restarted resolves all three.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Cluster, killService, requireEnv, restartService, startCluster, uniqueTopic } from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { waitFor } from "../helpers/wait.ts";
import { waitForLeaders } from "../kafka/helpers.ts";

let cluster: Cluster | undefined;
let rt: TestRuntime | undefined;
let amUrl: string;
const clusterName = `brokers-${crypto.randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  amUrl = requireEnv("ALERTMANAGER_URL");
  cluster = await startCluster({ services: ["kafka"], ownerPid: process.pid, kafkaBrokers: 2 });
  rt = await testRuntime({
    kafka: { clusters: [{ name: clusterName, bootstrapServers: [cluster.env.KAFKA_BOOTSTRAP!], default: true }] },
    alerts: { evaluationInterval: 500, alertmanagers: [amUrl], initialBackoff: 50, maxBackoff: 500 },
  });
  const kafka = rt.kafka.default();
  await kafka.topics.create({ name: uniqueTopic("alerts-rf2"), partitions: 4, replication: 2 });
  const single = uniqueTopic("alerts-rf1");
  await kafka.topics.create({ name: single, partitions: 4, replication: 1 });
  await waitForLeaders(kafka, single, 4, 60_000);
}, 240_000);

afterAll(async () => {
  await rt?.dispose();
  await cluster?.stop({ graceMs: 2_000 });
}, 30_000);

interface Notification {
  alertId: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  endsAt: string | null;
}

async function infrastructure(): Promise<Notification[]> {
  const res = await rt!.request("/api/alerts?category=Infrastructure&limit=10000", { role: "read" });
  expect(res.status).toBe(200);
  return (await res.json()) as Notification[];
}

describe("a broker lost and back", () => {
  test("node 2 killed raises 1000, 1005 and 1006 once each, in Alertmanager too; restarted, all three resolve", async () => {
    // Both brokers seen by a pass, every replica in sync: nothing raised.
    await waitFor(
      async () => {
        const state = await rt!.kafka.default().describe();
        return state.brokers.length === 2 && state.underReplicated.length === 0;
      },
      { timeoutMs: 60_000, what: "both brokers in sync" },
    );
    const before = Date.now();
    await waitFor(() => (rt!.background.status().find((j) => j.name === "alert-evaluation")?.lastRunAt ?? 0) > before, {
      timeoutMs: 10_000,
      what: "an evaluation pass with both brokers",
    });
    expect((await infrastructure()).filter((n) => n.endsAt === null)).toEqual([]);

    const node2 = cluster!.brokers[1]!;
    await killService(node2);
    const raised = await waitFor(
      async () => {
        const active = (await infrastructure()).filter((n) => n.endsAt === null);
        const ids = active.map((n) => n.alertId).sort();
        return ids.join() === "1000,1005,1006" ? active : null;
      },
      { timeoutMs: 90_000, intervalMs: 250, what: "1000, 1005 and 1006 raised" },
    );
    const down = raised.find((n) => n.alertId === 1000)!;
    expect(down.labels).toMatchObject({ alertname: "BrokerDown", severity: "CRITICAL", cluster: clusterName });
    expect(down.labels.instance).toStartWith("broker 2 (127.0.0.1:");
    expect(raised.find((n) => n.alertId === 1005)!.annotations.summary).toMatch(/under-replicated/);
    expect(raised.find((n) => n.alertId === 1006)!.annotations.summary).toMatch(/offline/);
    await waitFor(
      async () => {
        const inAm = (await (await fetch(`${amUrl}/api/v2/alerts?filter=${encodeURIComponent(`cluster="${clusterName}"`)}`)).json()) as {
          labels: Record<string, string>;
        }[];
        return (
          inAm
            .map((a) => a.labels.alertname)
            .sort()
            .join() === "BrokerDown,OfflinePartitions,UnderReplicatedPartitions"
        );
      },
      { timeoutMs: 15_000, what: "the three in Alertmanager" },
    );

    await restartService(node2);
    const resolved = await waitFor(
      async () => {
        const all = await infrastructure();
        return all.length === 3 && all.every((n) => n.endsAt !== null) ? all : null;
      },
      { timeoutMs: 90_000, intervalMs: 250, what: "all three resolved" },
    );
    expect(resolved.map((n) => n.alertId).sort()).toEqual([1000, 1005, 1006]);
  }, 240_000);
});
