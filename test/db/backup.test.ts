/**
 * `loupe backup` while Loupe serves a write load of audited changes, and `loupe restore` into a
 * fresh data directory (issue 27): every change acknowledged before the backup began is in the
 * restored store, with its audit entry; restore refuses a store a server has open, and a damaged
 * file, replacing nothing. SQLite's by nature (the file, its copy before migrating, its bytes):
 * its servers run on SQLite whatever LOUPE_TEST_STORE says. On PostgreSQL `loupe backup` and
 * `restore` refuse (postgres.test.ts), and a newer schema is refused as here (store.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { openStore } from "../../src/db/index.ts";
import { MIGRATIONS } from "../../src/db/migrations/index.ts";
import { VERSION } from "../../src/version.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { waitFor } from "../helpers/wait.ts";

const ROOT = resolve(import.meta.dir, "../..");
const dir = mkdtempSync(join(tmpdir(), "loupe-backup-"));
let server: ServerProcess;

beforeAll(async () => {
  server = await startServerProcess();
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the command line like an operator: `loupe <args>`. */
async function loupe(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("LOUPE_")));
  const p = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), ...args], { stdout: "pipe", stderr: "pipe", env });
  const [code, stdout, stderr] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code, stdout, stderr };
}

const sha = (path: string) => new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex");

async function createGroup(name: string): Promise<number> {
  const res = await server.request("/api/groups", {
    role: "admin",
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name, roles: ["read"], clusters: ["local"], topics: { allow: [`${name}.*`] } }),
  });
  const body = await res.text();
  if (res.status !== 201) throw new Error(`creating group ${name}: ${res.status} ${body}`);
  return res.status;
}

