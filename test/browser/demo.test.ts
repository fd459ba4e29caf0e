/**
 * The demo data of `npm run dev` on every page, in a real browser: the seed (scripts/seed.ts)
 * runs under a unique prefix against the compiled executable and the real broker, registry and
 * Connect workers, and each page a newcomer opens first shows it: typed topics, records in the
 * message browser and the workbench, the running processor, a live and a lagging group, the
 * connector, the registered subjects, the overview's figures.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { type Seeded, seedDemo } from "../../scripts/seed.ts";
import type { KafkaPool } from "../../src/kafka/index.ts";
import { connectEnv, registryEnv, uniqueTopic } from "../cluster/cluster.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { testPool } from "../kafka/helpers.ts";
import { compiledLoupe, launchChromium, openAs, withPage } from "./browser.ts";

const ALIAS = "dev";
const prefix = `${uniqueTopic("ui-demo")}-`;
const workDir = mkdtempSync(join(tmpdir(), "loupe-demo-"));
let server: ServerProcess;
let browser: Browser;
let pool: KafkaPool;
let seeded: Seeded;

beforeAll(async () => {
  server = await startServerProcess(
    {
      schemaRegistry: { ...registryEnv(), allowDelete: true },
      connect: { clusters: [{ alias: ALIAS, ...connectEnv() }], timeout: "20s" },
    },
    { executable: await compiledLoupe() },
  );
  pool = testPool();
  seeded = await seedDemo({
    kafka: pool.default(),
    api: (path, init = {}) => server.request(path, { ...init, role: "admin" }),
    registryUrls: registryEnv().urls,
    connect: { url: connectEnv().urls[0]!, alias: ALIAS },
    workDir,
    prefix,
  });
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await seeded?.stop();
  await browser?.close();
  if (seeded) {
    await server.request(`/api/streams/${seeded.processor.id}?deleteChangelog=true`, { method: "DELETE", role: "admin" }).catch(() => {});
    if (seeded.connector)
      for (const url of connectEnv().urls) {
        const res = await fetch(`${url}/connectors/${encodeURIComponent(seeded.connector)}`, { method: "DELETE" }).catch(() => null);
        if (res?.ok) break;
      }
    const [url] = registryEnv().urls;
    for (const subject of seeded.subjects)
      for (const q of ["", "?permanent=true"])
        await fetch(`${url}/subjects/${encodeURIComponent(subject)}${q}`, { method: "DELETE" }).catch(() => {});
    await pool
      .default()
      .groups.delete([seeded.groups.live, seeded.groups.lagging])
      .catch(() => {});
    const topics = (await pool.default().topics.list()).map((t) => t.name).filter((t) => t.startsWith(prefix));
    for (const topic of topics)
      await pool
        .default()
        .topics.delete(topic)
        .catch(() => {});
  }
  await pool?.close();
  await server?.stop();
  rmSync(workDir, { recursive: true, force: true });
}, 120_000);

const open = (page: Page, path: string) => openAs(page, `${server.url}${path}`, "admin");
/** The row of `table` that names `text`, once shown. */
async function rowOf(page: Page, table: string, text: string) {
  const row = page.getByRole("table", { name: table }).getByRole("row").filter({ hasText: text }).first();
  await row.waitFor({ timeout: 30_000 });
  return row;
}

describe("23: npm run dev's demo data on every page", () => {
  test("23: topics with their types, records in the message browser and the workbench", async () => {
    const t = seeded.topics;
    await withPage(browser, "demo topics", async (page) => {
      await open(page, `/topics?q=${encodeURIComponent(prefix)}`);
      expect(await (await rowOf(page, "Topics", t.orders)).innerText()).toContain("STRING / JSON");
      expect(await (await rowOf(page, "Topics", t.payments!)).innerText()).toContain("STRING / AVRO");
      await rowOf(page, "Topics", t.customers);
      await rowOf(page, "Topics", t.clickstream);

      await page.goto(`${server.url}/topics/${encodeURIComponent(t.orders)}`);
      const messages = page.getByRole("table", { name: "Messages" }).locator("tbody tr");
      await messages.first().waitFor({ timeout: 30_000 });
      expect(await messages.count()).toBeGreaterThan(0);

      await page.goto(`${server.url}/sql?q=${encodeURIComponent(`SELECT * FROM \`${t.payments}\` LIMIT 5`)}&run=1`);
      await page.getByRole("table", { name: "Results" }).locator("tbody tr").first().waitFor({ timeout: 30_000 });
    });
  }, 90_000);

  test("23: the running processor, a live and a lagging group, the connector, the subjects, the overview", async () => {
    await withPage(browser, "demo pages", async (page) => {
      await open(page, `/processors?q=${encodeURIComponent(seeded.processor.name)}`);
      const processor = await rowOf(page, "Stream processors", seeded.processor.name);
      await processor
        .getByText(/running/i)
        .first()
        .waitFor({ timeout: 60_000 });

      await page.goto(`${server.url}/consumers?q=${encodeURIComponent(prefix)}`);
      await rowOf(page, "Consumer groups", seeded.groups.live);
      await rowOf(page, "Consumer groups", seeded.groups.lagging);
      await page.goto(`${server.url}/consumers/${encodeURIComponent(seeded.groups.lagging)}`);
      await page.getByText(seeded.topics.orders).first().waitFor({ timeout: 30_000 });

      if (seeded.connector) {
        await page.goto(`${server.url}/connect?q=${encodeURIComponent(seeded.connector)}`);
        await rowOf(page, "Connectors", seeded.connector);
      }

      await page.goto(`${server.url}/schemas?q=${encodeURIComponent(prefix)}`);
      for (const subject of seeded.subjects) await rowOf(page, "Subjects", subject);

      await page.goto(`${server.url}/`);
      const topics = page
        .getByTestId("overview-figures")
        .locator(".tile", { has: page.getByText("Topics", { exact: true }) })
        .locator("strong");
      await topics.waitFor();
      expect(Number((await topics.innerText()).replace(/,/g, ""))).toBeGreaterThanOrEqual(4);
    });
  }, 120_000);
});
