/**
 * The web UI in a real browser: Debian's Chromium (playwright-core) against the compiled
 * executable and a real broker.
 *
 *   bun bench/ui.ts [--rows=100000] [--topics=10000] [--only=workbench,topics]
 *
 * Uses the broker in KAFKA_BOOTSTRAP, else starts one of its own (test/cluster). Topics made here
 * are reused by later runs (their names hold the counts).
 *
 * Workbench: `SELECT * FROM t LIMIT rows` over a topic of `rows` JSON records (about 150 bytes),
 * run with Ctrl+Enter in /sql. Measured in the page:
 *   - time to first row: from the key press to the first row in the table;
 *   - rows per second rendered: rows counted by the table from the first row to the end;
 *   - long main-thread tasks (PerformanceObserver "longtask") after the first row: the longest,
 *     and how many took over 200 ms (the target: none);
 *   - the page's JS heap (after a forced collection) before the query and after all rows.
 * Reference, same run: the same query's stream read by this process with no browser (time to
 * first record, records/s): the ratio says what the browser's rendering costs.
 *
 * Topic list: `topics` topics of one partition. Measured: from navigation to /topics to the
 * first rows shown (time to interactive: rows shown and the search box enabled), and from a
 * key press in the search box to the list filtered. Reference: GET /api/topics from this process.
 */

import { resolve } from "node:path";
import type { CDPSession, Page } from "playwright-core";
import { createKafkaPool } from "../src/kafka/index.ts";
import { compiledLoupe, launchChromium, openAs } from "../test/browser/browser.ts";
import { scriptBroker } from "../test/cluster/cluster.ts";
import { startServerProcess } from "../test/helpers/server-process.ts";

function arg(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}
const ROWS = Number(arg("rows", "100000"));
const TOPICS = Number(arg("topics", "10000"));
const ONLY = new Set(arg("only", "workbench,topics").split(","));
const PARTITIONS = 3;

const log = (...a: unknown[]) => console.error("[bench]", ...a);
const ms = (n: number) => `${n.toFixed(0)} ms`;
const rate = (n: number) => `${Math.round(n).toLocaleString("en-US")}/s`;
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;

const { bootstrap, stop: stopCluster } = await scriptBroker(log);
const pool = createKafkaPool([{ name: "bench", bootstrapServers: [bootstrap], clientId: "loupe-bench-ui", default: true }]);
const kafka = pool.default();

async function fillRows(): Promise<string> {
  const topic = `bench-ui-rows-${ROWS}`;
  const existing = await kafka.topics.list();
  if (existing.some((t) => t.name === topic)) {
    const offsets = await kafka.offsets.bounds([topic]);
    if (offsets.reduce((n, o) => n + o.latest - o.earliest, 0) === ROWS) return topic;
    await kafka.topics.delete(topic);
    await Bun.sleep(1000);
  }
  await kafka.topics.create({ name: topic, partitions: PARTITIONS, replication: 1 });
  const perRequest = 5000;
  for (let start = 0; start < ROWS; start += perRequest) {
    const n = Math.min(perRequest, ROWS - start);
    const records = Array.from({ length: n }, (_, j) => {
      const i = start + j;
      return {
        key: `order-${i}`,
        value: JSON.stringify({
          id: i,
          customer: `customer-${i % 977}`,
          amount: (i * 7.31) % 500,
          currency: "EUR",
          lines: i % 9,
          shipped: i % 3 === 0,
        }),
        partition: i % PARTITIONS,
      };
    });
    await kafka.writes.produce(topic, records);
  }
  log(`${topic}: ${ROWS} records`);
  return topic;
}

