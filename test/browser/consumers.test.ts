/**
 * Consumer groups in a real browser: the list with lag, a group's offsets and lag per
 * partition, and the offset reset of an empty group through the dialog (write role); a read
 * user is not offered the reset.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import type { KafkaPool } from "../../src/kafka/index.ts";
import type { ROLE_USERS } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { testPool } from "../kafka/helpers.ts";
import { compiledLoupe, createTopic, insert, launchChromium, openAs, seriousViolations, withPage } from "./browser.ts";

const RUN = `ui${Date.now().toString(36)}`;
const TOPIC = `${RUN}-orders`;
const GROUP = `${RUN}-billing`;

let server: ServerProcess;
let browser: Browser;
let pool: KafkaPool;

beforeAll(async () => {
  server = await startServerProcess({}, { executable: await compiledLoupe() });
  await createTopic(server, TOPIC, 2);
  await insert(server, `INSERT INTO \`${TOPIC}\` (_key, n) VALUES ('a', 1), ('b', 2), ('c', 3), ('d', 4), ('e', 5), ('f', 6)`);
  // An empty group (no member) that has read nothing yet: all six records are its lag.
  pool = testPool();
  await pool.default().groups.alterOffsets(GROUP, [
    { topic: TOPIC, partition: 0, offset: 0 },
    { topic: TOPIC, partition: 1, offset: 0 },
  ]);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await pool
    ?.default()
    .groups.delete([GROUP])
    .catch(() => {});
  await server?.request(`/api/topics/${TOPIC}`, { method: "DELETE", role: "admin" }).catch(() => {});
  await pool?.close();
  await browser?.close();
  await server?.stop();
});

const signedIn = (page: Page, path: string, role: keyof typeof ROLE_USERS) => openAs(page, `${server.url}${path}`, role);

const lagCells = (page: Page) =>
  page
    .getByRole("table", { name: "Offsets and lag" })
    .locator("tbody tr")
    .evaluateAll((trs) => trs.map((tr) => Number(tr.querySelectorAll("td")[4]?.textContent)));

describe("consumer groups", () => {
  test("the list shows the group's lag; its page the lag per partition; the reset to latest clears it", async () => {
    await withPage(browser, "group reset", async (page) => {
      await signedIn(page, `/consumers?q=${GROUP}`, "write");
      const row = page.getByRole("table", { name: "Consumer groups" }).getByRole("row", { name: new RegExp(GROUP) });
      await row.waitFor();
      expect(await row.locator("td").nth(4).innerText()).toBe("6");
      expect(await seriousViolations(page)).toEqual([]);

      await page.getByRole("link", { name: GROUP }).click();
      await page.getByRole("heading", { name: `Consumer group ${GROUP}` }).waitFor();
      await page.getByRole("table", { name: "Offsets and lag" }).waitFor();
      const before = await lagCells(page);
      expect(before.reduce((a, b) => a + b, 0)).toBe(6);

      await page.getByRole("button", { name: "Reset offsets…" }).click();
      const dialog = page.getByRole("dialog", { name: `Reset the offsets of ${GROUP}` });
      await dialog.waitFor();
      expect(await seriousViolations(page)).toEqual([]);
      await dialog.getByLabel("the latest offset").check();
      await dialog.getByRole("button", { name: "Reset offsets" }).click();
      await dialog.waitFor({ state: "hidden" });
      // The page reads the group again: no lag left, and the server agrees.
      await page.waitForFunction(
        `[...document.querySelectorAll("table[aria-label='Offsets and lag'] tbody td:nth-child(5)")].every((td) => td.textContent === "0")`,
      );
      const res = await server.request(`/api/consumers/${GROUP}`, { role: "read" });
      expect(((await res.json()) as { lag: number }).lag).toBe(0);
    });
  }, 60_000);

  test("a read user sees the group but is not offered the reset", async () => {
    await withPage(browser, "group read user", async (page) => {
      await signedIn(page, `/consumers/${GROUP}`, "read");
      await page.getByRole("table", { name: "Offsets and lag" }).waitFor();
      expect(await page.getByRole("button", { name: /Reset offsets/ }).count()).toBe(0);
    });
  }, 60_000);
});
