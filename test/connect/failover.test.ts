/**
 * Failover of the Connect proxy, on real processes: aliases whose URLs refuse or never answer,
 * a worker of a private pair killed while the other serves, a 409 of a rebalance to a change
 * passed through as Connect wrote it, and reads asked again until the rebalances are over.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer, type Server, type Socket } from "node:net";
import { type Cluster, connectEnv, freePort, kafkaBootstrap, killService, restartService, startCluster } from "../cluster/cluster.ts";
import { type MachineLag, startMachineLag, timedOn } from "../helpers/machine-lag.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { waitFor } from "../helpers/wait.ts";
import { createHeartbeat, enc, eventually, heartbeatConfig, REBALANCING, runningThrough } from "./helpers.ts";

const TIMEOUT_MS = 1_000;
const GRACE_MS = 3_000;

/** A local socket that accepts connections and never answers a byte. */
let silent: Server;
const held: Socket[] = [];
let silentUrl: string;
let refusedUrl: string;
let rt: TestRuntime;
/** Upper bounds on an answer's time leave out what the loaded machine itself took meanwhile. */
let machine: MachineLag;

beforeAll(async () => {
  machine = await startMachineLag();
  silent = createServer((sock) => void held.push(sock));
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  silentUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
  // A port just found free: nothing listens there.
  refusedUrl = `http://127.0.0.1:${await freePort()}`;
  const [w1] = connectEnv().urls;
  rt = await testRuntime({
    connect: {
      clusters: [
        { alias: "refused", urls: [refusedUrl, `http://127.0.0.1:${await freePort()}`] },
        { alias: "silent", urls: [silentUrl, silentUrl] },
        { alias: "refused-then-up", urls: [refusedUrl, w1] },
        { alias: "silent-then-up", urls: [silentUrl, w1] },
      ],
      timeout: TIMEOUT_MS,
      grace: GRACE_MS,
    },
    // Passes are the tests' own: none runs meanwhile and times a request with a silent worker.
    alerts: { evaluationInterval: 0 },
  });
});
afterAll(async () => {
  await machine?.stop();
  await rt.dispose();
  for (const s of held) s.destroy();
  silent.close();
}, 60_000);

/** `ms`: the whole time, for lower bounds; `own`: less what the machine took, for upper bounds. */
async function timed(path: string): Promise<{ status: number; ms: number; own: number; res: Response }> {
  const { value: res, ms, ownMs } = await timedOn(machine, () => rt.request(path, { role: "nodata" }));
  return { status: res.status, ms, own: ownMs, res };
}

describe("Connect proxy failover", () => {
  test("every worker refusing: 503 at once, naming each; within the grace period 503 without trying", async () => {
    const first = await timed("/api/proxy-connect/refused/connectors");
    expect(first.status).toBe(503);
    expect(first.own).toBeLessThan(1_000);
    const body = await errorOf(first.res);
    expect(body.message).toContain("Kafka Connect cluster 'refused' is unreachable");
    expect(body.message).toContain("connection refused");
    const again = await timed("/api/proxy-connect/refused/connectors");
    expect(again.status).toBe(503);
    expect(again.own).toBeLessThan(200);
    expect(again.res.headers.get("retry-after")).toMatch(/^\d+$/);
  });

  test("workers that accept and never answer: 503 within urls x timeout, then at once during the grace period", async () => {
    const first = await timed("/api/proxy-connect/silent/connectors");
    expect(first.status).toBe(503);
    // Two URLs, one timeout each (same socket twice), plus scheduling slack.
    expect(first.ms).toBeGreaterThanOrEqual(TIMEOUT_MS);
    expect(first.own).toBeLessThan(2 * TIMEOUT_MS + 1_500);
    expect((await errorOf(first.res)).message).toContain(`no answer within ${TIMEOUT_MS} ms`);
    const again = await timed("/api/proxy-connect/silent/connectors");
    expect(again.status).toBe(503);
    expect(again.own).toBeLessThan(200);
    // The clusters' page says so per worker, within its own short probe.
    const page = (await (await rt.request("/api/connect/clusters", { role: "nodata" })).json()) as {
      alias: string;
      workers: { state: string; error?: string }[];
    }[];
    expect(page.find((c) => c.alias === "silent")!.workers.map((w) => w.state)).toEqual(["DOWN", "DOWN"]);
  });

  test("a silent worker is skipped after its timeout, and left out for the grace period", async () => {
    const first = await timed("/api/proxy-connect/silent-then-up/connector-plugins");
    expect(first.status).toBe(200);
    expect(first.ms).toBeGreaterThanOrEqual(TIMEOUT_MS);
    const again = await timed("/api/proxy-connect/silent-then-up/connector-plugins");
    expect(again.status).toBe(200);
    expect(again.own).toBeLessThan(TIMEOUT_MS);
  });

  test("a refusing worker is skipped for the next, which answers; the next evaluation raises 1002 naming that worker", async () => {
    const res = await timed("/api/proxy-connect/refused-then-up/connectors");
    expect(res.status).toBe(200);
    expect(Array.isArray(await res.res.json())).toBe(true);
    const alerts = async () =>
      (await rt.notifications.list({ limit: 100, alertId: 1002 })).filter((a) => a.labels.instance === `refused-then-up ${refusedUrl}`);
    // One pass (the dead aliases' connector lists fail it: the notifications tell).
    await rt.alertEvaluator.evaluate().catch(() => {});
    expect((await alerts()).length).toBe(1);
    expect((await alerts())[0]!.annotations.summary).toBe(
      `Kafka Connect worker ${refusedUrl} of 'refused-then-up' does not answer: connection refused`,
    );
    expect((await alerts())[0]!.labels.cluster).toBe("local");
  });
});

