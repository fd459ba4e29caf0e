/**
 * The README's screenshots, made from the real UI: the compiled executable against a real broker
 * (KAFKA_BOOTSTRAP, else one started here) with demo data, photographed by Debian's Chromium.
 *
 *   bun scripts/screenshots.ts [--out=docs/screenshots] [--theme=light|dark] [--pages=topics,consumers,...]
 *
 * Writes topics.png (the topic list), workbench.png (a query's streamed rows),
 * consumer-group.png (a group's lag per partition and its lag-history chart) and processor.png
 * (a stream processor's page: figures, topology, runners, lag); consumers.png (the group list)
 * when `--pages` names it. `--pages` takes only the shots named.
 */

import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Page } from "playwright-core";
import { arg } from "../bench/common.ts";
import { createKafkaPool } from "../src/kafka/index.ts";
import { compiledLoupe, launchChromium, openAs } from "../test/browser/browser.ts";
import { scriptBroker } from "../test/cluster/cluster.ts";
import { startServerProcess } from "../test/helpers/server-process.ts";

const OUT = resolve(arg("out", "docs/screenshots"));
const THEME = arg("theme", "light") as "light" | "dark";
const PAGES = new Set(arg("pages", "topics,workbench,consumer-group,processor").split(","));
const log = (...a: unknown[]) => console.error("[screenshots]", ...a);

const { bootstrap, stop: stopCluster } = await scriptBroker(log);
const pool = createKafkaPool([{ name: "local", bootstrapServers: [bootstrap], clientId: "loupe-screenshots", default: true }]);
const kafka = pool.default();

const CITIES = ["Lisbon", "Oslo", "Lyon", "Turin", "Ghent", "Porto", "Bergen"];
const order = (i: number) =>
  JSON.stringify({
    orderId: `o-${10_000 + i}`,
    customer: `c-${(i * 37) % 500}`,
    city: CITIES[i % CITIES.length],
    amount: Math.round(((i * 7.31) % 480) * 100) / 100 + 20,
    items: 1 + (i % 5),
    status: i % 11 === 0 ? "cancelled" : i % 3 === 0 ? "shipped" : "paid",
  });

const existing = new Set((await kafka.topics.list()).map((t) => t.name));
const demo: Array<[string, number]> = [
  ["orders", 6],
  ["payments", 6],
  ["shipments", 3],
  ["customers", 3],
  ["inventory", 12],
  ["audit-trail", 1],
  ["clickstream", 12],
  ["invoices", 3],
];
for (const [name, partitions] of demo) if (!existing.has(name)) await kafka.topics.create({ name, partitions, replication: 1 });
let next = 0;
const produce = async (n: number) => {
  const records = Array.from({ length: n }, (_, j) => ({
    key: `c-${((next + j) * 37) % 500}`,
    value: order(next + j),
    partition: (next + j) % 6,
  }));
  next += n;
  await kafka.writes.produce("orders", records);
};
await produce(3000);
for (const [name, partitions] of demo.slice(1))
  await kafka.writes.produce(
    name,
    Array.from({ length: 200 }, (_, i) => ({ key: `k${i}`, value: JSON.stringify({ id: i, topic: name }), partition: i % partitions })),
  );

const server = await startServerProcess({ lag: { sampleInterval: "1s", cacheTtl: "500ms" } }, { executable: await compiledLoupe() });
const browser = await launchChromium();
mkdirSync(OUT, { recursive: true });

/** A group that reads behind the producer: its lag grows, then it catches up a little. */
async function groupHistory(group: string, seconds: number) {
  let committed = 0;
  for (let s = 0; s < seconds; s++) {
    await produce(150 + (s % 4) * 60);
    committed = Math.min(next, committed + (s < seconds / 2 ? 90 : 260));
    const per = Math.floor(committed / 6);
    await kafka.groups.alterOffsets(
      group,
      Array.from({ length: 6 }, (_, p) => ({ topic: "orders", partition: p, offset: per })),
    );
    await Bun.sleep(1000);
  }
}

async function shot(page: Page, name: string) {
  await page.screenshot({ path: join(OUT, `${name}.png`) });
  log(`${name}.png`);
}

try {
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 }, colorScheme: THEME });
  const page = await context.newPage();
  await groupHistory("billing", 20);

  // Each topic opened once, as a user browsing would: the list then shows the types guessed from
  // its newest records (it reads no record itself).
  for (const [name] of demo) await (await server.request(`/api/topics/${name}`, { role: "admin" })).arrayBuffer();
  await openAs(page, `${server.url}/topics`, "admin");
  await page.getByRole("link", { name: "orders", exact: true }).waitFor();
  if (PAGES.has("topics")) await shot(page, "topics");

  if (PAGES.has("consumers")) {
    await page.goto(`${server.url}/consumers`);
    await page.getByRole("link", { name: "billing", exact: true }).waitFor();
    await shot(page, "consumers");
  }
  if (PAGES.has("workbench")) await workbench(page);
  if (PAGES.has("consumer-group")) {
    await page.goto(`${server.url}/consumers/billing`);
    await page.locator(".uplot canvas").first().waitFor({ timeout: 60_000 });
    await shot(page, "consumer-group");
  }
  if (PAGES.has("processor")) await processorPage(page);
  await context.close();
} finally {
  await browser.close();
  await server.stop();
  await pool.close();
  await stopCluster();
}

async function workbench(page: Page) {
  await page.goto(`${server.url}/sql?${new URLSearchParams({ q: "SELECT * FROM orders WHERE status = 'shipped' LIMIT 500" })}`);
  await page.locator(".cm-content").click();
  await page.keyboard.press("Control+Enter");
  await page
    .getByTestId("run-status")
    .filter({ hasText: /rows \(/ })
    .waitFor({ timeout: 60_000 });
  await shot(page, "workbench");
}

async function processorPage(page: Page) {
  const created = await server.request("/api/streams", {
    method: "POST",
    role: "admin",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({
      name: "paid-orders",
      runners: 2,
      sql: "SET autocreate = true; SET _vtype = JSON; INSERT INTO orders_paid SELECT STREAM orderId, amount, city AS _key FROM orders WHERE status = 'paid'",
    }),
  });
  const processor = (await created.json()) as { id: string };
  await produce(600);
  await page.goto(`${server.url}/processors/${processor.id}`);
  await page.locator(".uplot canvas").first().waitFor({ timeout: 60_000 });
  await page.locator(".proc-state-running").first().waitFor({ timeout: 60_000 });
  await shot(page, "processor");
  await server.request(`/api/streams/${processor.id}`, { method: "DELETE", role: "admin" });
}
