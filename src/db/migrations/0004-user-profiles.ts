import type { Kysely } from "kysely";
import { int64 } from "../dialect.ts";

export const name = "user-profiles";

/**
 * Each user's favourites (topics, schemas, transformers, or any property a client names),
 * one row per value. Keyed by user name, not tied to the `users` table: users may come from
 * the config file, which the store does not hold.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const i64 = int64(db);
  await db.schema
    .createTable("user_profile")
    .addColumn("user_name", "text", (c) => c.notNull())
    .addColumn("property", "text", (c) => c.notNull())
    .addColumn("value", "text", (c) => c.notNull())
    .addColumn("created_at", i64, (c) => c.notNull())
    .addPrimaryKeyConstraint("user_profile_pk", ["user_name", "property", "value"])
    .execute();
}
