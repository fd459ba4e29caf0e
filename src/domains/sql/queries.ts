/**
 * The queries running now: listed by GET /api/sql/queries, killed by DELETE, and capped per
 * user (429 beyond the cap, before any Kafka work starts).
 */

import { AppError } from "../../errors.ts";

export interface RunningQuery {
  id: string;
  sql: string;
  user: string;
  /** When it started, epoch ms. */
  ts: number;
}

interface Entry extends RunningQuery {
  kill: AbortController;
}

export class QueryRegistry {
  readonly #running = new Map<string, Entry>();
  constructor(readonly maxPerUser: number) {}

  /** Registers a query; TOO_MANY_REQUESTS when the user already runs the most allowed. */
  register(user: string, sql: string): { query: RunningQuery; killSignal: AbortSignal; release(): void } {
    let mine = 0;
    for (const q of this.#running.values()) if (q.user === user) mine++;
    if (mine >= this.maxPerUser)
      throw new AppError("TOO_MANY_REQUESTS", `At most ${this.maxPerUser} queries may run at once per user`, {
        headers: { "Retry-After": "5" },
      });
    const entry: Entry = { id: crypto.randomUUID(), sql, user, ts: Date.now(), kill: new AbortController() };
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
      .sort((a, b) => a.ts - b.ts)
      .map(({ id, sql, user: u, ts }) => ({ id, sql, user: u, ts }));
  }

  /** Stops a query: true when it was running; false when no such query runs. Others' queries: FORBIDDEN unless `any`. */
  kill(id: string, user: string, any: boolean): boolean {
    const q = this.#running.get(id);
    if (!q) return false;
    if (!any && q.user !== user) throw new AppError("FORBIDDEN", "Only its owner or an admin may stop this query");
    q.kill.abort();
    this.#running.delete(id);
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
