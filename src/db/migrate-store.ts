/**
 * `loupe migrate-store --from sqlite:FILE --to postgres://...`: an install's SQLite store copied
 * into an empty PostgreSQL store, every table, verified by counts and checksums before it counts.
 *
 * 1. The SQLite file is copied with `VACUUM INTO` (one consistent snapshot; the file itself is not
 *    changed), and the copy is migrated to this release's schema, as a start would.
 * 2. The PostgreSQL store is opened (created or migrated to the same schema) and must hold no row.
 * 3. In one PostgreSQL transaction: each table's rows are copied (ids kept; identity sequences then
 *    continue after the highest), then read back, and each table's row count and checksum are
 *    compared with the source's. Any difference rolls everything back: the target stays empty.
 *
 * The checksum of a table is the sum (mod 2^256) of the SHA-256 of each row's values in column
 * order: it does not depend on the order rows are read in, which differs between the engines'
 * collations.
 */
import { Database as Sqlite } from "bun:sqlite";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { type Kysely, type QueryResult, type RawBuilder, sql } from "kysely";
import { StoreCommandError } from "./backup.ts";
import { storeHolders } from "./holders.ts";
import { type Db, openStore, type Store } from "./index.ts";
import { openPostgresStore, redactedUrl } from "./postgres.ts";

export interface TableCopy {
  table: string;
  rows: number;
  /** 64 hex digits: the same in the source and the target. */
  checksum: string;
}

const BATCH = 500;
const MASK = (1n << 256n) - 1n;

/** A table's rows counted and summed, in any order. */
class RowSum {
  rows = 0;
  #sum = 0n;

  add(values: unknown[]): void {
    const digest = createHash("sha256").update(JSON.stringify(values)).digest("hex");
    this.#sum = (this.#sum + BigInt(`0x${digest}`)) & MASK;
    this.rows++;
  }

  get checksum(): string {
    return this.#sum.toString(16).padStart(64, "0");
  }
}

interface TableShape {
  name: string;
  columns: string[];
  key: string[];
}

/** The tables of the SQLite store (but schema_version, which each store keeps itself), with their columns and primary key. */
function tablesOf(lite: Sqlite): TableShape[] {
  const names = lite
    .query<{ name: string }, []>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'schema_version' ORDER BY name",
    )
    .all()
    .map((r) => r.name);
  return names.map((name) => {
    const info = lite
      .query<{ name: string; pk: number }, []>(`SELECT name, pk FROM pragma_table_info('${name.replaceAll("'", "''")}')`)
      .all();
    const key = info
      .filter((c) => c.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((c) => c.name);
    return { name, columns: info.map((c) => c.name), key: key.length > 0 ? key : info.map((c) => c.name) };
  });
}

/** `sqlite:FILE` or a plain path: the file. */
function sourceFile(from: string): string {
  const path = resolve(from.startsWith("sqlite:") ? from.slice("sqlite:".length) : from);
  if (!existsSync(path))
    throw new StoreCommandError(`${path}: no such file (--from sqlite:FILE names the SQLite store, e.g. /var/lib/loupe/loupe.db)`);
  if (basename(path) === "loupe.db") {
    const holders = storeHolders(dirname(path));
    if (holders.length > 0)
      throw new StoreCommandError(
        `the store ${path} is open in process ${holders.join(", ")} (a running Loupe): stop it first, so that nothing written after the copy is lost`,
      );
  }
  return path;
}

/** A consistent copy of the SQLite file in `scratch`, migrated to this release's schema. */
async function snapshot(path: string, scratch: string): Promise<Store> {
  const db = new Sqlite(path, { readwrite: true, create: false });
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    db.query("VACUUM INTO ?").run(join(scratch, "loupe.db"));
  } catch (e) {
    throw new StoreCommandError(`${path}: cannot be read as a SQLite store: ${(e as Error).message}`);
  } finally {
    db.close();
  }
  return openStore(scratch);
}

/** Copies one table into the target inside `trx`; its source count and checksum. */
async function copyTable(lite: Sqlite, trx: Db, t: TableShape): Promise<RowSum> {
  const sum = new RowSum();
  let batch: Record<string, unknown>[] = [];
  // A table named at run time: rows of any columns.
  const target = trx as unknown as Kysely<Record<string, Record<string, unknown>>>;
  const flush = async () => {
    if (batch.length === 0) return;
    await target.insertInto(t.name).values(batch).execute();
    batch = [];
  };
  const quoted = t.columns.map((c) => `"${c.replaceAll('"', '""')}"`).join(", ");
  for (const row of lite.query<Record<string, unknown>, []>(`SELECT ${quoted} FROM "${t.name.replaceAll('"', '""')}"`).iterate()) {
    sum.add(t.columns.map((c) => row[c]));
    batch.push(row);
    if (batch.length >= BATCH) await flush();
  }
  await flush();
  return sum;
}

