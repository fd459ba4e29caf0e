/**
 * Events between the instances sharing one PostgreSQL store, through the store itself (no
 * message broker of Loupe's own): an instance writes a row per event, every instance reads the
 * rows the others wrote, every `pollMs`, and hands each to the handlers of its kind once.
 *
 * What it carries is what live streams show: an audit entry completed on one instance reaches
 * `/api/sse/audit` on every other, an alert notification `/api/sse/alerts`. Sessions need none
 * of it: a shared store's tokens and identities are read again at every request (auth service).
 *
 * Reading: the rows of the last READ_BACK_MS on the store's clock, each handled once (by id).
 * PostgreSQL numbers rows when they are inserted, not when they commit, so "ids above the last
 * seen" could skip a row committed late; a window on the time, wider than any commit takes,
 * does not. Rows older than KEEP_MS are removed now and then by whichever instance reads.
 */
import { sql } from "kysely";
import type { Logger } from "../log/logger.ts";
import { int64Value, storeNowMs } from "./dialect.ts";
import type { Db } from "./index.ts";

/** How far back each read looks: far longer than an insert takes to commit. */
export const READ_BACK_MS = 15_000;
/** Rows are removed this long after they were written. */
const KEEP_MS = 10 * 60_000;
/** Removal runs at most this often per instance. */
const PRUNE_EVERY_MS = 60_000;
/** A body larger than this is not sent (an audit entry's content is bounded well below it). */
const MAX_BODY = 256 * 1024;

export type EventHandler = (body: unknown) => void;

export class InstanceEvents {
  readonly #db: Db;
  readonly #instance: string;
  readonly #log: Logger;
  readonly #pollMs: number;
  readonly #handlers = new Map<string, EventHandler[]>();
  /** Ids handled, with their time: forgotten once they are out of the read window. */
  readonly #seen = new Map<number, number>();
  #since: number | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  #reading: Promise<void> | undefined;
  #prunedAt = 0;

  constructor(db: Db, opts: { instance: string; log: Logger; pollMs?: number }) {
    this.#db = db;
    this.#instance = opts.instance;
    this.#log = opts.log;
    this.#pollMs = opts.pollMs ?? 1_000;
  }

  /** Calls `handler` with the body of each event of `kind` another instance publishes. */
  on(kind: string, handler: EventHandler): void {
    this.#handlers.set(kind, [...(this.#handlers.get(kind) ?? []), handler]);
  }

  /** Tells the other instances; a store that cannot take it is logged (the event was local already). */
  async publish(kind: string, body: unknown): Promise<void> {
    const text = JSON.stringify(body);
    if (text.length > MAX_BODY) {
      this.#log.warn("an event too large for the other instances is not sent", { kind, bytes: text.length });
      return;
    }
    try {
      await this.#db
        .insertInto("instance_events")
        .values({ at: storeNowMs(this.#db), instance: this.#instance, kind, body: text })
        .execute();
    } catch (e) {
      this.#log.warn("an event could not be written for the other instances", { kind }, e);
    }
  }

  /** Starts reading every `pollMs`, from now on (events written before the start are not replayed). */
  async start(): Promise<void> {
    if (this.#timer) return;
    this.#since = await this.#storeNow();
    this.#timer = setInterval(() => void this.read(), this.#pollMs);
    this.#timer.unref?.();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** One read (the timer's; tests call it to not wait for the next tick). */
  read(): Promise<void> {
    this.#reading ??= this.#read().finally(() => {
      this.#reading = undefined;
    });
    return this.#reading;
  }

  async #read(): Promise<void> {
    try {
      const now = await this.#storeNow();
      const from = Math.max(this.#since ?? now, now - READ_BACK_MS);
      const rows = await this.#db
        .selectFrom("instance_events")
        .select(["id", "at", "kind", "body"])
        .where("at", ">=", int64Value(from))
        .where("instance", "!=", this.#instance)
        .orderBy("id")
        .execute();
      for (const r of rows) {
        const id = Number(r.id);
        if (this.#seen.has(id)) continue;
        this.#seen.set(id, Number(r.at));
        this.#dispatch(r.kind, r.body);
      }
      for (const [id, at] of this.#seen) if (at < from) this.#seen.delete(id);
      if (now - this.#prunedAt >= PRUNE_EVERY_MS) {
        this.#prunedAt = now;
        await this.#db
          .deleteFrom("instance_events")
          .where("at", "<", int64Value(now - KEEP_MS))
          .execute();
      }
    } catch (e) {
      this.#log.warn("the other instances' events could not be read; the next read tries again", {}, e);
    }
  }

  #dispatch(kind: string, text: string): void {
    const handlers = this.#handlers.get(kind);
    if (!handlers) return;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      this.#log.warn("an event of another instance is no JSON: skipped", { kind });
      return;
    }
    for (const h of handlers) {
      try {
        h(body);
      } catch (e) {
        this.#log.warn("an event handler failed", { kind }, e);
      }
    }
  }

  async #storeNow(): Promise<number> {
    const row = await sql<{ now: number | string }>`SELECT ${storeNowMs(this.#db)} AS now`.execute(this.#db);
    return Number(row.rows[0]!.now);
  }
}
