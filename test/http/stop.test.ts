/**
 * Signals to a real Loupe process. SIGHUP re-reads the users of the config file. SIGTERM with
 * open streams: every stream ends with its final line before its socket closes, and the process
 * exits 0 within the bound.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { kafkaBootstrap, uniqueTopic } from "../cluster/cluster.ts";
import { eventually } from "../helpers/wait.ts";
import { testPool } from "../kafka/helpers.ts";
import { StreamReader } from "./stream-reader.ts";

const root = join(import.meta.dir, "../..");
const dir = mkdtempSync(join(tmpdir(), "loupe-stop-"));
const config = join(dir, "loupe.toml");
const pool = testPool();
const PASSWORD = "stop-test-admin-pw";
/** The bound main.ts gives streams to pass their final line, plus the time to close the rest. */
const STOP_BOUND_MS = 8_000;
let topic: string;
let proc: ReturnType<typeof Bun.spawn> | undefined;
/** What the process logs. */
let out: StreamReader;
let url: string;

beforeAll(async () => {
  topic = uniqueTopic("stop-sql");
  const kafka = pool.default();
  await kafka.topics.create({ name: topic, partitions: 1, replication: 1 });
  // More than the socket buffers hold: a reader that reads nothing holds the query open.
  const pad = "s".repeat(4000);
  for (let i = 0; i < 3000; i += 100)
    await kafka.writes.produce(
      topic,
      Array.from({ length: 100 }, (_, j) => ({ key: `k${i + j}`, value: JSON.stringify({ i: i + j, pad }) })),
    );
});

afterAll(async () => {
  proc?.kill("SIGKILL");
  await pool
    .default()
    .topics.delete(topic)
    .catch(() => {});
  await pool.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The config file, with the one user `admin` holding `roles`. */
async function writeConfig(roles: string[]): Promise<void> {
  writeFileSync(
    config,
    [
      `dataDir = ${JSON.stringify(join(dir, "data"))}`,
      "[server]",
      'host = "127.0.0.1"',
      "port = 0",
      "[[kafka.clusters]]",
      'name = "local"',
      `bootstrapServers = ${JSON.stringify(kafkaBootstrap())}`,
      "default = true",
      "[[users]]",
      'name = "admin"',
      `passwordHash = ${JSON.stringify(await Bun.password.hash(PASSWORD, "argon2id"))}`,
      `roles = ${JSON.stringify(roles)}`,
      "",
    ].join("\n"),
  );
}

/** Starts `loupe serve` and answers its URL once it logs that it listens. */
async function start(): Promise<string> {
  await writeConfig(["admin"]);
  proc = Bun.spawn([process.execPath, join(root, "src/main.ts"), "serve", "--config", config], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? dir },
    stdout: "pipe",
    stderr: "pipe",
  });
  out = new StreamReader(new Response(proc.stdout as ReadableStream<Uint8Array>));
  const listening = (t: string) => /"msg":"listening".*"url":"([^"]+)"/.exec(t);
  if (!(await out.until((t) => listening(t) !== null, 30_000)) || !listening(out.text))
    throw new Error(`loupe did not start: ${out.text}\n${await new Response(proc.stderr as ReadableStream<Uint8Array>).text()}`);
  return listening(out.text)![1]!;
}

async function loginToken(): Promise<string> {
  const login = await fetch(new URL("/api/login", url), { method: "POST", body: JSON.stringify({ user: "admin", password: PASSWORD }) });
  expect(login.status).toBe(200);
  return login.text();
}

test("SIGHUP re-reads the config file's users; an invalid file keeps them", async () => {
  url = await start();
  const token = await loginToken();
  const auditStatus = async () => (await fetch(new URL("/api/audit", url), { headers: { "x-service-token": token } })).status;
  expect(await auditStatus()).toBe(200);

  writeFileSync(config, "users = 3\n");
  proc!.kill("SIGHUP");
  expect(await out.until((t) => t.includes("configuration not reloaded"))).toBe(true);
  expect(await auditStatus()).toBe(200);

  // The same token, downgraded at its next request, and back.
  await writeConfig(["read"]);
  proc!.kill("SIGHUP");
  expect(await eventually(async () => (await auditStatus()) === 403)).toBe(true);
  await writeConfig(["admin"]);
  proc!.kill("SIGHUP");
  expect(await eventually(async () => (await auditStatus()) === 200)).toBe(true);
}, 60_000);

test("regression: SIGTERM cut open streams without a final line", async () => {
  const token = await loginToken();
  const headers = { "x-service-token": token };
  const audit = new StreamReader(await fetch(new URL("/api/sse/audit", url), { headers }));
  expect(await audit.until((t) => t.startsWith(":"))).toBe(true);
  const sql = new StreamReader(
    await fetch(new URL(`/api/sql/data?${new URLSearchParams({ sql: `SELECT * FROM \`${topic}\`` })}`, url), {
      headers: { ...headers, accept: "text/event-stream" },
    }),
  );
  expect(await sql.until((t) => t.includes("data:1"))).toBe(true);

  const t0 = Date.now();
  proc!.kill("SIGTERM");
  // Both streams end, each with its last line; the query stream's after the records it had sent.
  expect(await audit.end(STOP_BOUND_MS)).toBe(true);
  expect(await sql.end(STOP_BOUND_MS)).toBe(true);
  expect(audit.lines().at(-1)).toBe("data:");
  const last = sql.lines().at(-1)!;
  expect(last.startsWith("data:3")).toBe(true);
  expect(JSON.parse(last.slice(6)).error).toBe("server stopping");

  let timer: ReturnType<typeof setTimeout> | undefined;
  const code = await Promise.race([proc!.exited, new Promise<"late">((r) => (timer = setTimeout(() => r("late"), STOP_BOUND_MS)))]);
  clearTimeout(timer);
  expect(code).toBe(0);
  expect(Date.now() - t0).toBeLessThan(STOP_BOUND_MS);
  expect(await out.end()).toBe(true);
  expect(out.text).toContain('"msg":"stopping"');
  // 27: the store is closed as it should: the WAL folded into the file, no marker of an open store
  // left for `loupe restore` to refuse on.
  const data = join(dir, "data");
  const wal = join(data, "loupe.db-wal");
  expect(existsSync(wal) ? statSync(wal).size : 0).toBe(0);
  expect(readdirSync(data).filter((f) => f.startsWith("loupe.db.open-"))).toEqual([]);
}, 60_000);
