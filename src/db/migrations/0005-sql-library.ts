import type { Kysely } from "kysely";
import { autoId, int64 } from "../dialect.ts";

export const name = "sql-library";

/**
 * Each user's run queries (newest kept, the service bounds how many) and named saved queries.
 * Keyed by user name, like the favourites: users may come from the config file.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const i64 = int64(db);
  await db.schema
    .createTable("sql_history")
    .addColumn("id", ...autoId(db))
    .addColumn("user_name", "text", (c) => c.notNull())
    .addColumn("cluster", "text", (c) => c.notNull())
    .addColumn("text", "text", (c) => c.notNull())
    .addColumn("ran_at", i64, (c) => c.notNull())
    // Filled in when the run ends; null while it runs (or when its end was not seen).
    .addColumn("rows", i64)
    .addColumn("stop_reason", "text")
    .execute();
  await db.schema.createIndex("sql_history_user").on("sql_history").columns(["user_name", "id"]).execute();
  await db.schema
    .createTable("sql_saved")
    .addColumn("user_name", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("text", "text", (c) => c.notNull())
    .addColumn("created_at", i64, (c) => c.notNull())
    .addColumn("updated_at", i64, (c) => c.notNull())
    .addPrimaryKeyConstraint("sql_saved_pk", ["user_name", "name"])
    .execute();
}
