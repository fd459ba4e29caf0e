// @no-services
// @postgres
/**
 * Opening and migrating the store, on SQLite and on PostgreSQL (run twice: see test/helpers/store.ts):
 * the schema versions, a newer schema refused, a previous release's store migrated with its data,
 * versions with gaps. What is SQLite's by nature (its pragmas, the schema in sqlite_master, the
 * copy of the file before migrating, the file's bytes after a failed migration) is tested on
 * SQLite only; PostgreSQL's failed and concurrent migrations are in postgres.test.ts.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Kysely } from "kysely";
import { MigrationFailedError, openStore, SchemaTooNewError, type Store } from "../../src/db/index.ts";
import type { Migration } from "../../src/db/migrations/index.ts";
import { MIGRATIONS } from "../../src/db/migrations/index.ts";
import { VERSION } from "../../src/version.ts";
import { reopenableTestStore, rowsOf, testStoreKind } from "../helpers/store.ts";

const onPostgres = testStoreKind() === "postgres";
const dirs: string[] = [];
const drops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const drop of drops) await drop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "loupe-db-"));
  dirs.push(d);
  return d;
}

/** A store of this test's engine that the test may close and open again; dropped after the file. */
async function reopenable() {
  const place = await reopenableTestStore(tempDir());
  drops.push(place.drop);
  return place;
}

const versionsOf = async (store: Store) =>
  (await store.db.selectFrom("schema_version").select("version").orderBy("version").execute()).map((r) => r.version);

describe("store", () => {
  test("migrates a fresh store; opening it again applies nothing new", async () => {
    const place = await reopenable();
    const store = await place.open();
    expect(await versionsOf(store)).toEqual(MIGRATIONS.map((m) => m.version));
    await store.close();
    const again = await place.open();
    expect(await rowsOf<{ n: number }>(again, "SELECT count(*) AS n FROM schema_version")).toEqual([{ n: MIGRATIONS.length }]);
    await again.close();
  });

  test.skipIf(onPostgres)("a fresh file gets durable pragmas (SQLite's own)", async () => {
    const store = await openStore(tempDir());
    expect(store.sqlite.query("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
    expect(store.sqlite.query("PRAGMA synchronous").get()).toEqual({ synchronous: 2 });
    expect(store.sqlite.query("PRAGMA busy_timeout").get()).toEqual({ timeout: 5000 });
    await store.close();
  });

  test.skipIf(onPostgres)(
    "28: the released migrations make the SQLite schema they always made (the PostgreSQL types are PostgreSQL's only)",
    async () => {
      // The schema of migrations 1 to 12 as the release before the PostgreSQL store made it.
      const store = await openStore(
        tempDir(),
        MIGRATIONS.filter((m) => m.version <= 12),
      );
      const rows = store.sqlite.query("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type, name").all() as { sql: string }[];
      expect(`${rows.map((r) => r.sql).join(";\n")};\n`).toBe(readFileSync(join(import.meta.dir, "sqlite-schema-12.sql"), "utf8"));
      await store.close();
    },
  );

  test("refuses a schema newer than the binary knows", async () => {
    const place = await reopenable();
    const store = await place.open();
    await store.db.insertInto("schema_version").values({ version: 999, name: "future", applied_at: 0 }).execute();
    await store.close();
    await expect(place.open()).rejects.toBeInstanceOf(SchemaTooNewError);
    await expect(place.open()).rejects.toThrow("newer than this binary knows");
  });
});

/** The store as bytes, once closed (its WAL folded in). */
const sha = (path: string) => new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex");

/** The store of the release before the last migration (every migration but the newest), with one audit entry. */
async function previousReleaseStore(open: (migrations?: Migration[]) => Promise<Store>): Promise<void> {
  const previous = await open(MIGRATIONS.slice(0, -1));
  await previous.db
    .insertInto("audit")
    .values({ timestamp: 1, user_id: "alice", type: "TOPIC", change: "ADD", content: '{"topic":"kept"}', success: 1 })
    .execute();
  await previous.close();
}

describe("27: upgrade", () => {
  test("28: a new version migrates a previous release's store with its data intact (a copy first on SQLite only)", async () => {
    const place = await reopenable();
    await previousReleaseStore(place.open);
    const store = await place.open();
    expect((await versionsOf(store)).at(-1)).toBe(MIGRATIONS.at(-1)!.version);
    expect(await store.db.selectFrom("audit").select(["user_id", "content"]).execute()).toEqual([
      { user_id: "alice", content: '{"topic":"kept"}' },
    ]);
    // PostgreSQL's migrations run in one transaction and its backups are the database's: no copy.
    expect(store.upgradeBackup === null).toBe(onPostgres);
    await store.close();
  });

  test.skipIf(onPostgres)(
    "27: a new version copies the store next to it before its first migration, then migrates it with the data intact",
    async () => {
      const dir = tempDir();
      await previousReleaseStore((m) => openStore(dir, m));
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
    },
  );

  // PostgreSQL's failed migration (no table of it, no version) is in postgres.test.ts.
  test.skipIf(onPostgres)("27: a failing migration applies none of the pending ones, leaves the file as it was, and says so", async () => {
    const dir = tempDir();
    await previousReleaseStore((m) => openStore(dir, m));
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
    const place = await reopenable();
    const table = (name: string) => ({ name, up: (db: Kysely<any>) => db.schema.createTable(name).addColumn("x", "integer").execute() });
    const first = await place.open([...MIGRATIONS, { version: 9_002, ...table("gap_two") }]);
    await first.close();
    const second = await place.open([...MIGRATIONS, { version: 9_001, ...table("gap_one") }, { version: 9_002, ...table("gap_two") }]);
    expect((await versionsOf(second)).filter((v) => v > 9000)).toEqual([9_001, 9_002]);
    expect(await rowsOf<{ n: number }>(second, "SELECT count(*) AS n FROM gap_one")).toEqual([{ n: 0 }]);
    await second.close();
  });
});

describe("one way into the store", () => {
  // A check of the sources, not of a store: once is enough.
  test.skipIf(onPostgres)(
    "24: only src/db/ opens bun:sqlite: everything else, the SQL routes' topic formats included, goes through the store's Kysely repos",
    async () => {
      const root = join(import.meta.dir, "../../src");
      const raw: string[] = [];
      for await (const file of new Bun.Glob("**/*.{ts,tsx}").scan(root)) {
        if (file.startsWith("db/")) continue;
        if (/from\s+["']bun:sqlite["']/.test(await Bun.file(join(root, file)).text())) raw.push(file);
      }
      expect(raw).toEqual([]);
    },
  );
});
