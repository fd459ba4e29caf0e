/**
 * The SQL workbench in a real browser: a query from the URL runs with Ctrl+Enter and its rows
 * stream into the table with the value's fields as columns and the right values; a query the
 * server refuses is said on the page; the editor runs under the Content-Security-Policy.
 * Completion offers topics and sampled fields, validation underlines the error where it is as
 * you type, a JSON cell opens as a tree, exports are the rows kept, the row cap is a setting.
 * A search cut by a bound says so above its rows and continues; an INSERT is run and answered
 * with where each record went, and a link that asks to run runs a query but never an INSERT; at 1024 x 700 the rows come first, their headers readable, a
 * record's Kafka headers shown, and a stopped query says it was stopped.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFile } from "node:fs/promises";
import type { Browser, Download, Page } from "playwright-core";
import { createKafkaPool, type KafkaPool } from "../../src/kafka/index.ts";
import { kafkaBootstrap } from "../cluster/cluster.ts";
import type { ROLE_USERS } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { waitFor } from "../helpers/wait.ts";
import { eventually } from "../kafka/helpers.ts";
import { compiledLoupe, createTopic, insert, launchChromium, openAs, seriousViolations, withPage } from "./browser.ts";

const TOPIC = `ui${Date.now().toString(36)}-trips`;
const RECORDS = 300;
/** 8 MB of records: more than the server's stream buffer and the sockets hold, so a slow reader holds the query. */
const BIG = `${TOPIC}-big`;
/** Values with an object inside, and text a CSV must quote. */
const NESTED = `${TOPIC}-nested`;
/** 3,000 records of some 330 bytes; one holds amount 5000, at offset 2,900. */
const SCAN = `${TOPIC}-scan`;
const NEEDLE = 2900;
/** Where the workbench's INSERT writes. */
const WRITTEN = `${TOPIC}-written`;
/** Where a linked INSERT is written once asked. */
const LINKED = `${TOPIC}-linked`;
/** Records with Kafka headers. */
const HEADERS = `${TOPIC}-headers`;

let server: ServerProcess;
let browser: Browser;
let kafka: KafkaPool;

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
  await createTopic(server, SCAN, 1);
  const note = "n".repeat(300);
  for (let batch = 0; batch < 3; batch++) {
    const values = Array.from({ length: 1000 }, (_, i) => {
      const offset = batch * 1000 + i;
      return `('k${offset}', ${offset === NEEDLE ? 5000 : offset % 100}, '${note}')`;
    }).join(", ");
    await insert(server, `INSERT INTO \`${SCAN}\` (_key, amount, note) VALUES ${values}`);
  }
  await createTopic(server, WRITTEN, 1);
  await createTopic(server, LINKED, 1);
  await createTopic(server, HEADERS, 1);
  kafka = createKafkaPool([{ name: "local", bootstrapServers: [kafkaBootstrap()], clientId: "loupe-browser-sql", default: true }]);
  await kafka.default().writes.produce(HEADERS, [
    {
      key: "with",
      value: JSON.stringify({ orderIdentifier: "o-1", customerCity: "Oslo", amount: 12 }),
      headers: { "trace-id": "abc-123", raw: new Uint8Array([0xff, 0x01]) },
    },
  ]);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  for (const t of [TOPIC, BIG, NESTED, SCAN, WRITTEN, LINKED, HEADERS])
    await server?.request(`/api/topics/${t}`, { method: "DELETE", role: "admin" }).catch(() => {});
  await kafka?.close();
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

