/**
 * 1002 and 1003 from the evaluation's own probes, with no request using the hosts: a Connect
 * worker and a registry host are each reached through a local TCP relay to the run's real worker
 * and registry. A relay that does not listen is a dead host (connection refused); opened, the
 * real service answers through it. Passes are driven by calling the evaluation directly.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { ServiceHostHealth } from "../../src/domains/alerts/service-hosts.ts";
import { ConnectService } from "../../src/domains/connect/service.ts";
import { SchemaProxyService } from "../../src/domains/schemas/service.ts";
import { Upstream } from "../../src/proxy/upstream.ts";
import { connectEnv, freePort, schemaRegistryUrl } from "../cluster/cluster.ts";
import { startMachineLag, timedOn } from "../helpers/machine-lag.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { silentHost } from "../schemas/helpers.ts";

/** A TCP relay on a fixed local port to `target`'s host and port, opened and closed at will. */
async function relay(target: string) {
  const to = new URL(target);
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const url = `http://127.0.0.1:${port}${to.pathname.replace(/\/$/, "")}`;
  return {
    url,
    async open() {
      server = createServer((client) => {
        const upstream = tcpConnect(Number(to.port), to.hostname);
        for (const [a, b] of [
          [client, upstream],
          [upstream, client],
        ] as const) {
          sockets.add(a);
          a.pipe(b);
          a.on("error", () => b.destroy());
          a.on("close", () => {
            sockets.delete(a);
            b.destroy();
          });
        }
      });
      await new Promise<void>((resolve) => server!.listen(port, "127.0.0.1", resolve));
    },
    async close() {
      for (const s of sockets) s.destroy();
      if (server) await new Promise<void>((resolve) => server!.close(() => resolve()));
      server = undefined;
    },
  };
}

let rt: TestRuntime;
let worker: Awaited<ReturnType<typeof relay>>;
let registryHost: Awaited<ReturnType<typeof relay>>;
/** A worker a request finds dead while its probe, later, finds it answering. */
let flaky: Awaited<ReturnType<typeof relay>>;
const alias = `probed-${Date.now().toString(36)}`;

beforeAll(async () => {
  const w1 = connectEnv().urls[0]!;
  [worker, registryHost, flaky] = await Promise.all([relay(w1), relay(schemaRegistryUrl()), relay(w1)]);
  await flaky.open();
  rt = await testRuntime({
    connect: {
      clusters: [
        { alias, urls: [worker.url] },
        { alias: `${alias}-flaky`, urls: [flaky.url, w1] },
      ],
      timeout: "5s",
      grace: "30s",
    },
    schemaRegistry: { urls: [registryHost.url], timeout: "5s" },
    alerts: { evaluationInterval: 0 },
  });
});
afterAll(async () => {
  await rt?.dispose();
  await Promise.all([worker, registryHost, flaky].map((r) => r?.close()));
}, 30_000);

/** One evaluation pass (its failures are the dead hosts' connector lists: the notifications tell). */
const pass = () => rt.alertEvaluator.evaluate().catch(() => {});
const notificationsOf = async (alertId: number, instance: string) =>
  (await rt.notifications.list({ limit: 100, alertId })).filter((n) => n.labels.instance === instance);

describe("Connect workers and registry hosts probed by the evaluation", () => {
  test("26: a worker and a registry host dead while no request uses them: raised at the first pass, once; resolved two passes after they answer", async () => {
    const workerInstance = `${alias} ${worker.url}`;
    await pass();
    const [r] = await notificationsOf(1003, registryHost.url);
    expect(r?.annotations.summary).toBe(`Schema registry host ${registryHost.url} does not answer: connection refused`);
    expect(r!.endsAt).toBeNull();
    expect(r!.labels.cluster).toBe("local");
    const [w] = await notificationsOf(1002, workerInstance);
    expect(w?.annotations.summary).toBe(`Kafka Connect worker ${worker.url} of '${alias}' does not answer: connection refused`);
    expect(w!.endsAt).toBeNull();
    expect(w!.labels.cluster).toBe("local");

    // Still down: the same notification, not one per pass.
    await pass();
    expect((await notificationsOf(1002, workerInstance)).length).toBe(1);
    expect((await notificationsOf(1003, registryHost.url)).length).toBe(1);

    // Answering again: one pass without it keeps it (no flapping), the second resolves it.
    await Promise.all([worker.open(), registryHost.open()]);
    await pass();
    expect((await notificationsOf(1002, workerInstance))[0]!.endsAt).toBeNull();
    await pass();
    for (const list of [await notificationsOf(1002, workerInstance), await notificationsOf(1003, registryHost.url)]) {
      expect(list.length).toBe(1);
      expect(list[0]!.endsAt).not.toBeNull();
    }
  }, 30_000);

  test("26: a worker a proxied request found dead is raised at the next pass though its probe is answered by then", async () => {
    const instance = `${alias}-flaky ${flaky.url}`;
    expect(await notificationsOf(1002, instance)).toEqual([]);
    await flaky.close();
    // The proxy skips the refusing worker for the next, which answers.
    const res = await rt.request(`/api/proxy-connect/${alias}-flaky/connectors`, { role: "nodata" });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    await flaky.open();
    await pass();
    const [n] = await notificationsOf(1002, instance);
    expect(n!.endsAt).toBeNull();
    expect(n!.annotations.summary).toBe(`Kafka Connect worker ${flaky.url} of '${alias}-flaky' does not answer: connection refused`);
    // Probed and answering since, with no request finding it dead again: resolved after two passes.
    await pass();
    await pass();
    expect((await notificationsOf(1002, instance)).map((a) => a.endsAt !== null)).toEqual([true]);
  }, 30_000);

  test("26: the probes of a pass go out at once: two silent workers and a silent registry host cost one timeout", async () => {
    const silent = [silentHost(), silentHost(), silentHost()];
    const machine = await startMachineLag();
    try {
      const quiet = { ...rt.config.connect.clusters[0]!, alias: "quiet", urls: [silent[0]!.url, silent[1]!.url] };
      const connect = new ConnectService(
        { ...rt.config.connect, clusters: [quiet], timeout: 1_000 },
        { kafka: { default: "local", clusters: [] } },
      );
      const registry = new SchemaProxyService({
        upstream: new Upstream({
          name: "Schema registry",
          urls: [silent[2]!.url],
          timeoutMs: 1_000,
          graceMs: 30_000,
          maxBytes: 1024,
          failoverOn5xx: true,
        }),
        allowDelete: false,
      });
      const hosts = [...connect.serviceHosts(), ...registry.serviceHosts("local")];
      const { value: found, ms, ownMs } = await timedOn(machine, () => new ServiceHostHealth().pass(hosts));
      expect(found.map((f) => f.raise.summary)).toEqual([
        `Kafka Connect worker ${silent[0]!.url} of 'quiet' does not answer: no answer within 1000 ms`,
        `Kafka Connect worker ${silent[1]!.url} of 'quiet' does not answer: no answer within 1000 ms`,
        `Schema registry host ${silent[2]!.url} does not answer: no answer within 1000 ms`,
      ]);
      // One timeout of 1 s, not three in a row.
      expect(ms).toBeGreaterThanOrEqual(900);
      expect(ownMs).toBeLessThan(2_000);
    } finally {
      await machine.stop();
      for (const h of silent) h.stop();
    }
  }, 30_000);
});
