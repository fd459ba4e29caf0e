/**
 * The SQL workbench in a real browser: a query from the URL runs with Ctrl+Enter and its rows
 * stream into the table with the value's fields as columns and the right values; a query the
 * server refuses is said on the page; the editor runs under the Content-Security-Policy.
 * Completion offers topics and sampled fields, validation underlines the error where it is as
 * you type, a JSON cell opens as a tree, exports are the rows kept, the row cap is a setting.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFile } from "node:fs/promises";
import type { Browser, Download, Page } from "playwright-core";
import type { ROLE_USERS } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { eventually } from "../kafka/helpers.ts";
import { compiledLoupe, createTopic, insert, launchChromium, openAs, seriousViolations, withPage } from "./browser.ts";

const TOPIC = `ui${Date.now().toString(36)}-trips`;
const RECORDS = 300;
/** 8 MB of records: more than the server's stream buffer and the sockets hold, so a slow reader holds the query. */
const BIG = `${TOPIC}-big`;
/** Values with an object inside, and text a CSV must quote. */
const NESTED = `${TOPIC}-nested`;

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
  await createTopic(server, NESTED, 1);
  await insert(
    server,
    `INSERT INTO \`${NESTED}\` (_key, n, name, geo.lat, geo.lon) VALUES ('a', 1, 'Smith, "J"', 1.5, 2), ('b', 2, 'plain', 3.25, 4)`,
  );
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  for (const t of [TOPIC, BIG, NESTED]) await server?.request(`/api/topics/${t}`, { method: "DELETE", role: "admin" }).catch(() => {});
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
      // The figures bar is there while it runs (the server's statistics queue behind the rows a slow reader has not read).
      await page.getByTestId("run-stats").getByText("Elapsed").waitFor();
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

  test("completion offers a topic name after FROM, then a field sampled from that topic", async () => {
    await withPage(browser, "sql completion", async (page) => {
      await signedIn(page, "/sql", "read");
      const editor = page.getByRole("textbox", { name: "SQL query" });
      await editor.waitFor();
      await editor.click();
      await page.keyboard.press("Control+End");
      await page.keyboard.type(`\`${TOPIC.slice(0, -2)}`);
      // The quoted name (it has a hyphen), offered among the topics.
      await page.getByRole("option", { name: new RegExp(`^\`${TOPIC}\`\\s*topic$`) }).click();
      expect(await editor.innerText()).toBe(`SELECT * FROM \`${TOPIC}\``);
      await page.keyboard.type(" WHERE ci");
      // `city` is no keyword: it comes from the topic's records.
      await page.getByRole("option", { name: /^city\s*field$/ }).click();
      expect(await editor.innerText()).toBe(`SELECT * FROM \`${TOPIC}\` WHERE city`);
      await page.keyboard.type(" = 'city-1' AND LO");
      await page.getByRole("option", { name: /^LOWERCASE\s*function$/ }).waitFor();
      // Nested fields after a dot, under `_value.` too; metadata fields after `_meta.`.
      await page.keyboard.press("Escape");
      await page.keyboard.press("Control+a");
      await page.keyboard.type(`SELECT _meta.`);
      await page.getByRole("option", { name: /^partition\s*metadata$/ }).waitFor();
      await page.keyboard.type(`offset FROM \`${NESTED}\` WHERE _value.geo.l`);
      await page.getByRole("option", { name: /^lat\s*field$/ }).waitFor();
      await page.getByRole("option", { name: /^lon\s*field$/ }).waitFor();
    });
  }, 60_000);

  test("a validation error is underlined at its line and column as you type, its message on hover and under the editor", async () => {
    await withPage(browser, "sql validation", async (page) => {
      await signedIn(page, `/sql?q=${encodeURIComponent(`SELECT * FROM \`${TOPIC}\``)}`, "read");
      const editor = page.getByRole("textbox", { name: "SQL query" });
      const status = page.getByTestId("validation");
      await status.getByText("The query is valid.").waitFor();
      await editor.click();
      await page.keyboard.press("Control+End");
      await page.keyboard.press("Enter");
      await page.keyboard.type("LIIT 5");
      // The text validated is the text once typing rests: a slow machine may show a half-typed word's error first.
      await status.getByText("Unexpected 'LIIT' at line 2, column 1. Expected one of: LIMIT, WHERE, ';', end of input.").waitFor();
      const mark = page.locator(".cm-lintRange-error");
      const line = page.locator(".cm-line").nth(1);
      // Line 2, column 1: the mark covers the word the server names, and nothing else.
      await line.locator(".cm-lintRange-error", { hasText: /^LIIT$/ }).waitFor();
      expect(await mark.count()).toBe(1);
      expect(await line.evaluate((el) => el.firstElementChild?.classList.contains("cm-lintRange-error") ?? false)).toBe(true);
      expect(await status.getAttribute("role")).toBe("status");
      await mark.hover();
      expect(await page.locator(".cm-tooltip-lint").innerText()).toContain("Unexpected 'LIIT' at line 2, column 1.");
      // Put right: the mark goes, the line says so.
      await page.keyboard.press("Control+End");
      await page.keyboard.press("Home");
      await page.keyboard.press("ArrowRight");
      await page.keyboard.press("ArrowRight");
      await page.keyboard.type("M");
      await status.getByText("The query is valid.").waitFor();
      await mark.waitFor({ state: "detached" });
      // An unknown topic: the server checks names against the cluster; the mark is the name.
      await page.keyboard.press("Control+a");
      await page.keyboard.type("SELECT * FROM nosuchtopic_here");
      await status.getByText("'nosuchtopic_here'").waitFor();
      await page.locator(".cm-lintRange-error", { hasText: /^nosuchtopic_here$/ }).waitFor();
    });
  }, 60_000);

  for (const colorScheme of ["light", "dark"] as const)
    test(`JSON cells open as a tree; exports are the rows kept, as JSON lines and CSV; axe finds nothing serious (${colorScheme})`, async () => {
      await withPage(
        browser,
        `sql json export ${colorScheme}`,
        async (page) => {
          const csp: string[] = [];
          page.on("console", (m) => {
            if (/Content Security Policy/i.test(m.text())) csp.push(m.text());
          });
          await signedIn(page, `/sql?q=${encodeURIComponent(`SELECT * FROM \`${NESTED}\``)}`, "read");
          await page.getByRole("button", { name: "Run" }).click();
          await page.getByTestId("run-status").getByText("2 rows (END)").waitFor();
          const heads = await page.getByRole("table", { name: "Results" }).locator("thead th").allInnerTexts();
          expect(heads).toEqual(["key", "partition", "offset", "timestamp", "value.n", "value.name", "value.geo"]);
          // The final figures of the run.
          const stats = page.getByTestId("run-stats");
          expect(await stats.innerText()).toMatch(/Rows\s*2\b/);
          expect(await stats.innerText()).toMatch(/Read\s*2\b/);

          // The object cell opens in the record panel at that field, from the keyboard too.
          await page.getByRole("button", { name: "Expand value.geo of the record at offset 0" }).press("Enter");
          const record = page.getByRole("region", { name: "Selected record" });
          const tree = record.getByRole("list", { name: "The value as a tree" });
          await tree.getByText("lat: 1.5").waitFor();
          expect(await tree.innerText()).toContain("lon: 2");
          expect(await page.evaluate("document.activeElement?.textContent")).toBe("geo {2}");
          await page.keyboard.press("Enter");
          await tree.getByText("lat: 1.5").waitFor({ state: "detached" });
          await page.keyboard.press("Enter");
          await tree.getByText("lat: 1.5").waitFor();
          expect(await seriousViolations(page)).toEqual([]);

          const save = async (name: string): Promise<{ file: string; download: Download }> => {
            const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name }).click()]);
            return { file: await readFile((await download.path())!, "utf8"), download };
          };
          const jsonl = await save("Export JSON lines");
          expect(jsonl.download.suggestedFilename()).toMatch(new RegExp(`^${NESTED}-\\d{8}-\\d{6}\\.jsonl$`));
          const lines = jsonl.file
            .trimEnd()
            .split("\n")
            .map((l) => JSON.parse(l));
          expect(lines).toMatchObject([
            { topic: NESTED, partition: 0, offset: 0, key: "a", value: { n: 1, name: 'Smith, "J"', geo: { lat: 1.5, lon: 2 } } },
            { topic: NESTED, partition: 0, offset: 1, key: "b", value: { n: 2, name: "plain", geo: { lat: 3.25, lon: 4 } } },
          ]);
          expect(jsonl.file.endsWith("\n")).toBe(true);
          expect(await page.getByTestId("export-status").innerText()).toBe("Exported 2 rows as JSON lines.");

          const csv = await save("Export CSV");
          expect(csv.download.suggestedFilename()).toMatch(/\.csv$/);
          const iso = (i: number) => new Date(lines[i].timestamp).toISOString();
          expect(csv.file).toBe(
            [
              "key,partition,offset,timestamp,value.n,value.name,value.geo",
              `a,0,0,${iso(0)},1,"Smith, ""J""","{""lat"":1.5,""lon"":2}"`,
              `b,0,1,${iso(1)},2,plain,"{""lat"":3.25,""lon"":4}"`,
              "",
            ].join("\r\n"),
          );
          expect(await page.getByTestId("export-status").innerText()).toBe("Exported 2 rows as CSV.");
          // Downloads from blob: URLs need nothing of the Content-Security-Policy.
          expect(csp).toEqual([]);
        },
        { colorScheme, acceptDownloads: true },
      );
    }, 60_000);

  test("the row cap is a setting kept in the browser: rows beyond it are counted, said, and left out of exports", async () => {
    await withPage(
      browser,
      "sql row cap",
      async (page) => {
        await signedIn(page, `/sql?q=${encodeURIComponent(`SELECT * FROM \`${TOPIC}\``)}`, "read");
        const cap = page.getByRole("spinbutton", { name: "Rows kept" });
        expect(await cap.inputValue()).toBe("100000");
        await cap.fill("100");
        await page.reload();
        await cap.waitFor();
        expect(await cap.inputValue()).toBe("100");
        await page.getByRole("button", { name: "Run" }).click();
        await page.getByTestId("run-status").getByText("100 rows (END)").waitFor();
        expect(await page.getByRole("note").innerText()).toContain("200 more rows were counted, not kept: the table holds the first 100");
        expect(await page.getByTestId("run-stats").innerText()).toMatch(/Rows\s*300 \(100 kept\)/);
        const [download] = await Promise.all([
          page.waitForEvent("download"),
          page.getByRole("button", { name: "Export JSON lines" }).click(),
        ]);
        const lines = (await readFile((await download.path())!, "utf8")).trimEnd().split("\n");
        expect(lines.length).toBe(100);
        expect(JSON.parse(lines[99]!)).toMatchObject({ offset: 99, key: "k99" });
        expect(await page.getByTestId("export-status").innerText()).toBe(
          "Exported 100 rows as JSON lines. 200 more rows beyond the cap of 100 were not kept, and are not in the file.",
        );
        // Out of bounds: said beside the field, the setting unchanged.
        await cap.fill("5");
        expect(await cap.getAttribute("aria-invalid")).toBe("true");
        expect(await page.evaluate("localStorage.getItem('loupe.sql.rowCap')")).toBe("100");
      },
      { acceptDownloads: true },
    );
  }, 60_000);
});
