/**
 * Consumer groups in a real browser: the list with lag, a group's offsets and lag per
 * partition, its lag chart filled by the sampler, and the offset reset of an empty group
 * through the dialog (latest, explicit offsets, a time; write role); a read user is not
 * offered the reset. Deleting an empty group from its page (issue 23), offered to writers only
 * and only while the group has no member. axe-core on the list and the group page in both themes.
 * The 30-day window of a group's chart, from history stored before a restart (issue 26).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { openStore } from "../../src/db/index.ts";
import type { KafkaPool } from "../../src/kafka/index.ts";
import { LagHistoryStore } from "../../src/lag/history-store.ts";
import type { ROLE_USERS } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { waitFor } from "../helpers/wait.ts";
import { joinGroup, testPool } from "../kafka/helpers.ts";
import { compiledLoupe, createTopic, insert, launchChromium, openAs, seriousViolations, withPage } from "./browser.ts";

const RUN = `ui${Date.now().toString(36)}`;
const TOPIC = `${RUN}-orders`;
const GROUP = `${RUN}-billing`;
/** A second empty group, lagging on both partitions, for the chart and the other resets. */
const CHARTED = `${RUN}-audit`;
/** 23: an empty group deleted through its page, and a group with a live member. */
const DOOMED = `${RUN}-doomed`;
const LIVE = `${RUN}-live`;
/** 26: a group with a month of stored history. */
const HISTORY = `${RUN}-history`;
/** 29: a Kafka 4 share group, empty, its start offsets past the first records. */
const SHARED = `${RUN}-shared`;
/** 28: more groups than one page of the list (200): the next page comes as the list scrolls. */
const MANY = Array.from({ length: 250 }, (_, i) => `${RUN}-many-${String(i).padStart(3, "0")}`);

let server: ServerProcess;
let browser: Browser;
let pool: KafkaPool;

beforeAll(async () => {
  // The sampler ticks every second, so the chart has points within the test's patience.
  server = await startServerProcess({ lag: { sampleInterval: "1s" } }, { executable: await compiledLoupe() });
  await createTopic(server, TOPIC, 2);
  await insert(server, `INSERT INTO \`${TOPIC}\` (_key, n) VALUES ('a', 1), ('b', 2), ('c', 3), ('d', 4), ('e', 5), ('f', 6)`);
  // An empty group (no member) that has read nothing yet: all six records are its lag.
  pool = testPool();
  await pool.default().groups.alterOffsets(GROUP, [
    { topic: TOPIC, partition: 0, offset: 0 },
    { topic: TOPIC, partition: 1, offset: 0 },
  ]);
  await pool.default().groups.alterOffsets(CHARTED, [
    { topic: TOPIC, partition: 0, offset: 0 },
    { topic: TOPIC, partition: 1, offset: 0 },
  ]);
  await pool.default().groups.alterOffsets(DOOMED, [{ topic: TOPIC, partition: 0, offset: 1 }]);
  for (let i = 0; i < MANY.length; i += 50)
    await Promise.all(MANY.slice(i, i + 50).map((g) => pool.default().groups.alterOffsets(g, [{ topic: TOPIC, partition: 0, offset: 6 }])));
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await pool
    ?.default()
    .groups.delete([GROUP, CHARTED, DOOMED, LIVE, HISTORY, SHARED, ...MANY])
    .catch(() => {});
  await server?.request(`/api/topics/${TOPIC}`, { method: "DELETE", role: "admin" }).catch(() => {});
  await pool?.close();
  await browser?.close();
  await server?.stop();
});

const signedIn = (page: Page, path: string, role: keyof typeof ROLE_USERS) => openAs(page, `${server.url}${path}`, role);

type Detail = { lag: number; offsets: Array<{ topic: string; partition: number; currentOffset: number; logEndOffset: number }> };
const detail = async (group: string) => (await (await server.request(`/api/consumers/${group}`, { role: "read" })).json()) as Detail;

/**
 * Polls an expression in the page until it is true, with a deadline. Evaluated through the
 * DevTools protocol each time: Playwright's own in-page polling evaluates strings, which the
 * page's Content-Security-Policy refuses (no 'unsafe-eval').
 */
