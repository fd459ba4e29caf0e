/**
 * The topics page in a real browser: search as you type, sort by a column, internal topics
 * hidden unless asked, all of it in the URL (a reload keeps it), and rows virtualized (the
 * page holds only the rows in view, however many topics match). A topic's page: its messages
 * (newest first, from an offset or a time, a live tail, headers, raw bytes, a quick filter that
 * becomes SQL), producing records (string, JSON, Avro; offered only where the user may write),
 * configs in words, partitions added; axe-clean in both themes, with no console error.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Locator, Page } from "playwright-core";
import type { KafkaPool } from "../../src/kafka/index.ts";
import { registryEnv } from "../cluster/cluster.ts";
import { registerSchema } from "../helpers/registry.ts";
import type { ROLE_USERS } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { waitFor } from "../helpers/wait.ts";
import { testPool, waitForLeaders } from "../kafka/helpers.ts";
import { compiledLoupe, createTopic, insert, launchChromium, seriousViolations, withPage } from "./browser.ts";

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
/** 23: the message browser's topic: 25 records in partition 0, 5 in 1, a second apart, headers on the even ones. */
const BROWSE = `${RUN}-browse`;
const T0 = Date.UTC(2024, 0, 1, 12);
/** 23: produced to through the dialog: JSON, and Avro with its registry subject. */
const PRODUCE = `${RUN}-produce`;
const AVRO = `${RUN}-avro`;
/** 23: Loupe's own (internal) topic, and one a scoped writer may write. */
const LOUPE_OWN = `_loupe-${RUN}`;
const OWN = `${RUN}-own-orders`;
/** 23: partitions added through the page. */
const GROW = `${RUN}-grow`;
const SCOPED = { name: `wes-${RUN}`, password: "scoped-writer-pw" };

let server: ServerProcess;
let browser: Browser;
let pool: KafkaPool;

beforeAll(async () => {
  server = await startServerProcess({ schemaRegistry: registryEnv() }, { executable: await compiledLoupe() });
  pool = testPool();
  // The list's 40 straight on the broker, side by side: through the API, one after another, each
  // waited for its leaders and raised its notification (some 10 s in all).
  const kafka = pool.default();
  await Promise.all(TOPICS.map((t) => kafka.topics.create({ name: t.topicName, partitions: t.partitions, replication: 1 })));
  await Promise.all(TOPICS.map((t) => waitForLeaders(kafka, t.topicName, t.partitions, 30_000)));
  for (const t of [
    { topicName: INTERNAL, partitions: 1 },
    { topicName: DETAIL, partitions: 2, configs: { "retention.ms": "3600000" } },
    { topicName: EDIT, partitions: 1 },
    { topicName: RECORDS, partitions: 2 },
    { topicName: BROWSE, partitions: 2 },
    { topicName: PRODUCE, partitions: 3 },
    { topicName: AVRO, partitions: 1 },
    { topicName: LOUPE_OWN, partitions: 1 },
    { topicName: OWN, partitions: 1 },
    { topicName: GROW, partitions: 2 },
  ]) {
    await createTopic(server, t.topicName, t.partitions, "configs" in t ? t.configs : undefined);
  }
  // Five records, through the API as the JDBC driver writes them (keys pick the partitions).
  await insert(server, `INSERT INTO \`${DETAIL}\` (_key, n) VALUES ('a', 1), ('b', 2), ('c', 3), ('d', 4), ('e', 5)`);
  await insert(server, `INSERT INTO \`${EDIT}\` (_key, n) VALUES ('a', 1), ('b', 2), ('c', 3)`);
  await insert(server, `INSERT INTO \`${RECORDS}\` (_key, n) VALUES ('a', 1), ('b', 2), ('c', 3), ('d', 4), ('e', 5), ('f', 6)`);
  // A group with no member that has read one record of three: a lag of two.
  await pool.default().groups.alterOffsets(GROUP, [{ topic: EDIT, partition: 0, offset: 1 }]);
  await pool.default().writes.produce(
    BROWSE,
    Array.from({ length: 30 }, (_, n) => ({
      partition: n < 25 ? 0 : 1,
      key: `k${n}`,
      value: JSON.stringify({ n, name: `record ${n}`, big: "12345678901234567890" }),
      timestamp: T0 + n * 1_000,
      ...(n % 2 === 0 ? { headers: { trace: `t-${n}` } } : {}),
    })),
  );
  await registerSchema(`${AVRO}-value`, {
    type: "record",
    name: "Reading",
    fields: [
      { name: "sensor", type: "string" },
      { name: "celsius", type: "double" },
      { name: "note", type: ["null", "string"], default: null },
    ],
  });
  // A writer of OWN only, who reads the run's other topics.
  for (const group of [
    { name: `own-writers-${RUN}`, roles: ["write"], clusters: ["*"], topics: { allow: [OWN], deny: [] } },
    { name: `run-readers-${RUN}`, roles: ["read"], clusters: ["*"], topics: { allow: [`${RUN}-*`], deny: [] } },
  ]) {
    const res = await server.request("/api/groups", { method: "POST", role: "admin", body: JSON.stringify(group) });
    if (res.status !== 201) throw new Error(`group: ${res.status} ${await res.text()}`);
  }
  const user = await server.request("/api/users", {
    method: "POST",
    role: "admin",
    body: JSON.stringify({ ...SCOPED, groups: [`own-writers-${RUN}`, `run-readers-${RUN}`] }),
  });
  if (user.status !== 201) throw new Error(`user: ${user.status} ${await user.text()}`);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await pool
    ?.default()
    .groups.delete([GROUP])
    .catch(() => {});
  await pool?.close();
  for (const t of [...TOPICS.map((x) => x.topicName), INTERNAL, DETAIL, MADE, EDIT, RECORDS, BROWSE, PRODUCE, AVRO, LOUPE_OWN, OWN, GROW])
    await server?.request(`/api/topics/${t}`, { method: "DELETE", role: "admin" }).catch(() => {});
  await browser?.close();
  await server?.stop();
});

