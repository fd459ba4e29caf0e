import { type Kysely, sql } from "kysely";
import { autoId, int64 } from "../dialect.ts";

export const name = "topics";

export async function up(db: Kysely<any>): Promise<void> {
  const i64 = int64(db);
  // Key and value types of a topic, per cluster: a topic name is only unique within its cluster.
  await db.schema
    .createTable("topic_metadata")
    .addColumn("cluster", "text", (c) => c.notNull())
    .addColumn("topic", "text", (c) => c.notNull())
    .addColumn("key_type", "text", (c) => c.notNull())
    .addColumn("value_type", "text", (c) => c.notNull())
    .addColumn("key_schema", "text")
    .addColumn("value_schema", "text")
    .addColumn("updated_by", "text", (c) => c.notNull())
    .addColumn("updated_at", i64, (c) => c.notNull())
    .addPrimaryKeyConstraint("topic_metadata_pk", ["cluster", "topic"])
    .execute();
  await db.schema
    .createTable("alert_notifications")
    .addColumn("id", ...autoId(db))
    .addColumn("alert_id", i64, (c) => c.notNull())
    .addColumn("cluster", "text", (c) => c.notNull())
    /** JSON objects of string to string. */
    .addColumn("labels", "text", (c) => c.notNull())
    .addColumn("annotations", "text", (c) => c.notNull())
    .addColumn("starts_at", i64, (c) => c.notNull())
    .addColumn("ends_at", i64)
    .addColumn("generator_url", "text", (c) => c.notNull())
    .execute();
  await sql`CREATE INDEX alert_notifications_starts ON alert_notifications(starts_at)`.execute(db);
}