/** `count` one-partition topics named `prefix-00000`…; those already there are kept. */
async function fillTopics(prefix: string, count: number): Promise<number> {
  const existing = new Set((await kafka.topics.list()).map((t) => t.name));
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(5, "0")}`).filter((n) => !existing.has(n));
  let next = 0;
  let made = count - names.length;
  let failed = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (next < names.length) {
      const name = names[next++]!;
      try {
        await kafka.topics.create({ name, partitions: 1, replication: 1 });
        made++;
      } catch (err) {
        failed++;
        if (failed <= 3) log(`creating ${name}: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (made % 1000 === 0) log(`${made} topics (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return made;
}

async function heap(cdp: CDPSession): Promise<number> {
  await cdp.send("HeapProfiler.collectGarbage");
  return ((await cdp.send("Runtime.getHeapUsage")) as { usedSize: number }).usedSize;
}

/** The reference: the query's stream read here, no browser; counts record lines. */
async function rawStream(url: string, token: string, sql: string): Promise<{ first: number; seconds: number; records: number }> {
  const t0 = performance.now();
  const res = await fetch(`${url}/api/sql/data?${new URLSearchParams({ sql })}`, {
    headers: { accept: "text/event-stream", "x-service-token": token },
  });
  if (!res.ok || !res.body) throw new Error(`query: ${res.status} ${await res.text()}`);
  const decoder = new TextDecoder();
  let first = 0;
  let records = 0;
  for await (const chunk of res.body) {
    const text = decoder.decode(chunk, { stream: true });
    let i = text.indexOf("data:1");
    while (i >= 0) {
      if (records === 0) first = performance.now() - t0;
      records++;
      i = text.indexOf("data:1", i + 6);
    }
  }
  return { first, seconds: (performance.now() - t0) / 1000, records };
}

const lines: string[] = [];
const executable = await compiledLoupe();
const server = await startServerProcess(
  { sql: { maxLimit: 10_000_000, maxSize: "100g" }, kafka: { clusters: [{ name: "bench", bootstrapServers: bootstrap, default: true }] } },
  { executable },
);
const browser = await launchChromium();

try {
  if (ONLY.has("workbench")) {
    const topic = await fillRows();
    const sql = `SET max.size = 1g; SELECT * FROM \`${topic}\` LIMIT ${ROWS}`;
    const raw = await rawStream(server.url, await server.token("admin"), sql);
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await openAs(page, `${server.url}/sql?${new URLSearchParams({ q: sql })}`, "admin");
    await page.locator(".cm-content").waitFor();
    const before = await heap(cdp);
    await page.evaluate(`(() => {
      const b = (window.__bench = { longtasks: [], start: 0, first: 0, end: 0 });
      new PerformanceObserver((list) => { for (const e of list.getEntries()) b.longtasks.push([e.startTime, e.duration]); }).observe({ type: "longtask" });
      document.addEventListener("keydown", (e) => { if (e.key === "Enter" && e.ctrlKey) b.start = performance.now(); }, { capture: true });
      new MutationObserver((_, obs) => {
        if (!b.first && document.querySelector("table[aria-label='Results'] tbody tr")) b.first = performance.now();
        const status = document.querySelector("[data-testid='run-status']")?.textContent ?? "";
        if (b.start && !b.end && /rows \\(|Stopped/.test(status)) { b.end = performance.now(); obs.disconnect(); }
      }).observe(document.body, { childList: true, subtree: true, characterData: true });
    })()`);
    await page.locator(".cm-content").click();
    await page.keyboard.press("Control+Enter");
    const status = page.getByTestId("run-status");
    await status.filter({ hasText: /rows \(|Stopped/ }).waitFor({ timeout: 600_000 });
    const b = (await page.evaluate("window.__bench")) as { longtasks: Array<[number, number]>; start: number; first: number; end: number };
    const end = b.end;
    const shown = Number(/^[\d,]+/.exec((await status.textContent()) ?? "")?.[0]?.replace(/,/g, "") ?? "0");
    const after = await heap(cdp);
    const late = b.longtasks.filter(([start]) => start >= b.first);
    const longest = Math.max(0, ...late.map(([, d]) => d));
    const browserRate = shown / ((end - b.first) / 1000);
    const rawRate = raw.records / raw.seconds;
    lines.push(
      `workbench, ${ROWS.toLocaleString("en-US")} rows (${topic})`,
      `  time to first row        ${ms(b.first - b.start).padEnd(12)} reference (stream read here): ${ms(raw.first)}`,
      `  rows per second rendered ${rate(browserRate).padEnd(12)} reference: ${rate(rawRate)}  ratio ${(browserRate / rawRate).toFixed(2)}`,
      `  all rows after           ${ms(end - b.start).padEnd(12)} reference: ${ms(raw.seconds * 1000)}`,
      `  long tasks after row 1   ${late.length} (longest ${ms(longest)}, over 200 ms: ${late.filter(([, d]) => d > 200).length})  target: none over 200 ms`,
      `  JS heap                  ${mb(before)} before, ${mb(after)} after ${shown.toLocaleString("en-US")} rows (${((after - before) / shown).toFixed(0)} B/row)`,
    );
    await context.close();
  }

  if (ONLY.has("topics")) {
    const prefix = `bench-ui-list`;
    const made = await fillTopics(prefix, TOPICS);
    const t0 = performance.now();
    const res = await server.request("/api/topics", { role: "admin" });
    const listed = ((await res.json()) as unknown[]).length;
    const apiMs = performance.now() - t0;
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page: Page = await context.newPage();
    await openAs(page, `${server.url}/topics`, "admin");
    await page.locator("table tbody tr").first().waitFor({ timeout: 120_000 });
    // Again with a session: the navigation alone, as a user opening the page does.
    await page.goto(`${server.url}/topics?reload=1`);
    await page.locator("table tbody tr").first().waitFor({ timeout: 120_000 });
    const search = page
      .getByRole("searchbox")
      .or(page.getByLabel(/search/i))
      .first();
    await search.waitFor();
    const tti = (await page.evaluate("performance.now()")) as number;
    const target = `${prefix}-0${String(TOPICS - 1)
      .padStart(5, "0")
      .slice(1)}`;
    await page.evaluate(`(() => {
      const b = (window.__bench = { key: 0, done: 0 });
      document.addEventListener("keydown", () => { b.key = performance.now(); }, { capture: true });
      new MutationObserver(() => {
        const rows = document.querySelectorAll("table tbody tr");
        if (b.key && !b.done && rows.length === 1) b.done = performance.now();
      }).observe(document.body, { childList: true, subtree: true, characterData: true });
    })()`);
    await search.click();
    await search.pressSequentially(target);
    // Polled from here: waitForFunction's own polling needs eval, which the page's policy forbids.
    for (const deadline = Date.now() + 60_000; !(await page.evaluate("window.__bench.done > 0")); ) {
      if (Date.now() > deadline) throw new Error("the search did not narrow the list to one row within 60 s");
      await Bun.sleep(20);
    }
    const typed = (await page.evaluate("window.__bench.done - window.__bench.key")) as number;
    lines.push(
      `topic list, ${made.toLocaleString("en-US")} topics made of ${TOPICS.toLocaleString("en-US")} asked (${listed.toLocaleString("en-US")} listed by the API)`,
      `  time to interactive      ${ms(tti).padEnd(12)} reference (GET /api/topics here): ${ms(apiMs)}`,
      `  last key to one row      ${ms(typed)}`,
    );
    await context.close();
  }
} finally {
  await browser.close();
  await server.stop();
  await pool.close();
  await stopCluster();
}

console.log(`\nLoupe web UI benchmark (Chromium ${resolve("/usr/bin/chromium")}, compiled executable)\n`);
console.log(lines.join("\n"));
