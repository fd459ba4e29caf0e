import type { Db } from "../../db/index.ts";

/** Each user's favourites, one row per (property, value), kept in the order they were added (created_at). */
export class ProfileRepo {
  constructor(private readonly db: Db) {}

  async list(user: string): Promise<Array<{ property: string; value: string }>> {
    return this.db
      .selectFrom("user_profile")
      .select(["property", "value"])
      .where("user_name", "=", user)
      .orderBy("created_at")
      .orderBy("property")
      .orderBy("value")
      .execute();
  }

  /**
   * Adds a value unless the user has it already. Counting and adding happen in one
   * transaction, so concurrent additions cannot take a profile past `max`. False when the
   * profile is full.
   */
  async add(user: string, property: string, value: string, max: number, now: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const exists = await trx
        .selectFrom("user_profile")
        .select("value")
        .where("user_name", "=", user)
        .where("property", "=", property)
        .where("value", "=", value)
        .executeTakeFirst();
      if (exists) return true;
      const row = await trx
        .selectFrom("user_profile")
        .select((eb) => [eb.fn.countAll<number>().as("n"), eb.fn.max<number | null>("created_at").as("last")])
        .where("user_name", "=", user)
        .executeTakeFirstOrThrow();
      if (Number(row.n) >= max) return false;
      // The list is ordered by created_at: a value added within the millisecond of the last one
      // still comes after it.
      const at = Math.max(now, Number(row.last ?? 0) + 1);
      await trx.insertInto("user_profile").values({ user_name: user, property, value, created_at: at }).execute();
      return true;
    });
  }

  async remove(user: string, property: string, value: string): Promise<void> {
    await this.db
      .deleteFrom("user_profile")
      .where("user_name", "=", user)
      .where("property", "=", property)
      .where("value", "=", value)
      .execute();
  }
}