/** A table's rows as the target holds them, read in key order a batch at a time. */
async function targetSum(trx: Db, t: TableShape): Promise<RowSum> {
  const sum = new RowSum();
  const key = sql.join(t.key.map((c) => sql.ref(c)));
  let after: unknown[] | null = null;
  for (;;) {
    const where: RawBuilder<unknown> = after ? sql`WHERE (${key}) > (${sql.join(after.map((v) => sql`${v}`))})` : sql``;
    const page: QueryResult<Record<string, unknown>> = await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(t.name)} ${where}
      ORDER BY ${key} LIMIT ${sql.lit(BATCH * 4)}`.execute(trx);
    for (const row of page.rows) sum.add(t.columns.map((c) => row[c]));
    if (page.rows.length < BATCH * 4) return sum;
    const last: Record<string, unknown> = page.rows.at(-1)!;
    after = t.key.map((c) => last[c]);
  }
}

/** Identity columns continue after the highest id copied. */
async function continueIdentities(trx: Db, table: string): Promise<void> {
  const { rows } = await sql<{ column: string }>`SELECT column_name AS column FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = ${table} AND is_identity = 'YES'`.execute(trx);
  for (const { column } of rows)
    await sql`SELECT setval(pg_get_serial_sequence(${table}, ${column}), COALESCE((SELECT max(${sql.ref(column)}) FROM ${sql.table(table)}), 0) + 1, false)`.execute(
      trx,
    );
}

/** One table copied and read back; a failure names the table (and rolls the whole copy back). */
async function copyAndRead(source: Sqlite, trx: Db, t: TableShape): Promise<{ expected: RowSum; found: RowSum }> {
  try {
    const expected = await copyTable(source, trx, t);
    await continueIdentities(trx, t.name);
    return { expected, found: await targetSum(trx, t) };
  } catch (e) {
    throw new StoreCommandError(`copying table ${t.name} failed: ${(e as Error).message}: nothing was kept, the target is empty`);
  }
}

export interface MigrateStoreOptions {
  /** `sqlite:FILE` (or the file's path). */
  from: string;
  /** `postgres://...`, its password in the URL, in `passwordFile`, or in PGPASSWORD. */
  to: string;
  passwordFile?: string | undefined;
  /** Told each table as it is verified. */
  progress?(copy: TableCopy): void;
}

/** Copies the SQLite store into the empty PostgreSQL store and verifies it; what each table holds. */
export async function migrateStore(opts: MigrateStoreOptions): Promise<TableCopy[]> {
  const path = sourceFile(opts.from);
  const scratch = mkdtempSync(join(tmpdir(), "loupe-migrate-store-"));
  let lite: Store | undefined;
  let target: Store | undefined;
  try {
    lite = await snapshot(path, scratch);
    target = await openPostgresStore({ url: opts.to, passwordFile: opts.passwordFile, poolSize: 2 });
    const tables = tablesOf(lite.sqlite);
    for (const t of tables) {
      const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(t.name)}`.execute(target.db);
      if (Number(rows[0]?.n ?? 0) > 0)
        throw new StoreCommandError(
          `the PostgreSQL store ${redactedUrl(opts.to)} holds data (table ${t.name}): migrate-store copies into an empty store only`,
        );
    }
    const source = lite.sqlite;
    return await target.db.transaction().execute(async (trx) => {
      const copies: TableCopy[] = [];
      for (const t of tables) {
        const { expected, found } = await copyAndRead(source, trx, t);
        if (found.rows !== expected.rows || found.checksum !== expected.checksum)
          throw new StoreCommandError(
            `table ${t.name} did not copy faithfully (source ${expected.rows} rows, checksum ${expected.checksum}; ` +
              `target ${found.rows} rows, checksum ${found.checksum}): nothing was kept, the target is empty`,
          );
        const copy = { table: t.name, rows: expected.rows, checksum: expected.checksum };
        opts.progress?.(copy);
        copies.push(copy);
      }
      return copies;
    });
  } finally {
    await target?.close();
    await lite?.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}
