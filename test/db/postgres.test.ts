/**
 * The PostgreSQL store (src/db/postgres.ts) on the run's real PostgreSQL server (POSTGRES_URL):
 * the same migrations as SQLite's, 64-bit columns read as numbers, one migrating instance of
 * several starting at once, a failed migration that leaves nothing, and errors that never show
 * the password. The tests of the store's users run on it too (files marked `// @postgres`).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { refuseOnPostgres, StoreCommandError } from "../../src/db/backup.ts";
import { MigrationFailedError, openStore, SchemaTooNewError, type Store, StoreOpenError } from "../../src/db/index.ts";
import { MIGRATIONS, type Migration } from "../../src/db/migrations/index.ts";
import { openPostgresStore, parseInt8, redactedUrl } from "../../src/db/postgres.ts";
import { requireEnv } from "../cluster/cluster.ts";
import { freshDatabase, rowsOf, type TestDatabase } from "../helpers/store.ts";

const dir = mkdtempSync(join(tmpdir(), "loupe-pg-"));
const databases: TestDatabase[] = [];
const stores: Store[] = [];
afterAll(async () => {
  for (const s of stores) await s.close().catch(() => {});
  for (const d of databases) await d.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function database(): Promise<TestDatabase> {
  const d = await freshDatabase(mkdtempSync(join(dir, "db-")));
  databases.push(d);
  return d;
}

async function open(d: TestDatabase, migrations: Migration[] = MIGRATIONS): Promise<Store> {
  const s = await openPostgresStore({ url: d.url, passwordFile: d.passwordFile }, migrations);
  stores.push(s);
  return s;
}

describe("28: one set of migrations on both stores", () => {
  test("28: a fresh PostgreSQL store has SQLite's tables and schema_version rows, and no 32-bit integer column", async () => {
    const pg = await open(await database());
    const lite = await openStore(mkdtempSync(join(dir, "lite-")));
    try {
      const versions = (s: Store) =>
        rowsOf<{ version: number; name: string }>(s, "SELECT version, name FROM schema_version ORDER BY version");
      expect(await versions(pg)).toEqual(await versions(lite));
      expect((await versions(pg)).map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
      const pgTables = await rowsOf<{ name: string }>(
        pg,
        "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
      );
      const liteTables = await rowsOf<{ name: string }>(
        lite,
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      );
      expect(pgTables.map((t) => t.name).sort()).toEqual(liteTables.map((t) => t.name).sort());
      // Epoch milliseconds do not fit 32 bits: every integer column is bigint.
      const narrow = await rowsOf<{ column: string }>(
        pg,
        "SELECT table_name || '.' || column_name AS column FROM information_schema.columns WHERE table_schema = 'public' AND data_type IN ('integer', 'smallint')",
      );
      expect(narrow).toEqual([]);
    } finally {
      await lite.close();
    }
  });

  test("28: 64-bit columns read back as numbers; a value past 2^53 fails the read instead of being rounded", async () => {
    const s = await open(await database());
    const now = Date.now();
    const { id } = await s.db
      .insertInto("audit")
      .values({ type: "TOPIC", change: "ADD", user_id: "alice", timestamp: now, content: "{}", success: 1 })
      .returning("id")
      .executeTakeFirstOrThrow();
    expect(typeof id).toBe("number");
    const row = await s.db.selectFrom("audit").select(["timestamp", "success"]).where("id", "=", id).executeTakeFirstOrThrow();
    expect(row).toEqual({ timestamp: now, success: 1 });
    const [{ n }] = (await rowsOf<{ n: number }>(s, "SELECT count(*) AS n FROM audit")) as [{ n: number }];
    expect(n).toBe(1);
    await sql`INSERT INTO lag_points (series_id, t, lag) VALUES (1, 1, 9007199254740993)`.execute(s.db);
    await expect(s.db.selectFrom("lag_points").select("lag").execute()).rejects.toThrow(RangeError);
    expect(() => parseInt8("9007199254740991")).not.toThrow();
    expect(() => parseInt8("-9007199254740993")).toThrow("beyond the integers a JavaScript number holds exactly");
  });
});

describe("28: migrating a shared store", () => {
  test("28: instances starting at once on a new store migrate it once", async () => {
    const d = await database();
    const both = await Promise.all([open(d), open(d), open(d)]);
    const [{ n }] = (await rowsOf<{ n: number }>(both[0]!, "SELECT count(*) AS n FROM schema_version")) as [{ n: number }];
    expect(n).toBe(MIGRATIONS.length);
  });

  test("28: a failed migration leaves the store as it was: no table of it, no version", async () => {
    const d = await database();
    await (await open(d)).close();
    stores.pop();
    const good: Migration = {
      version: 990,
      name: "good",
      up: async (db) => void (await db.schema.createTable("made_by_good").addColumn("x", "bigint").execute()),
    };
    const broken: Migration = {
      version: 991,
      name: "broken",
      up: async () => {
        throw new Error("deliberately broken");
      },
    };
    const err = await open(d, [...MIGRATIONS, good, broken]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MigrationFailedError);
    expect((err as Error).message).toContain("migration 991 (broken): deliberately broken");
    expect((err as Error).message).toContain(`stays at schema version ${MIGRATIONS.at(-1)!.version}`);
    const s = await open(d);
    expect(await rowsOf(s, "SELECT to_regclass('made_by_good') AS t")).toEqual([{ t: null }]);
    expect(await rowsOf(s, "SELECT max(version) AS v FROM schema_version")).toEqual([{ v: MIGRATIONS.at(-1)!.version }]);
  });

  test("28: a store of a newer schema is refused", async () => {
    const d = await database();
    const s = await open(d);
    await sql`INSERT INTO schema_version VALUES (9999, 'from a newer release', 0)`.execute(s.db);
    await expect(open(d)).rejects.toBeInstanceOf(SchemaTooNewError);
  });
});

describe("28: the password stays out of sight", () => {
  test("28: a wrong password is a StoreOpenError that names the server without any password", async () => {
    const d = await database();
    const wrong = join(dir, "wrong-password");
    writeFileSync(wrong, "not-the-password\n", { mode: 0o600 });
    const err = await openPostgresStore({ url: d.url, passwordFile: wrong }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreOpenError);
    expect((err as Error).message).toContain(`the PostgreSQL store at ${d.url} does not answer`);
    expect((err as Error).message).toContain("password authentication failed");
    // A password in the URL itself is used, and never shown.
    const inUrl = new URL(d.url);
    inUrl.password = "secret-in-url";
    const shown = await openPostgresStore({ url: inUrl.toString() }).catch((e: unknown) => (e as Error).message);
    expect(shown).not.toContain("secret-in-url");
    expect(redactedUrl(requireEnv("POSTGRES_URL"))).not.toContain(new URL(requireEnv("POSTGRES_URL")).password);
    const missing = await openPostgresStore({ url: d.url, passwordFile: join(dir, "no-such-file") }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(StoreOpenError);
    expect((missing as Error).message).toContain("store.passwordFile");
  });

  test("28: what is SQLite's alone says so on PostgreSQL: its handle, backup and restore", async () => {
    const s = await open(await database());
    expect(s.kind).toBe("postgres");
    expect(() => s.sqlite).toThrow("the store is PostgreSQL");
    expect(() => refuseOnPostgres("backup", { url: s.path })).toThrow(StoreCommandError);
    expect(() => refuseOnPostgres("restore", { url: s.path })).toThrow("use the database's own backups");
    expect(() => refuseOnPostgres("backup", {})).not.toThrow();
  });
});