describe("a private pair of workers", () => {
  let cluster: Cluster;
  let pair: TestRuntime;
  let urls: string[];
  const made: string[] = [];

  beforeAll(async () => {
    cluster = await startCluster({ services: ["connect"], ownerPid: process.pid, given: { KAFKA_BOOTSTRAP: kafkaBootstrap() } });
    urls = cluster.connectWorkers.map((w) => w.env.CONNECT_URL!);
    pair = await testRuntime({
      connect: { clusters: [{ alias: "dev", urls }], timeout: "10s", grace: "2s" },
      // Passes are the tests' own.
      alerts: { evaluationInterval: 0 },
    });
  }, 120_000);
  // The pair's connectors go with it: its config, offset and status topics are its own.
  afterAll(async () => {
    await pair?.dispose();
    await cluster?.stop({ graceMs: 2_000 });
  }, 60_000);

  test("worker 1 killed mid-test: the next worker answers, the connector keeps running there", async () => {
    const name = `loupe failover ${Date.now().toString(36)}`;
    made.push(name);
    await createHeartbeat(pair, name);
    await runningThrough(pair, name);

    await killService(cluster.connectWorkers[0]!);
    const list = await pair.request("/api/proxy-connect/dev/connectors", { role: "nodata" });
    expect(list.status).toBe(200);
    expect((await list.json()) as string[]).toContain(name);
    // An evaluation pass raises 1002 for worker 1 only.
    await pair.alertEvaluator.evaluate().catch(() => {});
    const raised = (await pair.notifications.list({ limit: 100, alertId: 1002 })).filter((a) => a.endsAt === null);
    expect(raised.map((a) => a.labels.instance)).toEqual([`dev ${urls[0]}`]);
    // Its task moves to the surviving worker once the dead one's session ends.
    const survivor = urls[1]!.replace("http://", "");
    await eventually(
      `${name} running on worker 2`,
      async () => {
        const res = await pair.request(`/api/proxy-connect/dev/connectors/${enc(name)}/status`, { role: "nodata" });
        const s = (await res.json()) as { tasks?: { state: string; worker_id: string }[] };
        return s.tasks?.[0]?.worker_id === survivor && s.tasks[0].state === "RUNNING" ? true : undefined;
      },
      60_000,
    );
    // The clusters' page: worker 1 down, worker 2 up.
    const page = (await (await pair.request("/api/connect/clusters", { role: "nodata" })).json()) as { workers: { state: string }[] }[];
    expect(page[0]!.workers.map((w) => w.state)).toEqual(["DOWN", "UP"]);
  }, 120_000);

  test("a connector named with '/' (made at Connect directly): read through Loupe from the expanded list; changes refused by Connect", async () => {
    const name = `loupe team/orders ${Date.now().toString(36)}`;
    const created = await eventually(
      "created at worker 2",
      async () => {
        const res = await fetch(`${urls[1]}/connectors`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name, config: heartbeatConfig({ "database.password": "slash-secret" }) }),
        });
        // While worker 1 is gone, worker 2 may still forward to it as the leader (500) for a while.
        const text = await res.text();
        if (res.status !== 201 && !/already exists/.test(text)) throw new Error(`${res.status} ${text.slice(0, 200)}`);
        return 201;
      },
      60_000,
    );
    expect(created).toBe(201);
    const base = `/api/proxy-connect/dev/connectors/${enc(name)}`;
    await eventually("listed through Loupe", async () => {
      const res = await pair.request("/api/proxy-connect/dev/connectors", { role: "nodata" });
      return res.status === 200 && ((await res.json()) as string[]).includes(name) ? true : undefined;
    });
    await runningThrough(pair, name);
    const info = await pair.request(base, { role: "read" });
    expect(await info.json()).toMatchObject({ name, type: "source", config: { "database.password": "********" } });
    expect(await (await pair.request(`${base}/config`, { role: "write" })).json()).toMatchObject({
      name,
      "database.password": "slash-secret",
    });
    const pause = await pair.request(`${base}/pause`, { method: "PUT", role: "write" });
    expect(pause.status).toBe(400);
    expect((await errorOf(pause)).message).toContain("cannot be addressed");
  }, 120_000);

  test("a 409 of a rebalance (worker 1 joining again, connectors being created) is passed through as Connect wrote it", async () => {
    const name = made[0]!;
    const restart = `/api/proxy-connect/dev/connectors/${enc(name)}/restart`;
    const joined = restartService(cluster.connectWorkers[0]!);
    // Each creation rebalances the group; requests that need the leader meanwhile get 409. How
    // many do is up to timing: polled until one is seen.
    let conflict: unknown;
    await eventually(
      "a 409 of a rebalance through Loupe",
      async () => {
        const fresh = `loupe rebalance ${Date.now().toString(36)}`;
        made.push(fresh);
        const answers = await Promise.all([
          pair.request("/api/proxy-connect/dev/connectors", {
            method: "POST",
            role: "write",
            body: JSON.stringify({ name: fresh, config: heartbeatConfig() }),
          }),
          ...Array.from({ length: 8 }, () => pair.request(restart, { method: "POST", role: "write" })),
        ]);
        for (const res of answers) {
          const text = await res.text();
          if (res.status === 409 && REBALANCING.test(text)) conflict = JSON.parse(text);
        }
        return conflict;
      },
      90_000,
    );
    await joined;
    // Connect's own body: exactly its two fields, none of Loupe's (code, requestId).
    expect(Object.keys(conflict as object).sort()).toEqual(["error_code", "message"]);
    expect(conflict).toMatchObject({ error_code: 409, message: expect.stringMatching(REBALANCING) });
    // The audit entry of that restart is a failure read from the status.
    const entries = (await (await pair.request("/api/audit?type=CONNECTOR&limit=1000", { role: "admin" })).json()) as {
      content: Record<string, string>;
    }[];
    expect(entries.some((e) => e.content.connector === name && e.content.reason === "HTTP 409")).toBe(true);
  }, 180_000);

  test("26: worker 1 answering again resolves the 1002 its death raised, at a later pass: one notification, ended", async () => {
    const instance = `dev ${urls[0]}`;
    const mine = async () => (await pair.notifications.list({ limit: 100, alertId: 1002 })).filter((a) => a.labels.instance === instance);
    // Worker 1 has joined again (the test before waited for it): its probe answers, and two
    // passes without it resolve it (three, when a request found it dead since the last pass).
    const resolved = await waitFor(
      async () => {
        await pair.alertEvaluator.evaluate().catch(() => {});
        const all = await mine();
        return all.length > 0 && all.every((a) => a.endsAt !== null) ? all : null;
      },
      { timeoutMs: 30_000, intervalMs: 0, what: "1002 of worker 1 resolved" },
    );
    expect(resolved.length).toBe(1);
  }, 90_000);

  test("24: reads through Loupe while the workers rebalance (connectors created and deleted at both workers) get the settled answer, not a worker's 5xx", async () => {
    const name = `loupe steady ${Date.now().toString(36)}`;
    made.push(name);
    await createHeartbeat(pair, name);
    const base = `/api/proxy-connect/dev/connectors/${enc(name)}`;
    // Each create and delete makes the workers rebalance; meanwhile they answer a connector's GET
    // with 500 "Request cannot be completed because a rebalance is expected" (or 409).
    let running = true;
    const direct: number[] = [];
    let reads = 0;
    const refused: { path: string; status: number; body: string }[] = [];
    // A storm of changes lasts about 2 s, shorter than the proxy's window for asking a read again
    // (READ_RETRY): every read that meets it has time left to see the workers settle.
    const storm = async (url: string) => {
      const until = performance.now() + 2_000;
      for (let i = 0; performance.now() < until; i++) {
        const fresh = `loupe churn ${Date.now().toString(36)} ${i}`;
        const create = {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name: fresh, config: heartbeatConfig() }),
        };
        await (await fetch(`${url}/connectors`, create)).arrayBuffer();
        await (await fetch(`${url}/connectors/${enc(fresh)}`, { method: "DELETE" })).arrayBuffer();
      }
    };
    const probe = async () => {
      while (running)
        for (const url of urls) {
          const res = await fetch(`${url}/connectors/${enc(name)}`);
          await res.arrayBuffer();
          if (res.status !== 200) direct.push(res.status);
        }
    };
    const read = async () => {
      while (running)
        for (const path of [base, `${base}/config`, `${base}/tasks`]) {
          const res = await pair.request(path, { role: "nodata" });
          const body = await res.text();
          reads++;
          if (res.status !== 200) refused.push({ path, status: res.status, body });
        }
    };
    const loops = [probe(), read(), read()];
    try {
      // Storms until the workers have been seen refusing reads (directly) often enough, then lets
      // the reads under way settle: a storm that went on until enough reads had answered kept
      // the workers rebalancing past a read's retry window on a loaded machine (READ_RETRY).
      await waitFor(
        async () => {
          await Promise.all(urls.map(storm));
          return direct.length >= 10;
        },
        { timeoutMs: 120_000, intervalMs: 100, what: "the workers answering 5xx or 409 directly while reads go through Loupe" },
      );
      const during = reads;
      await waitFor(() => reads >= Math.max(12, during + 6), { timeoutMs: 60_000, intervalMs: 50, what: "reads through Loupe answered" });
    } finally {
      running = false;
      await Promise.all(loops);
    }
    expect(direct.every((status) => status === 409 || status === 500)).toBe(true);
    expect(refused).toEqual([]);
  }, 180_000);
});
