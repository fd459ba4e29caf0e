/**
 * Two Loupe processes on one PostgreSQL store, sharing nothing else: a token of one works on the
 * other, a logout on one ends it on the other at its next request and closes its stream there,
 * and the audit entries and alert notifications of one reach the other's live streams.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createKafkaPool, type KafkaCluster } from "../../src/kafka/index.ts";
import { kafkaBootstrap } from "../cluster/cluster.ts";
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
let a: ServerProcess;
let b: ServerProcess;

beforeAll(async () => {
  database = await freshDatabase(dir);
  const store = { url: database.url, passwordFile: database.passwordFile };
  // Short leases: a killed instance's runner slots and presence expire within seconds.
  const config = (instance: string) => ({ store, processors: { instance, lease: "2s" }, alerts: { evaluationInterval: 0 } });
  // One after the other: the first creates the tables, the second finds them.
  a = await startServerProcess(config("instance-a"));
  b = await startServerProcess(config("instance-b"));
});

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  for (const t of made) await kafka.topics.delete(t).catch(() => {});
  await pool.close();
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

  test("28: a processor's runners split between the instances, and move to the survivor when one is SIGKILLed; output exactly once", async () => {
    const { source, target } = await sourceAndTarget(kafka, "spread", made, [4, 2]);
    const api = { request: (path: string, init?: RequestInit & { role?: "admin" | "write" | "read" | "nodata" }) => a.request(path, init) };
    const id = await createProcessor(
      api as unknown as TestRuntime,
      `spread-${source}`,
      `INSERT INTO \`${target}\` SELECT STREAM n FROM \`${source}\``,
      {
        runners: 2,
      },
    );
    const onB = { request: (path: string, init?: RequestInit & { role?: "admin" | "write" | "read" | "nodata" }) => b.request(path, init) };
    const workers = async (via: typeof api) => {
      const p = await getProcessor(via as unknown as TestRuntime, id);
      return Object.values(p.runnerState)
        .map((r) => `${r.worker}:${r.state}`)
        .sort();
    };
    // One runner on each instance.
    await pollFor(
      "a runner on each instance",
      async () => ((await workers(api)).join() === "instance-a:RUNNING,instance-b:RUNNING" ? true : undefined),
      30_000,
    );
    const records = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ key: `k${from + i}`, value: { n: from + i } }));
    await produce(kafka, source, records(0, 200));
    await pollFor("the first records out", async () => ((await readAll(kafka, target)).length >= 200 ? true : undefined), 30_000);

    // A dies without a word: B takes its runner once A's leases expire, and goes on where A's last transaction ended.
    await a.kill();
    await produce(kafka, source, records(200, 200));
    await pollFor(
      "both runners on instance-b",
      async () => ((await workers(onB)).join() === "instance-b:RUNNING,instance-b:RUNNING" ? true : undefined),
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
    const ns = out.map((r) => (r.value as { n: number }).n).sort((x, y) => x - y);
    expect(ns).toEqual(Array.from({ length: 400 }, (_, i) => i));
  });
});
