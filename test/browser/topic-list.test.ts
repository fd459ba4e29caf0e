/**
 * The topic list's size, messages/s and lag columns in a real browser: shown, and sorted by
 * a click on their heading (the order in the URL). Three topics set apart on each column:
 *   big:    one partition, 30 records of 2 KB, no group       (largest size)
 *   behind: two partitions, 6 small records, a group 6 behind  (largest lag)
 *   busy:   three partitions, records written while the test runs (the only one with a rate)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import type { KafkaPool } from "../../src/kafka/index.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { createReadyTopic } from "../helpers/topics.ts";
import { waitFor } from "../helpers/wait.ts";
import { testPool } from "../kafka/helpers.ts";
import { compiledLoupe, launchChromium, openAs, seriousViolations, withPage } from "./browser.ts";

const RUN = `ui${Date.now().toString(36)}`;
const BIG = `${RUN}-big`;
const BEHIND = `${RUN}-behind`;
const BUSY = `${RUN}-busy`;
const GROUP = `${RUN}-reader`;

let server: ServerProcess;
let browser: Browser;
let pool: KafkaPool;

type Item = { topicName: string; sizeBytes: number | null; messagesPerSecond: number; lag: number | null };

beforeAll(async () => {
  // Written before Loupe starts: the sampler's first sample already holds these records, so
  // only what is written later counts as a rate.
  pool = testPool();
  const kafka = pool.default();
  await createReadyTopic(kafka, { name: BIG, partitions: 1 });
  await createReadyTopic(kafka, { name: BEHIND, partitions: 2 });
  await createReadyTopic(kafka, { name: BUSY, partitions: 3 });
  await kafka.writes.produce(
    BIG,
    Array.from({ length: 30 }, () => ({ partition: 0, value: "x".repeat(2_000) })),
  );
  await kafka.writes.produce(
    BEHIND,
    Array.from({ length: 6 }, (_, i) => ({ partition: i % 2, value: "y" })),
  );
  await kafka.groups.alterOffsets(GROUP, [
    { topic: BEHIND, partition: 0, offset: 0 },
    { topic: BEHIND, partition: 1, offset: 0 },
  ]);
  server = await startServerProcess({ lag: { sampleInterval: "1s", cacheTtl: 0 } }, { executable: await compiledLoupe() });
  // Records into BUSY between samples, until the list gives it a rate. Enough of them that the
  // rate (whole messages per second, over up to a minute of samples) stays above zero while
  // the test runs.
  await waitFor(
    async () => {
      await kafka.writes.produce(
        BUSY,
        Array.from({ length: 150 }, (_, i) => ({ partition: i % 3, value: "z" })),
      );
      const items = (await (await server.request("/api/topics", { role: "read" })).json()) as Item[];
      const mine = new Map(items.map((t) => [t.topicName, t]));
      return (mine.get(BUSY)?.messagesPerSecond ?? 0) > 0 && (mine.get(BIG)?.sizeBytes ?? 0) > 60_000;
    },
    { timeoutMs: 30_000, intervalMs: 300, what: "a rate for the busy topic and the big topic's size" },
  );
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await pool
    ?.default()
    .groups.delete([GROUP])
    .catch(() => {});
  for (const t of [BIG, BEHIND, BUSY]) await server?.request(`/api/topics/${t}`, { method: "DELETE", role: "admin" }).catch(() => {});
  await pool?.close();
  await browser?.close();
  await server?.stop();
});

/** Topic names of the rows, top to bottom (rows are placed by the virtualizer, so by position). */
const shownNames = (page: Page) =>
  page.locator("table.grid tbody tr").evaluateAll((trs) =>
    trs
      .map((tr) => ({ y: tr.getBoundingClientRect().top, name: tr.querySelector("td")?.textContent ?? "" }))
      .sort((a, b) => a.y - b.y)
      .map((r) => r.name),
  );

const sortBy = async (page: Page, label: string, direction: "ascending" | "descending") => {
  const header = page.getByRole("columnheader", { name: new RegExp(`^${label}`) });
  for (let i = 0; i < 2 && (await header.getAttribute("aria-sort")) !== direction; i++) await header.getByRole("button").click();
  expect(await header.getAttribute("aria-sort")).toBe(direction);
};

describe("the topic list's size, messages/s and lag", () => {
  test("each column sorts the list both ways, and the order is kept in the URL", async () => {
    await withPage(browser, "topic list sort", async (page) => {
      await openAs(page, `${server.url}/topics?q=${RUN}`, "read");
      await page.getByRole("link", { name: BUSY }).waitFor();
      const cases: Array<[label: string, direction: "ascending" | "descending", order: string[], url: RegExp]> = [
        ["Size", "descending", [BIG, BUSY, BEHIND], /sort=size&dir=desc|dir=desc.*sort=size/],
        ["Size", "ascending", [BEHIND, BUSY, BIG], /sort=size(?!.*dir=desc)/],
        ["Lag", "descending", [BEHIND, BIG, BUSY], /sort=lag/],
        ["Messages/s", "descending", [BUSY, BEHIND, BIG], /sort=rate/],
      ];
      for (const [label, direction, order, url] of cases) {
        await sortBy(page, label, direction);
        // The server sorts: the table is busy until the new order is in.
        await page.locator('table.grid[aria-busy="false"]').waitFor();
        expect({ label, direction, order: await shownNames(page) }).toEqual({ label, direction, order });
        expect(page.url()).toMatch(url);
      }
      // The sort survives a reload (it is in the URL).
      await page.reload();
      await page.getByRole("link", { name: BUSY }).waitFor();
      expect(await shownNames(page)).toEqual([BUSY, BEHIND, BIG]);
      // The figures: the lag of BEHIND, and sizes in binary units.
      const behind = page.getByRole("row", { name: new RegExp(BEHIND) });
      expect(await behind.locator("td").nth(6).innerText()).toBe("6");
      expect(
        await page
          .getByRole("row", { name: new RegExp(BIG) })
          .locator("td")
          .nth(4)
          .innerText(),
      ).toMatch(/KiB$/);
    });
  }, 60_000);

  test("23: at 1024 px wide every column's heading is in view, nothing behind a sideways scroll", async () => {
    await withPage(
      browser,
      "topic list narrow",
      async (page) => {
        await openAs(page, `${server.url}/topics?q=${RUN}`, "read");
        await page.getByRole("link", { name: BUSY }).waitFor();
        const table = page.getByRole("table", { name: "Topics" });
        const fits = await table.evaluate((t) => t.scrollWidth <= (t.parentElement?.clientWidth ?? 0));
        expect(fits).toBe(true);
        for (const label of ["Name", "Partitions", "Messages", "Size", "Messages/s", "Lag", "Key / value"]) {
          const box = await table.getByRole("columnheader", { name: new RegExp(`^${label.replace("/", "\\/")}( [▲▼])?$`) }).boundingBox();
          expect({ label, inView: box !== null && box.x + box.width <= 1024 }).toEqual({ label, inView: true });
        }
      },
      { viewport: { width: 1024, height: 768 } },
    );
  }, 60_000);

  test("axe-core: no serious or critical violation on the list with its new columns, in both themes", async () => {
    for (const colorScheme of ["light", "dark"] as const)
      await withPage(
        browser,
        `topic list axe ${colorScheme}`,
        async (page) => {
          await openAs(page, `${server.url}/topics?q=${RUN}&sort=lag&dir=desc`, "read");
          await page.getByRole("link", { name: BUSY }).waitFor();
          expect(await seriousViolations(page)).toEqual([]);
        },
        { colorScheme },
      );
  }, 60_000);
});
