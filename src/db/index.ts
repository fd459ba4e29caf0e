import { Database as Sqlite } from "bun:sqlite";
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { Kysely, sql } from "kysely";
import { BunSqliteDialect } from "kysely-bun-sqlite";
import { VERSION } from "../version.ts";
import { markOpen } from "./holders.ts";
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

/** A migration failed: nothing of the pending ones was applied, and Loupe must not start. */
export class MigrationFailedError extends Error {
  constructor(migration: Migration, current: number, backup: string | null, cause: unknown) {
    super(
      `Migrating the store failed at migration ${migration.version} (${migration.name}): ` +
        `${cause instanceof Error ? cause.message : String(cause)}. ` +
        `No migration was applied: the store stays at schema version ${current}` +
        `${backup ? `, and its copy taken before migrating is ${backup}` : ""}. Loupe ${VERSION} does not start on it.`,
      { cause },
    );
    this.name = "MigrationFailedError";
  }
}

export interface Store {
  db: Db;
  sqlite: Sqlite;
  path: string;
  /** The copy taken before this open migrated an existing store, if it did. */
  upgradeBackup: string | null;
  /** Checkpoints the WAL into the file, and closes. */
  close(): Promise<void>;
}

/**
 * Opens (creating if needed) `<dataDir>/loupe.db`, sets durability pragmas and migrates. An
 * existing store with migrations pending is first copied next to it (`loupe.db.before-<version>`,
 * see upgradeBackupPath), then every pending migration runs in one transaction: a failure leaves
 * the store as it was, and throws MigrationFailedError.
 */
export async function openStore(dataDir: string, migrations: Migration[] = MIGRATIONS): Promise<Store> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, "loupe.db");
  const sqlite = new Sqlite(path, { create: true });
  sqlite.exec("PRAGMA journal_mode = WAL");
  sqlite.exec("PRAGMA busy_timeout = 5000");
  sqlite.exec("PRAGMA synchronous = FULL");
  sqlite.exec("PRAGMA foreign_keys = ON");
  const db = new Kysely<Database>({ dialect: new BunSqliteDialect({ database: sqlite }) });
  let upgradeBackup: string | null = null;
  try {
    await migrate(db, migrations, () => {
      upgradeBackup = upgradeBackupPath(path);
      sqlite.query("VACUUM INTO ?").run(upgradeBackup);
      chmodSync(upgradeBackup, 0o600);
      return upgradeBackup;
    });
  } catch (e) {
    await db.destroy();
    throw e;
  }
  const unmark = markOpen(dataDir);
  return {
    db,
    sqlite,
    path,
    upgradeBackup,
    close: async () => {
      unmark();
      try {
        sqlite.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      } catch {
        // Busy (another connection reads): SQLite checkpoints when the last one closes.
      }
      await db.destroy();
    },
  };
}

/** `loupe.db.before-<version>` next to the store, or with `-<epoch ms>` when that name is taken. */
function upgradeBackupPath(path: string): string {
  const base = `${path}.before-${VERSION}`;
  return existsSync(base) ? `${base}-${Date.now()}` : base;
}

/**
 * Applies the migrations the store has not applied, in version order, all in one transaction.
 * Versions may have gaps (migrations made on separate lines of work): a migration is pending when
 * its version is not in schema_version, whatever the highest applied one. A store whose highest
 * version is above the highest known is refused (SchemaTooNewError): no silent downgrade.
 * `beforeUpgrade` runs before the pending migrations of a store that has some applied already
 * (a fresh store has nothing to copy); it returns the copy's path.
 */
export async function migrate(db: Db, migrations: Migration[], beforeUpgrade?: () => string): Promise<number> {
  await sql`CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`.execute(db);
  const applied = new Set((await db.selectFrom("schema_version").select("version").execute()).map((r) => Number(r.version)));
  const current = Math.max(0, ...applied);
  const known = migrations.reduce((m, x) => Math.max(m, x.version), 0);
  if (current > known) throw new SchemaTooNewError(current, known);
  // Every version the store lacks, a lower one too: numbers are taken by work merged in any
  // order, so a store may hold 12 before 11 exists.
  const pending = migrations.filter((x) => !applied.has(x.version)).sort((a, b) => a.version - b.version);
  if (pending.length === 0) return known;
  const backup = applied.size > 0 && beforeUpgrade ? beforeUpgrade() : null;
  let running: Migration | undefined;
  try {
    await db.transaction().execute(async (trx) => {
      for (const m of pending) {
        running = m;
        await m.up(trx);
        await trx.insertInto("schema_version").values({ version: m.version, name: m.name, applied_at: Date.now() }).execute();
      }
    });
  } catch (e) {
    throw new MigrationFailedError(running ?? (pending[0] as Migration), current, backup, e);
  }
  return known;
}
