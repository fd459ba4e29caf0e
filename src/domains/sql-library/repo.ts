import type { Db } from "../../db/index.ts";
import type { HistoryEntry, SavedQuery } from "./types.ts";

/** Each user's query history and saved queries in the store. */
export class SqlLibraryRepo {
  constructor(private readonly db: Db) {}

  /**
   * Adds a run to the user's history (`stopReason` for a run that ended at once: INVALID) and drops the oldest beyond `keep`. A run of the same text
   * on the same cluster as the newest entry only moves that entry's time: running a query again
   * and again leaves one line. One transaction, so concurrent runs cannot exceed `keep`.
   */
  async addRun(user: string, cluster: string, text: string, at: number, keep: number, stopReason: string | null = null): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const last = await trx
        .selectFrom("sql_history")
        .select(["id", "cluster", "text"])
        .where("user_name", "=", user)
        .orderBy("id", "desc")
        .limit(1)
        .executeTakeFirst();
      if (last && last.text === text && last.cluster === cluster) {
        await trx.updateTable("sql_history").set({ ran_at: at, rows: null, stop_reason: stopReason }).where("id", "=", last.id).execute();
        return;
      }
      await trx.insertInto("sql_history").values({ user_name: user, cluster, text, ran_at: at, stop_reason: stopReason }).execute();
      const oldestKept = await trx
        .selectFrom("sql_history")
        .select("id")
        .where("user_name", "=", user)
        .orderBy("id", "desc")
        .offset(keep - 1)
        .limit(1)
        .executeTakeFirst();
      if (oldestKept) await trx.deleteFrom("sql_history").where("user_name", "=", user).where("id", "<", oldestKept.id).execute();
    });
  }

  /**
   * Completes the user's newest entry with how its run ended, when it is that run (same text and
   * cluster, not completed yet). Only the newest: a user's earlier runs have ended or been
   * replaced in the view by then, and matching older lines could complete the wrong one.
   */
  async finishRun(user: string, cluster: string, text: string, rows: number | null, stopReason: string): Promise<void> {
    const last = await this.db
      .selectFrom("sql_history")
      .select(["id", "cluster", "text", "stop_reason"])
      .where("user_name", "=", user)
      .orderBy("id", "desc")
      .limit(1)
      .executeTakeFirst();
    if (!last || last.text !== text || last.cluster !== cluster || last.stop_reason !== null) return;
    await this.db.updateTable("sql_history").set({ rows, stop_reason: stopReason }).where("id", "=", last.id).execute();
  }

  /** Newest first. */
  async history(user: string, limit: number): Promise<HistoryEntry[]> {
    const rows = await this.db
      .selectFrom("sql_history")
      .select(["id", "cluster", "text", "ran_at", "rows", "stop_reason"])
      .where("user_name", "=", user)
      .orderBy("id", "desc")
      .limit(limit)
      .execute();
    return rows.map((r) => ({ id: r.id, cluster: r.cluster, text: r.text, ranAt: r.ran_at, rows: r.rows, stopReason: r.stop_reason }));
  }

  /** The number of entries removed. */
  async clearHistory(user: string): Promise<number> {
    const res = await this.db.deleteFrom("sql_history").where("user_name", "=", user).executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  /** By name. */
  async saved(user: string): Promise<SavedQuery[]> {
    const rows = await this.db
      .selectFrom("sql_saved")
      .select(["name", "text", "created_at", "updated_at"])
      .where("user_name", "=", user)
      .orderBy("name")
      .execute();
    return rows.map((r) => ({ name: r.name, text: r.text, createdAt: r.created_at, updatedAt: r.updated_at }));
  }

  /**
   * Creates or replaces the user's query of that name. Counting and writing in one transaction,
   * so concurrent saves cannot take the user past `max`. Null when the user holds `max` already
   * and the name is new; else the row and whether it replaced one.
   */
  async save(user: string, name: string, text: string, at: number, max: number): Promise<{ row: SavedQuery; replaced: boolean } | null> {
    return this.db.transaction().execute(async (trx) => {
      const existing = await trx
        .selectFrom("sql_saved")
        .select("created_at")
        .where("user_name", "=", user)
        .where("name", "=", name)
        .executeTakeFirst();
      if (existing) {
        await trx.updateTable("sql_saved").set({ text, updated_at: at }).where("user_name", "=", user).where("name", "=", name).execute();
        return { row: { name, text, createdAt: existing.created_at, updatedAt: at }, replaced: true };
      }
      const count = await trx
        .selectFrom("sql_saved")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("user_name", "=", user)
        .executeTakeFirstOrThrow();
      if (Number(count.n) >= max) return null;
      await trx.insertInto("sql_saved").values({ user_name: user, name, text, created_at: at, updated_at: at }).execute();
      return { row: { name, text, createdAt: at, updatedAt: at }, replaced: false };
    });
  }

  /** Whether there was one to remove. */
  async removeSaved(user: string, name: string): Promise<boolean> {
    const res = await this.db.deleteFrom("sql_saved").where("user_name", "=", user).where("name", "=", name).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }
}
