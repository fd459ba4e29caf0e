/**
 * The alerts on broker internals (issue 26) against a private broker of the test cluster, which
 * runs the real Prometheus JMX exporter agent with Loupe's rules (deploy/jmx-exporter-kafka.yaml):
 * availability per cluster (with and without the endpoints named), 1009 and 1010 from the
 * broker's real readings (thresholds that always trip), 1012 from produce requests the broker
 * really refuses (keyless records to a compacted topic), raised and resolved, and a broker whose
 * endpoint does not answer keeping what it had. Private, so no other test's failed requests count.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BrokerMetrics } from "../../src/domains/alerts/broker-metrics.ts";
import { LogHub } from "../../src/log/logger.ts";
import { type Cluster, startCluster, uniqueTopic } from "../cluster/cluster.ts";
import { MemorySink, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { waitFor } from "../helpers/wait.ts";

let cluster: Cluster;
let rt: TestRuntime;
let metricsUrl: string;
const withEndpoints = `metrics-${crypto.randomUUID().slice(0, 8)}`;
const without = `plain-${crypto.randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  cluster = await startCluster({ services: ["kafka"], ownerPid: process.pid });
  metricsUrl = cluster.env.KAFKA_METRICS_URLS!.split("=").slice(1).join("=");
  const bootstrapServers = [cluster.env.KAFKA_BOOTSTRAP!];
  rt = await testRuntime({
    kafka: {
      clusters: [
        {
          name: withEndpoints,
          bootstrapServers,
          default: true,
          // Thresholds that always trip (1009, 1010) or trip on any failure (1012).
          brokerMetrics: {
            urls: cluster.env.KAFKA_METRICS_URLS,
            openFilesPercent: 0,
            requestHandlerIdlePercent: 100,
            failedProducePerMinute: 0,
          },
        },
        { name: without, bootstrapServers },
      ],
    },
    alerts: { evaluationInterval: 0 },
  });
  for (const id of [1008, 1009, 1010, 1012]) {
    const res = await rt.request(`/api/alerts/settings/${id}`, {
      method: "PUT",
      role: "admin",
      headers: { "x-service-cluster": withEndpoints },
    });
    expect(res.status).toBe(200);
  }
}, 90_000);

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

async function notifications(alertId: number): Promise<Notification[]> {
  const res = await rt.request(`/api/alerts?alertId=${alertId}&limit=1000`, { role: "read" });
  expect(res.status).toBe(200);
  return ((await res.json()) as Notification[]).filter((n) => n.labels.cluster === withEndpoints);
}

/** One pass, then the active notifications of the alert on the cluster. */
async function pass(alertId: number): Promise<Notification[]> {
  await rt.alertEvaluator.evaluate();
  return (await notifications(alertId)).filter((n) => n.endsAt === null);
}

