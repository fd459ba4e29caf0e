/**
 * `loupe backup` and `loupe restore`: a consistent copy of a store that may be serving, and
 * putting such a copy in place of a stopped one.
 *
 * A backup is SQLite's `VACUUM INTO` on a connection of its own: it reads one snapshot (a read
 * transaction over the WAL), so writes that go on meanwhile are either wholly in the copy or not
 * at all, and the server is not blocked (WAL readers do not block writers). The copy is written
 * beside the target, checked (`PRAGMA integrity_check`), synced, and only then renamed to it.
 */
import { Database as Sqlite } from "bun:sqlite";
import { chmodSync, closeSync, copyFileSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { storeHolders } from "./holders.ts";
import { SchemaTooNewError } from "./index.ts";
import { MIGRATIONS } from "./migrations/index.ts";

/** Refusals of the backup and restore commands: the message says what to do. */
export class StoreCommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreCommandError";
  }
}

/**
 * `loupe backup` and `restore` copy the SQLite file. A PostgreSQL store (store.url) is the
 * database's to back up: refused, saying so.
 */
export function refuseOnPostgres(cmd: string, store: { url?: string | undefined }): void {
  if (store.url)
    throw new StoreCommandError(
      `loupe ${cmd} copies the SQLite store, and this configuration's store is PostgreSQL (store.url): ` +
        "use the database's own backups instead (pg_dump and pg_restore, or base backups)",
    );
}

export interface StoreFacts {
  /** Highest applied migration. */
  schemaVersion: number;
  bytes: number;
  auditEntries: number;
}

function syncFile(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Checks a store file and says what it holds; StoreCommandError when it is damaged or no store. */
function inspect(path: string): StoreFacts {
  let db: Sqlite;
  try {
    db = new Sqlite(path, { readwrite: true, create: false });
  } catch (e) {
    throw new StoreCommandError(`${path}: cannot open as SQLite: ${e instanceof Error ? e.message : String(e)}`);
  }
  try {
    let problems: string[];
    try {
      problems = db
        .query<{ integrity_check: string }, []>("PRAGMA integrity_check")
        .all()
        .map((r) => r.integrity_check);
    } catch (e) {
      throw new StoreCommandError(`${path}: not a SQLite database (${e instanceof Error ? e.message : String(e)})`);
    }
    if (problems.length !== 1 || problems[0] !== "ok")
      throw new StoreCommandError(`${path}: integrity check failed: ${problems.slice(0, 5).join("; ")}`);
    const hasVersions = db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'").get();
    if (!hasVersions) throw new StoreCommandError(`${path}: not a Loupe store (no schema_version table)`);
    const { v } = db.query<{ v: number | null }, []>("SELECT max(version) AS v FROM schema_version").get() ?? { v: null };
    const hasAudit = db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'audit'").get();
    const audit = hasAudit ? (db.query<{ n: number }, []>("SELECT count(*) AS n FROM audit").get()?.n ?? 0) : 0;
    return { schemaVersion: Number(v ?? 0), bytes: statSync(path).size, auditEntries: audit };
  } finally {
    db.close();
  }
}

/**
 * Copies the store of `dataDir` to `target` while Loupe may be serving. Refuses to overwrite a
 * file. The copy is integrity-checked before it takes its name.
 */
export function backupStore(dataDir: string, target: string): StoreFacts {
  const source = join(dataDir, "loupe.db");
  const out = resolve(target);
  if (!existsSync(source)) throw new StoreCommandError(`no store at ${source}: check dataDir in the configuration`);
  if (existsSync(out)) throw new StoreCommandError(`${out} exists: name a new file (a backup never overwrites one)`);
  mkdirSync(dirname(out), { recursive: true });
  const partial = `${out}.partial`;
  rmSync(partial, { force: true });
  const db = new Sqlite(source, { readwrite: true, create: false });
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    db.query("VACUUM INTO ?").run(partial);
  } catch (e) {
    rmSync(partial, { force: true });
    throw new StoreCommandError(`backup of ${source} failed: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    db.close();
  }
  try {
    // The store holds password hashes and token digests: the copy is the owner's alone.
    chmodSync(partial, 0o600);
    const facts = inspect(partial);
    syncFile(partial);
    renameSync(partial, out);
    syncFile(dirname(out));
    return facts;
  } catch (e) {
    rmSync(partial, { force: true });
    throw e;
  }
}

export interface Restored extends StoreFacts {
  /** Where the store that was replaced now is, if there was one. */
  previous: string | null;
}

/**
 * Puts the backup `file` in place of the store of `dataDir`. Refuses while a process has that
 * store open (see holders.ts), a damaged file, and a store of a newer schema than this binary's.
 * The replaced store is kept beside it as `loupe.db.before-restore-<epoch ms>`.
 */
export function restoreStore(file: string, dataDir: string, knownVersion = Math.max(...MIGRATIONS.map((m) => m.version))): Restored {
  const source = resolve(file);
  if (!existsSync(source)) throw new StoreCommandError(`${source}: no such file`);
  const holders = storeHolders(dataDir);
  if (holders.length > 0)
    throw new StoreCommandError(
      `the store in ${dataDir} is open in process ${holders.join(", ")} (a running Loupe): stop it first (systemctl stop loupe), then restore`,
    );
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const store = join(dataDir, "loupe.db");
  const incoming = `${store}.restoring`;
  rmSync(incoming, { force: true });
  copyFileSync(source, incoming);
  chmodSync(incoming, 0o600);
  let facts: StoreFacts;
  try {
    facts = inspect(incoming);
    if (facts.schemaVersion > knownVersion) throw new SchemaTooNewError(facts.schemaVersion, knownVersion);
    syncFile(incoming);
  } catch (e) {
    rmSync(incoming, { force: true });
    throw e;
  }
  let previous: string | null = null;
  if (existsSync(store)) {
    // Fold the WAL into the file, so that the kept copy is whole on its own.
    const old = new Sqlite(store, { readwrite: true, create: false });
    try {
      old.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    } finally {
      old.close();
    }
    previous = `${store}.before-restore-${Date.now()}`;
    renameSync(store, previous);
  }
  rmSync(`${store}-wal`, { force: true });
  rmSync(`${store}-shm`, { force: true });
  renameSync(incoming, store);
  syncFile(dataDir);
  return { ...facts, previous };
}
