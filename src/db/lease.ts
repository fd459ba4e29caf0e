/**
 * Leases in the store: how instances of Loupe sharing one store elect one of them for a job (a
 * processor's runner, a periodic task that must run once). A lease has at most one holder at a
 * time, until a moment on the store's clock: the holder renews it before then; a holder that
 * stops renewing (it died, it lost the store) loses it once it expires, and another instance
 * takes it over. Taking, renewing and taking over are one conditional UPDATE, so two instances
 * asking at once cannot both win.
 *
 * Time is the store's, read inside that statement: instances whose own clocks disagree still
 * agree on when a lease expires. A test injects a clock instead.
 *
 * Where leases live: the `leases` table, one row per named job, or the rows of a table whose
 * rows each are a lease (a processor's runner slots: `processor_runners`, its `instance` and
 * `lease_until` columns).
 */
import { type RawBuilder, sql } from "kysely";
import { int64Value, storeNowMs } from "./dialect.ts";
import type { Db } from "./index.ts";

/** Epoch milliseconds; the store's own clock when absent. */
export type LeaseClock = () => number;

/** A table whose rows are leases: the columns naming one, and its holder and expiry columns. */
export interface LeaseTable {
  table: string;
  key: readonly string[];
  holder: string;
  until: string;
  /** Rows are created on first use (named leases); otherwise a lease's row exists before it is taken. */
  createRows: boolean;
}

/** The `leases` table: one lease per name. */
export const NAMED_LEASES: LeaseTable = { table: "leases", key: ["name"], holder: "holder", until: "lease_until", createRows: true };

export interface LeaseHeld {
  holder: string;
  /** Epoch milliseconds on the store's clock. */
  until: number;
}

export class Leases {
  readonly #db: Db;
  readonly #t: LeaseTable;
  readonly #clock: LeaseClock | undefined;

  constructor(db: Db, opts: { table?: LeaseTable; clock?: LeaseClock } = {}) {
    this.#db = db;
    this.#t = opts.table ?? NAMED_LEASES;
    this.#clock = opts.clock;
  }

  #now(): RawBuilder<number> {
    return this.#clock ? int64Value(this.#clock()) : storeNowMs(this.#db);
  }

  #where(key: readonly (string | number)[]): RawBuilder<unknown> {
    if (key.length !== this.#t.key.length) throw new Error(`a lease of ${this.#t.table} is named by ${this.#t.key.join(", ")}`);
    return sql.join(
      this.#t.key.map((column, i) => sql`${sql.ref(column)} = ${key[i]}`),
      sql` AND `,
    );
  }

  /** Now on the lease's clock (the store's). */
  async now(): Promise<number> {
    const r = await sql<{ now: number }>`SELECT ${this.#now()} AS now`.execute(this.#db);
    return Number(r.rows[0]!.now);
  }

  /**
   * Takes the lease for `holder` when it is free or expired, or renews it when `holder` has it:
   * it then lasts `ttlMs` from now. Its expiry, or null when another holder has it.
   */
  async acquire(key: readonly (string | number)[], holder: string, ttlMs: number): Promise<number | null> {
    const t = this.#t;
    if (t.createRows) {
      const columns = sql.join([...t.key.map((c) => sql.ref(c)), sql.ref(t.holder), sql.ref(t.until)]);
      const values = sql.join([...key.map((v) => sql`${v}`), sql`NULL`, sql`0`]);
      await sql`INSERT INTO ${sql.table(t.table)} (${columns}) VALUES (${values}) ON CONFLICT DO NOTHING`.execute(this.#db);
    }
    const holderCol = sql.ref(t.holder);
    const untilCol = sql.ref(t.until);
    const now = this.#now();
    const r = await sql<{ until: number }>`UPDATE ${sql.table(t.table)}
      SET ${holderCol} = ${holder}, ${untilCol} = ${now} + ${int64Value(ttlMs)}
      WHERE ${this.#where(key)} AND (${holderCol} = ${holder} OR ${holderCol} IS NULL OR ${untilCol} < ${now})
      RETURNING ${untilCol} AS until`.execute(this.#db);
    const row = r.rows[0];
    return row === undefined ? null : Number(row.until);
  }

  /** Gives the lease up when `holder` has it: another may take it at once. */
  async release(key: readonly (string | number)[], holder: string): Promise<void> {
    const t = this.#t;
    await sql`UPDATE ${sql.table(t.table)} SET ${sql.ref(t.holder)} = NULL, ${sql.ref(t.until)} = 0
      WHERE ${this.#where(key)} AND ${sql.ref(t.holder)} = ${holder}`.execute(this.#db);
  }

  /** Who holds the lease now, or null when it is free or expired. */
  async holder(key: readonly (string | number)[]): Promise<LeaseHeld | null> {
    const t = this.#t;
    const r = await sql<{ holder: string | null; until: number }>`SELECT ${sql.ref(t.holder)} AS holder, ${sql.ref(t.until)} AS until
      FROM ${sql.table(t.table)} WHERE ${this.#where(key)} AND ${sql.ref(t.until)} >= ${this.#now()}`.execute(this.#db);
    const row = r.rows[0];
    return row?.holder == null ? null : { holder: row.holder, until: Number(row.until) };
  }
}
