/**
 * The alerts page in a real browser: a notification raised through the API (`POST /api/alerts`)
 * appears in the list live, its generatorURL opens its own page (labels, delivery per channel:
 * a webhook that takes it, an Alertmanager that never answers and is given up) and a resolution
 * shows there as it comes; the delivery status names the failing channel. An admin adds a
 * condition (a wrong one is refused in the browser, nothing sent) and removes it, and switches a
 * setting off and on; a read user is offered no change. axe-core in light and dark.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { freePort } from "../cluster/cluster.ts";
import type { ROLE_USERS } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { waitFor } from "../helpers/wait.ts";
import { compiledLoupe, launchChromium, openAs, seriousViolations, withPage } from "./browser.ts";

const TAG = `${process.pid}-${Date.now().toString(36)}`;
const GROUP = `ui-alerts-group-${TAG}`;
const TOPIC = `ui-alerts-topic-${TAG}`;
const TEMPLATE = "lag >= $Threshold-Number on group $Consumer-Group and topic $Topic-Name";

let server: ServerProcess;
let browser: Browser;
let hook: ReturnType<typeof Bun.serve>;
let deadAlertmanager: string;
const hooked: string[] = [];

beforeAll(async () => {
  // A chat webhook that takes every alert, and an Alertmanager address nothing listens on.
  hook = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async (req) => {
      hooked.push(await req.text());
      return new Response(null, { status: 204 });
    },
  });
  deadAlertmanager = `http://127.0.0.1:${await freePort()}`;
  server = await startServerProcess(
    {
      alerts: {
        evaluationInterval: 0,
        alertmanagers: [deadAlertmanager],
        webhooks: [{ name: "chat", url: `http://127.0.0.1:${hook.port}/hook` }],
        initialBackoff: 50,
        maxBackoff: 200,
        giveUpAfter: 1_000,
      },
    },
    { executable: await compiledLoupe() },
  );
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  hook?.stop(true);
});

const signedIn = (page: Page, path: string, role: keyof typeof ROLE_USERS) => openAs(page, `${server.url}${path}`, role);

interface Raised {
  id: string;
  generatorURL: string;
}

/** A lag alert of GROUP on TOPIC, raised (or with `endsAt`, resolved) as an outside system does it. */
async function raise(summary: string, endsAt = ""): Promise<Raised> {
  const res = await server.request("/api/alerts", {
    method: "POST",
    role: "write",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      alertId: 2000,
      labels: { severity: "high", category: "Consumers", instance: `${GROUP}/${TOPIC}`, group: GROUP, topic: TOPIC },
      annotations: { summary, source: "ui test" },
      endsAt,
    }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Raised;
}

const conditionsOf = async (): Promise<string[]> => {
  const res = await server.request("/api/alerts/settings/2000", { role: "read" });
  return Object.values(((await res.json()) as { conditions: Record<string, string> }).conditions);
};

describe("the alerts page", () => {
  test("26: a notification raised through the API appears live; its generatorURL opens it with its deliveries; resolved live", async () => {
    await withPage(browser, "alerts live", async (page) => {
      await signedIn(page, "/alerts", "admin");
      await page.getByRole("heading", { name: "Alerts", level: 1 }).waitFor();
      await page.getByTestId("live").getByText("Live", { exact: true }).waitFor();

      const summary = `Group ${GROUP} is behind (${TAG})`;
      const n = await raise(summary);
      const list = page.getByRole("table", { name: "Alert notifications" });
      const row = list.getByRole("row").filter({ has: page.getByRole("link", { name: summary }) });
      await row.waitFor();
      expect(await row.getByText("Active", { exact: true }).count()).toBe(1);
      await row.getByRole("link", { name: `Consumer group ${GROUP}` }).waitFor();
      expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: "/tmp/alerts-list.png", fullPage: true });

      // The link Alertmanager and the webhook carry opens the notification's own page.
      expect(n.generatorURL).toBe(`${server.url}/alerts?id=${n.id}`);
      await page.goto(n.generatorURL);
      await page.getByRole("heading", { name: summary, level: 1 }).waitFor();
      const labels = page.getByRole("table", { name: "Labels" });
      expect(await labels.getByRole("row", { name: `group ${GROUP}` }).count()).toBe(1);
      expect(await labels.getByRole("row", { name: "severity HIGH" }).count()).toBe(1);
      const deliveries = page.getByRole("table", { name: "Deliveries of this notification" });
      await deliveries.getByRole("row").filter({ hasText: "webhook:chat" }).getByText("Sent").waitFor();
      const alertmanager = deliveries.getByRole("row").filter({ hasText: `alertmanager:${deadAlertmanager}` });
      // Retried every 50 to 200 ms, given up after 1 s: read again every 5 s by the page.
      await alertmanager.getByText("Given up").waitFor({ timeout: 20_000 });
      expect(await alertmanager.locator("td").nth(3).innerText()).not.toBe("—");
      await page.getByTestId("live").getByText("Live", { exact: true }).waitFor();
      await raise(summary, new Date().toISOString());
      await page.locator(".alert-heading").getByText("Resolved", { exact: true }).waitFor();
      expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: "/tmp/alerts-detail.png", fullPage: true });

      // The delivery status: the Alertmanager that never answered, and what was given up.
      await page.getByRole("link", { name: "All notifications" }).click();
      await page.getByRole("navigation", { name: "Alert views" }).getByRole("link", { name: "Delivery status" }).click();
      const channel = page
        .getByRole("table", { name: "Channels" })
        .getByRole("row")
        .filter({ has: page.getByRole("rowheader", { name: `alertmanager:${deadAlertmanager}` }) });
      await channel.waitFor();
      // Pending (its resolution, retried) or given up, with the error it last got.
      const [, pending, gaveUp, , latestError] = await channel.locator("td").allInnerTexts();
      expect(Number(pending) + Number(gaveUp)).toBeGreaterThanOrEqual(1);
      expect(latestError).not.toBe("none");
      await page
        .getByRole("table", { name: "Failing deliveries" })
        .getByRole("link", { name: `2000 · ${n.id.slice(0, 8)}` })
        .first()
        .waitFor();
      expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: "/tmp/alerts-deliveries.png", fullPage: true });
    });
    // The webhook took the raise and the resolution, once each.
    const statuses = () => hooked.filter((b) => b.includes(TAG)).map((b) => (JSON.parse(b) as { status: string }).status);
    await waitFor(() => statuses().length >= 2, { what: "the raise and the resolution at the webhook" });
    expect(statuses()).toEqual(["firing", "resolved"]);
  }, 60_000);

  test("an admin adds a condition (a wrong one refused before anything is sent) and removes it, and switches a setting", async () => {
    await withPage(browser, "alerts conditions", async (page) => {
      const sent: string[] = [];
      page.on("request", (r) => {
        if (r.url().includes("/api/alerts/settings/") && r.method() !== "GET") sent.push(`${r.method()} ${r.postData() ?? ""}`);
      });
      await signedIn(page, "/alerts/settings", "admin");
      const section = page.getByRole("region", { name: "Conditions of 2000 · Consumer lag exceeded" });
      await section.getByText(TEMPLATE).waitFor();
      const field = section.getByLabel("New condition");

      await field.fill(`lag > 5 on group ${GROUP} and topic ${TOPIC}`);
      await section.getByRole("button", { name: "Add condition" }).click();
      await section.getByRole("alert").getByText(`does not match the template: ${TEMPLATE}`).waitFor();
      expect(await field.getAttribute("aria-invalid")).toBe("true");
      expect(sent).toEqual([]);

      const condition = `lag >= 1000 on group ${GROUP} and topic ${TOPIC} for 5m`;
      await field.fill(condition);
      await section.getByText("Matches the template.").waitFor();
      await section.getByRole("button", { name: "Add condition" }).click();
      await section.getByRole("status").getByText(`Condition added: ${condition}`).waitFor();
      await section.getByRole("table", { name: "Conditions of 2000" }).getByRole("cell", { name: condition, exact: true }).waitFor();
      expect(sent).toEqual([`POST ${condition}`]);
      expect(await conditionsOf()).toContain(condition);
      expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: "/tmp/alerts-settings.png", fullPage: true });

      await section.getByRole("button", { name: `Remove ${condition}` }).click();
      await page.getByRole("dialog", { name: "Remove the condition" }).getByRole("button", { name: "Remove" }).click();
      await section.getByRole("status").getByText(`Condition removed: ${condition}`).waitFor();
      expect(await conditionsOf()).not.toContain(condition);

      // A setting switched off and on again; one Loupe cannot evaluate is not switched on.
      const dataDeleted = page.getByRole("switch", { name: "4002 · Topic data has been deleted", exact: true });
      await dataDeleted.uncheck();
      await page.getByRole("status").getByText("4002 · Topic data has been deleted is off.").waitFor();
      const off = (await (await server.request("/api/alerts/settings/4002", { role: "read" })).json()) as { enabled: boolean };
      expect(off.enabled).toBe(false);
      await dataDeleted.check();
      await page.getByRole("status").getByText("4002 · Topic data has been deleted is on.").waitFor();
      expect(await page.getByRole("switch", { name: "1 · License is invalid", exact: true }).isDisabled()).toBe(true);
    });
  }, 60_000);

  test("a read user sees the settings, conditions and notifications with no change offered; axe-clean in the dark theme", async () => {
    const condition = `lag-seconds >= 300 on group ${GROUP}-* and topic ${TOPIC}`;
    const added = await server.request("/api/alerts/settings/2000/condition", {
      method: "POST",
      role: "write",
      headers: { "content-type": "text/plain" },
      body: condition,
    });
    expect(added.status).toBe(200);
    const { id } = (await added.json()) as { id: string };
    await raise(`Read-only view of ${TAG}`);
    try {
      await withPage(
        browser,
        "alerts read dark",
        async (page) => {
          await signedIn(page, "/alerts/settings", "read");
          const section = page.getByRole("region", { name: "Conditions of 2000 · Consumer lag exceeded" });
          await section.getByRole("cell", { name: condition, exact: true }).waitFor();
          await page.getByText("Turning settings on and off is for Loupe's administrators.", { exact: false }).waitFor();
          await section.getByText("Adding and removing conditions needs the write role.").waitFor();
          expect(await page.getByRole("switch").count()).toBe(0);
          expect(await page.getByRole("button", { name: /^(Add condition|Remove )/ }).count()).toBe(0);
          expect(await page.evaluate("document.documentElement.dataset.theme")).toBe("dark");
          expect(await seriousViolations(page)).toEqual([]);
          await page.screenshot({ path: "/tmp/alerts-settings-read-dark.png", fullPage: true });

          await page.getByRole("navigation", { name: "Alert views" }).getByRole("link", { name: "Notifications" }).click();
          await page
            .getByRole("table", { name: "Alert notifications" })
            .getByRole("link", { name: `Read-only view of ${TAG}` })
            .click();
          await page.getByRole("table", { name: "Deliveries of this notification" }).waitFor();
          expect(await seriousViolations(page)).toEqual([]);
          await page.screenshot({ path: "/tmp/alerts-detail-read-dark.png", fullPage: true });
        },
        { colorScheme: "dark" },
      );
    } finally {
      await server.request(`/api/alerts/settings/2000/condition/${id}`, { method: "DELETE", role: "write" });
      await raise(`Read-only view of ${TAG}`, new Date().toISOString());
    }
  }, 60_000);
});
