import { Database as Sqlite } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Kysely, sql } from "kysely";
import { BunSqliteDialect } from "kysely-bun-sqlite";
import { MIGRATIONS, type Migration } from "./migrations/index.ts";
import type { Database } from "./types.ts";

export type Db = Kysely<Database>;

export class SchemaTooNewError extends Error {
  constructor(found: number, known: number) {
    super(
      `The store's schema is version ${found}, newer than this binary knows (${known}). ` +
        `Run a Loupe release at least as new as the one that last opened this data directory.`,
    );
    this.name = "SchemaTooNewError";
  }
}

export interface Store {
  db: Db;
  sqlite: Sqlite;
  path: string;
  close(): Promise<void>;
}

/** Opens (creating if needed) `<dataDir>/loupe.db`, sets durability pragmas and migrates. */
export async function openStore(dataDir: string, migrations: Migration[] = MIGRATIONS): Promise<Store> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, "loupe.db");
  const sqlite = new Sqlite(path, { create: true });
  sqlite.exec("PRAGMA journal_mode = WAL");
  sqlite.exec("PRAGMA busy_timeout = 5000");
  sqlite.exec("PRAGMA synchronous = FULL");
  sqlite.exec("PRAGMA foreign_keys = ON");
  const db = new Kysely<Database>({ dialect: new BunSqliteDialect({ database: sqlite }) });
  try {
    await migrate(db, migrations);
  } catch (e) {
    await db.destroy();
    throw e;
  }
  return { db, sqlite, path, close: () => db.destroy() };
}

export async function migrate(db: Db, migrations: Migration[]): Promise<number> {
  await sql`CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`.execute(db);
  const applied = new Set((await db.selectFrom("schema_version").select("version").execute()).map((r) => Number(r.version)));
  const current = Math.max(0, ...applied);
  const known = migrations.reduce((m, x) => Math.max(m, x.version), 0);
  if (current > known) throw new SchemaTooNewError(current, known);
  // Every version the store lacks, a lower one too: numbers are taken by work merged in any
  // order, so a store may hold 12 before 11 exists.
  for (const m of migrations.filter((x) => !applied.has(x.version)).sort((a, b) => a.version - b.version)) {
    await db.transaction().execute(async (trx) => {
      await m.up(trx);
      await trx.insertInto("schema_version").values({ version: m.version, name: m.name, applied_at: Date.now() }).execute();
    });
  }
  return known;
}
