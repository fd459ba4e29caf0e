/**
 * The audit page in a real browser: an entry made while the page is open appears at the top
 * by the live tail (no reload); the type filter goes in the URL and narrows the list; the
 * page is offered to admins only.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { ROLE_USERS } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { compiledLoupe, launchChromium, openAs, seriousViolations, withPage } from "./browser.ts";

const TOPIC = `ui${Date.now().toString(36)}-audited`;

let server: ServerProcess;
let browser: Browser;

beforeAll(async () => {
  server = await startServerProcess({}, { executable: await compiledLoupe() });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await server?.request(`/api/topics/${TOPIC}`, { method: "DELETE", role: "admin" }).catch(() => {});
  await browser?.close();
  await server?.stop();
});

const signedIn = (page: Page, path: string, role: keyof typeof ROLE_USERS) => openAs(page, `${server.url}${path}`, role);

describe("the audit page", () => {
  test("a change made while the page is open appears at the top, live; the type filter narrows it", async () => {
    await withPage(browser, "audit live", async (page) => {
      await signedIn(page, "/audit", "admin");
      await page.getByTestId("live").getByText("Live", { exact: true }).waitFor();

      const created = await server.request("/api/topics", {
        method: "POST",
        role: "write",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ topicName: TOPIC, partitions: 1, replication: 1 }),
      });
      expect(created.status).toBe(201);
      const first = page.getByRole("table", { name: "Audit entries" }).locator("tbody tr").first();
      await first.getByText(TOPIC).waitFor();
      const cells = await first.locator("td").allInnerTexts();
      expect(cells.slice(1, 4)).toEqual([ROLE_USERS.write.name, "TOPIC", "ADD"]);
      expect(await seriousViolations(page)).toEqual([]);

      await page.getByLabel("Type").selectOption("TOPIC_DATA");
      await page.waitForURL(/type=TOPIC_DATA/);
      // This server has written no record: nothing of that type, the topic's entry gone.
      await page.getByText("No entry matches.", { exact: false }).waitFor();
      expect(await page.getByRole("cell", { name: new RegExp(TOPIC) }).count()).toBe(0);
      await page.getByLabel("Type").selectOption("TOPIC");
      await page.getByRole("cell", { name: new RegExp(TOPIC) }).waitFor();
    });
  }, 60_000);

  test("axe-core: no serious or critical violation on the audit page with entries, in the dark theme", async () => {
    await withPage(
      browser,
      "audit axe dark",
      async (page) => {
        await signedIn(page, "/audit", "admin");
        await page.getByRole("table", { name: "Audit entries" }).locator("tbody tr").first().waitFor();
        expect(await page.evaluate("document.documentElement.dataset.theme")).toBe("dark");
        expect(await seriousViolations(page)).toEqual([]);
      },
      { colorScheme: "dark" },
    );
  }, 60_000);

  test("only admins are offered the audit page", async () => {
    await withPage(browser, "audit read user", async (page) => {
      await signedIn(page, "/", "read");
      await page.getByRole("heading", { name: "Overview" }).waitFor();
      const nav = page.getByRole("navigation", { name: "Main" });
      await nav.getByRole("link", { name: "Topics" }).waitFor();
      expect(await nav.getByRole("link", { name: "Audit" }).count()).toBe(0);
    });
  }, 60_000);
});