const until = (page: Page, expression: string, timeoutMs = 20_000) =>
  waitFor(async () => (await page.evaluate(expression)) === true, { timeoutMs, intervalMs: 100, what: expression });

/** Errors the browser reports for the page's Content-Security-Policy. */
function cspErrors(page: Page): string[] {
  const seen: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" && /Content.Security.Policy/i.test(m.text())) seen.push(m.text());
  });
  return seen;
}

const lagCells = (page: Page) =>
  page
    .getByRole("table", { name: "Offsets and lag" })
    .locator("tbody tr")
    .evaluateAll((trs) => trs.map((tr) => Number(tr.querySelectorAll("td")[4]?.textContent)));

describe("consumer groups", () => {
  test("28: the list asks the server for the next page as it scrolls: 250 groups in pages of 200", async () => {
    await withPage(browser, "groups paging", async (page) => {
      const pages: string[] = [];
      page.on("request", (r) => {
        const url = new URL(r.url());
        if (url.pathname === "/api/consumers") pages.push(url.searchParams.get("page") ?? "");
      });
      await signedIn(page, `/consumers?q=${RUN}-many&sort=name`, "read");
      // Made before the server listed any group: in its inventory from the first listing on.
      await page
        .getByTestId("group-count")
        .getByText(/^250 of [\d,]+ groups/)
        .waitFor();
      const table = page.getByRole("table", { name: "Consumer groups" });
      expect(await table.getAttribute("aria-rowcount")).toBe("251");
      await page.getByRole("link", { name: MANY[0]! }).waitFor();
      // Scrolled to the end (again as rows arrive): the second page brings the last group.
      const last = page.getByRole("link", { name: MANY.at(-1)! });
      await waitFor(
        async () => {
          await page.locator(".grid-scroll").evaluate((el) => el.scrollTo(0, el.scrollHeight));
          return last.isVisible();
        },
        { timeoutMs: 20_000, intervalMs: 200, what: "the last group after scrolling to the end" },
      );
      expect(await table.locator("tbody tr").count()).toBeLessThan(60);
      // Page 1 at the start, page 2 once scrolled: no request for everything.
      expect([...new Set(pages)].sort()).toEqual(["1", "2"]);
    });
  });

  test("the list shows the group's lag; its page the lag per partition; the reset to latest clears it", async () => {
    await withPage(browser, "group reset", async (page) => {
      await signedIn(page, `/consumers?q=${GROUP}`, "write");
      const row = page.getByRole("table", { name: "Consumer groups" }).getByRole("row", { name: new RegExp(GROUP) });
      await row.waitFor();
      expect(await row.locator("td").nth(2).innerText()).toBe("classic");
      expect(await row.locator("td").nth(5).innerText()).toBe("6");
      expect(await seriousViolations(page)).toEqual([]);

      await page.getByRole("link", { name: GROUP }).click();
      await page.getByRole("heading", { name: `Consumer group ${GROUP}` }).waitFor();
      await page.getByRole("table", { name: "Offsets and lag" }).waitFor();
      const before = await lagCells(page);
      expect(before.reduce((a, b) => a + b, 0)).toBe(6);

      await page.getByRole("button", { name: "Reset offsets…" }).click();
      const dialog = page.getByRole("dialog", { name: `Reset the offsets of ${GROUP}` });
      await dialog.waitFor();
      expect(await seriousViolations(page)).toEqual([]);
      await dialog.getByLabel("the latest offset").check();
      await dialog.getByRole("button", { name: "Reset offsets" }).click();
      await dialog.waitFor({ state: "hidden" });
      // The page reads the group again: no lag left, and the server agrees.
      await page.waitForFunction(
        `[...document.querySelectorAll("table[aria-label='Offsets and lag'] tbody td:nth-child(5)")].every((td) => td.textContent === "0")`,
      );
      const res = await server.request(`/api/consumers/${GROUP}`, { role: "read" });
      expect(((await res.json()) as { lag: number }).lag).toBe(0);
    });
  }, 60_000);

  test("a read user sees the group but is not offered the reset", async () => {
    await withPage(browser, "group read user", async (page) => {
      await signedIn(page, `/consumers/${GROUP}`, "read");
      await page.getByRole("table", { name: "Offsets and lag" }).waitFor();
      expect(await page.getByRole("button", { name: /Reset offsets/ }).count()).toBe(0);
    });
  }, 60_000);

  test("the group page draws its lag history with uPlot once the sampler has ticked, with no CSP error", async () => {
    await withPage(browser, "group chart", async (page) => {
      const csp = cspErrors(page);
      await signedIn(page, `/consumers/${CHARTED}`, "read");
      const chart = page.getByRole("figure", { name: /Lag over the last/ });
      await chart.waitFor();
      // At least two points: the line needs two samples (one a second); polled, not slept.
      await until(page, `Number(document.querySelector("figure.lag-chart")?.dataset.points) >= 2`);
      await chart.locator(".uplot canvas").waitFor();
      const box = await chart.locator(".uplot canvas").boundingBox();
      expect(box!.width).toBeGreaterThan(200);
      expect(await chart.locator("figcaption").innerText()).toContain("latest lag 6 records");
      // The chart follows its container's width.
      await page.setViewportSize({ width: 900, height: 800 });
      await until(
        page,
        `(() => { const f = document.querySelector("figure.lag-chart"); const c = f?.querySelector(".uplot"); return f && c && Math.abs(c.getBoundingClientRect().width - f.querySelector(".lag-chart-plot").getBoundingClientRect().width) < 2; })() === true`,
      );
      // A shorter window, kept in the URL; the chart reads the history again for it.
      await chart.getByLabel("Window").selectOption("5m");
      await page.waitForURL(/window=5m/);
      await chart.getByText("Lag over the last 5 minutes").waitFor();
      await until(page, `Number(document.querySelector("figure.lag-chart")?.dataset.points) >= 2`);
      expect(csp).toEqual([]);
    });
  }, 60_000);

  test("26: the 30-day window draws the hourly peaks the store kept across a restart", async () => {
    // A month of this group's history, as a server would have stored it hour by hour: written
    // into the data directory while the server is down, then served by the next start on it.
    await pool.default().groups.alterOffsets(HISTORY, [{ topic: TOPIC, partition: 0, offset: 0 }]);
    await server.kill();
    const store = await openStore(join(server.dir, "data"));
    const hour = 3_600_000;
    const now = Math.floor(Date.now() / hour) * hour;
    const history = new LagHistoryStore(store.db);
    for (let h = 30 * 24; h >= 1; h--) {
      // A daily wave, and one spike ten days ago.
      const lag = h === 240 ? 9_000 : Math.round(1_500 + 1_200 * Math.sin((h / 24) * 2 * Math.PI));
      await history.write(
        "local",
        now - h * hour,
        new Map([[HISTORY, { lag, lagMs: lag * 40, topics: { [TOPIC]: { lag, lagMs: lag * 40 } } }]]),
      );
    }
    await store.close();
    server = await startServerProcess({ lag: { sampleInterval: "1s" } }, { executable: await compiledLoupe(), dir: server.dir });

    await withPage(browser, "group chart 30 days", async (page) => {
      const csp = cspErrors(page);
      await signedIn(page, `/consumers/${HISTORY}`, "read");
      const chart = page.getByRole("figure", { name: /Lag over the last/ });
      await chart.getByLabel("Window").selectOption({ label: "last 30 days" });
      await page.waitForURL(/window=30d/);
      await chart.getByText("Lag over the last 30 days").waitFor();
      // Every stored hour, and the one under way from the sampler.
      await until(page, `Number(document.querySelector("figure.lag-chart")?.dataset.points) >= 720`);
      expect(await chart.getAttribute("data-downsampled")).toBe("true");
      await chart.locator(".uplot canvas").waitFor();
      expect(await chart.locator("figcaption").innerText()).toContain("(hourly peaks)");
      await chart.screenshot({ path: "/tmp/loupe-lag-history-30d.png" });
      expect(await seriousViolations(page)).toEqual([]);
      expect(csp).toEqual([]);
    });
  }, 120_000);

  test("reset to explicit offsets, then to a time, through the dialog", async () => {
    await withPage(browser, "group reset explicit and time", async (page) => {
      await signedIn(page, `/consumers/${CHARTED}`, "write");
      await page.getByRole("table", { name: "Offsets and lag" }).waitFor();
      const { offsets } = await detail(CHARTED);
      const byPartition = new Map(offsets.map((o) => [o.partition, o]));

      await page.getByRole("button", { name: "Reset offsets…" }).click();
      let dialog = page.getByRole("dialog", { name: `Reset the offsets of ${CHARTED}` });
      await dialog.getByLabel("offsets I give per partition").check();
      const p0 = dialog.getByLabel(`New offset of ${TOPIC} partition 0`);
      const p1 = dialog.getByLabel(`New offset of ${TOPIC} partition 1`);
      expect(await seriousViolations(page)).toEqual([]);
      await p0.fill(String(byPartition.get(0)!.logEndOffset));
      await p1.fill("1");
      await dialog.getByRole("button", { name: "Reset offsets" }).click();
      await dialog.waitFor({ state: "hidden" });
      let after = await detail(CHARTED);
      expect(after.offsets.map((o) => [o.partition, o.currentOffset])).toEqual([
        [0, byPartition.get(0)!.logEndOffset],
        [1, 1],
      ]);
      await until(
        page,
        `document.querySelector("table[aria-label='Offsets and lag'] tbody td:nth-child(3)")?.textContent === "${byPartition.get(0)!.logEndOffset}"`,
      );

      // An offset outside the log: the API's refusal is said in the dialog.
      await page.getByRole("button", { name: "Reset offsets…" }).click();
      dialog = page.getByRole("dialog", { name: `Reset the offsets of ${CHARTED}` });
      await dialog.getByLabel("offsets I give per partition").check();
      await dialog.getByLabel(`New offset of ${TOPIC} partition 1`).fill("999");
      await dialog.getByRole("button", { name: "Reset offsets" }).click();
      await dialog.getByText(/outside/).waitFor();

      // A time before every record: back to the first record of each partition.
      await dialog.getByLabel("the first record at or after a time").check();
      await dialog.getByLabel("Time (local)").fill("2001-02-03T04:05:06");
      await dialog.getByRole("button", { name: "Reset offsets" }).click();
      await dialog.waitFor({ state: "hidden" });
      after = await detail(CHARTED);
      expect(after.offsets.map((o) => o.currentOffset)).toEqual([0, 0]);
      expect(after.lag).toBe(6);
    });
  }, 60_000);

  test("axe-core: no serious or critical violation on the list and the group page (with its chart), in both themes", async () => {
    for (const colorScheme of ["light", "dark"] as const)
      await withPage(
        browser,
        `consumers axe ${colorScheme}`,
        async (page) => {
          await signedIn(page, `/consumers?q=${RUN}`, "write");
          await page.getByRole("link", { name: CHARTED }).waitFor();
          expect(await seriousViolations(page)).toEqual([]);
          await page.getByRole("link", { name: CHARTED }).click();
          await until(page, `Number(document.querySelector("figure.lag-chart")?.dataset.points) >= 1`);
          expect(await seriousViolations(page)).toEqual([]);
        },
        { colorScheme },
      );
  }, 60_000);

  test("23: a writer deletes an empty group from its page after typing its name; a group with a member and a read user are offered no delete", async () => {
    await withPage(browser, "group delete", async (page) => {
      const errors: string[] = [];
      page.on("console", (m) => {
        if (m.type() === "error" && !m.location().url.endsWith("/favicon.ico")) errors.push(m.text());
      });
      await signedIn(page, `/consumers/${DOOMED}?cluster=local`, "write");
      await page.getByRole("table", { name: "Offsets and lag" }).waitFor();
      await page.getByRole("button", { name: "Delete group…" }).click();
      const dialog = page.getByRole("dialog", { name: `Delete ${DOOMED}` });
      expect(await dialog.innerText()).toContain("Its committed offsets are deleted with it (1 topic)");
      const confirm = dialog.getByRole("button", { name: "Delete group" });
      expect(await confirm.isDisabled()).toBe(true);
      await dialog.getByLabel("Type the group's name to confirm").fill(DOOMED);
      expect(await seriousViolations(page)).toEqual([]);
      await confirm.click();
      await page.waitForURL(`${server.url}/consumers?cluster=local`);
      expect((await server.request(`/api/consumers/${DOOMED}`, { role: "read" })).status).toBe(404);
      expect((await pool.default().groups.list()).some((g) => g.groupId === DOOMED)).toBe(false);
      const audit = (await (await server.request("/api/audit?type=CONSUMER_GROUP&limit=1", { role: "admin" })).json()) as Array<{
        change: string;
        content: Record<string, string>;
      }>;
      expect(audit[0]).toMatchObject({ change: "REMOVE", content: { outcome: "SUCCESS", group: DOOMED } });
      expect(errors).toEqual([]);
    });

    // A member reading: no delete, and the page says when there would be one.
    const member = joinGroup(pool.default(), { groupId: LIVE, topics: [TOPIC] });
    const reading = (async () => {
      for await (const r of member.records()) await r.commit();
    })().catch(() => {});
    try {
      await waitFor(async () => ((await detail(LIVE)) as unknown as { members: unknown[] }).members?.length > 0, {
        timeoutMs: 30_000,
        what: "the member in the group",
      });
      await withPage(browser, "group delete live", async (page) => {
        await signedIn(page, `/consumers/${LIVE}`, "write");
        await page.getByText("Offsets can be reset, and the group deleted, when it has no active member.").waitFor();
        expect(await page.getByRole("button", { name: "Delete group…" }).count()).toBe(0);
      });
    } finally {
      await member.close();
      await reading;
    }
    await withPage(browser, "group delete read", async (page) => {
      await signedIn(page, `/consumers/${GROUP}`, "read");
      await page.getByRole("table", { name: "Offsets and lag" }).waitFor();
      expect(await page.getByRole("button", { name: /Delete group/ }).count()).toBe(0);
    });
  }, 90_000);

  test("29: a share group is listed with its type; its page shows start offsets and lag, and a writer resets them to earliest", async () => {
    await pool.default().shareGroups.alterStartOffsets(SHARED, [
      { topic: TOPIC, partition: 0, offset: 1 },
      { topic: TOPIC, partition: 1, offset: 1 },
    ]);
    await withPage(browser, "share group reset", async (page) => {
      await signedIn(page, `/consumers?q=${SHARED}`, "write");
      const row = page.getByRole("table", { name: "Consumer groups" }).getByRole("row", { name: new RegExp(SHARED) });
      await row.waitFor();
      expect(await row.locator("td").nth(2).innerText()).toBe("share");
      await page.getByRole("link", { name: SHARED }).click();
      await page.getByRole("heading", { name: `Share group ${SHARED}` }).waitFor();
      const partitions = page.getByRole("table", { name: "Partitions" });
      await partitions.waitFor();
      const startOffsets = () =>
        partitions.locator("tbody tr").evaluateAll((trs) => trs.map((tr) => tr.querySelectorAll("td")[2]?.textContent));
      expect(await startOffsets()).toEqual(["1", "1"]);
      expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: "/tmp/share-group-write.png", fullPage: true });
      await page.evaluate("document.documentElement.dataset.theme = 'dark'");
      await page.screenshot({ path: "/tmp/share-group-write-dark.png", fullPage: true });
      await page.evaluate("document.documentElement.dataset.theme = 'light'");

      await page.getByRole("button", { name: "Reset start offsets…" }).click();
      const dialog = page.getByRole("dialog", { name: `Reset the start offsets of ${SHARED}` });
      await dialog.getByLabel("the earliest offset").check();
      await dialog.getByRole("button", { name: "Reset start offsets" }).click();
      await dialog.waitFor({ state: "hidden" });
      await waitFor(async () => (await startOffsets()).every((v) => v === "0"), { what: "the start offsets at 0" });
      const after = (await (await server.request(`/api/share-groups/${SHARED}`, { role: "read" })).json()) as { lag: number };
      expect(after.lag).toBe(6);
    });
  }, 60_000);
});
