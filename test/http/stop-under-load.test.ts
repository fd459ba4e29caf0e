/**
 * SIGTERM under load (issue 27), to a Loupe process holding two SQL event streams, an audit event
 * stream, a live websocket subscription and a running processor whose input a producer writes all
 * along. Every stream ends with its final line: the SQL streams a type 3 line, the audit stream an
 * empty `data:`, the subscription an ERROR answer to its SUBSCRIBE and a close 1001 (going away).
 * The process exits 0 within its own stop bound (main.ts: past 15 s it exits whatever is left),
 * its store's WAL checkpointed.
 * Started again on the same data directory, its processor's output, read read_committed, holds
 * every input record exactly once.
 *
 * One test of 6 to 17 s here (over 15 s on a loaded machine, for a reason): it starts, stops and
 * restarts a real process and lets the processor catch up after the restart.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { LiveClient } from "../clients/ws-client.ts";
import { uniqueTopic } from "../cluster/cluster.ts";
import { ROLE_USERS, type TestRuntime } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { pollFor } from "../helpers/wait.ts";
import { testPool } from "../kafka/helpers.ts";
import { createProcessor, getProcessor, makeTopic, produce, readAll, sourceAndTarget, untilState } from "../processors/helpers.ts";
import { StreamReader } from "./stream-reader.ts";

/** main.ts: past this, the process exits whatever is still closing. */
const STOP_LIMIT_MS = 15_000;
/** Under a fixed instance name, as systemd restarts it: the restart takes its runners' slots at once. */
const CONFIG = { processors: { instance: "stop-under-load" }, lag: { cacheTtl: 0, sampleInterval: 250 } };

const pool = testPool();
const kafka = pool.default();
const made: string[] = [];
let server: ServerProcess | undefined;
/** The processor helpers only call `request`: this one goes to whichever process runs now. */
const api = { request: (path: string, init?: RequestInit & { role?: "admin" | "write" | "read" }) => server!.request(path, init) };
const asRuntime = api as unknown as TestRuntime;

afterAll(async () => {
  await server?.stop();
  for (const t of made) await kafka.topics.delete(t).catch(() => {});
  await pool.close();
}, 30_000);

/** An SQL event stream over `topic` that has sent its first record; its reader reads no more until told. */
async function sqlStream(topic: string, token: string): Promise<StreamReader> {
  const query = new URLSearchParams({ sql: `SELECT * FROM \`${topic}\`` });
  const res = await fetch(`${server!.url}/api/sql/data?${query}`, { headers: { "x-service-token": token, accept: "text/event-stream" } });
  const reader = new StreamReader(res);
  expect(await reader.until((t) => t.includes("data:1"), 10_000)).toBe(true);
  return reader;
}

test("27: SIGTERM under load: every stream ends with its final line, exit 0 in time, and after a restart each input record is in the output once", async () => {
  server = await startServerProcess(CONFIG);
  const { source, target } = await sourceAndTarget(kafka, "stopload", made, 2);
  // More than the socket buffers hold: an SQL stream whose reader does not read stays open.
  const padded = await makeTopic(kafka, uniqueTopic("stopload-pad"), 1, made);
  const pad = "s".repeat(4000);
  await produce(
    kafka,
    padded,
    Array.from({ length: 3000 }, (_, i) => ({ key: `k${i}`, value: { i, pad } })),
  );
  const id = await createProcessor(asRuntime, `stopload-${source}`, `INSERT INTO \`${target}\` SELECT STREAM n FROM \`${source}\``, {
    runners: 2,
  });
  await untilState(asRuntime, id, "RUNNING");

  // The input: a batch every 50 ms, whether Loupe is up or not, until the restarted processor writes.
  let produced = 0;
  let producing = true;
  const producer = (async () => {
    while (producing) {
      const from = produced;
      await produce(
        kafka,
        source,
        Array.from({ length: 50 }, (_, i) => ({ key: `k${(from + i) % 7}`, value: { n: from + i } })),
      );
      produced = from + 50;
      // The pace of a steady stream of records, not a wait for a condition.
      await Bun.sleep(50);
    }
  })();
  try {
    await pollFor("the processor writing", async () => ((await readAll(kafka, target)).length > 0 ? true : undefined), 30_000);

    const token = await server.token("admin");
    const sql = [await sqlStream(padded, token), await sqlStream(padded, token)];
    const audit = new StreamReader(await fetch(`${server.url}/api/sse/audit`, { headers: { "x-service-token": token } }));
    expect(await audit.until((t) => t.startsWith(":"))).toBe(true);
    const live = await LiveClient.open(new URL(server.url), `stopload-${Date.now()}`);
    live.request("LOGIN", 1, { user: ROLE_USERS.read.name, password: ROLE_USERS.read.password });
    const login = await live.reply(1);
    expect(login.type).toBe("SUCCESS");
    live.request("SUBSCRIBE", 2, { sqls: [`SELECT * FROM \`${source}\``] }, login.content as string);
    expect((await live.reply(2)).type).toBe("SUCCESS");
    await pollFor("records on the subscription", async () => (live.records().length > 0 ? true : undefined));

    const dir = server.dir;
    const stopping = server.terminate();
    const [sqlEnded, auditEnded, closed] = await Promise.all([
      Promise.all(sql.map((s) => s.end(STOP_LIMIT_MS))),
      audit.end(STOP_LIMIT_MS),
      live.ws.whenClosed(STOP_LIMIT_MS),
    ]);
    expect(sqlEnded).toEqual([true, true]);
    for (const s of sql) {
      const last = s.lines().at(-1)!;
      expect(last.startsWith("data:3")).toBe(true);
      expect(JSON.parse(last.slice(6)).error).toBe("server stopping");
    }
    expect(auditEnded).toBe(true);
    expect(audit.lines().at(-1)).toBe("data:");
    expect(live.replies()).toEqual([
      { type: "ERROR", correlationId: 2, content: `The subscription to '${source}' ended: server stopping` },
    ]);
    expect(closed).toEqual({ code: 1001, reason: "server stopping" });
    const { code, ms } = await stopping;
    expect(code).toBe(0);
    expect(ms).toBeLessThan(STOP_LIMIT_MS);
    // The store closed as it should: the WAL folded into the file.
    const wal = join(dir, "data", "loupe.db-wal");
    expect(existsSync(wal) ? statSync(wal).size : 0).toBe(0);

    // Restarted on the same data: the processor runs again from what it committed.
    server = await startServerProcess(CONFIG, { dir });
    const before = (await readAll(kafka, target)).length;
    await pollFor(
      "the restarted processor RUNNING and writing",
      async () =>
        (await getProcessor(asRuntime, id)).deploymentState === "RUNNING" && (await readAll(kafka, target)).length > before
          ? true
          : undefined,
      30_000,
    );
  } finally {
    producing = false;
    await producer;
  }
  const out = await pollFor(
    "the processor caught up",
    async () => {
      if ((await getProcessor(asRuntime, id)).figures.lag !== 0) return undefined;
      const all = await readAll(kafka, target);
      return all.length >= produced ? all : undefined;
    },
    30_000,
  );
  const ns = out.map((r) => (r.value as { n: number }).n).sort((a, b) => a - b);
  expect(ns.length).toBe(produced);
  expect(ns).toEqual(Array.from({ length: produced }, (_, i) => i));
}, 90_000);
