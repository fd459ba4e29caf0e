/**
 * The topics page in a real browser: search as you type, sort by a column, internal topics
 * hidden unless asked, all of it in the URL (a reload keeps it), and rows virtualized (the
 * page holds only the rows in view, however many topics match).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import type { ROLE_USERS } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { compiledLoupe, createTopic, insert, launchChromium, openAs, seriousViolations, withPage } from "./browser.ts";

const RUN = `ui${Date.now().toString(36)}`;
const TOPICS = Array.from({ length: 40 }, (_, i) => ({ topicName: `${RUN}-t${String(i).padStart(2, "0")}`, partitions: (i % 3) + 1 }));
const INTERNAL = `__${RUN}-internal`;
/** Made through the create dialog, then deleted through the delete dialog. */
const MADE = `${RUN}-made`;
/** A topic with records in two partitions and one config set. */
const DETAIL = `${RUN}-detail`;

let server: ServerProcess;
let browser: Browser;

beforeAll(async () => {
  server = await startServerProcess({}, { executable: await compiledLoupe() });
  for (const t of [
    ...TOPICS,
    { topicName: INTERNAL, partitions: 1 },
    { topicName: DETAIL, partitions: 2, configs: { "retention.ms": "3600000" } },
  ]) {
    await createTopic(server, t.topicName, t.partitions, "configs" in t ? t.configs : undefined);
  }
  // Five records, through the API as the JDBC driver writes them (keys pick the partitions).
  await insert(server, `INSERT INTO \`${DETAIL}\` (_key, n) VALUES ('a', 1), ('b', 2), ('c', 3), ('d', 4), ('e', 5)`);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  for (const t of [...TOPICS.map((x) => x.topicName), INTERNAL, DETAIL, MADE])
    await server?.request(`/api/topics/${t}`, { method: "DELETE", role: "admin" }).catch(() => {});
  await browser?.close();
  await server?.stop();
});

const signedIn = (page: Page, path: string, role: keyof typeof ROLE_USERS = "read") => openAs(page, `${server.url}${path}`, role);

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
        await signedIn(page, `/topics?q=${RUN}-t`);
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

  test("a topic's page: its figures, partitions with offsets, and its configs with overrides marked", async () => {
    await withPage(browser, "topic detail", async (page) => {
      await signedIn(page, `/topics/${DETAIL}`);
      await page.getByRole("heading", { name: `Topic ${DETAIL}` }).waitFor();
      const partitions = page.getByRole("table", { name: "Partitions" });
      await partitions.waitFor();
      const rows = await partitions
        .locator("tbody tr")
        .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)));
      expect(rows.map((r) => r[0])).toEqual(["0", "1"]);
      // Every record is counted in one partition or the other, from offset 0.
      expect(rows.reduce((n, r) => n + Number(r[3]), 0)).toBe(5);
      expect(rows.every((r) => r[1] === "0" && r[2] === r[3])).toBe(true);
      expect(await page.getByText("No consumer group reads this topic.").count()).toBe(1);
      const retention = page.getByRole("table", { name: "Configuration" }).getByRole("row", { name: /^retention\.ms/ });
      expect(await retention.locator("td").nth(1).innerText()).toBe("3600000set");
      // What is set on the topic comes first.
      const firstConfig = page.getByRole("table", { name: "Configuration" }).locator("tbody tr").first().locator("td").first();
      expect(await firstConfig.innerText()).toBe("retention.ms");
      const cleanup = page.getByRole("table", { name: "Configuration" }).getByRole("row", { name: /^cleanup\.policy/ });
      expect(await cleanup.locator(".badge").count()).toBe(0);
      expect(await seriousViolations(page)).toEqual([]);
    });
  }, 60_000);

  test("create through the dialog (the API's refusal said in it), then delete by typing the name", async () => {
    await withPage(browser, "topic create delete", async (page) => {
      await signedIn(page, "/topics", "write");
      await page.getByRole("button", { name: "Create topic…" }).click();
      const create = page.getByRole("dialog", { name: "Create a topic" });
      await create.getByLabel("Name").fill("not a name!");
      await create.getByRole("button", { name: "Create" }).click();
      const refusal = create.getByRole("alert");
      await refusal.waitFor();
      expect(await refusal.innerText()).toContain("a topic name may only contain letters, digits");
      expect(await seriousViolations(page)).toEqual([]);

      await create.getByLabel("Name").fill(MADE);
      await create.getByLabel(/^Partitions/).fill("2");
      await create.getByLabel("Configuration").selectOption("compacted");
      await create.getByRole("button", { name: "Create" }).click();
      // On to the new topic's page.
      await page.waitForURL(`${server.url}/topics/${MADE}`);
      const partitions = page.getByRole("table", { name: "Partitions" });
      await partitions.waitFor();
      expect(await partitions.locator("tbody tr").count()).toBe(2);
      const policy = page.getByRole("table", { name: "Configuration" }).getByRole("row", { name: /^cleanup\.policy/ });
      expect(await policy.locator("td").nth(1).innerText()).toBe("compactset");

      await page.getByRole("button", { name: "Delete topic…" }).click();
      const remove = page.getByRole("dialog", { name: `Delete ${MADE}` });
      const confirm = remove.getByRole("button", { name: "Delete topic" });
      expect(await confirm.isDisabled()).toBe(true);
      await remove.getByLabel("Type the topic's name to confirm").fill(MADE.slice(0, -1));
      expect(await confirm.isDisabled()).toBe(true);
      await remove.getByLabel("Type the topic's name to confirm").fill(MADE);
      await confirm.click();
      await page.waitForURL(`${server.url}/topics`);
      const gone = await server.request(`/api/topics/${MADE}`, { role: "read" });
      expect(gone.status).toBe(404);
    });
  }, 60_000);

  test("a read user is offered neither create nor delete", async () => {
    await withPage(browser, "topics read user", async (page) => {
      await signedIn(page, `/topics?q=${DETAIL}`);
      await page.getByRole("link", { name: DETAIL }).waitFor();
      expect(await page.getByRole("button", { name: /Create topic/ }).count()).toBe(0);
      await page.getByRole("link", { name: DETAIL }).click();
      await page.getByRole("table", { name: "Partitions" }).waitFor();
      expect(await page.getByRole("button", { name: /Delete topic/ }).count()).toBe(0);
    });
  }, 60_000);

  test("a topic that does not exist: its page says so", async () => {
    await withPage(browser, "topic missing", async (page) => {
      await signedIn(page, `/topics/${RUN}-nope`);
      const alert = page.getByRole("alert");
      await alert.waitFor();
      expect(await alert.innerText()).toContain(`${RUN}-nope`);
    });
  }, 60_000);

  test("a topic's name links to its page, keeping the cluster", async () => {
    await withPage(browser, "topics link", async (page) => {
      await signedIn(page, `/topics?cluster=local&q=${RUN}-t05`);
      await page.getByRole("link", { name: `${RUN}-t05` }).click();
      await page.waitForURL(`${server.url}/topics/${RUN}-t05?cluster=local`);
    });
  }, 60_000);
});
