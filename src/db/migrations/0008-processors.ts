import type { Kysely } from "kysely";
import { int64 } from "../dialect.ts";

export const name = "processors";

/**
 * Stream processors: what each should be doing (its desired state persists, so a restart brings
 * every running processor back), and one row per runner slot, leased by the Loupe instance that
 * runs it. Instances sharing the store split the runners through the leases, and each reports
 * its runners' state and figures in their rows, so any instance answers for all of them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const i64 = int64(db);
  await db.schema
    .createTable("processors")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("cluster", "text", (c) => c.notNull())
    .addColumn("sql", "text", (c) => c.notNull())
    .addColumn("runners", i64, (c) => c.notNull())
    // RUNNING or PAUSED: what the user asked for last.
    .addColumn("desired", "text", (c) => c.notNull())
    .addColumn("owner", "text", (c) => c.notNull())
    .addColumn("source_topic", "text", (c) => c.notNull())
    .addColumn("target_topic", "text", (c) => c.notNull())
    .addColumn("cluster_name", "text")
    .addColumn("namespace", "text")
    .addColumn("pipeline", "text")
    .addColumn("created_at", i64, (c) => c.notNull())
    .addColumn("start_ts", i64)
    .addColumn("stop_ts", i64)
    .addColumn("last_action", "text")
    .addColumn("updated_at", i64, (c) => c.notNull())
    .execute();
  await db.schema.createIndex("processors_name").on("processors").columns(["cluster", "name"]).unique().execute();
  await db.schema
    .createTable("processor_runners")
    .addColumn("processor_id", "text", (c) => c.notNull())
    .addColumn("runner", i64, (c) => c.notNull())
    // The instance holding the lease, and until when (epoch ms); renewed while it runs.
    .addColumn("instance", "text")
    .addColumn("lease_until", i64, (c) => c.notNull().defaultTo(0))
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("error", "text")
    // JSON figures: records in and out, failed, late, rates.
    .addColumn("figures", "text")
    .addColumn("updated_at", i64, (c) => c.notNull())
    .addPrimaryKeyConstraint("processor_runners_pk", ["processor_id", "runner"])
    .execute();
}
