import type { Kysely } from "kysely";
import { autoId, int64 } from "../dialect.ts";

export const name = "instance-events";

/**
 * What one instance of those sharing a PostgreSQL store tells the others (src/db/instance-events.ts):
 * an audit entry or an alert notification for their live streams. Rows live minutes; SQLite
 * stores have the table and never write it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const i64 = int64(db);
  const [idType, id] = autoId(db);
  await db.schema
    .createTable("instance_events")
    .addColumn("id", idType, id)
    .addColumn("at", i64, (c) => c.notNull())
    .addColumn("instance", "text", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("body", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("instance_events_at").on("instance_events").column("at").execute();
}
