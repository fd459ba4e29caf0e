/**
 * What differs between the store's two engines, SQLite (the embedded default) and PostgreSQL
 * (a store several instances share), kept here so that migrations and repositories write one
 * query for both. Everything else they write is SQL both engines read alike.
 */
import { type ColumnDefinitionBuilder, type Kysely, PostgresAdapter, type RawBuilder, sql } from "kysely";

export type StoreKind = "sqlite" | "postgres";

// biome-ignore lint/suspicious/noExplicitAny: migrations run on Kysely<any>, repositories on Kysely<Database>.
type AnyDb = Kysely<any>;

export function storeKind(db: AnyDb): StoreKind {
  return db.getExecutor().adapter instanceof PostgresAdapter ? "postgres" : "sqlite";
}

/**
 * The column type of epoch milliseconds, counts and offsets: 64 bits on both. SQLite's INTEGER
 * holds 64 bits already, and stays the declared type there (stores made before PostgreSQL was
 * supported have it); PostgreSQL's `integer` is 32 bits, so it gets `bigint`.
 */
export function int64(db: AnyDb): "integer" | "bigint" {
  return storeKind(db) === "postgres" ? "bigint" : "integer";
}

/**
 * An id the store numbers itself, as `.addColumn("id", ...autoId(db))`: SQLite's INTEGER PRIMARY
 * KEY AUTOINCREMENT (as it always was), PostgreSQL's bigint identity (BY DEFAULT, so that a copied
 * store keeps its ids).
 */
export function autoId(db: AnyDb): [type: "integer" | "bigint", build: (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder] {
  return storeKind(db) === "postgres"
    ? ["bigint", (c) => c.primaryKey().generatedByDefaultAsIdentity()]
    : ["integer", (c) => c.primaryKey().autoIncrement()];
}

/**
 * The store's clock in epoch milliseconds, read inside the statement, so that instances whose own
 * clocks disagree agree on it. SQLite's 'now' holds milliseconds; PostgreSQL's clock_timestamp()
 * is the time of the call (now() would be the transaction's start).
 */
export function storeNowMs(db: AnyDb): RawBuilder<number> {
  return storeKind(db) === "postgres"
    ? sql<number>`CAST(FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) AS BIGINT)`
    : sql<number>`CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER)`;
}

/** A number bound as a 64-bit integer: PostgreSQL does not guess a type for `$1 + $2`. */
export function int64Value(value: number): RawBuilder<number> {
  return sql<number>`CAST(${value} AS BIGINT)`;
}

/** The text of the top-level string member `key` of a JSON object held as text in `column`. */
export function jsonMember(db: AnyDb, column: string, key: string): RawBuilder<string> {
  return storeKind(db) === "postgres"
    ? sql<string>`(CAST(${sql.ref(column)} AS jsonb) ->> ${sql.lit(key)})`
    : sql<string>`json_extract(${sql.ref(column)}, ${sql.lit(`$.${key}`)})`;
}

/** A write refused for want of space: SQLite's SQLITE_FULL, PostgreSQL's disk_full (53100). */
export function isStoreFull(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "SQLITE_FULL" || code === "53100" || (err instanceof Error && /database or disk is full/i.test(err.message));
}

/**
 * A text the store cannot hold: PostgreSQL refuses a NUL character in any text it is given, even
 * one only compared (SQLSTATE 22021, "invalid byte sequence for encoding UTF8: 0x00"); SQLite
 * keeps it. A request's input, never the store's fault.
 */
export function isStoreRefusedText(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === "22021";
}
