/**
 * The overview and the logs pages in a real browser, against the compiled executable and the
 * real test broker: the overview shows the broker, the controller and a created topic counted,
 * and asks again by itself; the logs page shows INFO lines newest first, filters them as you
 * type, switches to METRICS, keeps both in the URL, and is offered to admins only; axe-core
 * finds no serious or critical violation on either page in either theme.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { uniqueTopic } from "../cluster/cluster.ts";
import { ROLE_USERS } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { waitFor } from "../helpers/wait.ts";
import { compiledLoupe, createTopic, launchChromium, openAs, seriousViolations, withPage } from "./browser.ts";

let server: ServerProcess;
let browser: Browser;
const topic = uniqueTopic("ui-overview");

beforeAll(async () => {
  // INFO lines kept (the other browser tests log warnings only) and a METRICS line every second.
  server = await startServerProcess({ log: { level: "info", metricsInterval: "1s" } }, { executable: await compiledLoupe() });
  browser = await launchChromium();
  await createTopic(server, topic, 3);
}, 120_000);

afterAll(async () => {
  await server?.request(`/api/topics/${topic}`, { method: "DELETE", role: "admin" }).catch(() => {});
  await browser?.close();
  await server?.stop();
});

const signedIn = (page: Page, path: string, role: keyof typeof ROLE_USERS) => openAs(page, `${server.url}${path}`, role);

/** The big figure of the overview's tile labelled `label`. */
const figure = (page: Page, label: string) =>
  page
    .getByTestId("overview-figures")
    .locator(".tile", { has: page.getByText(label, { exact: true }) })
    .locator("strong");

describe("the overview page", () => {
  test("shows the broker, the controller and the created topic counted", async () => {
    await withPage(browser, "overview figures", async (page) => {
      await signedIn(page, "/", "read");
      const brokers = page.getByRole("table", { name: "Brokers" });
      await brokers.waitFor();
      const row = brokers.locator("tbody tr");
      expect(await row.count()).toBe(1);
      const cells = await row.first().locator("td").allInnerTexts();
      // Broker 1 of the test cluster, on rack-1, is also the controller Metadata names.
      expect(cells[0]).toMatch(/^1\s*controller$/);
      expect(cells[1]).toBe("127.0.0.1");
      expect(cells[2]).toBe(process.env.KAFKA_BOOTSTRAP!.split(":")[1]);
      expect(cells[3]).toBe("rack-1");
      // The active controller, from the KRaft quorum: node 1 leads it.
      expect(await figure(page, "Controller").innerText()).toBe("Node 1");
      const quorum = page.getByRole("table", { name: "Controller quorum" });
      const voter = await quorum.locator("tbody tr").first().locator("td").allInnerTexts();
      expect(voter[0]).toMatch(/^1\s*leader$/);
      expect(voter[1]).toBe("voter");
      expect(voter[3]).toBe("0");
      expect(voter[4]).toMatch(/^\d+ s ago$/);
      expect(await figure(page, "Brokers").innerText()).toBe("1");

      // Other tests create and delete topics meanwhile: refresh until the page and the topic
      // list agree, with the created topic in that list.
      await waitFor(
        async () => {
          await page.getByRole("button", { name: "Refresh" }).click();
          await page.getByRole("button", { name: "Refresh", exact: true }).waitFor();
          const list = (await (await server.request("/api/topics", { role: "read" })).json()) as Array<{
            topicName: string;
            isControlTopic: boolean;
          }>;
          const shown = Number((await figure(page, "Topics").innerText()).replace(/,/g, ""));
          return list.some((t) => t.topicName === topic) && shown === list.filter((t) => !t.isControlTopic).length;
        },
        { timeoutMs: 20_000, intervalMs: 200, what: "the overview's topic count to match the topic list" },
      );
      expect(Number((await figure(page, "Partitions").innerText()).replace(/,/g, ""))).toBeGreaterThanOrEqual(3);
      expect(await figure(page, "Offline").innerText()).toBe("0");
      expect(await figure(page, "Under-replicated").innerText()).toBe("0");
      await page.getByTestId("partitions-healthy").waitFor();
      // The store and the cluster connection, from /api/health.
      const connections = page.getByRole("table", { name: "Connections" });
      expect(await connections.getByRole("row", { name: /Loupe store/ }).innerText()).toContain("Up");
      expect(await connections.getByRole("row", { name: /local/ }).innerText()).toContain("Up");
      await page.screenshot({ path: "/tmp/overview-quorum.png", fullPage: true });
    });
  }, 60_000);

  test("asks the server again by itself", async () => {
    await withPage(browser, "overview refresh", async (page) => {
      let asked = 0;
      page.on("request", (r) => {
        if (new URL(r.url()).pathname === "/api/cluster") asked++;
      });
      // The page's own clock: its refresh interval (10 s) passes at once instead of in real time.
      await page.clock.install();
      await signedIn(page, "/", "nodata");
      await page.getByRole("table", { name: "Brokers" }).waitFor();
      await waitFor(
        async () => {
          if (asked >= 2) return true;
          await page.clock.fastForward(2_000);
          return false;
        },
        { timeoutMs: 25_000, intervalMs: 250, what: "a second /api/cluster request without a click" },
      );
    });
  }, 60_000);
});

