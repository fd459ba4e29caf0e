/**
 * The PostgreSQL store: Kysely's own PostgresDialect over a `pg` pool, for several Loupe instances
 * sharing one store. The same migrations and repositories run on it as on SQLite (see dialect.ts
 * for the few words that differ).
 *
 * Numbers: the store's 64-bit columns (epoch milliseconds, offsets, lags, counts) are `bigint`, which
 * `pg` returns as text by default. Here they come back as JavaScript numbers, as SQLite's do. A
 * number holds every integer up to 2^53 - 1 exactly: epoch milliseconds stay below that until the
 * year 287396, and no offset or lag of a real partition comes near it (9 * 10^15 records). A value
 * beyond it is never rounded silently: the query that read it fails with a RangeError.
 */
import { readFileSync } from "node:fs";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { type Db, migrate, type Store, StoreOpenError } from "./index.ts";
import { MIGRATIONS, type Migration } from "./migrations/index.ts";
import type { Database } from "./types.ts";

/** PostgreSQL's type ids of `bigint` (int8) and `numeric` (what SUM of a bigint gives). */
const INT8 = 20;
const NUMERIC = 1700;

export function parseInt8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new RangeError(`the store holds ${text}, beyond the integers a JavaScript number holds exactly`);
  return n;
}

function parseNumeric(text: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || (Number.isInteger(n) && !Number.isSafeInteger(n)))
    throw new RangeError(`the store holds ${text}, beyond what a JavaScript number holds exactly`);
  return n;
}

const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8 ? parseInt8 : oid === NUMERIC ? parseNumeric : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** The URL as it may be shown (logs, errors, health): without its password. */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = "";
    return u.toString();
  } catch {
    return "(a postgres:// URL that does not parse)";
  }
}

export interface PostgresStoreOptions {
  /** `postgres://user@host:port/database`; a password in it is used when there is no passwordFile. */
  url: string;
  /** A file holding the password (trailing newline ignored). */
  passwordFile?: string | undefined;
  /** Connections kept at most. */
  poolSize?: number;
}

/** A pool on the store; StoreOpenError when the URL does not parse or the password file cannot be read. */
function poolOf(opts: PostgresStoreOptions, max: number, connectTimeoutMs: number): pg.Pool {
  if (!/^postgres(ql)?:\/\//i.test(opts.url) || !URL.canParse(opts.url))
    throw new StoreOpenError("the store's URL is not one: expected postgres://USER@HOST:PORT/DATABASE");
  let password: string | undefined;
  if (opts.passwordFile) {
    try {
      password = readFileSync(opts.passwordFile, "utf8").replace(/\r?\n$/, "");
    } catch (e) {
      throw new StoreOpenError(`store.passwordFile ${opts.passwordFile} cannot be read: ${(e as Error).message}`, e);
    }
  }
  // The password goes into the URL pg parses (a `password` option beside a URL would be
  // overridden by the URL's empty one); this URL is never shown.
  const url = new URL(opts.url);
  if (password !== undefined) url.password = encodeURIComponent(password);
  const pool = new pg.Pool({
    connectionString: url.toString(),
    max,
    connectionTimeoutMillis: connectTimeoutMs,
    application_name: "loupe",
    types,
  });
  // A connection that breaks while idle is dropped by the pool and replaced at the next query,
  // which fails (and says why) if the server is gone. Unhandled, the event would end the process.
  pool.on("error", () => {});
  return pool;
}

/**
 * Opens the PostgreSQL store and migrates it (see migrate: one transaction, under an advisory lock
 * that one instance holds at a time). Nothing is copied before a migration: a failed one leaves
 * the database as it was, and backups are the database's (pg_dump, base backups).
 */
export async function openPostgresStore(opts: PostgresStoreOptions, migrations: Migration[] = MIGRATIONS): Promise<Store> {
  const shown = redactedUrl(opts.url);
  const pool = poolOf(opts, opts.poolSize ?? 10, 10_000);
  const db: Db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  try {
    await sql`SELECT 1`.execute(db);
  } catch (e) {
    await db.destroy();
    throw new StoreOpenError(`the PostgreSQL store at ${shown} does not answer: ${(e as Error).message}`, e);
  }
  try {
    await migrate(db, migrations);
  } catch (e) {
    await db.destroy();
    throw e;
  }
  return {
    db,
    kind: "postgres",
    get sqlite(): never {
      throw new Error(`the store is PostgreSQL (${shown}), not SQLite: use store.db`);
    },
    path: shown,
    upgradeBackup: null,
    ping: async () => void (await sql`SELECT 1`.execute(db)),
    close: () => db.destroy(),
  };
}

/**
 * Reads the PostgreSQL store without changing it (`loupe doctor`): it answers a login, and its
 * schema version (0 before Loupe's first start on it).
 */
export async function inspectPostgresStore(opts: PostgresStoreOptions, timeoutMs: number): Promise<{ version: number }> {
  const pool = poolOf(opts, 1, timeoutMs);
  try {
    const table = await pool.query<{ present: boolean }>("SELECT to_regclass('schema_version') IS NOT NULL AS present");
    if (!table.rows[0]?.present) return { version: 0 };
    const r = await pool.query<{ v: number | null }>("SELECT max(version) AS v FROM schema_version");
    return { version: Number(r.rows[0]?.v ?? 0) };
  } finally {
    await pool.end();
  }
}
