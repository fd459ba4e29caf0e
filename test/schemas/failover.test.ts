/**
 * The proxy over two real registry hosts sharing one store (the cluster tool's `registry`: two
 * Apicurio hosts on Kafka-backed storage), a pair private to this file so the shared registry
 * keeps both hosts: host 1 frozen while a register goes through (it times out, host 2
 * registers; thawed, host 1 handles the stale request) leaves one version and one id; host 1
 * killed leaves host 2 serving what host 1 registered.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  type Cluster,
  freezeService,
  kafkaBootstrap,
  killService,
  type ServiceProcess,
  startCluster,
  thawService,
} from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { waitFor } from "../helpers/wait.ts";
import { GO, subjectName, V1, V2 } from "./helpers.ts";

/**
 * What the proxy gives a host. A register on a warm host answers within a few hundred ms even on
 * a loaded machine; the hosts are warmed below, since a cold host's first register (classes
 * loading, the journal's first write) took over 2 s in CI.
 */
const TIMEOUT_MS = 4_000;

let cluster: Cluster | undefined;
let hosts: ServiceProcess[] = [];
let rt: TestRuntime | undefined;
const cleanups: Array<() => Promise<unknown>> = [];

const urlOf = (host: ServiceProcess) => host.env.SCHEMA_REGISTRY_URL!;

beforeAll(async () => {
  cluster = await startCluster({ services: ["registry"], given: { KAFKA_BOOTSTRAP: kafkaBootstrap() }, ownerPid: process.pid });
  hosts = cluster.registryHosts;
  expect(hosts.length).toBe(2);
  // Each host registers once, directly and without the proxy's timeout, and sees the other's.
  const warm = hosts.map((_, i) => subjectName(`warm${i}`));
  for (const [i, h] of hosts.entries()) {
    await waitFor(async () => (await direct(h, "POST", `/subjects/${warm[i]}/versions`, V1, 60_000)).status === 200, {
      timeoutMs: 120_000,
      what: `registry host ${i + 1} to register`,
    });
  }
  for (const h of hosts) {
    for (const s of warm) {
      await waitFor(async () => (await direct(h, "GET", `/subjects/${s}/versions`)).status === 200, {
        timeoutMs: 60_000,
        what: "both hosts to see both warm-up subjects",
      });
    }
  }
  rt = await testRuntime({
    schemaRegistry: { urls: hosts.map(urlOf), timeout: TIMEOUT_MS, grace: "60s", allowDelete: true },
  });
}, 300_000);
afterAll(async () => {
  for (const h of hosts) thawService(h);
  for (const c of cleanups) await c().catch(() => {});
  await rt?.dispose();
  await cluster?.stop({ graceMs: 2_000 });
});

/** Straight at one host, bypassing Loupe. */
async function direct(
  host: ServiceProcess,
  method: string,
  path: string,
  body?: string,
  timeoutMs = 5_000,
): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${urlOf(host)}${path}`, {
    method,
    headers: GO.write,
    ...(body !== undefined ? { body } : {}),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

const proxied = (method: string, path: string, body?: string) =>
  rt!.request(path, { method, role: "admin", headers: GO.write, ...(body !== undefined ? { body } : {}) });

describe("two registry hosts sharing one store", () => {
  test("host 1 frozen during a register: it times out, host 2 registers; thawed, host 1 adds no second version and the id stays", async () => {
    const s = subjectName("frozen");
    const path = `/api/proxy-sr/subjects/${s}/versions`;
    freezeService(hosts[0]!);
    let id: number;
    try {
      const t = performance.now();
      const res = await proxied("POST", path, V1);
      const elapsed = performance.now() - t;
      expect(res.status).toBe(200);
      id = ((await res.json()) as { id: number }).id;
      // Host 1 was tried first and given the whole timeout; host 2 answered.
      expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
      const [first, second] = rt!.schemas.hosts();
      expect(first!.badUntil).toBeGreaterThan(Date.now());
      expect(first!.lastError).toContain(`no answer within ${TIMEOUT_MS} ms`);
      expect(second!.badUntil).toBe(0);
    } finally {
      thawService(hosts[0]!);
    }
    // Host 1 now reads the register it was sent while frozen, and follows the shared journal:
    // both hosts come to agree on one version with the id host 2 gave.
    await waitFor(
      async () => {
        for (const h of hosts) {
          expect((await direct(h, "GET", `/subjects/${s}/versions`)).json).toEqual([1]);
          expect((await direct(h, "GET", `/subjects/${s}/versions/latest`)).json).toMatchObject({ version: 1, id });
        }
        return true;
      },
      { timeoutMs: 30_000, what: "both hosts to show one version" },
    );
    // The same schema again, on host 1 itself: the same id, still one version.
    expect(await direct(hosts[0]!, "POST", `/subjects/${s}/versions`, V1)).toEqual({ status: 200, json: { id } });
    expect((await direct(hosts[1]!, "GET", `/subjects/${s}/versions`)).json).toEqual([1]);
  }, 60_000);

  test("host 1 killed: host 2 serves what host 1 registered, and registers through the proxy", async () => {
    const s = subjectName("killed");
    const path = `/api/proxy-sr/subjects/${s}/versions`;
    // A Loupe of its own: the previous test left host 1 out of the first one's hosts.
    const fresh = await testRuntime({ schemaRegistry: { urls: hosts.map(urlOf), timeout: TIMEOUT_MS, grace: "60s" } });
    cleanups.push(() => fresh.dispose());
    const proxied = (method: string, to: string, body?: string) =>
      fresh.request(to, { method, role: "admin", headers: GO.write, ...(body !== undefined ? { body } : {}) });
    expect((await proxied("POST", path, V1)).status).toBe(200);
    expect(fresh.schemas.hosts().map((h) => h.badUntil)).toEqual([0, 0]);
    const { json } = await direct(hosts[0]!, "GET", `/subjects/${s}/versions/1`);
    const { id } = json as { id: number };
    await waitFor(async () => (await direct(hosts[1]!, "GET", `/subjects/${s}/versions`)).status === 200, {
      timeoutMs: 30_000,
      what: "host 2 to see host 1's subject",
    });
    await killService(hosts[0]!);

    const version = await proxied("GET", `${path}/1`);
    expect(version.status).toBe(200);
    expect(await version.json()).toMatchObject({ subject: s, version: 1, id });
    const second = await proxied("POST", path, V2);
    expect(second.status).toBe(200);
    expect((await proxied("GET", path).then((r) => r.json())) as number[]).toEqual([1, 2]);
    const [dead, live] = fresh.schemas.hosts();
    expect(dead!.badUntil).toBeGreaterThan(Date.now());
    expect(dead!.lastError).toMatch(/refused|closed/);
    expect(live!.badUntil).toBe(0);
  }, 60_000);
});