describe("the logs page", () => {
  test("shows INFO lines newest first, filters them in the URL, switches to METRICS", async () => {
    await withPage(browser, "logs level switch", async (page) => {
      await signedIn(page, "/logs", "admin");
      const info = page.getByRole("table", { name: "INFO log lines, newest first" });
      await info.waitFor();
      // Signing in wrote an INFO line of its own, its fields after the message (23: not the message alone).
      const login = info.getByRole("row", { name: /\blogin\b/ }).filter({ has: page.locator("td.log-message", { hasText: /^login/ }) });
      await login.first().waitFor();
      expect(await login.first().locator(".log-fields").innerText()).toContain(`user=${ROLE_USERS.admin.name}`);
      const times = await info.locator("tbody td.log-time").allInnerTexts();
      expect(times.length).toBeGreaterThan(1);
      expect([...times].sort().reverse()).toEqual(times);

      await page.getByLabel("Filter").fill("login");
      await page.waitForURL(/[?&]q=login/);
      const messages = await info.locator("tbody td.log-message").allInnerTexts();
      expect(messages.length).toBeGreaterThan(0);
      expect(messages.every((m) => m.includes("login"))).toBe(true);
      expect(await page.getByTestId("log-count").innerText()).toMatch(/^\d+ of \d+ lines$/);

      await page.getByLabel("Filter").fill("");
      await page.getByRole("radio", { name: "METRICS" }).check();
      await page.waitForURL(/[?&]level=METRICS/);
      const metrics = page.getByRole("table", { name: "METRICS log lines, newest first" });
      await metrics.waitFor();
      expect(await metrics.locator("tbody td.log-message").first().innerText()).toMatch(/^requests=\d+/);

      // The level is the URL's: a reload keeps it.
      await page.reload();
      await metrics.waitFor();
      expect(await page.getByRole("radio", { name: "METRICS" }).isChecked()).toBe(true);
    });
  }, 60_000);

  test("only admins are offered the logs page", async () => {
    await withPage(browser, "logs read user", async (page) => {
      await signedIn(page, "/", "read");
      await page.getByRole("heading", { name: "Overview" }).waitFor();
      const nav = page.getByRole("navigation", { name: "Main" });
      await nav.getByRole("link", { name: "Topics" }).waitFor();
      expect(await nav.getByRole("link", { name: "Logs" }).count()).toBe(0);
      // Opened directly, the page says in words whose it is, and offers nothing.
      await page.goto(`${server.url}/logs`);
      expect(await page.getByTestId("not-for-you").innerText()).toBe(
        "Reading Loupe's logs is for Loupe's administrators: it needs the admin role on every cluster and every topic.",
      );
      expect(await page.getByRole("main").getByRole("button").count()).toBe(0);
    });
  }, 60_000);
});

test("axe-core: no serious or critical violation on the overview and the logs, in both themes", async () => {
  for (const colorScheme of ["light", "dark"] as const)
    await withPage(
      browser,
      `overview axe ${colorScheme}`,
      async (page) => {
        await signedIn(page, "/", "admin");
        await page.getByRole("table", { name: "Brokers" }).waitFor();
        await page.getByRole("table", { name: "Connections" }).waitFor();
        expect(await seriousViolations(page)).toEqual([]);
        await page.goto(`${server.url}/logs?level=METRICS`);
        await page.getByRole("table", { name: "METRICS log lines, newest first" }).waitFor();
        expect(await seriousViolations(page)).toEqual([]);
        await page.goto(`${server.url}/logs`);
        await page.getByRole("table", { name: "INFO log lines, newest first" }).waitFor();
        expect(await seriousViolations(page)).toEqual([]);
      },
      { colorScheme },
    );
}, 90_000);
