// @no-services
// @postgres
/** The outbox removes deliveries settled more than 30 days ago, and keeps pending ones (injected clock). */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AlertOutbox, SETTLED_KEPT_MS } from "../../src/domains/alerts/outbox.ts";
import { LogHub } from "../../src/log/logger.ts";
import { openTestStore } from "../helpers/store.ts";

const dir = mkdtempSync(join(tmpdir(), "loupe-outbox-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("settled deliveries older than 30 days go; recent and pending ones stay", async () => {
  const store = await openTestStore(dir);
  const now = Date.parse("2030-06-01T00:00:00Z");
  const outbox = new AlertOutbox(store.db, new LogHub().logger("alerts"), {
    alertmanagers: [],
    webhooks: [],
    resendIntervalMs: 60_000,
    timeoutMs: 1_000,
    initialBackoffMs: 10,
    maxBackoffMs: 100,
    giveUpAfterMs: 1_000,
    now: () => now,
  });
  const old = now - SETTLED_KEPT_MS - 1;
  const { id } = await store.db
    .insertInto("alert_notifications")
    .values({
      alert_id: 4000,
      cluster: "c",
      labels: "{}",
      annotations: "{}",
      starts_at: old,
      ends_at: null,
      generator_url: "u",
      uid: "n1",
      fingerprint: null,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  const row = (channel: string, v: Record<string, number | null>) => ({
    notification_id: id,
    channel,
    version: 1,
    sent_version: 0,
    attempts: 0,
    next_attempt_at: old,
    first_pending_at: old,
    last_error: null,
    sent_at: null,
    given_up_version: null,
    ...v,
  });
  await store.db
    .insertInto("alert_deliveries")
    .values([
      row("webhook:sent-long-ago", { sent_version: 1, sent_at: old }),
      row("webhook:sent-lately", { sent_version: 1, sent_at: now - 1_000 }),
      row("webhook:given-up-long-ago", { given_up_version: 1 }),
      row("webhook:pending", {}),
    ])
    .execute();
  expect(await outbox.prune()).toBe(2);
  const left = await store.db.selectFrom("alert_deliveries").select("channel").orderBy("channel").execute();
  expect(left.map((r) => r.channel)).toEqual(["webhook:pending", "webhook:sent-lately"]);
  await store.close();
});
