/**
 * The SQL workbench in a real browser: a query from the URL runs with Ctrl+Enter and its rows
 * stream into the table with the value's fields as columns and the right values; a query the
 * server refuses is said on the page; the editor runs under the Content-Security-Policy.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import type { ROLE_USERS } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { eventually } from "../kafka/helpers.ts";
import { compiledLoupe, createTopic, insert, launchChromium, openAs, seriousViolations, withPage } from "./browser.ts";

const TOPIC = `ui${Date.now().toString(36)}-trips`;
const RECORDS = 300;
/** 8 MB of records: more than the server's stream buffer and the sockets hold, so a slow reader holds the query. */
const BIG = `${TOPIC}-big`;

let server: ServerProcess;
let browser: Browser;

beforeAll(async () => {
  server = await startServerProcess({}, { executable: await compiledLoupe() });
  await createTopic(server, TOPIC, 1);
  const rows = Array.from({ length: RECORDS }, (_, i) => `('k${i}', ${i}, 'city-${i % 7}')`).join(", ");
  await insert(server, `INSERT INTO \`${TOPIC}\` (_key, n, city) VALUES ${rows}`);
  await createTopic(server, BIG, 1);
  const pad = "p".repeat(1000);
  for (let batch = 0; batch < 8; batch++) {
    const values = Array.from({ length: 1000 }, (_, i) => `('k${batch * 1000 + i}', '${pad}')`).join(", ");
    await insert(server, `INSERT INTO \`${BIG}\` (_key, pad) VALUES ${values}`);
  }
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  for (const t of [TOPIC, BIG]) await server?.request(`/api/topics/${t}`, { method: "DELETE", role: "admin" }).catch(() => {});
  await browser?.close();
  await server?.stop();
});

const signedIn = (page: Page, path: string, role: keyof typeof ROLE_USERS) => openAs(page, `${server.url}${path}`, role);

/** The cells of the rendered row whose offset column reads `offset`. */
async function rowAt(page: Page, offset: number): Promise<Record<string, string>> {
  return page.evaluate(`(() => {
    const table = document.querySelector("table[aria-label='Results']");
    const heads = [...table.querySelectorAll("thead th")].map((th) => th.textContent);
    for (const tr of table.querySelectorAll("tbody tr")) {
      const cells = [...tr.querySelectorAll("td")].map((td) => td.textContent);
      if (cells[heads.indexOf("offset")] === "${offset}") return Object.fromEntries(heads.map((h, i) => [h, cells[i]]));
    }
    return null;
  })()`);
}

describe("the SQL workbench", () => {
  test("a query from the URL runs with Ctrl+Enter; its rows stream in with the value's fields as columns", async () => {
    await withPage(browser, "sql run", async (page) => {
      const csp: string[] = [];
      page.on("console", (m) => {
        if (/Content Security Policy/i.test(m.text())) csp.push(m.text());
      });
      const sql = `SELECT * FROM \`${TOPIC}\` WHERE n >= 100`;
      await signedIn(page, `/sql?q=${encodeURIComponent(sql)}`, "read");
      const editor = page.getByRole("textbox", { name: "SQL query" });
      await editor.waitFor();
      expect(await editor.innerText()).toBe(sql);
      await editor.click();
      await page.keyboard.press("Control+Enter");
      await page
        .getByTestId("run-status")
        .getByText(`${RECORDS - 100} rows (END)`)
        .waitFor();
      const heads = await page.getByRole("table", { name: "Results" }).locator("thead th").allInnerTexts();
      expect(heads).toEqual(["key", "partition", "offset", "timestamp", "value.n", "value.city"]);
      expect(await rowAt(page, 100)).toMatchObject({ key: "k100", "value.n": "100", "value.city": "city-2" });
      // Virtualized: not every row is in the page.
      expect(await page.locator("table[aria-label='Results'] tbody tr").count()).toBeLessThan(RECORDS - 100);
      // The whole record, from its offset (a button: the keyboard reaches it too).
      await page.getByRole("button", { name: "Show the record at offset 100" }).click();
      const record = page.getByRole("region", { name: "Selected record" });
      expect(JSON.parse(await record.locator("pre").innerText())).toMatchObject({ key: "k100", value: { n: 100, city: "city-2" } });
      // CodeMirror's style elements carry the page's nonce: no violation of the policy.
      expect(csp).toEqual([]);
      expect(await seriousViolations(page)).toEqual([]);
    });
  }, 60_000);

  test("Stop ends the query on the server: it is gone from /api/sql/queries", async () => {
    await withPage(browser, "sql stop", async (page, context) => {
      // A slow network: the browser reads the 8 MB answer at 100 kB/s, so the query runs on.
      const cdp = await context.newCDPSession(page);
      await signedIn(page, `/sql?q=${encodeURIComponent(`SELECT * FROM \`${BIG}\``)}`, "read");
      await page.getByRole("textbox", { name: "SQL query" }).waitFor();
      await cdp.send("Network.enable");
      await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: 0, downloadThroughput: 100_000, uploadThroughput: -1 });
      const running = async () => (await (await server.request("/api/sql/queries", { role: "read" })).json()) as Array<{ sql: string }>;
      await page.getByRole("button", { name: "Run" }).click();
      await page
        .getByTestId("run-status")
        .getByText(/^Running… [1-9]/)
        .waitFor();
      expect((await running()).map((q) => q.sql)).toEqual([`SELECT * FROM \`${BIG}\``]);
      await page.getByRole("button", { name: "Stop" }).click();
      await page
        .getByTestId("run-status")
        .getByText(/^Stopped after /)
        .waitFor();
      expect(await eventually(async () => (await running()).length === 0, 10_000)).toBe(true);
    });
  }, 60_000);

  test("a query the server refuses is said on the page", async () => {
    await withPage(browser, "sql error", async (page) => {
      await signedIn(page, `/sql?q=${encodeURIComponent("SELECT * FROM `no-such-topic-here`")}`, "read");
      await page.getByRole("button", { name: "Run" }).click();
      const alert = page.getByRole("alert");
      await alert.waitFor();
      expect(await alert.innerText()).toContain("no-such-topic-here");
    });
  }, 60_000);
});
