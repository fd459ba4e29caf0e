/**
 * Stream processors in a real browser, against the compiled executable and the real broker: the
 * empty list says what a processor is and offers Create to a writer only; a writer's broken
 * program is underlined where it is wrong as it is typed, a valid one is created from the page,
 * goes RUNNING and counts the records produced, is paused, resumed, scaled and deleted after
 * the confirmation; a processor stopped by a record it cannot read shows its error first; a
 * read user sees the processors but no Create and no action (a nodata user no lag chart: the
 * history route needs read). axe-core on the list, the create
 * view and a processor's page, in light and dark.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import type { KafkaPool } from "../../src/kafka/index.ts";
import { uniqueTopic } from "../cluster/cluster.ts";
import type { ROLE_USERS } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { waitFor } from "../helpers/wait.ts";
import { testPool } from "../kafka/helpers.ts";
import { compiledLoupe, createTopic, launchChromium, openAs, seriousViolations, withPage } from "./browser.ts";

const SOURCE = uniqueTopic("ui-proc-src");
const TARGET = uniqueTopic("ui-proc-out");
const POISON = uniqueTopic("ui-proc-poison");
const POISON_OUT = uniqueTopic("ui-proc-poison-out");
const CREATED = uniqueTopic("ui-proc");
const FAILING = uniqueTopic("ui-proc-failing");

let server: ServerProcess;
let browser: Browser;
let pool: KafkaPool;

beforeAll(async () => {
  server = await startServerProcess({}, { executable: await compiledLoupe() });
  for (const [topic, partitions] of [
    [SOURCE, 3],
    [TARGET, 3],
    [POISON, 1],
    [POISON_OUT, 1],
  ] as const)
    await createTopic(server, topic, partitions);
  pool = testPool();
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  const list = await server
    ?.request("/api/streams", { role: "admin" })
    .then((r) => r.json() as Promise<{ streams: Array<{ id: string }> }>)
    .catch(() => ({ streams: [] }));
  for (const p of list?.streams ?? []) await server.request(`/api/streams/${p.id}`, { method: "DELETE", role: "admin" }).catch(() => {});
  for (const t of [SOURCE, TARGET, POISON, POISON_OUT])
    await pool
      ?.default()
      .topics.delete(t)
      .catch(() => {});
  await pool?.close();
  await browser?.close();
  await server?.stop();
});

const signedIn = (page: Page, path: string, role: keyof typeof ROLE_USERS) => openAs(page, `${server.url}${path}`, role);

/** The figure of a tile ("Records in", "Lag", ...) of a processor's page. */
const tile = (page: Page, label: string) => page.locator(".tile", { has: page.getByText(label, { exact: true }) }).locator("strong");

async function stateIs(page: Page, state: string, timeoutMs = 60_000): Promise<void> {
  await waitFor(async () => (await page.getByTestId("proc-state").innerText()) === state, {
    timeoutMs,
    intervalMs: 250,
    what: `state ${state}`,
  });
}

/** Replaces the program in the editor in one input, as a paste would. */
async function program(page: Page, text: string): Promise<void> {
  await page.locator(".cm-content").click();
  await page.keyboard.press("Control+a");
  await page.keyboard.insertText(text);
}

const produce = (topic: string, values: string[]) =>
  pool.default().writes.produce(
    topic,
    values.map((value, i) => ({ key: `k${i % 5}`, value, partition: i % 3 })),
  );