describe("alerts on broker internals (1008 to 1013)", () => {
  test("26: 1008 to 1012 are available on a cluster naming its brokers' endpoints and say why not on one that does not; 1013 on both", async () => {
    const settingsOf = async (name: string) => {
      const res = await rt.request("/api/alerts/settings", { role: "read", headers: { "x-service-cluster": name } });
      expect(res.status).toBe(200);
      const { categories } = (await res.json()) as {
        categories: Record<string, { id: number; isAvailable: boolean; unavailableReason: string | null }[]>;
      };
      return new Map(categories.Infrastructure!.map((s) => [s.id, s]));
    };
    const on = await settingsOf(withEndpoints);
    const off = await settingsOf(without);
    for (const id of [1008, 1009, 1010, 1011, 1012]) {
      expect(on.get(id)).toMatchObject({ isAvailable: true, unavailableReason: null });
      expect(off.get(id)!.isAvailable).toBe(false);
      expect(off.get(id)!.unavailableReason).toContain(
        `cluster '${without}' does not name: set kafka.clusters[].brokerMetrics.urls or .template`,
      );
    }
    expect(on.get(1013)!.isAvailable).toBe(true);
    expect(off.get(1013)!.isAvailable).toBe(true);
  });

  test("26: keyless records refused by a compacted topic are failed produce requests: 1012 raised, and resolved once they stop", async () => {
    const kafka = rt.kafka.get(withEndpoints);
    const topic = uniqueTopic("alerts-compacted");
    await kafka.topics.create({ name: topic, partitions: 1, configs: { "cleanup.policy": "compact" } });
    expect(await pass(1012)).toEqual([]); // the counter's base
    const refused = await kafka.writes.produce(topic, [{ value: "no key" }]).then(
      () => null,
      (e: unknown) => e,
    );
    expect(String(refused)).toContain("ompact");
    const [raised] = await pass(1012);
    expect(raised!.labels).toMatchObject({ alertname: "ProduceRequestsFailing", instance: "broker 1" });
    expect(raised!.annotations.summary).toMatch(/^Broker 1 failed [1-9]\d* produce requests in \d+ s \([\d.]+ a minute, over 0\)$/);
    // Two passes without a failure resolve it (one alone does not).
    expect(await pass(1012)).toHaveLength(1);
    expect(await pass(1012)).toEqual([]);
    expect((await notifications(1012))[0]!.endsAt).not.toBeNull();
    await kafka.topics.delete(topic);
  }, 30_000);

  test("26: 1013 reads each log dir's disk from DescribeLogDirs naming no partition; one broker has no average to be over", async () => {
    const [broker] = await rt.kafka.get(withEndpoints).logDirs.brokerDirs({ partitions: false });
    expect(broker!.brokerId).toBe(1);
    for (const d of broker!.dirs) {
      expect(d).toMatchObject({ bytes: 0, partitions: 0, error: null });
      expect(d.totalBytes).toBeGreaterThan(0);
      expect(d.usableBytes).toBeGreaterThanOrEqual(0);
    }
    const res = await rt.request("/api/alerts/settings/1013", {
      method: "PUT",
      role: "admin",
      headers: { "x-service-cluster": withEndpoints },
    });
    expect(res.status).toBe(200);
    expect(await pass(1013)).toEqual([]);
  });

  test("26: a broker whose endpoint does not answer keeps its findings as they were, and the reason is logged", async () => {
    const port = new URL(metricsUrl).port;
    const sink = new MemorySink();
    const metrics = new BrokerMetrics(
      [
        {
          name: "c",
          bootstrapServers: ["127.0.0.1:1"],
          clientId: "loupe",
          default: true,
          brokerMetrics: {
            template: `http://{host}:${port}/metrics`,
            timeout: 2_000,
            openFilesPercent: 0,
            requestHandlerIdlePercent: 20,
            failedFetchPerMinute: 5,
            failedProducePerMinute: 5,
            diskAboveAveragePoints: 10,
          },
        },
      ],
      rt.kafka,
      new LogHub("warn", sink).logger("alerts"),
    );
    const endpointOnly = async (id: number) => id !== 1013;
    const fds = async (host: string) =>
      (await metrics.findings("c", [{ id: 1, host }], endpointOnly)).find((f) => f.alertId === 1009)!.findings;
    const found = await fds("127.0.0.1");
    expect(found.map((f) => f.fingerprint)).toEqual(["cond/c/1009/1"]);
    // The agent listens on 127.0.0.1 alone: 127.0.0.2 refuses the connection.
    expect(await fds("127.0.0.2")).toEqual(found);
    expect(sink.text()).toContain("a broker's metrics endpoint did not answer; its alerts stay as they were");
    expect(sink.text()).toContain(`http://127.0.0.2:${port}/metrics`);
  });
  test("26: 1009 and 1010 are raised from the broker's real readings; one Kafka version raises no 1008", async () => {
    const raised = (alertId: number) => async () => ((await pass(alertId)).length > 0 ? notifications(alertId) : null);
    const [fds] = await waitFor(raised(1009), { what: "1009 raised" });
    const scraped = await (await fetch(metricsUrl)).text();
    const max = /^process_max_fds (\S+)$/m.exec(scraped)![1]!;
    expect(fds!.labels).toMatchObject({ alertname: "FileDescriptorsHigh", instance: "broker 1", broker: "1" });
    expect(fds!.annotations.summary).toMatch(
      new RegExp(`^Broker 1 has \\d+ of its ${Number(max)} file descriptors open \\(\\d+(\\.\\d)? %, over 0 %\\)$`),
    );
    // The meter's first tick comes 5 s after the broker started: until then it is not measured.
    const [idle] = await waitFor(async () => ((await pass(1010)).length > 0 ? pass(1010) : null), {
      what: "1010 raised",
      timeoutMs: 20_000,
    });
    expect(idle!.annotations.summary).toMatch(
      /^Broker 1's request handler threads are idle \d+(\.\d)? % of the time \(one-minute average, under 100 %\)$/,
    );
    expect(await notifications(1008)).toEqual([]);
  }, 40_000);
});
