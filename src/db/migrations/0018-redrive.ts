import type { Kysely } from "kysely";
import { int64 } from "../dialect.ts";

export const name = "redrive";

/**
 * Redrive jobs (src/domains/redrive): a bounded copy of a topic's records (a dead-letter topic)
 * to a fixed topic or the topic a header names. A row is the job's definition, what it should be
 * doing (`state`), its figures as last reported, and its lease (`instance`, `lease_until`): one
 * instance of those sharing the store runs it. Where it is lives in Kafka (its consumer group's
 * offsets, committed in the same transactions as the records), not here.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const i64 = int64(db);
  await db.schema
    .createTable("redrive_jobs")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("cluster", "text", (c) => c.notNull())
    .addColumn("owner", "text", (c) => c.notNull())
    .addColumn("owner_kind", "text")
    .addColumn("source_topic", "text", (c) => c.notNull())
    .addColumn("ranges", "text", (c) => c.notNull())
    .addColumn("target_topic", "text")
    .addColumn("target_header", "text")
    .addColumn("filter", "text")
    .addColumn("rate", i64, (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("reason", "text")
    .addColumn("counts", "text")
    .addColumn("progress", "text")
    .addColumn("instance", "text")
    .addColumn("lease_until", i64, (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", i64, (c) => c.notNull())
    .addColumn("started_at", i64)
    .addColumn("finished_at", i64)
    .addColumn("updated_at", i64, (c) => c.notNull())
    .execute();
  await db.schema.createIndex("redrive_jobs_cluster").on("redrive_jobs").column("cluster").execute();
}
