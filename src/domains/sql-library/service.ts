import { AppError } from "../../errors.ts";
import type { Logger } from "../../log/logger.ts";
import type { SqlService } from "../sql/service.ts";
import type { SqlLibraryRepo } from "./repo.ts";
import type { HistoryEntry, SavedQuery } from "./types.ts";

export interface SqlLibraryLimits {
  /** History entries kept per user; older ones are dropped. */
  historyPerUser: number;
  /** Saved queries one user may hold. */
  savedPerUser: number;
}

export const DEFAULT_LIBRARY_LIMITS: SqlLibraryLimits = { historyPerUser: 200, savedPerUser: 500 };

/**
 * Each user's own queries: what they ran (recorded by the server, so every client's runs are
 * kept) and what they saved under a name. A user only ever reads and changes their own.
 */
export class SqlLibraryService {
  constructor(
    private readonly repo: SqlLibraryRepo,
    private readonly log: Logger,
    private readonly limits: SqlLibraryLimits = DEFAULT_LIBRARY_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Records a run in the user's history. Never throws and never holds the query up: the query
   * matters more than its history line, so a failure to store is logged and the run goes on.
   */
  recordRun(user: string, cluster: string, text: string, stopReason?: string): Promise<void> {
    const at = this.now();
    return this.#inOrder(user, () =>
      this.repo.addRun(user, cluster, text, at, this.limits.historyPerUser, stopReason ?? null).catch((e) => {
        this.log.warn("query history entry could not be stored", { user, cluster }, e);
      }),
    );
  }

  /** Per user, the last history write asked for (they never reject). */
  readonly #writes = new Map<string, Promise<void>>();

  /**
   * Runs a user's history writes one after another, in the order asked: a run's end is then
   * written after its start even when the store runs them on separate connections (PostgreSQL's
   * pool), as SQLite's one connection always did.
   */
  #inOrder(user: string, write: () => Promise<void>): Promise<void> {
    const next = (this.#writes.get(user) ?? Promise.resolve()).then(write);
    this.#writes.set(user, next);
    void next.then(() => {
      if (this.#writes.get(user) === next) this.#writes.delete(user);
    });
    return next;
  }

  /** Completes the history lines of runs as they end, with the rows returned and why they stopped. */
  completeRunsOf(queries: Pick<SqlService, "onFinished">): () => void {
    return queries.onFinished((q) => {
      const stop = q.end?.stopReason ?? (q.error ? "ERROR" : "CLIENT");
      void this.recordEnd(q.user, q.cluster, q.sql, q.end?.returnedRecords ?? null, stop);
    });
  }

  /** Like recordRun, never throws: completes the history line of a run that ended. */
  recordEnd(user: string, cluster: string, text: string, rows: number | null, stopReason: string): Promise<void> {
    return this.#inOrder(user, () =>
      this.repo.finishRun(user, cluster, text, rows, stopReason).catch((e) => {
        this.log.warn("query history entry could not be completed", { user, cluster }, e);
      }),
    );
  }

  history(user: string, limit: number): Promise<HistoryEntry[]> {
    return this.repo.history(user, Math.min(limit, this.limits.historyPerUser));
  }

  clearHistory(user: string): Promise<number> {
    return this.repo.clearHistory(user);
  }

  saved(user: string): Promise<SavedQuery[]> {
    return this.repo.saved(user);
  }

  async save(user: string, name: string, text: string): Promise<{ row: SavedQuery; replaced: boolean }> {
    const result = await this.repo.save(user, name, text, this.now(), this.limits.savedPerUser);
    if (!result)
      throw new AppError(
        "BAD_REQUEST",
        `'${user}' has ${this.limits.savedPerUser} saved queries, the most one user may keep: delete some before saving more`,
      );
    return result;
  }

  async remove(user: string, name: string): Promise<void> {
    if (!(await this.repo.removeSaved(user, name))) throw new AppError("NOT_FOUND", `You have no saved query named '${name}'`);
  }
}
