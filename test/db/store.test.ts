// @no-services
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Kysely } from "kysely";
import { openStore, SchemaTooNewError } from "../../src/db/index.ts";
import { MIGRATIONS } from "../../src/db/migrations/index.ts";

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

  test("refuses a schema newer than the binary knows", async () => {
    const dir = tempDir();
    const store = await openStore(dir);
    store.sqlite.query("INSERT INTO schema_version VALUES (999, 'future', 0)").run();
    await store.close();
    await expect(openStore(dir)).rejects.toBeInstanceOf(SchemaTooNewError);
    await expect(openStore(dir)).rejects.toThrow("newer than this binary knows");
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
