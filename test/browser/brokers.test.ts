/**
 * The brokers page in a real browser: the broker with its log dir and the controller badge, its
 * configs filtered by name; an admin sets a dynamic config on the broker and removes it again,
 * and the page shows where the value comes from; other roles get no change offered.
 * log.cleaner.io.buffer.load.factor is a config no other test touches (0.9 by default; 0.91
 * changes nothing that matters to them).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import type { ROLE_USERS } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { compiledLoupe, launchChromium, openAs, seriousViolations, withPage } from "./browser.ts";

const KEY = "log.cleaner.io.buffer.load.factor";

let server: ServerProcess;
let browser: Browser;

beforeAll(async () => {
  server = await startServerProcess({}, { executable: await compiledLoupe() });
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await server
    ?.request("/api/configs/brokers/1", {
      method: "DELETE",
      role: "admin",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([KEY]),
    })
    .catch(() => {});
  await browser?.close();
  await server?.stop();
});

const signedIn = (page: Page, path: string, role: keyof typeof ROLE_USERS) => openAs(page, `${server.url}${path}`, role);
const configRow = (page: Page) =>
  page
    .getByRole("table", { name: "Configs of broker 1" })
    .getByRole("row")
    .filter({ has: page.getByRole("rowheader", { name: KEY, exact: true }) });

describe("the brokers page", () => {
  test("an admin sets a dynamic config on the broker and removes it; the page says where each value comes from", async () => {
    await withPage(browser, "brokers admin", async (page) => {
      await signedIn(page, "/brokers", "admin");
      const broker = page
        .getByRole("table", { name: "Brokers" })
        .getByRole("row")
        .filter({ has: page.getByRole("rowheader", { name: /^1/ }) });
      await broker.waitFor();
      expect(await broker.getByRole("rowheader").innerText()).toMatch(/^1\s*controller$/);
      expect(await broker.locator("td").nth(2).innerText()).toMatch(/\/kafka\/data: .+ in \d+ partitions · .+ free of .+/);

      await page.getByLabel("Filter").fill(KEY);
      await configRow(page).waitFor();
      expect(await configRow(page).locator("td").allInnerTexts()).toEqual(["0.9", "Kafka's default", "yes", "Edit…"]);

      await configRow(page)
        .getByRole("button", { name: `Edit ${KEY}` })
        .click();
      const dialog = page.getByRole("dialog", { name: `Change ${KEY}` });
      await dialog.getByLabel("Value", { exact: true }).fill("0.91");
      await dialog.getByRole("button", { name: "Save" }).click();
      await page.getByRole("status").getByText(`${KEY} is set on broker 1.`).waitFor();
      expect(await configRow(page).locator("td").allInnerTexts()).toEqual(["0.91", "this broker (dynamic)", "yes", "Edit…"]);
      expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: "/tmp/brokers-admin.png", fullPage: false });

      await configRow(page)
        .getByRole("button", { name: `Edit ${KEY}` })
        .click();
      const again = page.getByRole("dialog", { name: `Change ${KEY}` });
      await again.getByLabel(/^Remove the value set on broker 1/).check();
      await again.getByRole("button", { name: "Remove" }).click();
      await page.getByRole("status").getByText(`${KEY} is removed from broker 1.`).waitFor();
      expect(await configRow(page).locator("td").allInnerTexts()).toEqual(["0.9", "Kafka's default", "yes", "Edit…"]);
    });
  }, 90_000);

  test("a nodata user sees the brokers and their configs, with nothing to change; axe-clean in the dark theme", async () => {
    await withPage(
      browser,
      "brokers nodata",
      async (page) => {
        await signedIn(page, "/brokers", "nodata");
        await page.getByRole("table", { name: "Configs of broker 1" }).waitFor();
        expect(await page.getByRole("button", { name: /^Edit / }).count()).toBe(0);
        expect(await page.evaluate("document.documentElement.dataset.theme")).toBe("dark");
        expect(await seriousViolations(page)).toEqual([]);
      },
      { colorScheme: "dark" },
    );
  }, 60_000);
});