/** A processor made through the API as `role`; answers its id. */
async function createThroughApi(name: string, sql: string, role: keyof typeof ROLE_USERS = "write"): Promise<string> {
  const res = await server.request("/api/streams", {
    method: "POST",
    role,
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ name, sql, runners: 1 }),
  });
  if (res.status !== 200) throw new Error(`creating ${name}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

describe("stream processors page", () => {
  test("the empty list explains what a processor is; Create is offered to a writer, not to a read user", async () => {
    await withPage(browser, "processors empty read", async (page) => {
      await signedIn(page, "/processors", "read");
      await page.getByRole("heading", { name: "No stream processor yet" }).waitFor();
      expect(await page.getByText("Creating one needs the write role").count()).toBe(1);
      expect(await page.getByRole("button", { name: /Create/ }).count()).toBe(0);
      expect(await page.getByRole("link", { name: "Stream processors", exact: true }).getAttribute("aria-current")).toBe("page");
    });
    await withPage(browser, "processors empty write", async (page) => {
      await signedIn(page, "/processors", "write");
      await page.getByRole("button", { name: "Create a stream processor…" }).click();
      await page.getByRole("heading", { name: "New stream processor" }).waitFor();
      expect(new URL(page.url()).pathname).toBe("/processors/new");
    });
  }, 60_000);

  test("a writer creates a processor from the page after its error was shown where it is, sees it run and count, pauses, resumes, scales and deletes it", async () => {
    await withPage(browser, "processors create", async (page) => {
      await signedIn(page, "/processors/new", "write");
      await page.getByRole("heading", { name: "New stream processor" }).waitFor();
      await page.getByLabel("Name", { exact: true }).fill(CREATED);
      const broken = `SET _vtype = JSON; INSERT INTO \`${TARGET}\` SELECT STREAM n, word FORM \`${SOURCE}\``;
      await program(page, broken);
      const status = page.getByTestId("validation");
      const at = new RegExp(`\\bline 1, column ${broken.indexOf("FORM") + 1}\\b`, "i");
      await waitFor(async () => at.test(await status.innerText()), { timeoutMs: 15_000, what: "the error shown at FORM" });
      expect(await status.innerText()).toMatch(/FORM/);
      await page.locator(".cm-lintRange-error", { hasText: /^FORM$/ }).waitFor();

      // The stream words are completed beside the workbench's: a program's settings after SET.
      await program(page, "SET error.p");
      await page.keyboard.press("Control+Space");
      await page.locator(".cm-tooltip-autocomplete").getByText("error.policy", { exact: true }).waitFor();
      await page.keyboard.press("Escape");

      const sql = `SET _vtype = JSON; INSERT INTO \`${TARGET}\` SELECT STREAM n, word FROM \`${SOURCE}\` WHERE n >= 0`;
      await program(page, sql);
      await waitFor(async () => (await status.innerText()) === "The program is valid.", { timeoutMs: 15_000, what: "the program valid" });
      await page.getByLabel("Runners", { exact: true }).fill("1");
      await page.getByRole("button", { name: "Create", exact: true }).click();

      await page.getByRole("heading", { name: new RegExp(CREATED) }).waitFor({ timeout: 15_000 });
      expect(new URL(page.url()).pathname).toMatch(/^\/processors\/lsql_[0-9a-f]+$/);
      await stateIs(page, "RUNNING");
      // The drawing: source, then what the program does, then target.
      expect(await page.getByTestId("topology").locator(".proc-box-label").allInnerTexts()).toEqual([SOURCE, "FILTER", "PROJECT", TARGET]);
      expect(await page.getByRole("table", { name: "Runner states" }).locator("tbody tr").count()).toBe(1);

      await produce(
        SOURCE,
        Array.from({ length: 60 }, (_, i) => JSON.stringify({ n: i, word: `w${i}` })),
      );
      await waitFor(
        async () => (await tile(page, "Records in").innerText()) === "60" && (await tile(page, "Records out").innerText()) === "60",
        {
          timeoutMs: 60_000,
          intervalMs: 250,
          what: "60 records in and out",
        },
      );

      await page.getByRole("button", { name: "Pause", exact: true }).click();
      await page
        .getByRole("status")
        .filter({ hasText: /^Paused/ })
        .waitFor();
      await stateIs(page, "PAUSED");
      await page.getByRole("button", { name: "Resume", exact: true }).click();
      await stateIs(page, "RUNNING");

      await page.getByLabel("Runners", { exact: true }).fill("2");
      await page.getByRole("button", { name: "Scale", exact: true }).click();
      await page.getByRole("status").filter({ hasText: "Scaled to 2 runners." }).waitFor();
      await waitFor(async () => (await page.getByRole("table", { name: "Runner states" }).locator("tbody tr").count()) === 2, {
        timeoutMs: 60_000,
        intervalMs: 250,
        what: "two runners",
      });

      // The list shows it with its figures, and leads back to it.
      await page.getByRole("link", { name: "Stream processors", exact: true }).first().click();
      const row = page.getByRole("table", { name: "Stream processors" }).locator("tr", { hasText: CREATED });
      await waitFor(async () => /RUNNING/.test(await row.innerText()), { timeoutMs: 30_000, what: "the row RUNNING" });
      const cells = await row.locator("td").allInnerTexts();
      expect(cells[2]).toBe(`${SOURCE} → ${TARGET}`);
      expect(cells[3]).toBe("2");
      expect(cells[7]).toBe("wanda");
      await page.getByLabel("Filter").fill("no-such-processor");
      await page.getByText("No stream processor matches the filter.").waitFor();
      await page.getByLabel("Filter").fill(CREATED);
      await row.getByRole("link", { name: CREATED }).click();

      await page.getByRole("button", { name: "Delete…" }).click();
      const dialog = page.getByRole("dialog", { name: `Delete ${CREATED}` });
      await dialog.getByRole("button", { name: "Cancel" }).click();
      expect(await dialog.isVisible()).toBe(false);
      await page.getByRole("button", { name: "Delete…" }).click();
      await dialog.getByRole("button", { name: "Delete processor" }).click();
      await page.waitForURL((u) => u.pathname === "/processors");
      await page.getByRole("heading", { name: "No stream processor yet" }).waitFor();
      const left = (await (await server.request("/api/streams", { role: "admin" })).json()) as { streams: unknown[] };
      expect(left.streams).toEqual([]);
    });
  }, 180_000);

  test("a processor stopped by a record it cannot read shows its error first; a read user sees it without Create or any action, a nodata user without the lag chart", async () => {
    const id = await createThroughApi(
      FAILING,
      `SET error.policy = stop; SET _vtype = JSON; INSERT INTO \`${POISON_OUT}\` SELECT STREAM n FROM \`${POISON}\``,
    );
    await pool.default().writes.produce(POISON, [{ value: JSON.stringify({ n: 1 }) }, { value: "not json {" }]);
    await withPage(browser, "processors failed read", async (page) => {
      await signedIn(page, "/processors", "read");
      const row = page.getByRole("table", { name: "Stream processors" }).locator("tr", { hasText: FAILING });
      await waitFor(async () => /FAILED/.test(await row.innerText()), { timeoutMs: 60_000, intervalMs: 250, what: "the row FAILED" });
      expect(await page.getByRole("button", { name: /Create/ }).count()).toBe(0);
      await row.getByRole("link", { name: FAILING }).click();
      await page.waitForURL((u) => u.pathname === `/processors/${id}`);
      const failure = page.locator(".proc-failure");
      await failure.waitFor();
      expect(await failure.getAttribute("role")).toBe("alert");
      expect(await failure.innerText()).toContain("record 1 of partition 0");
      expect(await failure.innerText()).toContain("Its owner or an administrator can resume it.");
      for (const name of ["Pause", "Resume", "Scale", "Delete…"])
        expect(await page.getByRole("button", { name, exact: true }).count()).toBe(0);
    });
    // A nodata user reads no group offsets: the page says so instead of the chart.
    await withPage(browser, "processors failed nodata", async (page) => {
      await signedIn(page, `/processors/${id}`, "nodata");
      await page.locator(".proc-failure").waitFor();
      await page.getByTestId("lag-hidden").waitFor();
      expect(await page.locator(".lag-chart").count()).toBe(0);
    });
    // Its owner is offered Resume.
    await withPage(browser, "processors failed owner", async (page) => {
      await signedIn(page, `/processors/${id}`, "write");
      await stateIs(page, "FAILED");
      await page.getByRole("button", { name: "Resume", exact: true }).waitFor();
    });
  }, 120_000);

  test("axe-core: no serious or critical violation on the list, the create view and a processor's page, in both themes", async () => {
    const list = (await (await server.request("/api/streams", { role: "admin" })).json()) as { streams: Array<{ id: string }> };
    const id = list.streams[0]!.id;
    for (const colorScheme of ["light", "dark"] as const)
      await withPage(
        browser,
        `processors axe ${colorScheme}`,
        async (page) => {
          await signedIn(page, "/processors", "write");
          await page.getByRole("table", { name: "Stream processors" }).waitFor();
          expect(await seriousViolations(page)).toEqual([]);
          await page.getByRole("button", { name: "Create a stream processor…" }).click();
          await program(page, `INSERT INTO \`${POISON_OUT}\` SELECT STREAM n FORM \`${POISON}\``);
          await page.locator(".cm-lintRange-error").waitFor({ timeout: 15_000 });
          expect(await seriousViolations(page)).toEqual([]);
          await page.goto(`${server.url}/processors/${id}`);
          await page.locator(".proc-failure").waitFor();
          await page.locator(".uplot").waitFor();
          expect(await seriousViolations(page)).toEqual([]);
        },
        { colorScheme },
      );
  }, 120_000);
});
