/**
 * The store a test runs on: SQLite in the test's data directory (the default), or PostgreSQL when
 * LOUPE_TEST_STORE=postgres. test/run.ts runs the files marked `// @postgres` a second time that
 * way; by hand:
 *
 *   LOUPE_TEST_STORE=postgres bun test --timeout 60000 test/db/lease.test.ts
 *
 * On PostgreSQL each store is a database of its own on the run's server (POSTGRES_URL), made
 * from template0 and dropped when the store closes, with its password in a file, as an operator
 * configures it (store.passwordFile).
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sql } from "kysely";
import pg from "pg";
import { openStore, type Store } from "../../src/db/index.ts";
import { MIGRATIONS, type Migration } from "../../src/db/migrations/index.ts";
import { openPostgresStore } from "../../src/db/postgres.ts";
import { requireEnv } from "../cluster/cluster.ts";

export type TestStoreKind = "sqlite" | "postgres";

export function testStoreKind(): TestStoreKind {
  const kind = process.env.LOUPE_TEST_STORE || "sqlite";
  if (kind !== "sqlite" && kind !== "postgres") throw new Error(`LOUPE_TEST_STORE=${kind}: expected sqlite or postgres`);
  return kind;
}

async function asAdmin(url: URL, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  /** The database's URL, without the password. */
  url: string;
  /** A file in the test's directory holding the password. */
  passwordFile: string;
  drop(): Promise<void>;
}

/** A fresh database on POSTGRES_URL, its password written to a file in `dir`. */
export async function freshDatabase(dir: string): Promise<TestDatabase> {
  const admin = new URL(requireEnv("POSTGRES_URL"));
  const name = `loupe_${Date.now().toString(36)}_${randomBytes(5).toString("hex")}`;
  // Made if missing, as openStore makes SQLite's data directory.
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const passwordFile = join(dir, "store-password");
  writeFileSync(passwordFile, `${decodeURIComponent(admin.password)}\n`, { mode: 0o600 });
  await asAdmin(admin, `CREATE DATABASE ${name} TEMPLATE template0`);
  const url = new URL(admin);
  url.password = "";
  url.pathname = `/${name}`;
  return { url: url.toString(), passwordFile, drop: () => asAdmin(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** The store of a test of the store itself: SQLite in `dir`, or a fresh PostgreSQL database (dropped by close). */
export async function openTestStore(dir: string, migrations: Migration[] = MIGRATIONS): Promise<Store> {
  if (testStoreKind() === "sqlite") return openStore(dir, migrations);
  const database = await freshDatabase(dir);
  const store = await openPostgresStore({ url: database.url, passwordFile: database.passwordFile }, migrations);
  const close = store.close;
  store.close = async () => {
    await close();
    await database.drop();
  };
  return store;
}

/**
 * A store a test closes and opens again (a restart, an upgrade): SQLite in `dir`, or one fresh
 * PostgreSQL database that each `open` opens and `drop` removes once the test is done.
 */
export async function reopenableTestStore(dir: string): Promise<{ open(migrations?: Migration[]): Promise<Store>; drop(): Promise<void> }> {
  if (testStoreKind() === "sqlite") return { open: (migrations = MIGRATIONS) => openStore(dir, migrations), drop: async () => {} };
  const database = await freshDatabase(dir);
  return {
    open: (migrations = MIGRATIONS) => openPostgresStore({ url: database.url, passwordFile: database.passwordFile }, migrations),
    drop: database.drop,
  };
}

/**
 * The `store` section of a test server's configuration: none on SQLite (the store is in its
 * dataDir), a fresh database on PostgreSQL. `drop` removes that database once the server closed.
 */
export async function testStoreSection(
  dataDir: string,
): Promise<{ section: { store?: { url: string; passwordFile: string } }; drop(): Promise<void> }> {
  if (testStoreKind() === "sqlite") return { section: {}, drop: async () => {} };
  const database = await freshDatabase(dataDir);
  return { section: { store: { url: database.url, passwordFile: database.passwordFile } }, drop: database.drop };
}

/** The rows of a statement of SQL both stores read alike, on a test's store. */
export async function rowsOf<T>(store: Store, statement: string): Promise<T[]> {
  return (await sql.raw<T>(statement).execute(store.db)).rows;
}

/**
 * The store a test server of `dataDir` and `section` (testStoreSection's) keeps, opened on its
 * own between two starts: to leave in it what a killed instance would have left.
 */
export function openStoreOf(dataDir: string, section: { store?: { url: string; passwordFile: string } }): Promise<Store> {
  return section.store ? openPostgresStore(section.store) : openStore(dataDir);
}
