/**
 * Retention of alert notifications: every topic change and every condition raised adds one, with
 * a delivery row per channel, so the `alert-retention` job (hourly) removes those past
 * `alerts.retention.maxAge` and beyond the newest `alerts.retention.maxEntries`, oldest first, as
 * the audit log's housekeeping does. Age counts from a notification's end (its start when it has
 * none: an event). It never removes:
 *
 * - a notification with a delivery still pending (a channel has not acknowledged its latest
 *   version, and it was not given up): the outbox sends it first;
 * - the active notification of a condition that still holds (a fingerprint, no end): the
 *   evaluation would raise it again as a new one.
 *
 * Each removed notification, with its deliveries, is first appended as a JSON line to
 * `notifications-pruned-<UTC date>.jsonl` in the export directory and synced, then removed with
 * its deliveries in one transaction; each pruning is audited (ALERT_NOTIFICATION REMOVE by
 * `loupe`: how many, their time span, the file).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { ExpressionBuilder } from "kysely";
import type { Db } from "../../db/index.ts";
import type { Database } from "../../db/types.ts";
import type { AuditTrail } from "../../http/audit-trail.ts";
import { appendLinesSynced } from "../../util/json-lines.ts";
import { toNotification } from "./notifications.ts";

export interface NotificationRetentionOptions {
  /** Notifications that ended (events: started) longer ago are removed; 0 keeps them whatever their age. */
  maxAgeMs: number;
  /** At most this many are kept, the newest; 0 means no limit. */
  maxEntries: number;
  /** Where each removed notification is appended as a JSON line first; none when absent. */
  exportDir?: string;
  now?: () => number;
}

/** Notifications read, exported and removed per round. */
const BATCH = 1_000;

type Eb = ExpressionBuilder<Database, "alert_notifications">;

/** What may go: neither a condition that still holds nor one with a delivery pending. */
const removable = (eb: Eb) =>
  eb.and([
    eb.or([eb("alert_notifications.fingerprint", "is", null), eb("alert_notifications.ends_at", "is not", null)]),
    eb.not(
      eb.exists(
        eb
          .selectFrom("alert_deliveries as d")
          .select("d.notification_id")
          .whereRef("d.notification_id", "=", "alert_notifications.id")
          .whereRef("d.version", ">", "d.sent_version")
          .where((w) => w.or([w("d.given_up_version", "is", null), w("d.given_up_version", "<", w.ref("d.version"))])),
      ),
    ),
  ]);

export class NotificationRetention {
  readonly #now: () => number;

  constructor(
    private readonly db: Db,
    private readonly audit: Pick<AuditTrail, "record">,
    private readonly opts: NotificationRetentionOptions,
  ) {
    this.#now = opts.now ?? Date.now;
  }

  /** One pruning pass; answers how many notifications went. */
  async prune(): Promise<number> {
    const { maxAgeMs, maxEntries, exportDir } = this.opts;
    const now = this.#now();
    const cutoff = maxAgeMs > 0 ? now - maxAgeMs : null;
    // The newest maxEntries are kept: ids up to the one just below them are beyond the count.
    let beyond = 0;
    if (maxEntries > 0) {
      const first = await this.db
        .selectFrom("alert_notifications")
        .select("id")
        .orderBy("id", "desc")
        .offset(maxEntries)
        .limit(1)
        .executeTakeFirst();
      beyond = first?.id ?? 0;
    }
    if (beyond === 0 && cutoff === null) return 0;
    const file = exportDir ? join(exportDir, `notifications-pruned-${new Date(now).toISOString().slice(0, 10)}.jsonl`) : null;
    if (exportDir) mkdirSync(exportDir, { recursive: true, mode: 0o700 });
    let removed = 0;
    let after = 0;
    /** The earliest and latest start of what went. */
    let from = Number.POSITIVE_INFINITY;
    let to = Number.NEGATIVE_INFINITY;
    for (;;) {
      const batch = await this.db
        .selectFrom("alert_notifications")
        .selectAll()
        .where("id", ">", after)
        .where((eb) =>
          eb.or([eb("id", "<=", beyond), ...(cutoff === null ? [] : [eb(eb.fn.coalesce("ends_at", "starts_at"), "<", cutoff)])]),
        )
        .where(removable)
        .orderBy("id")
        .limit(BATCH)
        .execute();
      if (batch.length === 0) break;
      after = batch.at(-1)!.id;
      const ids = batch.map((n) => n.id);
      if (file) await this.#export(file, batch);
      // Checked again as they go: a resolution queued since the read keeps its notification.
      const gone = await this.db.transaction().execute(async (trx) => {
        const rows = await trx.deleteFrom("alert_notifications").where("id", "in", ids).where(removable).returning("id").execute();
        const goneIds = rows.map((r) => r.id);
        if (goneIds.length > 0) await trx.deleteFrom("alert_deliveries").where("notification_id", "in", goneIds).execute();
        return new Set(goneIds);
      });
      removed += gone.size;
      for (const n of batch)
        if (gone.has(n.id)) {
          from = Math.min(from, n.starts_at);
          to = Math.max(to, n.starts_at);
        }
      if (batch.length < BATCH) break;
    }
    if (removed > 0)
      await this.audit.record({
        type: "ALERT_NOTIFICATION",
        change: "REMOVE",
        user: "loupe",
        content: {
          reason: "retention",
          notifications: removed,
          from: new Date(from).toISOString(),
          to: new Date(to).toISOString(),
          ...(file ? { export: file } : {}),
        },
      });
    return removed;
  }

  /** Appends the notifications, as the API shows them, with their deliveries, and syncs the file. */
  async #export(file: string, batch: Array<Parameters<typeof toNotification>[0]>): Promise<void> {
    const deliveries = await this.db
      .selectFrom("alert_deliveries")
      .select(["notification_id", "channel", "version", "sent_version", "sent_at", "given_up_version"])
      .where(
        "notification_id",
        "in",
        batch.map((n) => n.id),
      )
      .orderBy("notification_id")
      .orderBy("channel")
      .execute();
    const lines = batch.map((n) =>
      JSON.stringify({
        ...toNotification(n),
        deliveries: deliveries
          .filter((d) => d.notification_id === n.id)
          .map((d) => ({
            channel: d.channel,
            state: d.sent_version >= d.version ? "SENT" : "GAVE_UP",
            sentAt: d.sent_at,
          })),
      }),
    );
    appendLinesSynced(file, lines);
  }
}
