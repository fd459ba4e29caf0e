// @no-services
// @postgres
/**
 * 26: the active notifications of a cluster are found by their fingerprint's prefix, taken as
 * text: a cluster named with `_` or `%` (LIKE's wildcards) finds its own and no other's.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { taskFingerprint } from "../../src/domains/alerts/connect-failures.ts";
import { lagFingerprint } from "../../src/domains/alerts/evaluator.ts";
import { NotificationService } from "../../src/domains/alerts/notifications.ts";
import { LogHub } from "../../src/log/logger.ts";
import { openTestStore } from "../helpers/store.ts";

const dir = mkdtempSync(join(tmpdir(), "loupe-alert-fingerprints-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("26: a cluster named with LIKE's wildcards finds its own active fingerprints and no other's", async () => {
  const store = await openTestStore(dir);
  try {
    const notifications = new NotificationService(store.db, new LogHub().logger("alerts"));
    const raise = (cluster: string, fingerprint: string) =>
      notifications.raise({
        alertId: 1000,
        cluster,
        summary: "down",
        category: "Infrastructure",
        instance: "1",
        source: "test",
        fingerprint,
      });
    await raise("east_1", "east_1|1000|1");
    await raise("east%", "east%|1000|2");
    await raise("eastx1", "eastx1|1000|3");
    expect(await notifications.activeFingerprints("east_1|")).toEqual(["east_1|1000|1"]);
    expect(await notifications.activeFingerprints("east%|")).toEqual(["east%|1000|2"]);
    expect(await notifications.activeFingerprints("east\\|")).toEqual([]);
  } finally {
    await store.close();
  }
});

test("26: the lag condition's and the failed task's fingerprints are stored and found active on either store (PostgreSQL refused a NUL in them)", async () => {
  const store = await openTestStore(dir);
  try {
    const notifications = new NotificationService(store.db, new LogHub().logger("alerts"));
    const lag = lagFingerprint("east", "c1", "orders/eu", "payments");
    const task = taskFingerprint("east", "dev", "sink/1", 0);
    for (const [alertId, fingerprint] of [
      [2000, lag],
      [3002, task],
    ] as const) {
      await notifications.raise({
        alertId,
        cluster: "east",
        summary: "held",
        category: "Consumers",
        instance: "x",
        source: "test",
        fingerprint,
      });
    }
    expect(await notifications.activeFingerprints("cond/east/2000/")).toEqual([lag]);
    expect(await notifications.activeFingerprints("cond/east/3002/dev/")).toEqual([task]);
  } finally {
    await store.close();
  }
});
