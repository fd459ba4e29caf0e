import type { Kysely } from "kysely";

export const name = "sql-library";

/**
 * Each user's run queries (newest kept, the service bounds how many) and named saved queries.
 * Keyed by user name, like the favourites: users may come from the config file.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("sql_history")
    .addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
    .addColumn("user_name", "text", (c) => c.notNull())
    .addColumn("cluster", "text", (c) => c.notNull())
    .addColumn("text", "text", (c) => c.notNull())
    .addColumn("ran_at", "integer", (c) => c.notNull())
    // Filled in when the run ends; null while it runs (or when its end was not seen).
    .addColumn("rows", "integer")
    .addColumn("stop_reason", "text")
    .execute();
  await db.schema.createIndex("sql_history_user").on("sql_history").columns(["user_name", "id"]).execute();
  await db.schema
    .createTable("sql_saved")
    .addColumn("user_name", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("text", "text", (c) => c.notNull())
    .addColumn("created_at", "integer", (c) => c.notNull())
    .addColumn("updated_at", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("sql_saved_pk", ["user_name", "name"])
    .execute();
}
