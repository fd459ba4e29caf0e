import { type Kysely, sql } from "kysely";
import { int64, storeKind } from "../dialect.ts";

export const name = "alerts";

/**
 * Alert settings and conditions per cluster, what each notification is (its public id, the
 * condition it holds for), and the outbox of deliveries (src/domains/alerts/outbox.ts).
 *
 * - `alert_settings`: a row only once a setting's state was set; without one, the shipped
 *   default holds (src/domains/alerts/catalogue.ts).
 * - `alert_notifications.fingerprint`: what a raised condition is about (setting, condition,
 *   instance); at most one active (no `ends_at`) notification per fingerprint, held by a
 *   partial unique index, so two evaluations cannot both raise it.
 * - `alert_deliveries`: one row per notification and channel. `version` counts what there is
 *   to send (raised, each re-send, resolved); `sent_version` is the last one the channel
 *   acknowledged with a 2xx. A row with `version > sent_version` is pending, and is sent again
 *   after a restart: nothing raised is lost, and nothing acknowledged is sent again.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const i64 = int64(db);
  await db.schema
    .createTable("alert_settings")
    .addColumn("cluster", "text", (c) => c.notNull())
    .addColumn("alert_id", i64, (c) => c.notNull())
    .addColumn("enabled", i64, (c) => c.notNull())
    .addColumn("updated_by", "text", (c) => c.notNull())
    .addColumn("updated_at", i64, (c) => c.notNull())
    .addPrimaryKeyConstraint("alert_settings_pk", ["cluster", "alert_id"])
    .execute();
  await db.schema
    .createTable("alert_conditions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("cluster", "text", (c) => c.notNull())
    .addColumn("alert_id", i64, (c) => c.notNull())
    .addColumn("expression", "text", (c) => c.notNull())
    .addColumn("updated_by", "text", (c) => c.notNull())
    .addColumn("updated_at", i64, (c) => c.notNull())
    .execute();
  await sql`CREATE INDEX alert_conditions_setting ON alert_conditions(cluster, alert_id)`.execute(db);
  await db.schema.alterTable("alert_notifications").addColumn("uid", "text").execute();
  await db.schema.alterTable("alert_notifications").addColumn("fingerprint", "text").execute();
  // 32 random hex digits for each notification made before: written in each engine's words.
  const randomHex = storeKind(db) === "postgres" ? sql`replace(CAST(gen_random_uuid() AS text), '-', '')` : sql`lower(hex(randomblob(16)))`;
  await sql`UPDATE alert_notifications SET uid = ${randomHex} WHERE uid IS NULL`.execute(db);
  await sql`CREATE UNIQUE INDEX alert_notifications_uid ON alert_notifications(uid)`.execute(db);
  await sql`CREATE UNIQUE INDEX alert_notifications_active ON alert_notifications(fingerprint) WHERE ends_at IS NULL AND fingerprint IS NOT NULL`.execute(
    db,
  );
  await db.schema
    .createTable("alert_deliveries")
    .addColumn("notification_id", i64, (c) => c.notNull())
    .addColumn("channel", "text", (c) => c.notNull())
    .addColumn("version", i64, (c) => c.notNull())
    .addColumn("sent_version", i64, (c) => c.notNull().defaultTo(0))
    .addColumn("attempts", i64, (c) => c.notNull().defaultTo(0))
    .addColumn("next_attempt_at", i64, (c) => c.notNull())
    .addColumn("first_pending_at", i64, (c) => c.notNull())
    .addColumn("last_error", "text")
    .addColumn("sent_at", i64)
    /** The version given up on (too old to send), when one was. */
    .addColumn("given_up_version", i64)
    .addPrimaryKeyConstraint("alert_deliveries_pk", ["notification_id", "channel"])
    .execute();
  await sql`CREATE INDEX alert_deliveries_due ON alert_deliveries(next_attempt_at) WHERE version > sent_version`.execute(db);
}