describe("27: backup and restore", () => {
  test("27: a backup taken under a write load of audited changes restores every change acknowledged before it began, integrity ok", async () => {
    const prefix = `bk${Date.now().toString(36)}`;
    /** Names whose creation was acknowledged (201), with the time of the answer. */
    const acked: Array<{ name: string; at: number }> = [];
    let writing = true;
    const writers = [0, 1].map(async (w) => {
      for (let i = 0; writing; i++) {
        const name = `${prefix}-${w}-${i}`;
        if ((await createGroup(name)) === 201) acked.push({ name, at: performance.now() });
      }
    });
    // Let the load run before, during and after the backup.
    await waitFor(() => acked.length >= 20, { timeoutMs: 30_000 });
    const file = join(dir, "under-load.db");
    const began = performance.now();
    const backup = await loupe(["backup", file, "--config", join(server.dir, "loupe.toml")]);
    const ackedAfter = acked.length;
    await waitFor(() => acked.length >= ackedAfter + 10, { timeoutMs: 30_000 });
    writing = false;
    await Promise.all(writers);
    expect(backup.stderr).toBe("");
    expect(backup.code).toBe(0);
    expect(backup.stdout).toContain("integrity ok");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const before = acked.filter((a) => a.at < began).map((a) => a.name);
    expect(before.length).toBeGreaterThanOrEqual(20);

    // Restore into a fresh data directory, and serve it.
    const fresh = mkdtempSync(join(tmpdir(), "loupe-restored-"));
    const config = join(fresh, "restore.toml");
    writeFileSync(config, `dataDir = ${JSON.stringify(join(fresh, "data"))}\n`);
    const restored = await loupe(["restore", file, "--config", config]);
    expect(restored.stderr).toBe("");
    expect(restored.code).toBe(0);
    expect(restored.stdout).toContain("integrity ok");
    const second = await startServerProcess({}, { dir: fresh });
    try {
      const groups = (await (await second.request("/api/groups", { role: "admin" })).json()) as Array<{ name: string }>;
      const names = new Set(groups.map((g) => g.name));
      expect(before.filter((n) => !names.has(n))).toEqual([]);
      // Each group in the copy came with its audit entry: SUCCESS when acknowledged before the
      // backup began. One the copy caught mid-change has its intent only (written before the
      // change, without the outcome's details), closed as UNKNOWN when the copy started.
      const audit = (await (await second.request("/api/audit?type=USER&limit=10000", { role: "admin" })).json()) as Array<{
        change: string;
        content: { group?: string; outcome?: string };
      }>;
      const adds = audit.filter((e) => e.change === "ADD");
      const succeeded = new Set(adds.filter((e) => e.content.outcome === "SUCCESS").map((e) => e.content.group));
      expect(before.filter((n) => !succeeded.has(n))).toEqual([]);
      const mine = [...names].filter((n) => n.startsWith(prefix));
      const inFlight = mine.filter((n) => !succeeded.has(n));
      expect(adds.filter((e) => e.content.outcome === "UNKNOWN").length).toBeGreaterThanOrEqual(inFlight.length);
      expect(adds.some((e) => e.content.outcome === "PENDING")).toBe(false);
    } finally {
      await second.stop();
    }
  });

  test("27: serve on the previous release's store: a copy named with the version first, then migrated, the data intact", async () => {
    const target = mkdtempSync(join(tmpdir(), "loupe-upgrade-"));
    const data = join(target, "data");
    const previous = await openStore(data, MIGRATIONS.slice(0, -1));
    await previous.db
      .insertInto("audit")
      .values({
        timestamp: Date.now(),
        user_id: "alice",
        type: "TOPIC",
        change: "ADD",
        content: '{"topic":"from-the-old-release"}',
        success: 1,
      })
      .execute();
    await previous.close();
    const upgraded = await startServerProcess({}, { dir: target });
    try {
      expect(statSync(join(data, `loupe.db.before-${VERSION}`)).mode & 0o777).toBe(0o600);
      const entries = (await (await upgraded.request("/api/audit?type=TOPIC&limit=10", { role: "admin" })).json()) as Array<{
        content: { topic?: string };
      }>;
      expect(entries.map((e) => e.content.topic)).toContain("from-the-old-release");
    } finally {
      await upgraded.stop();
    }
  });

  test("27: serve refuses a store a newer version migrated: exit 2, a message naming both versions, the file untouched", async () => {
    const target = mkdtempSync(join(tmpdir(), "loupe-newer-"));
    const data = join(target, "data");
    const store = await openStore(data);
    await store.db.insertInto("schema_version").values({ version: 9999, name: "from a newer release", applied_at: 0 }).execute();
    await store.close();
    const file = join(data, "loupe.db");
    const before = sha(file);
    const config = join(target, "loupe.toml");
    writeFileSync(config, `dataDir = ${JSON.stringify(data)}\n[server]\nport = 0\n`);
    const r = await loupe(["serve", "--config", config]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`The store's schema is version 9999, newer than this binary knows (${MIGRATIONS.at(-1)!.version})`);
    expect(sha(file)).toBe(before);
    rmSync(target, { recursive: true, force: true });
  });

  test("27: restore refuses while a server has the store open, and a damaged file, replacing nothing", async () => {
    const config = join(server.dir, "loupe.toml");
    const file = join(dir, "for-refusal.db");
    expect((await loupe(["backup", file, "--config", config])).code).toBe(0);
    // A backup never overwrites.
    const again = await loupe(["backup", file, "--config", config]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("exists: name a new file");

    const held = await loupe(["restore", file, "--config", config]);
    expect(held.code).toBe(2);
    expect(held.stderr).toContain(`is open in process ${server.pid} (a running Loupe): stop it first`);

    // A damaged copy, into a stopped data directory: checked before anything moves.
    const target = mkdtempSync(join(tmpdir(), "loupe-restore-target-"));
    const targetConfig = join(target, "loupe.toml");
    writeFileSync(targetConfig, `dataDir = ${JSON.stringify(join(target, "data"))}\n`);
    expect((await loupe(["restore", file, "--config", targetConfig])).code).toBe(0);
    const store = join(target, "data", "loupe.db");
    const kept = sha(store);
    const damaged = join(dir, "damaged.db");
    const bytes = readFileSync(file);
    // Page 3 onwards overwritten: the header still says SQLite, the b-trees are broken.
    bytes.fill(0x5a, 4096 * 2, 4096 * 4);
    writeFileSync(damaged, bytes);
    const bad = await loupe(["restore", damaged, "--config", targetConfig]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/integrity check failed|not a SQLite database|malformed/);
    const notSqlite = join(dir, "not-sqlite.db");
    writeFileSync(notSqlite, "hello");
    const worse = await loupe(["restore", notSqlite, "--config", targetConfig]);
    expect(worse.code).toBe(2);
    expect(sha(store)).toBe(kept);
    expect(readdirSync(join(target, "data")).filter((f) => f.endsWith(".restoring"))).toEqual([]);
    expect(existsSync(store)).toBe(true);
    rmSync(target, { recursive: true, force: true });
  });
});