/**
 * Opens `path` signed in as the user holding `role`: the tab holds the session's token (from the
 * API's login, as the login form stores it) before the page's scripts run, so the page opens at
 * once, without the login form (which the pages and shell tests fill in).
 */
async function signedIn(page: Page, path: string, role: keyof typeof ROLE_USERS = "read"): Promise<void> {
  const token = JSON.stringify(await server.token(role));
  await page.addInitScript({ content: `sessionStorage.setItem("loupe.token", ${token});` });
  await page.goto(`${server.url}${path}`);
}

/** The text of what describes a control (its problem or hint line). */
async function describedBy(page: Page, control: Locator): Promise<string> {
  const id = await control.getAttribute("aria-describedby");
  return id ? page.locator(`[id="${id}"]`).innerText() : "";
}

/**
 * Errors the page logs (a failed request, a script error, a CSP violation), watched from the
 * first request. The browser's own request for /favicon.ico is not the page's.
 */
function consoleErrors(page: Page): string[] {
  const seen: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" && !m.location().url.endsWith("/favicon.ico")) seen.push(`${m.text()} (${m.location().url})`);
  });
  page.on("pageerror", (e) => seen.push(e.message));
  return seen;
}

/** The topic names and partition counts of the rows in the page, top to bottom. */
async function shownRows(page: Page): Promise<Array<{ name: string; partitions: number }>> {
  const rows = await page.locator("table.grid tbody tr").evaluateAll((trs) =>
    trs
      .map((tr) => ({
        y: tr.getBoundingClientRect().top,
        // The name is the link's text (an internal topic's badge sits beside it).
        cells: [...tr.querySelectorAll("td")].map((td) => (td.querySelector("a") ?? td).textContent ?? ""),
      }))
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
        await count.getByText(/^40 of [\d,]+ topics/).waitFor();
        // Virtualized: only the rows in view (and a few beyond) are in the page.
        const first = await shownRows(page);
        expect(first.length).toBeGreaterThan(5);
        expect(first.length).toBeLessThan(40);
        expect(first[0]!.name).toBe(`${RUN}-t00`);

        // The server sorts: the table is busy until the new order is in.
        const sorted = page.locator('table.grid[aria-busy="false"]');
        await page.getByRole("button", { name: "Partitions" }).click();
        await page.waitForURL(/sort=partitions/);
        await sorted.waitFor();
        expect((await shownRows(page))[0]!.partitions).toBe(1);
        await page.getByRole("button", { name: /Partitions/ }).click();
        await page.waitForURL(/dir=desc/);
        await sorted.waitFor();
        const desc = await shownRows(page);
        expect(desc[0]).toEqual({ name: `${RUN}-t02`, partitions: 3 });
        expect(await page.getByRole("columnheader", { name: /Partitions/ }).getAttribute("aria-sort")).toBe("descending");

        // A reload keeps the state: it is all in the URL.
        await page.reload();
        await count.getByText(/^40 of [\d,]+ topics/).waitFor();
        expect((await shownRows(page))[0]).toEqual(desc[0]);

        // Search as you type.
        await page.getByLabel("Search").fill(`${RUN}-t07`);
        await count.getByText(/^1 of [\d,]+ topics/).waitFor();
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
      await signedIn(page, `/topics/${DETAIL}?tab=partitions`);
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
      // In words first, the broker's value beside.
      expect(await retention.locator("td").nth(1).locator(".config-value").allInnerTexts()).toEqual(["1 h", "3600000"]);
      expect(await retention.locator(".badge").innerText()).toBe("set");
      // What is set on the topic comes first.
      const firstConfig = page.getByRole("table", { name: "Configuration" }).locator("tbody tr").first().locator(".config-key");
      expect(await firstConfig.innerText()).toBe("retention.ms");
      const cleanup = page.getByRole("table", { name: "Configuration" }).getByRole("row", { name: /^cleanup\.policy/ });
      expect(await cleanup.locator(".badge").count()).toBe(0);
      expect(await seriousViolations(page)).toEqual([]);
    });
  }, 60_000);

  test("create through the dialog (the name checked as it is typed, the API's refusal said in it), then delete by typing the name", async () => {
    await withPage(browser, "topic create delete", async (page) => {
      await signedIn(page, `/topics?q=${RUN}`, "write");
      await page.getByRole("link", { name: DETAIL }).waitFor();
      await page.getByRole("button", { name: "Create topic…" }).click();
      const create = page.getByRole("dialog", { name: "Create a topic" });
      const name = create.getByLabel("Name");
      const button = create.getByRole("button", { name: "Create" });
      // 23: the name is checked as it is typed: Kafka's characters, and a topic that exists.
      await name.fill("not a name!");
      expect(await describedBy(page, name)).toBe("Only letters, digits, '.', '_' and '-': not a space, '!'.");
      expect(await name.getAttribute("aria-invalid")).toBe("true");
      expect(await button.isDisabled()).toBe(true);
      await name.fill(DETAIL);
      expect(await describedBy(page, name)).toBe(`Topic '${DETAIL}' exists already.`);
      expect(await button.isDisabled()).toBe(true);
      // A value the broker refuses: its message in the dialog, nothing created.
      await name.fill(MADE);
      await create.getByRole("button", { name: "Add config" }).click();
      await create.getByLabel("Config 1 name").fill("retention.ms");
      await create.getByLabel("Config 1 value").fill("a week");
      await button.click();
      const refusal = create.getByRole("alert");
      await refusal.waitFor();
      expect(await refusal.innerText()).toContain("retention.ms");
      expect(await seriousViolations(page)).toEqual([]);

      await create.getByRole("button", { name: "Remove config 1" }).click();
      await create.getByLabel(/^Partitions/).fill("2");
      await create.getByLabel("Configuration").selectOption("compacted");
      // 23: free config entries beside the preset's, a size typed in words.
      await create.getByRole("button", { name: "Add config" }).click();
      await create.getByLabel("Config 2 name").fill("max.message.bytes");
      await create.getByLabel("Config 2 value").fill("2 MiB");
      await create.getByText("= 2097152 (2 MiB)").waitFor();
      await button.click();
      // On to the new topic's page.
      await page.waitForURL(`${server.url}/topics/${MADE}`);
      // A writer reads records: the new topic opens on its (empty) messages.
      await page.getByText("No records in this range.").waitFor();
      await sections(page).getByRole("link", { name: "Partitions" }).click();
      const partitions = page.getByRole("table", { name: "Partitions" });
      await partitions.waitFor();
      expect(await partitions.locator("tbody tr").count()).toBe(2);
      await page.getByRole("link", { name: "Configs" }).click();
      const policy = page.getByRole("table", { name: "Configuration" }).getByRole("row", { name: /^cleanup\.policy/ });
      expect(await policy.locator("td").nth(1).innerText()).toBe("compactset");
      const size = page.getByRole("table", { name: "Configuration" }).getByRole("row", { name: /^max\.message\.bytes/ });
      expect(await size.locator("td").nth(1).locator(".config-value").allInnerTexts()).toEqual(["2 MiB", "2097152"]);

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
      await page.getByRole("table", { name: "Messages" }).waitFor();
      expect(await page.getByRole("button", { name: /Delete topic/ }).count()).toBe(0);
      expect(await page.getByRole("button", { name: /Produce/ }).count()).toBe(0);
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
      const apiValue = async () =>
        (
          (await (await server.request(`/api/topics/${EDIT}`, { role: "read" })).json()) as {
            config: Array<{ configuration: string; value: string }>;
          }
        ).config.find((c) => c.configuration === "retention.ms")?.value;
      const defaultValue = (await apiValue())!;
      // Not set: no default column to read, the value in words beside the broker's.
      expect(await row.locator("td").nth(2).innerText()).toBe("");
      expect(await row.locator("td").nth(1).locator(".config-value").last().innerText()).toBe(defaultValue);
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
      await row.locator(".badge").getByText("set").waitFor();
      expect(await row.locator("td").nth(1).locator(".config-value").allInnerTexts()).toEqual(["1 d", "86400000"]);
      // Set: the default shows beside it, in words too.
      expect(await row.locator("td").nth(2).locator(".config-value").last().innerText()).toBe(defaultValue);
      expect(await row.getByRole("alert").count()).toBe(0);
      // The input is gone: the keyboard user is back on the row's Edit button.
      const focusedOnEdit = async () => (await page.evaluate("document.activeElement?.getAttribute('aria-label')")) === "Edit retention.ms";
      expect(await focusedOnEdit()).toBe(true);
      // Set on the topic: listed first, and so says the API.
      const first = page.getByRole("table", { name: "Configuration" }).locator("tbody tr").first().locator(".config-key");
      expect(await first.innerText()).toBe("retention.ms");
      expect(new URL(page.url()).searchParams.get("tab")).toBe("configs");

      await row.getByRole("button", { name: "Reset retention.ms to its default" }).click();
      await row.locator(".badge").waitFor({ state: "detached" });
      expect(await row.locator("td").nth(1).locator(".config-value").last().innerText()).toBe(defaultValue);
      expect(await focusedOnEdit()).toBe(true);
      expect(await apiValue()).toBe(defaultValue);
    });
  }, 60_000);

  test("records deleted up to an offset in one partition, then every record of all: the first offsets move", async () => {
    await withPage(browser, "topic delete records", async (page) => {
      await signedIn(page, `/topics/${RECORDS}?tab=partitions`, "write");
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
      expect(await row.locator("td").nth(1).innerText()).toBe("classic");
      expect(await row.locator("td").nth(4).innerText()).toBe("2");
      await row.getByRole("link", { name: GROUP }).click();
      await page.waitForURL(`${server.url}/consumers/${GROUP}?cluster=local`);
    });
  }, 60_000);

  test("23: the Query in SQL link opens the SQL workbench on the topic and runs it, keeping the cluster", async () => {
    await withPage(browser, "topic data link", async (page) => {
      await signedIn(page, `/topics/${DETAIL}?cluster=local`);
      await sections(page).getByRole("link", { name: "Query in SQL" }).click();
      await page.waitForURL((url) => url.pathname === "/sql");
      const url = new URL(page.url());
      // The name has dashes: the dialect wants it in backticks.
      expect(url.searchParams.get("q")).toBe(`SELECT * FROM \`${DETAIL}\` LIMIT 100`);
      expect(url.searchParams.get("cluster")).toBe("local");
      // 23: "Data" runs the query: its rows come without pressing Run (it used to open the workbench idle).
      await page.getByRole("table", { name: "Results" }).locator("tbody tr").first().waitFor();
      expect(new URL(page.url()).searchParams.get("run")).toBeNull();
    });
  }, 60_000);

  test("a read user is offered no change on any section", async () => {
    await withPage(browser, "topic read user sections", async (page) => {
      await signedIn(page, `/topics/${EDIT}?tab=partitions`);
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
      // Reading records is allowed: the Messages section and the SQL link are there.
      expect(await sections(page).getByRole("link", { name: "Messages" }).count()).toBe(1);
      expect(await sections(page).getByRole("link", { name: "Query in SQL" }).count()).toBe(1);
    });
  }, 60_000);

  test("a nodata user sees no Messages section, no SQL link, no SQL workbench in the navigation, and no group link", async () => {
    await withPage(browser, "topic nodata user", async (page) => {
      await signedIn(page, `/topics/${EDIT}?tab=consumers`, "nodata");
      await page.getByTestId("who").getByText("nodata").waitFor();
      const row = page.getByRole("table", { name: "Consumer groups" }).getByRole("row", { name: new RegExp(`^${GROUP}`) });
      await row.waitFor();
      expect(await row.getByRole("link").count()).toBe(0);
      expect(await sections(page).getByRole("link", { name: "Partitions" }).count()).toBe(1);
      expect(await sections(page).getByRole("link", { name: "Query in SQL" }).count()).toBe(0);
      expect(await sections(page).getByRole("link", { name: "Messages" }).count()).toBe(0);
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
          await signedIn(page, `/topics/${EDIT}?tab=partitions`, "write");
          await page.getByRole("button", { name: "Delete records of partition 0…" }).waitFor();
          expect(await page.evaluate("document.documentElement.dataset.theme")).toBe(colorScheme);
          for (const [tab, ready] of [
            ["Messages", page.getByRole("table", { name: "Messages" })],
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

/** The rows of the Messages table: partition, offset and key of each, top to bottom. */
const messageRows = (page: Page) =>
  page
    .getByRole("table", { name: "Messages" })
    .locator("tbody tr:not(.record-detail)")
    .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].slice(1, 5).map((td) => td.textContent ?? "")))
    .then((rows) => rows.map(([partition, offset, , key]) => `${partition}/${offset} ${key}`));
const status = (page: Page) => page.getByTestId("browse-status");
const pad = (n: number, w = 2) => String(n).padStart(w, "0");
/** A time as the page's datetime-local input takes it, in this machine's zone (the browser's). */
function localInput(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

describe("23: the message browser", () => {
  test("23: the Messages section comes first for a reader: newest first; a record opens to its pretty value, raw bytes, headers and timestamp type", async () => {
    await withPage(browser, "messages newest", async (page) => {
      const errors = consoleErrors(page);
      await signedIn(page, `/topics/${BROWSE}`);
      await page.getByRole("table", { name: "Messages" }).waitFor();
      expect(await sections(page).getByRole("link", { name: "Messages" }).getAttribute("aria-current")).toBe("page");
      await status(page).getByText("30 records, newest first: all there are.").waitFor();
      expect((await messageRows(page)).slice(0, 3)).toEqual(["1/4 k29", "1/3 k28", "1/2 k27"]);

      await page.getByRole("button", { name: "Record 1/3" }).click();
      expect(await page.getByRole("button", { name: "Record 1/3" }).getAttribute("aria-expanded")).toBe("true");
      const value = page.getByRole("region", { name: "Value of record 1/3" });
      // Pretty JSON, every digit of a big number kept.
      expect(await value.locator("pre").innerText()).toBe(`{\n  "n": 28,\n  "name": "record 28",\n  "big": "12345678901234567890"\n}`);
      expect(await value.innerText()).toContain("JSON · 56 B");
      await value.getByRole("button", { name: "Raw bytes" }).click();
      expect(await value.getByRole("button", { name: "Raw bytes" }).getAttribute("aria-pressed")).toBe("true");
      expect(await value.locator("pre.raw").innerText()).toStartWith("00000000  7b 22 6e 22 3a 32 38 2c");
      const headers = page.getByRole("table", { name: "Headers of record 1/3" });
      expect(await headers.locator("tbody td").allInnerTexts()).toEqual(["trace", "t-28"]);
      expect(await page.locator("tr.record-detail").innerText()).toContain("CreateTime (set by the producer)");
      expect(await page.locator("tr.record-detail").innerText()).toContain(new Date(T0 + 28_000).toISOString());
      expect(await seriousViolations(page)).toEqual([]);
      expect(errors).toEqual([]);
    });
  }, 60_000);

  test("23: seek by offset and by time, kept in the URL; load older goes on where the page stopped", async () => {
    await withPage(browser, "messages seek", async (page) => {
      const errors = consoleErrors(page);
      await signedIn(page, `/topics/${BROWSE}`);
      await page.getByRole("table", { name: "Messages" }).waitFor();
      const form = page.getByRole("form", { name: "Read records" });
      await form.getByLabel("Partition").selectOption("0");
      await form.getByLabel("Start").selectOption("offset");
      await form.getByLabel("Offset", { exact: true }).fill("21");
      await form.getByLabel("Records").selectOption("20");
      await form.getByRole("button", { name: "Read" }).click();
      await page.waitForURL(/seek=offset/);
      const url = new URL(page.url());
      expect(Object.fromEntries(url.searchParams)).toMatchObject({ seek: "offset", partition: "0", offset: "21", limit: "20" });
      await status(page).getByText("4 records, oldest first: all there are.").waitFor();
      expect(await messageRows(page)).toEqual(["0/21 k21", "0/22 k22", "0/23 k23", "0/24 k24"]);

      // From a time, in the browser's zone: each partition from its first record at or after it.
      await form.getByLabel("Partition").selectOption("");
      await form.getByLabel("Start").selectOption("time");
      await form.getByLabel("Time (local)").fill(localInput(T0 + 22_500));
      await form.getByRole("button", { name: "Read" }).click();
      await page.waitForURL((u) => u.searchParams.get("seek") === "time");
      expect(new URL(page.url()).searchParams.get("time")).toBe(String(T0 + 22_500));
      await status(page).getByText("7 records, oldest first: all there are.").waitFor();
      expect((await messageRows(page)).map((r) => r.split(" ")[1])).toEqual(["k23", "k24", "k25", "k26", "k27", "k28", "k29"]);

      // Newest 20, then the older 10 below them.
      await form.getByLabel("Start").selectOption("newest");
      await form.getByRole("button", { name: "Read" }).click();
      await status(page).getByText("20 records, newest first. Older records remain in partition 0.").waitFor();
      await page.getByRole("button", { name: "Load older records" }).click();
      await status(page).getByText("30 records, newest first: all there are.").waitFor();
      const keys = (await messageRows(page)).map((r) => r.split(" ")[1]);
      expect(keys).toEqual(Array.from({ length: 30 }, (_, i) => `k${29 - i}`));
      expect(await page.getByRole("button", { name: "Load older records" }).count()).toBe(0);
      // A reload reads the same again: it is all in the URL.
      await page.reload();
      await status(page).getByText("20 records, newest first. Older records remain in partition 0.").waitFor();
      expect(errors).toEqual([]);
    });
  }, 60_000);

  test("23: the quick filter narrows the rows and opens the workbench on the same search in SQL, which finds the record", async () => {
    await withPage(browser, "messages filter", async (page) => {
      await signedIn(page, `/topics/${BROWSE}?cluster=local`);
      await page.getByRole("table", { name: "Messages" }).waitFor();
      await page.getByLabel("Filter").fill("RECORD 17");
      await page.getByText("1 of 30 rows match.").waitFor();
      expect(await messageRows(page)).toEqual(["0/17 k17"]);
      await page.getByLabel("Filter").fill("t-16");
      expect(await messageRows(page)).toEqual(["0/16 k16"]);
      await page.getByLabel("Filter").fill("record 17");
      await page.getByRole("link", { name: "Search the topic in SQL" }).click();
      await page.waitForURL((u) => u.pathname === "/sql");
      const url = new URL(page.url());
      expect(url.searchParams.get("cluster")).toBe("local");
      const sql = url.searchParams.get("q")!;
      expect(sql).toBe(
        `SELECT * FROM \`${BROWSE}\` WHERE (LOWERCASE(CAST(_key AS STRING)) LIKE '%record 17%' OR LOWERCASE(CAST(_value AS STRING)) LIKE '%record 17%') LIMIT 50`,
      );
      const res = await server.request(`/api/sql/data?${new URLSearchParams({ sql })}`, {
        role: "read",
        headers: { accept: "application/json" },
      });
      const answer = (await res.json()) as { messages: Array<{ key: string }> };
      expect(answer.messages.map((m) => m.key)).toEqual(["k17"]);
    });
  }, 60_000);

  test("23: a live tail shows records written after it began, newest at the top, with their headers", async () => {
    await withPage(browser, "messages live tail", async (page) => {
      const errors = consoleErrors(page);
      await signedIn(page, `/topics/${BROWSE}`);
      await page.getByRole("table", { name: "Messages" }).waitFor();
      await page.getByRole("button", { name: "Live tail" }).click();
      await status(page).getByText("Live: 0 new records since the tail began, newest first.").waitFor();
      expect(await page.getByRole("button", { name: "Stop live tail" }).getAttribute("aria-pressed")).toBe("true");
      const res = await server.request(`/api/topics/${BROWSE}/records`, {
        method: "POST",
        role: "write",
        body: JSON.stringify({
          records: [
            { key: "tail-1", value: '{"n": 100}', partition: 1, headers: { via: "tail" } },
            { key: "tail-2", value: '{"n": 101}', partition: 1 },
          ],
        }),
      });
      expect(res.status).toBe(200);
      await status(page).getByText("Live: 2 new records since the tail began, newest first.").waitFor({ timeout: 15_000 });
      expect((await messageRows(page)).slice(0, 3)).toEqual(["1/6 tail-2", "1/5 tail-1", "1/4 k29"]);
      await page.getByRole("button", { name: "Record 1/5" }).click();
      expect(await page.getByRole("table", { name: "Headers of record 1/5" }).locator("tbody td").allInnerTexts()).toEqual(["via", "tail"]);
      await page.getByRole("button", { name: "Stop live tail" }).click();
      await page.getByRole("button", { name: "Live tail" }).waitFor();
      expect(errors).toEqual([]);
    });
  }, 60_000);
});

describe("23: producing records from the topic page", () => {
  test("23: a string key, a JSON value, a header and a partition: the answer says where each record went, and it reads back", async () => {
    await withPage(browser, "produce json", async (page) => {
      const errors = consoleErrors(page);
      await signedIn(page, `/topics/${PRODUCE}`, "write");
      await page.getByRole("button", { name: "Produce records…" }).click();
      const dialog = page.getByRole("dialog", { name: `Produce to ${PRODUCE}` });
      await dialog.getByText("STRING: the default: no metadata or subject names one").waitFor();
      await dialog.getByText("JSON: the default: no metadata or subject names one").waitFor();
      await dialog.getByLabel("Partition").selectOption("2");
      await dialog.getByLabel("Key", { exact: true }).fill("order-7");
      const value = dialog.getByLabel("Value", { exact: true });
      await value.fill('{"id": 7, "total": 12.50');
      const send = dialog.getByRole("button", { name: "Produce", exact: true });
      // Checked as it is typed: no JSON, no sending.
      expect(await describedBy(page, value)).toStartWith("Not valid JSON");
      expect(await send.isDisabled()).toBe(true);
      await value.fill('{"id": 7, "total": 12.50}');
      expect(await send.isDisabled()).toBe(false);
      await dialog.getByRole("button", { name: "Add header" }).click();
      await dialog.getByLabel("Header 1 name").fill("trace-id");
      await dialog.getByLabel("Header 1 value").fill("abc-123");
      expect(await seriousViolations(page)).toEqual([]);
      await send.click();
      await dialog.getByRole("status").getByText("1 record written as STRING / JSON.").waitFor();
      expect(await dialog.getByRole("table", { name: "Records written" }).locator("tbody td").allInnerTexts()).toEqual(["1", "2", "0"]);
      await dialog.getByRole("button", { name: "Close" }).click();

      const read = (await (await server.request(`/api/topics/${PRODUCE}/records?partition=2`, { role: "read" })).json()) as {
        records: Array<{ key: { text: string }; value: { text: string }; headers: unknown[] }>;
      };
      expect(read.records[0]).toMatchObject({
        key: { text: "order-7" },
        value: { text: '{"id": 7, "total": 12.50}' },
        headers: [{ key: "trace-id", value: "abc-123", base64: false }],
      });
      expect(errors).toEqual([]);
    });
  }, 60_000);

  test("23: Avro: the template comes from the registry subject, a value that does not fit is refused as it is typed; several records as JSON lines", async () => {
    await withPage(browser, "produce avro", async (page) => {
      const errors = consoleErrors(page);
      await signedIn(page, `/topics/${AVRO}`, "write");
      await page.getByRole("button", { name: "Produce records…" }).click();
      const dialog = page.getByRole("dialog", { name: `Produce to ${AVRO}` });
      await dialog.getByText(`AVRO: from the registry subject ${AVRO}-value`).waitFor();
      const value = dialog.getByLabel("Value", { exact: true });
      await waitFor(async () => (await value.inputValue()) !== "", { what: "the Avro template" });
      expect(JSON.parse(await value.inputValue())).toEqual({ sensor: "", celsius: 0, note: null });
      await value.fill('{"sensor": "s1", "celsius": "warm", "note": null}');
      expect(await describedBy(page, value)).toBe('celsius: "warm" is not a double');
      await value.fill('{"sensor": "s1", "celsius": 21.5, "colour": "red"}');
      expect(await describedBy(page, value)).toBe("colour: the schema's Reading has no field 'colour'");
      const send = dialog.getByRole("button", { name: "Produce", exact: true });
      expect(await send.isDisabled()).toBe(true);
      await value.fill('{"sensor": "s1", "celsius": 21.5}');
      await send.click();
      await dialog.getByRole("status").getByText("1 record written as STRING / AVRO.").waitFor();
      await dialog.getByRole("button", { name: "Produce more" }).click();

      // Several at once, one JSON object a line; a line that does not fit says which.
      await dialog.getByLabel("Several records, one JSON object a line").check();
      const lines = dialog.getByLabel("Records (JSON lines)");
      await lines.fill(`{"key": "a", "value": {"sensor": "s2", "celsius": 1}}\n{"key": "b", "value": {"sensor": "s3"}}`);
      expect(await describedBy(page, lines)).toBe("Line 2: value: celsius: not set, and the schema gives it no default");
      await lines.fill(
        `{"key": "a", "value": {"sensor": "s2", "celsius": 1}}\n{"key": "b", "value": {"sensor": "s3", "celsius": 2}, "headers": {"batch": "1"}}`,
      );
      expect(await seriousViolations(page)).toEqual([]);
      await dialog.getByRole("button", { name: "Produce 2 records" }).click();
      await dialog.getByRole("status").getByText("2 records written as STRING / AVRO.").waitFor();
      await dialog.getByRole("button", { name: "Close" }).click();

      // Read back in the Messages section, decoded from the registry's Avro.
      await page.getByRole("button", { name: "Read" }).click();
      await status(page).getByText("3 records, newest first: all there are.").waitFor();
      await page.getByRole("button", { name: "Record 0/2" }).click();
      const shown = page.getByRole("region", { name: "Value of record 0/2" });
      expect(await shown.innerText()).toContain("AVRO");
      expect(await shown.locator("pre").innerText()).toContain('"celsius": 2.0');
      expect(errors).toEqual([]);
    });
  }, 60_000);

  test("23: producing is offered only where the user may write: not to read or nodata, not on an internal topic, not beyond a scoped writer's topics", async () => {
    const produceButton = (page: Page) => page.getByRole("button", { name: "Produce records…" });
    for (const role of ["read", "nodata"] as const)
      await withPage(browser, `produce offered ${role}`, async (page) => {
        await signedIn(page, `/topics/${PRODUCE}`, role);
        await page.getByRole("navigation", { name: "Topic sections" }).waitFor();
        await page.getByRole("table", { name: role === "read" ? "Messages" : "Partitions" }).waitFor();
        expect(await produceButton(page).count()).toBe(0);
      });
    await withPage(browser, "produce offered internal", async (page) => {
      await signedIn(page, `/topics/${LOUPE_OWN}`, "write");
      const notice = page.getByTestId("internal-notice");
      await notice.waitFor();
      expect(await notice.innerText()).toContain(
        "Internal topic. Its records are the machinery of Loupe: only an admin without limits reads or writes them.",
      );
      expect(await produceButton(page).count()).toBe(0);
      expect(await sections(page).getByRole("link", { name: "Messages" }).count()).toBe(0);
      expect(await page.getByRole("button", { name: /Delete/ }).count()).toBe(0);
    });
    await withPage(browser, "produce offered scoped", async (page) => {
      await page.goto(`${server.url}/topics/${PRODUCE}`);
      await page.getByLabel("User name").fill(SCOPED.name);
      await page.getByLabel("Password").fill(SCOPED.password);
      await page.getByLabel("Password").press("Enter");
      await page.getByRole("table", { name: "Messages" }).waitFor();
      // Write somewhere, read here: the page offers what this topic allows.
      expect(await produceButton(page).count()).toBe(0);
      expect(await page.getByRole("button", { name: /Delete topic/ }).count()).toBe(0);
      await page.goto(`${server.url}/topics/${OWN}`);
      await produceButton(page).waitFor();
    });
  }, 90_000);
});

describe("23: configs and partitions", () => {
  test("23: configs read like a person wrote them: a time in words beside its value, the doc under each name, the default only where it differs; 2d is taken for a time", async () => {
    await withPage(browser, "configs humane", async (page) => {
      const errors = consoleErrors(page);
      await signedIn(page, `/topics/${DETAIL}?tab=configs`, "write");
      const table = page.getByRole("table", { name: "Configuration" });
      const retention = configRow(page, "retention.ms");
      await retention.waitFor();
      // Set on the topic: first, in words, with the broker's default beside it only here.
      expect(await retention.locator("td").nth(1).locator(".config-value").allInnerTexts()).toEqual(["1 h", "3600000"]);
      expect(await retention.locator("td").first().innerText()).toContain(
        "This configuration controls the maximum time we will retain a log",
      );
      const segment = configRow(page, "segment.bytes");
      expect(await segment.locator("td").nth(1).locator(".config-value").allInnerTexts()).toEqual(["1 GiB", "1073741824"]);
      expect(await segment.locator("td").nth(2).innerText()).toBe("");
      expect(await configRow(page, "flush.ms").locator("td").nth(1).locator(".config-value").first().innerText()).toBe("∞");
      expect(await configRow(page, "retention.bytes").locator("td").nth(1).locator(".config-value").first().innerText()).toBe("∞");
      // Documentation is text: Kafka's HTML tags are not shown.
      expect(await table.innerText()).not.toContain("<code>");

      const ms = configRow(page, "segment.ms");
      await ms.getByRole("button", { name: "Edit segment.ms" }).click();
      const input = ms.getByLabel("New value of segment.ms");
      await input.fill("2d");
      expect(await describedBy(page, input)).toBe("= 172800000 (2 d)");
      await input.press("Enter");
      await ms.locator(".badge").waitFor();
      expect(await ms.locator("td").nth(1).locator(".config-value").allInnerTexts()).toEqual(["2 d", "172800000"]);
      // The broker's default, asked of the brokers where the topic's synonyms do not say it.
      expect(await ms.locator("td").nth(2).locator(".config-value").allInnerTexts()).toEqual(["7 d", "604800000"]);
      expect(errors).toEqual([]);
    });
  }, 60_000);

  test("23: partitions added by a writer: a count that is not larger is refused in the dialog, a larger one grows the topic", async () => {
    await withPage(browser, "partitions add", async (page) => {
      const errors = consoleErrors(page);
      await signedIn(page, `/topics/${GROW}?tab=partitions`, "write");
      await page.getByRole("table", { name: "Partitions" }).waitFor();
      await page.getByRole("button", { name: "Add partitions…" }).click();
      const dialog = page.getByRole("dialog", { name: `Add partitions to ${GROW}` });
      const count = dialog.getByLabel("Partitions after");
      expect(await count.inputValue()).toBe("3");
      await count.fill("2");
      expect(await describedBy(page, count)).toBe("More than 2: Kafka cannot remove partitions.");
      expect(await dialog.getByRole("button", { name: "Add partitions" }).isDisabled()).toBe(true);
      await count.fill("4");
      expect(await describedBy(page, count)).toBe("2 new partitions.");
      expect(await seriousViolations(page)).toEqual([]);
      await dialog.getByRole("button", { name: "Add partitions" }).click();
      await dialog.waitFor({ state: "hidden" });
      await page.getByRole("table", { name: "Partitions" }).locator("tbody tr").nth(3).waitFor();
      const topic = (await (await server.request(`/api/topics/${GROW}`, { role: "read" })).json()) as { partitions: number };
      expect(topic.partitions).toBe(4);
      expect(errors).toEqual([]);
    });
    await withPage(browser, "partitions add read", async (page) => {
      await signedIn(page, `/topics/${GROW}?tab=partitions`, "read");
      await page.getByRole("table", { name: "Partitions" }).waitFor();
      expect(await page.getByRole("button", { name: "Add partitions…" }).count()).toBe(0);
    });
  }, 60_000);

  test("23: an internal topic is hidden in the list until asked, marked there, and its page says whose it is", async () => {
    await withPage(browser, "internal topic", async (page) => {
      await signedIn(page, `/topics?q=${LOUPE_OWN}`);
      await page
        .getByTestId("topic-count")
        .getByText(/^0 of [\d,]+ topics \(\d+ internal hidden\)/)
        .waitFor();
      await page.getByLabel("Show internal topics").check();
      const row = page.getByRole("link", { name: LOUPE_OWN });
      await row.waitFor();
      expect(await page.locator("table.grid tbody tr td").first().innerText()).toBe(`${LOUPE_OWN}internal`);
      await row.click();
      await page.getByTestId("internal-notice").waitFor();
      await page.getByRole("table", { name: "Partitions" }).waitFor();
      expect(await sections(page).getByRole("link", { name: "Messages" }).count()).toBe(0);
    });
  }, 60_000);

  test("23: axe-core: the message browser, the produce dialog and the partitions dialog, in light and dark, with no console error", async () => {
    for (const colorScheme of ["light", "dark"] as const)
      await withPage(
        browser,
        `topic 23 axe ${colorScheme}`,
        async (page) => {
          const errors = consoleErrors(page);
          await signedIn(page, `/topics/${BROWSE}`, "write");
          await page.getByRole("table", { name: "Messages" }).waitFor();
          await page.getByRole("button", { name: "Record 0/24" }).click();
          await page.getByRole("region", { name: "Value of record 0/24" }).getByRole("button", { name: "Raw bytes" }).click();
          await page.getByLabel("Filter").fill("record");
          expect({ at: "messages", violations: await seriousViolations(page) }).toEqual({ at: "messages", violations: [] });
          await page.getByRole("button", { name: "Produce records…" }).click();
          const dialog = page.getByRole("dialog", { name: `Produce to ${BROWSE}` });
          await dialog.getByLabel("Value", { exact: true }).fill("{");
          expect({ at: "produce", violations: await seriousViolations(page) }).toEqual({ at: "produce", violations: [] });
          await dialog.getByLabel("Several records, one JSON object a line").check();
          await dialog.getByLabel("Records (JSON lines)").fill('{"value": 1}\n{"nope": 2}');
          expect({ at: "produce lines", violations: await seriousViolations(page) }).toEqual({ at: "produce lines", violations: [] });
          await dialog.getByRole("button", { name: "Cancel" }).click();
          await sections(page).getByRole("link", { name: "Partitions" }).click();
          await page.getByRole("button", { name: "Add partitions…" }).click();
          expect({ at: "partitions", violations: await seriousViolations(page) }).toEqual({ at: "partitions", violations: [] });
          expect(errors).toEqual([]);
        },
        { colorScheme },
      );
  }, 90_000);
});
