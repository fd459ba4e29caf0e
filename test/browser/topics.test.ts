/**
 * The topics page in a real browser: search as you type, sort by a column, internal topics
 * hidden unless asked, all of it in the URL (a reload keeps it), and rows virtualized (the
 * page holds only the rows in view, however many topics match).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { ROLE_USERS } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { compiledLoupe, launchChromium, seriousViolations, withPage } from "./browser.ts";

const RUN = `ui${Date.now().toString(36)}`;
const TOPICS = Array.from({ length: 40 }, (_, i) => ({ topicName: `${RUN}-t${String(i).padStart(2, "0")}`, partitions: (i % 3) + 1 }));
const INTERNAL = `__${RUN}-internal`;

let server: ServerProcess;
let browser: Browser;

beforeAll(async () => {
  server = await startServerProcess({}, { executable: await compiledLoupe() });
  for (const t of [...TOPICS, { topicName: INTERNAL, partitions: 1 }]) {
    const res = await server.request("/api/topics", {
      method: "POST",
      role: "admin",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...t, replication: 1 }),
    });
    if (res.status !== 201) throw new Error(`creating ${t.topicName}: ${res.status} ${await res.text()}`);
  }
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  for (const t of [...TOPICS.map((x) => x.topicName), INTERNAL])
    await server?.request(`/api/topics/${t}`, { method: "DELETE", role: "admin" }).catch(() => {});
  await browser?.close();
  await server?.stop();
});

async function signedIn(page: Page, path: string): Promise<void> {
  await page.goto(`${server.url}${path}`);
  await page.getByLabel("User name").fill(ROLE_USERS.read.name);
  await page.getByLabel("Password").fill(ROLE_USERS.read.password);
  await page.getByLabel("Password").press("Enter");
}

/** The topic names and partition counts of the rows in the page, top to bottom. */
async function shownRows(page: Page): Promise<Array<{ name: string; partitions: number }>> {
  const rows = await page.locator("table.grid tbody tr").evaluateAll((trs) =>
    trs
      .map((tr) => ({ y: tr.getBoundingClientRect().top, cells: [...tr.querySelectorAll("td")].map((td) => td.textContent ?? "") }))
      .sort((a, b) => a.y - b.y)
      .map((r) => ({ name: r.cells[0] ?? "", partitions: Number(r.cells[1]) })),
  );
  return rows;
}

describe("the topics page", () => {
  test("search, sort and internal topics, all in the URL; rows virtualized", async () => {
    await withPage(
      browser,
      "topics search sort",
      async (page) => {
        await signedIn(page, `/topics?q=${RUN}`);
        const count = page.getByTestId("topic-count");
        await count.getByText(/^40 of \d+ topics/).waitFor();
        // Virtualized: only the rows in view (and a few beyond) are in the page.
        const first = await shownRows(page);
        expect(first.length).toBeGreaterThan(5);
        expect(first.length).toBeLessThan(40);
        expect(first[0]!.name).toBe(`${RUN}-t00`);

        await page.getByRole("button", { name: "Partitions" }).click();
        await page.waitForURL(/sort=partitions/);
        expect((await shownRows(page))[0]!.partitions).toBe(1);
        await page.getByRole("button", { name: /Partitions/ }).click();
        await page.waitForURL(/dir=desc/);
        const desc = await shownRows(page);
        expect(desc[0]).toEqual({ name: `${RUN}-t02`, partitions: 3 });
        expect(await page.getByRole("columnheader", { name: /Partitions/ }).getAttribute("aria-sort")).toBe("descending");

        // A reload keeps the state: it is all in the URL.
        await page.reload();
        await count.getByText(/^40 of \d+ topics/).waitFor();
        expect((await shownRows(page))[0]).toEqual(desc[0]);

        // Search as you type.
        await page.getByLabel("Search").fill(`${RUN}-t07`);
        await count.getByText(/^1 of \d+ topics/).waitFor();
        expect(await shownRows(page)).toEqual([{ name: `${RUN}-t07`, partitions: 2 }]);

        // Internal topics only when asked.
        await page.getByLabel("Search").fill(`${RUN}-internal`);
        await count.getByText(/^0 of /).waitFor();
        await page.getByText("No topic matches the search.").waitFor();
        await page.getByLabel("Show internal topics").check();
        await count.getByText(/^1 of /).waitFor();
        expect(await shownRows(page)).toEqual([{ name: INTERNAL, partitions: 1 }]);
        expect(new URL(page.url()).searchParams.get("internal")).toBe("1");

        expect(await seriousViolations(page)).toEqual([]);
      },
      { viewport: { width: 1100, height: 700 } },
    );
  }, 60_000);

  test("a topic's name links to its page, keeping the cluster", async () => {
    await withPage(browser, "topics link", async (page) => {
      await signedIn(page, `/topics?cluster=local&q=${RUN}-t05`);
      await page.getByRole("link", { name: `${RUN}-t05` }).click();
      await page.waitForURL(`${server.url}/topics/${RUN}-t05?cluster=local`);
    });
  }, 60_000);
});
