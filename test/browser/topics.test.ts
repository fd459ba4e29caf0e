/**
 * The topics page in a real browser: search as you type, sort by a column, internal topics
 * hidden unless asked, all of it in the URL (a reload keeps it), and rows virtualized (the
 * page holds only the rows in view, however many topics match).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import type { KafkaPool } from "../../src/kafka/index.ts";
import type { ROLE_USERS } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { testPool } from "../kafka/helpers.ts";
import { compiledLoupe, createTopic, insert, launchChromium, openAs, seriousViolations, withPage } from "./browser.ts";

const RUN = `ui${Date.now().toString(36)}`;
const TOPICS = Array.from({ length: 40 }, (_, i) => ({ topicName: `${RUN}-t${String(i).padStart(2, "0")}`, partitions: (i % 3) + 1 }));
const INTERNAL = `__${RUN}-internal`;
/** Made through the create dialog, then deleted through the delete dialog. */
const MADE = `${RUN}-made`;
/** A topic with records in two partitions and one config set. */
const DETAIL = `${RUN}-detail`;
/** Configs and types edited through the page; read by GROUP (one record of three). */
const EDIT = `${RUN}-edit`;
const GROUP = `${RUN}-reader`;
/** Records deleted through the page. */
const RECORDS = `${RUN}-records`;

let server: ServerProcess;
let browser: Browser;
let pool: KafkaPool;

