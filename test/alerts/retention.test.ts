// @no-services
// @postgres
/**
 * Retention of alert notifications (issue 27), on an injected clock: past the age (counted from a
 * notification's end, an event's start) or beyond the count, oldest first, each exported as a JSON
 * line before it goes with its deliveries, the pruning audited; never one with a delivery still
 * pending, nor the active notification of a condition that holds.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NotificationRetention } from "../../src/domains/alerts/retention.ts";
import { AuditService } from "../../src/domains/audit/service.ts";
import { LogHub } from "../../src/log/logger.ts";
import { openTestStore } from "../helpers/store.ts";

const dir = mkdtempSync(join(tmpdir(), "loupe-alert-retention-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DAY = 86_400_000;
const NOW = Date.parse("2030-06-01T00:00:00Z");

/** A delivery's state: sent, given up, or pending (the raise, or a resolution not yet sent). */
type Delivery = "sent" | "gave-up" | "pending" | "resolution-pending";

interface Row {
  uid: string;
  /** Days before NOW. */
  started: number;
  ended?: number;
  /** A condition's (else an event). */
  condition?: boolean;
  deliveries: Delivery[];
}

const ROWS: Row[] = [
  { uid: "old-event-sent", started: 40, deliveries: ["sent", "sent"] },
  { uid: "old-event-pending", started: 40, deliveries: ["sent", "pending"] },
  { uid: "old-event-gave-up", started: 40, deliveries: ["gave-up"] },
  { uid: "old-event-no-channel", started: 40, deliveries: [] },
  { uid: "old-condition-holding", started: 40, condition: true, deliveries: ["sent"] },
  { uid: "condition-resolved-long-ago", started: 50, ended: 35, condition: true, deliveries: ["sent"] },
  { uid: "condition-resolved-lately", started: 50, ended: 1, condition: true, deliveries: ["sent"] },
  { uid: "old-condition-resolution-unsent", started: 50, ended: 35, condition: true, deliveries: ["resolution-pending"] },
  { uid: "recent-event", started: 1, deliveries: ["sent"] },
];

test("27: notifications past the age or beyond the count go, exported and audited; none still to deliver, no condition that holds", async () => {
  const store = await openTestStore(join(dir, "data"));
  const db = store.db;
  for (const r of ROWS) {
    const { id } = await db
      .insertInto("alert_notifications")
      .values({
        alert_id: r.condition ? 1001 : 4000,
        cluster: "local",
        labels: JSON.stringify({ instance: r.uid }),
        annotations: "{}",
        starts_at: NOW - r.started * DAY,
        ends_at: r.ended === undefined ? null : NOW - r.ended * DAY,
        generator_url: `http://loupe/alerts?id=${r.uid}`,
        uid: r.uid,
        fingerprint: r.condition ? `cond/${r.uid}` : null,
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    const at = NOW - r.started * DAY;
    for (const [i, d] of r.deliveries.entries())
      await db
        .insertInto("alert_deliveries")
        .values({
          notification_id: id,
          channel: `webhook:w${i}`,
          version: d === "resolution-pending" ? 2 : 1,
          sent_version: d === "sent" || d === "resolution-pending" ? 1 : 0,
          next_attempt_at: at,
          first_pending_at: at,
          sent_at: d === "sent" || d === "resolution-pending" ? at : null,
          given_up_version: d === "gave-up" ? 1 : null,
        })
        .execute();
  }
  const audit = new AuditService(db, new LogHub().logger("audit"), () => NOW);
  const exportDir = join(dir, "pruned");
  const left = async () => (await db.selectFrom("alert_notifications").select("uid").orderBy("id").execute()).map((n) => n.uid);
  const deliveriesOf = async () =>
    (await db.selectFrom("alert_deliveries").select("notification_id").distinct().execute()).map((d) => d.notification_id).length;

  // The age: 30 days, from the end of what ended.
  const byAge = new NotificationRetention(db, audit, { maxAgeMs: 30 * DAY, maxEntries: 0, exportDir, now: () => NOW });
  expect(await byAge.prune()).toBe(4);
  expect(await left()).toEqual([
    "old-event-pending",
    "old-condition-holding",
    "condition-resolved-lately",
    "old-condition-resolution-unsent",
    "recent-event",
  ]);
  // Their deliveries went with them: the 5 left have theirs.
  expect(await deliveriesOf()).toBe(5);
  const file = join(exportDir, "notifications-pruned-2030-06-01.jsonl");
  expect(statSync(file).mode & 0o777).toBe(0o600);
  const exported = readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  expect(exported.map((n) => n.id)).toEqual(["old-event-sent", "old-event-gave-up", "old-event-no-channel", "condition-resolved-long-ago"]);
  expect(exported[0]).toMatchObject({
    alertId: 4000,
    labels: { instance: "old-event-sent" },
    startsAt: new Date(NOW - 40 * DAY).toISOString().replace("Z", "+00:00"),
    endsAt: null,
    deliveries: [
      { channel: "webhook:w0", state: "SENT", sentAt: NOW - 40 * DAY },
      { channel: "webhook:w1", state: "SENT", sentAt: NOW - 40 * DAY },
    ],
  });
  expect(exported[1].deliveries).toEqual([{ channel: "webhook:w0", state: "GAVE_UP", sentAt: null }]);
  const [entry] = await audit.list({ type: "ALERT_NOTIFICATION", limit: 10 });
  expect(entry).toMatchObject({
    type: "ALERT_NOTIFICATION",
    change: "REMOVE",
    userId: "loupe",
    content: {
      reason: "retention",
      notifications: "4",
      from: new Date(NOW - 50 * DAY).toISOString(),
      to: new Date(NOW - 40 * DAY).toISOString(),
      export: file,
    },
  });

  // The count: the newest 2 stay; of the older ones only what may go goes.
  const byCount = new NotificationRetention(db, audit, { maxAgeMs: 0, maxEntries: 2, exportDir, now: () => NOW });
  expect(await byCount.prune()).toBe(1);
  expect(await left()).toEqual(["old-event-pending", "old-condition-holding", "old-condition-resolution-unsent", "recent-event"]);
  // Nothing more to do: no second entry, nothing exported again.
  expect(await byCount.prune()).toBe(0);
  expect(readFileSync(file, "utf8").trim().split("\n").length).toBe(5);
  await store.close();
});
