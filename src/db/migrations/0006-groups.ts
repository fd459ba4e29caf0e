import type { Kysely } from "kysely";
import { int64 } from "../dialect.ts";

export const name = "groups";

/**
 * Groups made through the API (the config file's groups are not stored). Lists are JSON text:
 * a group is always read and written whole, never queried by its patterns.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const i64 = int64(db);
  await db.schema
    .createTable("groups")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("roles", "text", (c) => c.notNull())
    .addColumn("clusters", "text", (c) => c.notNull())
    .addColumn("topics_allow", "text", (c) => c.notNull())
    .addColumn("topics_deny", "text", (c) => c.notNull())
    .addColumn("created_at", i64, (c) => c.notNull())
    .addColumn("updated_at", i64, (c) => c.notNull())
    .execute();
}
