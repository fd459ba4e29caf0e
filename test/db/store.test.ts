// @no-services
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Kysely } from "kysely";
import { MigrationFailedError, openStore, SchemaTooNewError } from "../../src/db/index.ts";
import type { Migration } from "../../src/db/migrations/index.ts";
import { MIGRATIONS } from "../../src/db/migrations/index.ts";
import { VERSION } from "../../src/version.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "loupe-db-"));
  dirs.push(d);
  return d;
}

describe("store", () => {
  test("migrates a fresh file with durable pragmas", async () => {
    const dir = tempDir();
    const store = await openStore(dir);
    expect(store.sqlite.query("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
    expect(store.sqlite.query("PRAGMA synchronous").get()).toEqual({ synchronous: 2 });
    expect(store.sqlite.query("PRAGMA busy_timeout").get()).toEqual({ timeout: 5000 });
    const versions = store.sqlite.query("SELECT version FROM schema_version ORDER BY version").all();
    expect(versions).toEqual(MIGRATIONS.map((m) => ({ version: m.version })));
    await store.close();
    // Opening again applies nothing new.
    const again = await openStore(dir);
    expect(again.sqlite.query("SELECT count(*) AS n FROM schema_version").get()).toEqual({ n: MIGRATIONS.length });
    await again.close();
  });

  test("28: the released migrations make the SQLite schema they always made (the PostgreSQL types are PostgreSQL's only)", async () => {
    // The schema of migrations 1 to 12 as the release before the PostgreSQL store made it.
    const store = await openStore(
      tempDir(),
      MIGRATIONS.filter((m) => m.version <= 12),
    );
    const rows = store.sqlite.query("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type, name").all() as { sql: string }[];
    expect(`${rows.map((r) => r.sql).join(";\n")};\n`).toBe(readFileSync(join(import.meta.dir, "sqlite-schema-12.sql"), "utf8"));
    await store.close();
  });

  test("refuses a schema newer than the binary knows", async () => {
    const dir = tempDir();
    const store = await openStore(dir);
    store.sqlite.query("INSERT INTO schema_version VALUES (999, 'future', 0)").run();
    await store.close();
    await expect(openStore(dir)).rejects.toBeInstanceOf(SchemaTooNewError);
    await expect(openStore(dir)).rejects.toThrow("newer than this binary knows");
  });
});

/** The store as bytes, once closed (its WAL folded in). */
const sha = (path: string) => new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex");

/** The store of the release before the last migration: every migration but the newest. */
async function previousReleaseStore(dir: string): Promise<void> {
  const previous = await openStore(dir, MIGRATIONS.slice(0, -1));
  previous.sqlite
    .query("INSERT INTO audit (timestamp, user_id, type, change, content) VALUES (1, 'alice', 'TOPIC', 'ADD', '{\"topic\":\"kept\"}')")
    .run();
  await previous.close();
}

describe("27: upgrade", () => {
  test("27: a new version copies the store next to it before its first migration, then migrates it with the data intact", async () => {
    const dir = tempDir();
    await previousReleaseStore(dir);
    const before = sha(join(dir, "loupe.db"));
    const store = await openStore(dir);
    expect(store.upgradeBackup).toBe(join(dir, `loupe.db.before-${VERSION}`));
    expect(store.sqlite.query("SELECT max(version) AS v FROM schema_version").get()).toEqual({ v: MIGRATIONS.at(-1)!.version });
    expect(store.sqlite.query("SELECT user_id, content FROM audit").all()).toEqual([{ user_id: "alice", content: '{"topic":"kept"}' }]);
    await store.close();
    // The copy is the store as the previous release left it.
    const { Database } = await import("bun:sqlite");
    const old = new Database(store.upgradeBackup!, { readonly: true });
    expect(old.query("SELECT max(version) AS v FROM schema_version").get()).toEqual({ v: MIGRATIONS.at(-2)!.version });
    expect(old.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    old.close();
    expect(before).not.toBe(sha(join(dir, "loupe.db")));
    // Opening again migrates nothing and copies nothing.
    const again = await openStore(dir);
    expect(again.upgradeBackup).toBeNull();
    await again.close();
    expect(readdirSync(dir).filter((f) => f.includes(".before-"))).toEqual([`loupe.db.before-${VERSION}`]);
  });

  test("27: a failing migration applies none of the pending ones, leaves the file as it was, and says so", async () => {
    const dir = tempDir();
    await previousReleaseStore(dir);
    const file = join(dir, "loupe.db");
    const before = sha(file);
    const good: Migration = {
      version: 990,
      name: "good",
      up: async (db) => void (await db.schema.createTable("made_by_good").addColumn("x", "integer").execute()),
    };
    const broken: Migration = {
      version: 991,
      name: "broken",
      up: async (db) => {
        await db.schema.createTable("made_by_broken").addColumn("x", "integer").execute();
        throw new Error("deliberately broken");
      },
    };
    const err = await openStore(dir, [...MIGRATIONS, good, broken]).catch((e) => e);
    expect(err).toBeInstanceOf(MigrationFailedError);
    expect(err.message).toContain("migration 991 (broken): deliberately broken");
    expect(err.message).toContain(`stays at schema version ${MIGRATIONS.at(-2)!.version}`);
    expect(err.message).toContain(`loupe.db.before-${VERSION}`);
    expect(sha(file)).toBe(before);
    expect(existsSync(`${file}-wal`) ? readFileSync(`${file}-wal`).length : 0).toBe(0);
    // The old release's schema, nothing of the new one.
    const { Database } = await import("bun:sqlite");
    const db = new Database(file, { readonly: true });
    expect(db.query("SELECT max(version) AS v FROM schema_version").get()).toEqual({ v: MIGRATIONS.at(-2)!.version });
    expect(db.query("SELECT name FROM sqlite_master WHERE name LIKE 'made_by_%'").all()).toEqual([]);
    db.close();
  });
});

describe("migrations with a gap", () => {
  test("a version taken by work merged later is applied when it arrives, below the store's highest", async () => {
    const dir = tempDir();
    const table = (name: string) => ({ name, up: (db: Kysely<any>) => db.schema.createTable(name).addColumn("x", "integer").execute() });
    const first = await openStore(dir, [...MIGRATIONS, { version: 9_002, ...table("gap_two") }]);
    await first.close();
    const second = await openStore(dir, [...MIGRATIONS, { version: 9_001, ...table("gap_one") }, { version: 9_002, ...table("gap_two") }]);
    const versions = second.sqlite.query("SELECT version FROM schema_version WHERE version > 9000 ORDER BY version").all();
    expect(versions).toEqual([{ version: 9_001 }, { version: 9_002 }]);
    expect(second.sqlite.query("SELECT count(*) AS n FROM gap_one").get()).toEqual({ n: 0 });
    await second.close();
  });
});

describe("one way into the store", () => {
  test("24: only src/db/ opens bun:sqlite: everything else, the SQL routes' topic formats included, goes through the store's Kysely repos", async () => {
    const root = join(import.meta.dir, "../../src");
    const raw: string[] = [];
    for await (const file of new Bun.Glob("**/*.{ts,tsx}").scan(root)) {
      if (file.startsWith("db/")) continue;
      if (/from\s+["']bun:sqlite["']/.test(await Bun.file(join(root, file)).text())) raw.push(file);
    }
    expect(raw).toEqual([]);
  });
});
