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
