import { Database as Sqlite } from "bun:sqlite";
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { Kysely, sql } from "kysely";
import { BunSqliteDialect } from "kysely-bun-sqlite";
import { VERSION } from "../version.ts";
import { int64, type StoreKind, storeKind } from "./dialect.ts";
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
  kind: StoreKind;
  /** SQLite only: bun:sqlite's handle on `loupe.db`; reading it on a PostgreSQL store throws. */
  readonly sqlite: Sqlite;
  /** Where the store is: the SQLite file, or the PostgreSQL URL without its password. */
  path: string;
  /** The copy taken before this open migrated an existing store, if it did (SQLite only). */
  upgradeBackup: string | null;
  /** Resolves when the store answers a query. */
  ping(): Promise<void>;
  /** SQLite: checkpoints the WAL into the file; PostgreSQL: ends the pool's connections. Then closes. */
  close(): Promise<void>;
}

/** The store could not be opened (unreachable, refused the login): the message says which and where. */
export class StoreOpenError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
    this.name = "StoreOpenError";
  }
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
    kind: "sqlite",
    sqlite,
    path,
    upgradeBackup,
    ping: async () => void sqlite.query("SELECT 1").get(),
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

/** Where the store records which migrations it has applied. */
function schemaVersionTable(db: Db) {
  const int = sql.raw(int64(db).toUpperCase());
  return sql`CREATE TABLE IF NOT EXISTS schema_version (
    version ${int} PRIMARY KEY, name TEXT NOT NULL, applied_at ${int} NOT NULL)`;
}

/** Migrations the store lacks, in version order; SchemaTooNewError for a store newer than `migrations`. */
async function pendingOf(db: Db, migrations: Migration[]): Promise<{ pending: Migration[]; current: number; applied: number }> {
  const applied = new Set((await db.selectFrom("schema_version").select("version").execute()).map((r) => Number(r.version)));
  const current = Math.max(0, ...applied);
  const known = migrations.reduce((m, x) => Math.max(m, x.version), 0);
  if (current > known) throw new SchemaTooNewError(current, known);
  // Every version the store lacks, a lower one too: numbers are taken by work merged in any
  // order, so a store may hold 12 before 11 exists.
  const pending = migrations.filter((x) => !applied.has(x.version)).sort((a, b) => a.version - b.version);
  return { pending, current, applied: applied.size };
}

/** Runs `pending` in `trx`, each recorded in schema_version; the one that failed is named. */
async function applyAll(trx: Db, pending: Migration[], failed: (m: Migration, e: unknown) => Error): Promise<void> {
  for (const m of pending) {
    try {
      await m.up(trx);
      await trx.insertInto("schema_version").values({ version: m.version, name: m.name, applied_at: Date.now() }).execute();
    } catch (e) {
      throw failed(m, e);
    }
  }
}

/** Any number held by every Loupe: the advisory lock that lets one instance at a time migrate a shared store. */
const MIGRATION_LOCK = 0x4c6f757065;

/**
 * Applies the migrations the store has not applied, in version order, all in one transaction.
 * Versions may have gaps (migrations made on separate lines of work): a migration is pending when
 * its version is not in schema_version, whatever the highest applied one. A store whose highest
 * version is above the highest known is refused (SchemaTooNewError): no silent downgrade.
 * `beforeUpgrade` runs before the pending migrations of a store that has some applied already
 * (a fresh store has nothing to copy); it returns the copy's path.
 *
 * On PostgreSQL, DDL is transactional too, and several instances may start at once on one store:
 * the transaction first takes an advisory lock, so one of them migrates and the others then find
 * nothing pending. There is no copy before upgrading (that is the database's backup's job).
 */
export async function migrate(db: Db, migrations: Migration[], beforeUpgrade?: () => string): Promise<number> {
  const known = migrations.reduce((m, x) => Math.max(m, x.version), 0);
  if (storeKind(db) === "postgres") {
    await db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`.execute(trx);
      await schemaVersionTable(trx).execute(trx);
      const { pending, current } = await pendingOf(trx, migrations);
      await applyAll(trx, pending, (m, e) => new MigrationFailedError(m, current, null, e));
    });
    return known;
  }
  await schemaVersionTable(db).execute(db);
  const { pending, current, applied } = await pendingOf(db, migrations);
  if (pending.length === 0) return known;
  const backup = applied > 0 && beforeUpgrade ? beforeUpgrade() : null;
  await db
    .transaction()
    .execute((trx) => applyAll(trx, pending, (m, e) => new MigrationFailedError(m, current, backup, e)))
    // A failure outside a migration's own statements (the commit) names the first one.
    .catch((e: unknown) => {
      throw e instanceof MigrationFailedError ? e : new MigrationFailedError(pending[0] as Migration, current, backup, e);
    });
  return known;
}