beforeAll(async () => {
  server = await startServerProcess({}, { executable: await compiledLoupe() });
  for (const t of [
    ...TOPICS,
    { topicName: INTERNAL, partitions: 1 },
    { topicName: DETAIL, partitions: 2, configs: { "retention.ms": "3600000" } },
    { topicName: EDIT, partitions: 1 },
    { topicName: RECORDS, partitions: 2 },
  ]) {
    await createTopic(server, t.topicName, t.partitions, "configs" in t ? t.configs : undefined);
  }
  // Five records, through the API as the JDBC driver writes them (keys pick the partitions).
  await insert(server, `INSERT INTO \`${DETAIL}\` (_key, n) VALUES ('a', 1), ('b', 2), ('c', 3), ('d', 4), ('e', 5)`);
  await insert(server, `INSERT INTO \`${EDIT}\` (_key, n) VALUES ('a', 1), ('b', 2), ('c', 3)`);
  await insert(server, `INSERT INTO \`${RECORDS}\` (_key, n) VALUES ('a', 1), ('b', 2), ('c', 3), ('d', 4), ('e', 5), ('f', 6)`);
  // A group with no member that has read one record of three: a lag of two.
  pool = testPool();
  await pool.default().groups.alterOffsets(GROUP, [{ topic: EDIT, partition: 0, offset: 1 }]);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await pool
    ?.default()
    .groups.delete([GROUP])
    .catch(() => {});
  await pool?.close();
  for (const t of [...TOPICS.map((x) => x.topicName), INTERNAL, DETAIL, MADE, EDIT, RECORDS])
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
      await page.getByRole("navigation", { name: "Topic sections" }).getByRole("link", { name: "Consumers" }).click();
      await page.getByText("No consumer group reads this topic.").waitFor();
      await page.getByRole("navigation", { name: "Topic sections" }).getByRole("link", { name: "Configs" }).click();
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
      await page.getByRole("link", { name: "Configs" }).click();
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

/** The section links of the topic page (Partitions, Configs, Consumers, Metadata, Data). */
const sections = (page: Page) => page.getByRole("navigation", { name: "Topic sections" });
const configRow = (page: Page, name: string) =>
  page.getByRole("table", { name: "Configuration" }).getByRole("row", { name: new RegExp(`^${name.replaceAll(".", "\\.")}\\b`) });
/** The first offset of each partition, as the page's Partitions table shows it. */
const firstOffsets = (page: Page) =>
  page
    .getByRole("table", { name: "Partitions" })
    .locator("tbody tr")
    .evaluateAll((trs) => trs.map((tr) => tr.querySelectorAll("td")[1]?.textContent ?? ""));

describe("the topic page's sections", () => {
  test("a config edited in its row is marked set; a refused value says why there; reset brings the default back", async () => {
    await withPage(browser, "topic config edit", async (page) => {
      await signedIn(page, `/topics/${EDIT}?tab=configs`, "write");
      const row = configRow(page, "retention.ms");
      await row.waitFor();
      const defaultValue = await row.locator("td").nth(2).innerText();
      expect(await row.locator(".badge").count()).toBe(0);

      // A value the broker refuses: its message in the row, the row still editing.
      await row.getByRole("button", { name: "Edit retention.ms" }).click();
      const input = row.getByLabel("New value of retention.ms");
      await input.fill("a week");
      await input.press("Enter");
      const refusal = row.getByRole("alert");
      await refusal.waitFor();
      expect(await refusal.innerText()).toMatch(/retention\.ms/);
      expect(await input.isVisible()).toBe(true);

      await input.fill("86400000");
      await row.getByRole("button", { name: "Save" }).click();
      await row.getByText("86400000set").waitFor();
      expect(await row.getByRole("alert").count()).toBe(0);
      // The input is gone: the keyboard user is back on the row's Edit button.
      const focusedOnEdit = async () => (await page.evaluate("document.activeElement?.getAttribute('aria-label')")) === "Edit retention.ms";
      expect(await focusedOnEdit()).toBe(true);
      // Set on the topic: listed first, and so says the API.
      const first = page.getByRole("table", { name: "Configuration" }).locator("tbody tr").first().locator("td").first();
      expect(await first.innerText()).toBe("retention.ms");
      expect(new URL(page.url()).searchParams.get("tab")).toBe("configs");

      await row.getByRole("button", { name: "Reset retention.ms to its default" }).click();
      await row.locator(".badge").waitFor({ state: "detached" });
      expect(await row.locator("td").nth(1).innerText()).toBe(defaultValue);
      expect(await focusedOnEdit()).toBe(true);
      const api = (await (await server.request(`/api/topics/${EDIT}`, { role: "read" })).json()) as {
        config: Array<{ configuration: string; value: string }>;
      };
      expect(api.config.find((c) => c.configuration === "retention.ms")?.value).toBe(defaultValue);
    });
  }, 60_000);

  test("records deleted up to an offset in one partition, then every record of all: the first offsets move", async () => {
    await withPage(browser, "topic delete records", async (page) => {
      await signedIn(page, `/topics/${RECORDS}`, "write");
      await page.getByRole("table", { name: "Partitions" }).waitFor();
      const before = await page.getByRole("table", { name: "Partitions" }).locator("tbody tr").first().locator("td").nth(2).innerText();
      const end0 = Number(before);
      expect(end0).toBeGreaterThan(1);

      await page.getByRole("button", { name: "Delete records of partition 0…" }).click();
      const dialog = page.getByRole("dialog", { name: `Delete records of ${RECORDS}` });
      await dialog.getByLabel("Up to offset (not included)").fill("1");
      const confirm = dialog.getByRole("button", { name: "Delete records" });
      expect(await confirm.isDisabled()).toBe(true);
      await dialog.getByLabel(/^Delete the records before offset 1 of partition 0/).check();
      expect(await seriousViolations(page)).toEqual([]);
      await confirm.click();
      await dialog.getByText("Done: the records are deleted.").waitFor({ timeout: 30_000 });
      expect(await dialog.getByRole("table", { name: "Partitions after the deletion" }).locator("tbody td").allInnerTexts()).toEqual([
        "0",
        "1",
      ]);
      await dialog.getByRole("button", { name: "Close" }).click();
      expect((await firstOffsets(page))[0]).toBe("1");

      await page.getByRole("button", { name: "Delete records in all partitions…" }).click();
      await dialog.getByLabel("Every record (up to the end offset)").check();
      await dialog.getByLabel(/^Delete every record of every partition/).check();
      await dialog.getByRole("button", { name: "Delete records" }).click();
      await dialog.getByText("Done: the records are deleted.").waitFor({ timeout: 30_000 });
      await dialog.getByRole("button", { name: "Close" }).click();
      const ends = await page
        .getByRole("table", { name: "Partitions" })
        .locator("tbody tr")
        .evaluateAll((trs) => trs.map((tr) => tr.querySelectorAll("td")[2]?.textContent ?? ""));
      expect(await firstOffsets(page)).toEqual(ends);
      await page.getByText("No records yet").waitFor();
    });
  }, 90_000);

  test("key and value types: a refused schema says why in the form; saved types are stored, then forgotten", async () => {
    await withPage(browser, "topic metadata", async (page) => {
      await signedIn(page, `/topics/${EDIT}?tab=metadata`, "write");
      const source = page.getByTestId("metadata-source");
      await source.getByText(/^Guessed/).waitFor();
      const value = page.getByRole("group", { name: "Value" });
      await value.getByLabel("Type").selectOption("AVRO");
      await value.getByLabel(/^Schema/).fill('{"type": "record", "name": "N", "fields": [{"name": "n", "type": "nope"}]}');
      await page.getByRole("button", { name: "Save types" }).click();
      const refusal = page.getByRole("form", { name: "Key and value types" }).getByRole("alert");
      await refusal.waitFor();
      expect(await refusal.innerText()).toContain("Invalid valueSchema: not an Avro schema");

      const schema = '{"type": "record", "name": "N", "fields": [{"name": "n", "type": "long"}]}';
      await value.getByLabel(/^Schema/).fill(schema);
      await page.getByRole("group", { name: "Key" }).getByLabel("Type").selectOption("STRING");
      await page.getByRole("button", { name: "Save types" }).click();
      await page.getByRole("status").getByText("Types saved.").waitFor();
      await source.getByText(/^Stored/).waitFor();
      expect(await value.getByLabel(/^Schema/).inputValue()).toBe(schema);
      await page.getByText("STRING / AVRO", { exact: true }).waitFor();
      const stored = (await (await server.request(`/api/metadata/topics/${EDIT}`, { role: "read" })).json()) as Record<string, unknown>;
      expect(stored).toMatchObject({ keyType: "STRING", valueType: "AVRO", valueSchema: schema, inferred: false });

      await page.getByRole("button", { name: "Forget stored types" }).click();
      await source.getByText(/^Guessed/).waitFor();
      expect(await page.getByRole("button", { name: "Forget stored types" }).count()).toBe(0);
    });
  }, 60_000);

  test("consumers of the topic with their lag, each linking to its group", async () => {
    await withPage(browser, "topic consumers", async (page) => {
      await signedIn(page, `/topics/${EDIT}?tab=consumers&cluster=local`);
      const row = page.getByRole("table", { name: "Consumer groups" }).getByRole("row", { name: new RegExp(`^${GROUP}`) });
      await row.waitFor();
      expect(await row.locator("td").nth(3).innerText()).toBe("2");
      await row.getByRole("link", { name: GROUP }).click();
      await page.waitForURL(`${server.url}/consumers/${GROUP}?cluster=local`);
    });
  }, 60_000);

  test("the Data link opens the SQL workbench on the topic, keeping the cluster", async () => {
    await withPage(browser, "topic data link", async (page) => {
      await signedIn(page, `/topics/${DETAIL}?cluster=local`);
      await sections(page).getByRole("link", { name: "Data", exact: true }).click();
      await page.waitForURL((url) => url.pathname === "/sql");
      const url = new URL(page.url());
      // The name has dashes: the dialect wants it in backticks.
      expect(url.searchParams.get("q")).toBe(`SELECT * FROM \`${DETAIL}\` LIMIT 100`);
      expect(url.searchParams.get("cluster")).toBe("local");
    });
  }, 60_000);

  test("a read user is offered no change on any section", async () => {
    await withPage(browser, "topic read user sections", async (page) => {
      await signedIn(page, `/topics/${EDIT}`);
      await page.getByTestId("who").waitFor();
      await page.getByRole("table", { name: "Partitions" }).waitFor();
      expect(await page.getByRole("button", { name: /Delete/ }).count()).toBe(0);
      await sections(page).getByRole("link", { name: "Configs" }).click();
      await configRow(page, "retention.ms").waitFor();
      expect(await page.getByRole("button", { name: /^(Edit|Reset)/ }).count()).toBe(0);
      await sections(page).getByRole("link", { name: "Metadata" }).click();
      await page.getByText("Key type").waitFor();
      expect(
        await page
          .getByRole("button")
          .filter({ hasText: /Save|Forget/ })
          .count(),
      ).toBe(0);
      expect(await page.getByRole("textbox").count()).toBe(0);
      // Reading records is allowed: the Data link is there.
      expect(await sections(page).getByRole("link", { name: "Data", exact: true }).count()).toBe(1);
    });
  }, 60_000);

  test("a nodata user sees no Data link, no SQL workbench in the navigation, and no group link", async () => {
    await withPage(browser, "topic nodata user", async (page) => {
      await signedIn(page, `/topics/${EDIT}?tab=consumers`, "nodata");
      await page.getByTestId("who").getByText("nodata").waitFor();
      const row = page.getByRole("table", { name: "Consumer groups" }).getByRole("row", { name: new RegExp(`^${GROUP}`) });
      await row.waitFor();
      expect(await row.getByRole("link").count()).toBe(0);
      expect(await sections(page).getByRole("link", { name: "Partitions" }).count()).toBe(1);
      expect(await sections(page).getByRole("link", { name: "Data", exact: true }).count()).toBe(0);
      const nav = page.getByRole("navigation", { name: "Main" });
      expect(await nav.getByRole("link", { name: "Topics" }).count()).toBe(1);
      expect(await nav.getByRole("link", { name: "SQL" }).count()).toBe(0);
      expect(await page.getByRole("button", { name: /Delete|Edit/ }).count()).toBe(0);
    });
  }, 60_000);

  test("axe-core: no serious or critical violation on any section, in light and dark", async () => {
    for (const colorScheme of ["light", "dark"] as const)
      await withPage(
        browser,
        `topic sections axe ${colorScheme}`,
        async (page) => {
          await signedIn(page, `/topics/${EDIT}`, "write");
          await page.getByRole("button", { name: "Delete records of partition 0…" }).waitFor();
          expect(await page.evaluate("document.documentElement.dataset.theme")).toBe(colorScheme);
          for (const [tab, ready] of [
            ["Partitions", page.getByRole("table", { name: "Partitions" })],
            ["Configs", page.getByRole("table", { name: "Configuration" })],
            ["Consumers", page.getByRole("table", { name: "Consumer groups" })],
            ["Metadata", page.getByRole("button", { name: "Save types" })],
          ] as const) {
            await sections(page).getByRole("link", { name: tab }).click();
            await ready.waitFor();
            expect({ tab, violations: await seriousViolations(page) }).toEqual({ tab, violations: [] });
          }
          await sections(page).getByRole("link", { name: "Configs" }).click();
          await configRow(page, "segment.ms").getByRole("button", { name: "Edit segment.ms" }).click();
          expect({ tab: "config editing", violations: await seriousViolations(page) }).toEqual({ tab: "config editing", violations: [] });
        },
        { colorScheme },
      );
  }, 90_000);
});
