import { type Kysely, SqliteAdapter, sql } from "kysely";
import { autoId, int64 } from "../dialect.ts";

export const name = "lag-history";

/**
 * Consumer lag history that outlives a restart (src/lag/history-store.ts). A series is one
 * (cluster, group, topic); topic '' is the group's total, kept in the hourly tier only (the raw
 * tier's total is the sum of its topics at one sample time). Names live once, in `lag_series`:
 * the point rows carry a small integer instead, which keeps them at a few dozen bytes.
 *
 * - `lag_points`: one row per series and sample (epoch ms), kept a day;
 * - `lag_hours`: one row per series and hour (its start), the minimum and maximum of the lag in
 *   records and the maximum of its age, and how many samples fell in it; kept 30 days.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const i64 = int64(db);
  const clustered = db.getExecutor().adapter instanceof SqliteAdapter ? sql`WITHOUT ROWID` : sql``;
  await db.schema
    .createTable("lag_series")
    .addColumn("id", ...autoId(db))
    .addColumn("cluster", "text", (c) => c.notNull())
    .addColumn("group_name", "text", (c) => c.notNull())
    .addColumn("topic", "text", (c) => c.notNull())
    .addUniqueConstraint("lag_series_key", ["cluster", "group_name", "topic"])
    .execute();
  await db.schema
    .createTable("lag_points")
    .addColumn("series_id", i64, (c) => c.notNull())
    .addColumn("t", "bigint", (c) => c.notNull())
    .addColumn("lag", "bigint", (c) => c.notNull())
    .addColumn("lag_ms", "bigint")
    .addPrimaryKeyConstraint("lag_points_key", ["series_id", "t"])
    .modifyEnd(clustered)
    .execute();
  await db.schema
    .createTable("lag_hours")
    .addColumn("series_id", i64, (c) => c.notNull())
    .addColumn("t", "bigint", (c) => c.notNull())
    .addColumn("lag_min", "bigint", (c) => c.notNull())
    .addColumn("lag_max", "bigint", (c) => c.notNull())
    .addColumn("lag_ms_max", "bigint")
    .addColumn("samples", i64, (c) => c.notNull())
    .addPrimaryKeyConstraint("lag_hours_key", ["series_id", "t"])
    .modifyEnd(clustered)
    .execute();
}
