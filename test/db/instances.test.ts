/**
 * Two Loupe processes on one PostgreSQL store, sharing nothing else: a token of one works on the
 * other, a logout on one ends it on the other at its next request and closes its stream there,
 * the audit entries and alert notifications of one reach the other's live streams, a processor's
 * runners split between them, and when one is SIGKILLed its runners and the alert evaluation
 * move to the other: output exactly once, an alert raised once. The lag history's writer and the
 * housekeeping are elected by leases too.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { Role } from "../../src/config/schema.ts";
import { createKafkaPool, type KafkaCluster } from "../../src/kafka/index.ts";
import { kafkaBootstrap, uniqueTopic } from "../cluster/cluster.ts";
import { ROLE_USERS, type TestRuntime } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { freshDatabase, type TestDatabase } from "../helpers/store.ts";
import { pollFor } from "../helpers/wait.ts";
import { createProcessor, getProcessor, produce, readAll, sourceAndTarget } from "../processors/helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "loupe-instances-"));
const pool = createKafkaPool([{ name: "test", bootstrapServers: [kafkaBootstrap()], clientId: "loupe-test", default: true }]);
const kafka: KafkaCluster = pool.default();
const made: string[] = [];
let database: TestDatabase;
/** The store itself, to see who holds a lease. */
let storeDb: pg.Client;
let a: ServerProcess;
let b: ServerProcess;

beforeAll(async () => {
  database = await freshDatabase(dir);
  const withPassword = new URL(database.url);
  withPassword.password = encodeURIComponent(readFileSync(database.passwordFile, "utf8").trim());
  storeDb = new pg.Client({ connectionString: withPassword.toString() });
  await storeDb.connect();
  const store = { url: database.url, passwordFile: database.passwordFile };
  // Short leases: a killed instance's runner slots and presence expire within seconds.
  const config = (instance: string) => ({
    store,
    processors: { instance, lease: "2s" },
    alerts: { evaluationInterval: "1s" },
    lag: { cacheTtl: 0, sampleInterval: "1s" },
  });
  // One after the other: the first creates the tables, the second finds them.
  a = await startServerProcess(config("instance-a"));
  b = await startServerProcess(config("instance-b"));
});

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  for (const t of made) await kafka.topics.delete(t).catch(() => {});
  await pool.close();
  await storeDb?.end();
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

interface Reader {
  read(): Promise<{ done: boolean; value?: Uint8Array }>;
  cancel(): Promise<void>;
}

/** An event stream's text as it comes, until `until` holds or the deadline passes. */
async function readUntil(reader: Reader, until: (text: string) => boolean, ms = 10_000): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  const deadline = Date.now() + ms;
  while (!until(text)) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`not seen within ${ms} ms; the stream said:\n${text.slice(-2000)}`);
    const chunk = await Promise.race([reader.read(), Bun.sleep(left).then(() => ({ done: false, value: undefined }))]);
    if (chunk.done) return `${text}\u0000closed`;
    if (chunk.value) text += decoder.decode(chunk.value, { stream: true });
  }
  return text;
}

async function login(server: ServerProcess): Promise<string> {
  const res = await server.request("/api/login", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ user: ROLE_USERS.admin.name, password: ROLE_USERS.admin.password }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { token: string }).token;
}

async function stream(server: ServerProcess, path: string, token: string): Promise<Reader> {
  const res = await server.request(path, { headers: { "x-service-token": token, accept: "text/event-stream" } });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  // The first heartbeat comes once the stream has subscribed.
  await reader.read();
  return reader;
}

