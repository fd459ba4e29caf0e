/**
 * The queries running now: listed by GET /api/sql/queries, killed by DELETE, and capped per
 * user (429 beyond the cap, before any Kafka work starts).
 *
 * Ids are integers counted up from 1 in this process: the Go client decodes them as int64 and
 * fails on anything else. They are never reused while the process lives.
 */

import { AppError } from "../errors.ts";

export interface RunningQuery {
  id: number;
  sql: string;
  user: string;
  /** When it started, epoch ms. */
  ts: number;
}

interface Entry extends RunningQuery {
  kill: AbortController;
}

/** Shared by every registry of the process, so an id names one query even across clusters. */
let lastId = 0;

/** The id written in a path as a query id, or null when it cannot be one (then no query runs under it). */
export function parseQueryId(text: string): number | null {
  if (!/^[0-9]{1,15}$/.test(text)) return null;
  return Number(text);
}

export class QueryRegistry {
  readonly #running = new Map<number, Entry>();
  constructor(readonly maxPerUser: number) {}

  /** Registers a query; TOO_MANY_REQUESTS when the user already runs the most allowed. */
  register(user: string, sql: string): { query: RunningQuery; killSignal: AbortSignal; release(): void } {
    let mine = 0;
    for (const q of this.#running.values()) if (q.user === user) mine++;
    if (mine >= this.maxPerUser)
      throw new AppError("TOO_MANY_REQUESTS", `At most ${this.maxPerUser} queries may run at once per user`, {
        headers: { "Retry-After": "5" },
      });
    const entry: Entry = { id: ++lastId, sql, user, ts: Date.now(), kill: new AbortController() };
    this.#running.set(entry.id, entry);
    return {
      query: { id: entry.id, sql, user, ts: entry.ts },
      killSignal: entry.kill.signal,
      release: () => void this.#running.delete(entry.id),
    };
  }

  /** All running queries, oldest first; only the user's own unless `all`. */
  list(user: string, all: boolean): RunningQuery[] {
    return [...this.#running.values()]
      .filter((q) => all || q.user === user)
      .sort((a, b) => a.ts - b.ts || a.id - b.id)
      .map(({ id, sql, user: u, ts }) => ({ id, sql, user: u, ts }));
  }

  /** Stops a query: true when it was running; false when no such query runs. Others' queries: FORBIDDEN unless `any`. */
  kill(id: number | string, user: string, any: boolean): boolean {
    const q = this.#running.get(typeof id === "number" ? id : (parseQueryId(id) ?? -1));
    if (!q) return false;
    if (!any && q.user !== user) throw new AppError("FORBIDDEN", "Only its owner or an admin may stop this query");
    q.kill.abort();
    this.#running.delete(q.id);
    return true;
  }

  killAll(): void {
    for (const q of this.#running.values()) q.kill.abort();
    this.#running.clear();
  }

  get size(): number {
    return this.#running.size;
  }
}