/** Waits until a run started from the notice reading `before` has ended: the notice says something else, and nothing runs. */
async function settled(page: Page, before: string): Promise<void> {
  await waitFor(
    () =>
      page.evaluate(`(() => {
        const notice = document.querySelector("[data-testid='run-notice']");
        const status = document.querySelector("[data-testid='run-status']")?.textContent ?? "";
        return notice !== null && notice.innerText !== ${JSON.stringify(before)} && !status.startsWith("Running");
      })()`),
    { timeoutMs: 20_000, what: "the continued run's end" },
  );
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
  test("23: a search cut by max.size says so where the rows are, what was read of what and which limit; Continue finds the matching record", async () => {
    await withPage(browser, "sql scan continue", async (page) => {
      const sql = `SET max.size = 256k; SELECT * FROM \`${SCAN}\` WHERE amount = 5000 LIMIT 10`;
      await signedIn(page, `/sql?q=${encodeURIComponent(sql)}`, "read");
      await page.getByRole("button", { name: "Run", exact: true }).click();
      const notice = page.getByRole("region", { name: "How the query ended" });
      await notice.getByText("Stopped at max.size: 256 KiB of records read.").waitFor();
      const said = await notice.innerText();
      expect(said).toMatch(/[0-9,]+ records read of about 3,000 in 1 partition \(partition 0: offsets 0–[0-9,]+ of 0–2,999\)/);
      expect(said).toContain("No record matched in the part read.");
      // Where the rows would be, the table says the same: not "No record matched the query."
      expect(await page.locator(".results").innerText()).toContain("No record matched in the part read");
      expect(await seriousViolations(page)).toEqual([]);

      // Continue goes on from where the run stopped, as often as it takes.
      for (let run = 0; run < 20 && (await rowAt(page, NEEDLE)) === null; run++) {
        const before = await notice.innerText();
        await notice.getByRole("button", { name: "Continue from where it stopped" }).click();
        await settled(page, before);
      }
      expect(await rowAt(page, NEEDLE)).toMatchObject({ key: `k${NEEDLE}`, "value.amount": "5000" });
      // The figures count every run: no record read twice.
      expect(await page.getByTestId("run-stats").innerText()).toMatch(/Read\s*2,9[0-9]{2}\b|Read\s*3,000\b/);

      expect(await page.getByTestId("run-notice").innerText()).toMatch(/^Read to the end: 3,000 records in 1 partition, in [2-9] runs\.$/);

      // Or the bound raised as far as the server allows: one run reads the whole topic.
      await page.getByRole("button", { name: "Run", exact: true }).click();
      await notice.getByRole("button", { name: "Run again with max.size = 256 MiB" }).click();
      await page.getByTestId("run-status").getByText("1 rows (END)").waitFor();
      expect(await page.getByRole("textbox", { name: "SQL query" }).innerText()).toBe(
        `SET max.size = 256m; SELECT * FROM \`${SCAN}\` WHERE amount = 5000 LIMIT 10`,
      );
      expect(await page.getByTestId("run-notice").innerText()).toBe("Read to the end: 3,000 records in 1 partition.");
    });
  }, 90_000);

  test("23: an INSERT runs from the workbench: the records written, where each went, its audit entry; a read user is told, not refused by the server", async () => {
    const sql = `INSERT INTO \`${WRITTEN}\` (_key, city, n) VALUES ('a', 'Oslo', 1), ('b', 'Lyon', 2)`;
    await withPage(
      browser,
      "sql insert",
      async (page) => {
        const errors: string[] = [];
        page.on("console", (m) => {
          if (m.type() === "error") errors.push(m.text());
        });
        await signedIn(page, `/sql?q=${encodeURIComponent(sql)}`, "write");
        await page.getByTestId("validation").getByText("The statement is valid: Run writes its records.").waitFor();
        await page.getByRole("button", { name: "Run", exact: true }).click();
        await page.getByTestId("run-status").getByText("2 records written").waitFor();
        const written = page.getByRole("region", { name: "Records written" });
        expect(await written.innerText()).toContain(`Wrote 2 records to ${WRITTEN} (key STRING, value JSON)`);
        const rows = await written.getByRole("table", { name: "Where each record went" }).locator("tbody tr").allInnerTexts();
        expect(rows.map((r) => r.trim().split(/\s+/))).toEqual([
          ["1", "0", "0"],
          ["2", "0", "1"],
        ]);
        expect(await seriousViolations(page)).toEqual([]);
        expect(errors).toEqual([]);
      },
      { colorScheme: "dark" },
    );
    const audit = (await (await server.request("/api/audit?type=TOPIC_DATA&limit=1", { role: "admin" })).json()) as Array<{
      change: string;
      content: Record<string, string>;
    }>;
    expect(audit[0]).toMatchObject({ change: "INSERT", content: { topic: WRITTEN, records: "2", outcome: "SUCCESS" } });

    await withPage(browser, "sql insert read", async (page) => {
      const errors: string[] = [];
      page.on("console", (m) => {
        if (m.type() === "error") errors.push(m.text());
      });
      await signedIn(page, `/sql?q=${encodeURIComponent(sql)}`, "read");
      await page
        .getByTestId("validation")
        .getByText("The statement is valid, but writing records needs the write role (yours: read).")
        .waitFor();
      expect(await page.getByRole("button", { name: "Run", exact: true }).isDisabled()).toBe(true);
      expect(errors).toEqual([]);
    });
  }, 90_000);

  test("24: a link that asks to run runs its query at once, never an INSERT: that waits for Run", async () => {
    await withPage(browser, "sql link runs", async (page) => {
      const sent: string[] = [];
      page.on("request", (r) => {
        const path = new URL(r.url()).pathname;
        if (path === "/api/sql/data" || path === "/api/jdbc/insert") sent.push(path);
      });
      await signedIn(page, `/sql?q=${encodeURIComponent(`SELECT * FROM \`${NESTED}\``)}&run=1`, "write");
      await page.getByTestId("run-status").getByText("2 rows (END)").waitFor();

      const sql = `INSERT INTO \`${LINKED}\` (_key, city, n) VALUES ('linked', 'Rome', 3)`;
      sent.length = 0;
      await page.goto(`${server.url}/sql?q=${encodeURIComponent(sql)}&run=1`);
      await page.getByTestId("validation").getByText("The statement is valid: Run writes its records.").waitFor();
      // Asked for, it is written once: the link ran nothing of it, not even as a query.
      await page.getByRole("button", { name: "Run", exact: true }).click();
      await page.getByTestId("run-status").getByText("1 record written").waitFor();
      expect(sent).toEqual(["/api/jdbc/insert"]);
    });
  }, 90_000);

  test("23: at 1024 x 700 the rows come first, their column names readable, a record's headers shown; a stopped query says so", async () => {
    await withPage(
      browser,
      "sql 1024",
      async (page, context) => {
        // A user with a history and saved queries: the library must not push the rows down.
        for (let i = 0; i < 10; i++) {
          const sql = `SELECT * FROM \`${NESTED}\` WHERE n = ${i}`;
          await server.request(`/api/sql/data?${new URLSearchParams({ sql })}`, { role: "read", headers: { accept: "application/json" } });
          await server.request(`/api/sql/saved/kept-${i}`, { method: "PUT", role: "read", body: JSON.stringify({ text: sql }) });
        }
        await signedIn(page, `/sql?q=${encodeURIComponent(`SELECT * FROM \`${HEADERS}\``)}`, "read");
        // The library is a side panel, closed until asked for.
        expect(await page.getByRole("complementary", { name: "Query library" }).count()).toBe(0);
        await page.getByRole("button", { name: "Run", exact: true }).click();
        await page.getByTestId("run-status").getByText("1 rows (END)").waitFor();
        // The row is in view without scrolling.
        const row = page.getByRole("table", { name: "Results" }).locator("tbody tr").first();
        const box = (await row.boundingBox())!;
        expect(box.y + box.height).toBeLessThanOrEqual(700);
        expect(await page.evaluate("document.scrollingElement.scrollTop")).toBe(0);
        // Each column's name is there whole: in its cell, not cut, and as its title.
        const heads = page.getByRole("table", { name: "Results" }).locator("thead th");
        expect(await heads.allInnerTexts()).toEqual([
          "key",
          "partition",
          "offset",
          "timestamp",
          "value.orderIdentifier",
          "value.customerCity",
          "value.amount",
        ]);
        for (const th of await heads.all()) {
          expect(await th.getAttribute("title")).toBe(await th.innerText());
          expect(await th.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
        }
        // The record's Kafka headers, in its panel.
        await page.getByRole("button", { name: "Show the record at offset 0" }).click();
        const headers = page.getByRole("region", { name: "Selected record" }).getByRole("table", { name: "Headers" });
        expect((await headers.locator("tbody tr").allInnerTexts()).map((r) => r.replace(/\s+/g, " ").trim())).toEqual([
          "trace-id abc-123",
          "raw /wE= (base64: not UTF-8 text)",
        ]);
        expect(await seriousViolations(page)).toEqual([]);

        // A query stopped from the page says so where its rows are.
        const cdp = await context.newCDPSession(page);
        await page.goto(`${server.url}/sql?q=${encodeURIComponent(`SELECT * FROM \`${BIG}\``)}`);
        await page.getByRole("textbox", { name: "SQL query" }).waitFor();
        await cdp.send("Network.enable");
        await cdp.send("Network.emulateNetworkConditions", {
          offline: false,
          latency: 0,
          downloadThroughput: 100_000,
          uploadThroughput: -1,
        });
        await page.getByRole("button", { name: "Run", exact: true }).click();
        await page
          .getByTestId("run-status")
          .getByText(/^Running… [1-9]/)
          .waitFor();
        await page.getByRole("button", { name: "Stop" }).click();
        const notice = page.getByRole("region", { name: "How the query ended" });
        await notice.getByText("You stopped the query.").waitFor();
        expect(await notice.innerText()).toMatch(/You stopped the query\. [0-9,]+ records? read/);
        const noticeBox = (await notice.boundingBox())!;
        expect(noticeBox.y + noticeBox.height).toBeLessThanOrEqual(700);
      },
      { viewport: { width: 1024, height: 700 } },
    );
  }, 90_000);
});