describe("28: two instances on one PostgreSQL store", () => {
  test("28: an audit entry and an alert raised on A reach the streams open on B", async () => {
    const token = await login(a);
    const audit = await stream(b, "/api/sse/audit", token);
    const alerts = await stream(b, "/api/sse/alerts", token);
    const tag = `inst-${crypto.randomUUID().slice(0, 8)}`;

    const saved = await a.request(`/api/sql/saved/${tag}`, {
      method: "PUT",
      headers: { "x-service-token": token, "content-type": "application/json" },
      body: JSON.stringify({ text: "SELECT 1" }),
    });
    expect(saved.status).toBeLessThan(300);
    const raised = await a.request("/api/alerts", {
      method: "POST",
      headers: { "x-service-token": token, "content-type": "application/json" },
      body: JSON.stringify({
        alertId: 2000,
        labels: { severity: "high", category: "Consumers", instance: tag },
        annotations: { summary: `lag on ${tag}`, source: "ops-script" },
        startsAt: new Date().toISOString(),
        endsAt: "",
      }),
    });
    expect(raised.status).toBeLessThan(300);

    expect(await readUntil(audit, (t) => t.includes(tag))).toContain(tag);
    expect(await readUntil(alerts, (t) => t.includes(`lag on ${tag}`))).toContain(tag);
    await audit.cancel();
    await alerts.cancel();
  });

  test("28: a token from A works on B; a logout on A ends it on B at the next request and closes B's stream", async () => {
    const token = await login(a);
    const who = await b.request("/api/auth", { headers: { "x-service-token": token } });
    expect(who.status).toBe(200);
    const open = await stream(b, "/api/sse/audit", token);

    expect((await a.request("/api/logout", { method: "POST", headers: { "x-service-token": token } })).status).toBeLessThan(300);
    // The next request on B: refused, with no wait for a cache to expire.
    expect((await b.request("/api/auth", { headers: { "x-service-token": token } })).status).toBe(401);
    // B's stream ends within seconds (its registry checks open streams' tokens every second).
    const text = await readUntil(open, (t) => t.endsWith("\u0000closed") || /revoked/i.test(t));
    expect(text.endsWith("\u0000closed") || /revoked/i.test(text)).toBe(true);
    await open.cancel().catch(() => undefined);
  });

  test("28: a user's change on A applies on B at B's next request", async () => {
    const admin = await login(a);
    const name = `u${crypto.randomUUID().slice(0, 8)}`;
    const headers = { "x-service-token": admin, "content-type": "application/json" };
    const made = await a.request("/api/users", {
      method: "POST",
      headers,
      body: JSON.stringify({ name, password: "a-long-password-1", groups: [] }),
    });
    expect(made.status).toBeLessThan(300);
    const res = await b.request("/api/login", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ user: name, password: "a-long-password-1" }),
    });
    expect(res.status).toBe(200);
    const token = ((await res.json()) as { token: string }).token;
    expect((await b.request("/api/auth", { headers: { "x-service-token": token } })).status).toBe(200);
    const disabled = await a.request(`/api/users/${name}`, { method: "PUT", headers, body: JSON.stringify({ disabled: true }) });
    expect(disabled.status).toBeLessThan(300);
    expect((await b.request("/api/auth", { headers: { "x-service-token": token } })).status).toBe(401);
  });

  test("28: one instance SIGKILLed: its processor runners, the alert evaluation and the lag history's writing move to the survivor; output exactly once, the lag alert raised once", async () => {
    const via = (server: () => ServerProcess) =>
      ({ request: (path: string, init?: RequestInit & { role?: Role }) => server().request(path, init) }) as unknown as TestRuntime;
    // A processor with two runners: one on each instance.
    const { source, target } = await sourceAndTarget(kafka, "spread", made, [4, 2]);
    const id = await createProcessor(
      via(() => a),
      `spread-${source}`,
      `INSERT INTO \`${target}\` SELECT STREAM n FROM \`${source}\``,
      {
        runners: 2,
      },
    );
    const workers = async (server: ServerProcess) =>
      Object.values(
        (
          await getProcessor(
            via(() => server),
            id,
          )
        ).runnerState,
      )
        .map((r) => `${r.worker}:${r.state}`)
        .sort()
        .join();
    await pollFor(
      "a runner on each instance",
      async () => ((await workers(a)) === "instance-a:RUNNING,instance-b:RUNNING" ? true : undefined),
      30_000,
    );
    const records = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ key: `k${from + i}`, value: { n: from + i } }));
    await produce(kafka, source, records(0, 200));
    await pollFor("the first records out", async () => ((await readAll(kafka, target)).length >= 200 ? true : undefined), 30_000);

    // A lagging group and a condition on it: raised by the instance that evaluates.
    const topic = uniqueTopic("instances-lag");
    made.push(topic);
    await kafka.topics.create({ name: topic, partitions: 1, replication: 1 });
    const group = `instances-lag-${crypto.randomUUID().slice(0, 8)}`;
    await kafka.groups.alterOffsets(group, [{ topic, partition: 0, offset: 0 }]);
    await kafka.writes.produce(
      topic,
      Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })),
    );
    const condition = await a.request("/api/alerts/settings/2000/condition", {
      method: "POST",
      role: "write",
      headers: { "content-type": "text/plain" },
      body: `lag >= 5 on group ${group} and topic ${topic}`,
    });
    expect(condition.status).toBe(200);
    const lagAlerts = async (server: ServerProcess) => {
      const res = await server.request("/api/alerts?alertId=2000&limit=1000", { role: "read" });
      return ((await res.json()) as { labels: Record<string, string>; endsAt: string | null }[]).filter(
        (n) => n.labels.instance === `${group}/${topic}`,
      );
    };
    await pollFor("the lag alert raised", async () => ((await lagAlerts(a)).length > 0 ? true : undefined), 30_000);

    // The instance holding the evaluation's lease dies without a word.
    const holder = async () => (await storeDb.query("SELECT holder, lease_until FROM leases WHERE name = 'alert-evaluation'")).rows[0];
    const held = await holder();
    const [dead, survivor, name] = held.holder === "instance-a" ? [a, b, "instance-b"] : [b, a, "instance-a"];
    // The lag history is written by one instance (a lease), as the housekeeping is run by one.
    const leaseHolder = async (lease: string) =>
      (await storeDb.query("SELECT holder FROM leases WHERE name = $1", [lease])).rows[0]?.holder as string | undefined;
    expect(["instance-a", "instance-b"]).toContain((await pollFor("the housekeeping's lease", () => leaseHolder("housekeeping"), 30_000))!);
    await pollFor("the lag history's writer elected", () => leaseHolder("lag-history"), 30_000);
    await dead.kill();
    await produce(kafka, source, records(200, 200));

    // The survivor takes the evaluation over once the lease expires, and renews it at each of its passes.
    const taken = await pollFor(
      "the evaluation on the survivor",
      async () => {
        const h = await holder();
        return h.holder === name ? Number(h.lease_until) : undefined;
      },
      30_000,
    );
    await pollFor(
      "two passes on the survivor",
      async () => (Number((await holder()).lease_until) >= taken + 2_000 ? true : undefined),
      30_000,
    );
    await pollFor(
      "the lag history written by the survivor",
      async () => ((await leaseHolder("lag-history")) === name ? true : undefined),
      30_000,
    );
    // Still the one notification: the survivor found it active in the store and raised nothing again.
    const alerts = await lagAlerts(survivor);
    expect(alerts.length).toBe(1);
    expect(alerts[0]!.endsAt).toBeNull();

    // Both runners on the survivor, every record out once.
    await pollFor(
      "both runners on the survivor",
      async () => ((await workers(survivor)) === `${name}:RUNNING,${name}:RUNNING` ? true : undefined),
      30_000,
    );
    const out = await pollFor(
      "every record out",
      async () => {
        const rows = await readAll(kafka, target);
        return rows.length >= 400 ? rows : undefined;
      },
      30_000,
    );
    expect(out.map((r) => (r.value as { n: number }).n).sort((x, y) => x - y)).toEqual(Array.from({ length: 400 }, (_, i) => i));
  });
});
