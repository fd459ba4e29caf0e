/**
 * The README's screenshots, made from the real UI: the compiled executable against a real broker
 * (KAFKA_BOOTSTRAP, else one started here) with demo data, photographed by Debian's Chromium.
 *
 *   bun scripts/screenshots.ts [--out=docs/screenshots] [--theme=light|dark] [--pages=topics,consumers,...]
 *
 * Writes topics.png (the topic list), workbench.png (a query's streamed rows),
 * consumer-group.png (a group's lag per partition and its lag-history chart), processor.png
 * (a stream processor's page: figures, topology, runners, lag); consumers.png (the group list)
 * when `--pages` names it. `--pages` takes only the shots (or groups of shots) named.
 * `redrive`: redrive.png (a redrive job's page: its progress while it runs, its dry run),
 * redrive-list.png and redrive-new.png (the jobs, the create form) and redrive-read.png (the job
 * as a read user sees it). `masking`: masking.png (the masking policies), masking-edit.png (a
 * policy's edit form), masking-read.png (the page refused to a read user) and
 * workbench-masked.png (a read user's masked column). `--theme=dark` names them `<name>-dark.png`.
 */

import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { arg } from "../bench/common.ts";
import { createKafkaPool } from "../src/kafka/index.ts";
import { compiledLoupe, launchChromium, openAs } from "../test/browser/browser.ts";
import { scriptBroker } from "../test/cluster/cluster.ts";
import { startServerProcess } from "../test/helpers/server-process.ts";

const OUT = resolve(arg("out", "docs/screenshots"));
const THEME = arg("theme", "light") as "light" | "dark";
const PAGES = new Set(arg("pages", "topics,workbench,consumer-group,processor,redrive,masking").split(","));
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

async function shot(page: Page, name: string, fullPage = false) {
  const file = `${name}${THEME === "dark" ? "-dark" : ""}.png`;
  await page.screenshot({ path: join(OUT, file), fullPage });
  log(file);
}

const asJson = (body: unknown) => ({
  headers: { "content-type": "application/json", accept: "application/json" },
  body: JSON.stringify(body),
});

/** Kafka Connect's dead letters of orders and payments, some of them test records, some naming a topic that is gone. */
async function deadLetters(): Promise<void> {
  if (!existing.has("orders.dlq")) await kafka.topics.create({ name: "orders.dlq", partitions: 3, replication: 1 });
  await kafka.writes.produce(
    "orders.dlq",
    Array.from({ length: 600 }, (_, i) => ({
      key: `c-${(i * 37) % 500}`,
      value: i % 9 === 0 ? JSON.stringify({ test: true, orderId: `t-${i}` }) : order(i),
      partition: i % 3,
      headers: {
        "__connect.errors.topic": i % 25 === 0 ? "orders-v1" : i % 3 === 0 ? "payments" : "orders",
        "__connect.errors.exception.message": "Converting byte[] to Kafka Connect data failed due to serialization error",
      },
    })),
  );
}

try {
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 }, colorScheme: THEME });
  const page = await context.newPage();
  if (PAGES.has("consumers") || PAGES.has("consumer-group")) await groupHistory("billing", 20);

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
  if (PAGES.has("redrive")) await redrive(page, context);
  if (PAGES.has("masking")) await masking(page);
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

/** A dead-letter queue sent back to the topics its records name: the job's page after its dry run, while it runs. */
async function redrive(page: Page, context: BrowserContext) {
  await deadLetters();
  const created = await server.request("/api/redrives", {
    method: "POST",
    role: "admin",
    ...asJson({
      name: "orders-dlq-replay",
      topic: "orders.dlq",
      targetHeader: "__connect.errors.topic",
      where: "_value.test IS NULL",
      ratePerSecond: 20,
    }),
  });
  const job = (await created.json()) as { id: string };
  await page.goto(`${server.url}/redrives/${job.id}?dryrun=1`);
  await page.getByRole("region", { name: "Dry run" }).waitFor({ timeout: 60_000 });
  await page.getByRole("button", { name: "Start", exact: true }).click();
  await page.getByText(/^[1-9][\d,]* of 600 /).waitFor({ timeout: 60_000 });
  await shot(page, "redrive", true);
  await page.goto(`${server.url}/redrives`);
  await page.getByRole("table", { name: "Redrive jobs" }).waitFor();
  await shot(page, "redrive-list");
  await page.getByRole("button", { name: "Create a redrive job…" }).click();
  await page.getByLabel("Source topic").fill("orders.dlq");
  await page.getByLabel("Only the records where").fill("_value.test IS NULL");
  await shot(page, "redrive-new");

  const reader = await context.browser()!.newContext({ viewport: { width: 1360, height: 900 }, colorScheme: THEME });
  const readPage = await reader.newPage();
  await openAs(readPage, `${server.url}/redrives/${job.id}`, "read");
  await readPage.getByTestId("redrive-progress").waitFor();
  await shot(readPage, "redrive-read");
  await reader.close();
  await server.request(`/api/redrives/${job.id}/cancel`, { method: "PUT", role: "admin" });
}

/** Two policies, the page that lists them and a policy's edit dialog; as a read user, the page refused and a masked column. */
async function masking(page: Page) {
  for (const name of ["analysts", "fraud-team"])
    await server.request("/api/groups", {
      method: "POST",
      role: "admin",
      ...asJson({ name, roles: ["read"], clusters: ["*"], topics: { allow: ["*"], deny: [] } }),
    });
  for (const policy of [
    { name: "customer-ids", topics: ["orders", "customers"], fields: ["customer"], method: "KEEP_LAST_N", keepLast: 2, roles: ["read"] },
    {
      name: "cards",
      topics: ["payments*", "invoices"],
      fields: ["card.number", "iban"],
      method: "HASH",
      groups: ["analysts"],
      exceptGroups: ["fraud-team"],
    },
    { name: "no-emails", topics: ["*"], fields: ["email", "contact.*"], method: "REMOVE", roles: ["read", "nodata"] },
  ])
    await server.request("/api/masking/policies", { method: "POST", role: "admin", ...asJson(policy) });
  await page.goto(`${server.url}/masking`);
  await page.getByRole("table", { name: "Masking policies" }).waitFor();
  await shot(page, "masking");
  await page.getByRole("button", { name: "Edit cards" }).click();
  await page.getByRole("dialog", { name: "Edit the policy cards" }).waitFor();
  await shot(page, "masking-edit");

  const reader = await page
    .context()
    .browser()!
    .newContext({ viewport: { width: 1360, height: 900 }, colorScheme: THEME });
  const readPage = await reader.newPage();
  await openAs(readPage, `${server.url}/masking`, "read");
  await readPage.getByTestId("not-for-you").waitFor();
  await shot(readPage, "masking-read");
  await readPage.goto(
    `${server.url}/sql?${new URLSearchParams({ q: "SELECT orderId, customer, city, amount FROM orders LIMIT 200", run: "1" })}`,
  );
  await readPage
    .getByTestId("run-status")
    .filter({ hasText: /rows \(/ })
    .waitFor({ timeout: 60_000 });
  await shot(readPage, "workbench-masked");
  await reader.close();
}
