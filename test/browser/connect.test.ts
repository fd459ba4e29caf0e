// @serial: its connectors share the test Connect cluster with test/connect/*, whose rebalances make a worker answer 5xx for a moment; alone, every answer it checks is the settled one.
/**
 * Kafka Connect in a real browser, against the compiled executable and the real Connect workers:
 * the workers of the test cluster up and those of a dead alias down; a writer creates a
 * MirrorHeartbeatConnector after Validate has shown the plugin's message beside each wrong
 * setting, sees it running with its task, pauses and resumes it, restarts its task, edits its configuration
 * and deletes it; a read user sees a connector (named with spaces) with its secret masked and
 * no action; a file source is refused to a writer with the guard rail's message where they
 * acted. axe-core on the list, the editor and a connector's page, in light and dark.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { kafkaBootstrap, requireEnv, uniqueTopic } from "../cluster/cluster.ts";
import type { ROLE_USERS } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { waitFor } from "../helpers/wait.ts";
import { compiledLoupe, launchChromium, openAs, seriousViolations, withPage } from "./browser.ts";

const ALIAS = "test-connect";
/** An alias whose only worker answers nothing: shown down, never in the way. */
const DEAD = "gone";
const HEARTBEAT = "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector";
const FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector";
const CREATED = uniqueTopic("ui-heartbeat");
/**
 * Made through the API for the read user: spaces in its name (encoded in every path), a secret in
 * its config. Not a slash: Connect's own server refuses an encoded slash in a path (400).
 */
const SHOWN = `${uniqueTopic("ui shown")} a b`;
const SECRET = "hush-hush-42";
/** Refused by the guard rails; deleted after the run should it have been made all the same. */
const FILE_CONNECTOR = uniqueTopic("ui-file-source");

let server: ServerProcess;
let browser: Browser;

/** A heartbeat connector's settings that run on the single test broker. */
const heartbeatConfig = (extra: Record<string, string> = {}) => ({
  "connector.class": HEARTBEAT,
  "tasks.max": "1",
  "source.cluster.alias": "src",
  "target.cluster.alias": "dst",
  "target.cluster.bootstrap.servers": kafkaBootstrap(),
  "heartbeats.topic.replication.factor": "1",
  ...extra,
});

const proxy = (...segments: string[]) => `/api/proxy-connect/${[ALIAS, ...segments].map(encodeURIComponent).join("/")}`;

beforeAll(async () => {
  server = await startServerProcess(
    {
      connect: {
        clusters: [
          { alias: ALIAS, urls: requireEnv("CONNECT_URL").split(",") },
          { alias: DEAD, urls: ["http://127.0.0.1:9"] },
        ],
      },
    },
    { executable: await compiledLoupe() },
  );
  const res = await server.request(proxy("connectors"), {
    method: "POST",
    role: "write",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: SHOWN, config: heartbeatConfig({ "loupe.ui.secret": SECRET }) }),
  });
  if (res.status !== 201) throw new Error(`creating ${SHOWN}: ${res.status} ${await res.text()}`);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  for (const name of [CREATED, SHOWN, FILE_CONNECTOR])
    await server?.request(proxy("connectors", name), { method: "DELETE", role: "admin" }).catch(() => {});
  await browser?.close();
  await server?.stop();
});

const signedIn = (page: Page, path: string, role: keyof typeof ROLE_USERS) => openAs(page, `${server.url}${path}`, role);
const pageOf = (name: string) => `/connect/${encodeURIComponent(ALIAS)}/connectors/${encodeURIComponent(name)}`;

/** The text of a tile ("State", "Tasks", ...) of the connector's page. */
const tile = (page: Page, label: string) => page.locator(".tile", { has: page.getByText(label, { exact: true }) }).locator("strong");

async function stateIs(page: Page, state: string, timeoutMs = 60_000): Promise<void> {
  await waitFor(async () => (await tile(page, "State").innerText()) === state, { timeoutMs, intervalMs: 250, what: `state ${state}` });
}

/** The message shown beside the setting whose value field is labelled `Value of {key}`. */
const fieldError = (page: Page, key: string) =>
  page.locator(".setting-row", { has: page.getByLabel(`Value of ${key}`, { exact: true }) }).locator(".field-error");

/**
 * Clicks an action button until Connect has taken it: right after a change Connect answers 409
 * while its workers rebalance, which the page shows as Connect's message (the user clicks
 * again). Taken: the page says so, or the connector reached `state` (a 409 may still have
 * been applied).
 */
async function act(page: Page, button: string, said: RegExp, state?: string): Promise<void> {
  const done = page.getByRole("status").filter({ hasText: said });
  const reached = async () => (await done.count()) === 1 || (state !== undefined && (await tile(page, "State").innerText()) === state);
  await waitFor(
    async () => {
      if (await reached()) return true;
      const target = page.getByRole("button", { name: button, exact: true });
      if (await target.isEnabled().catch(() => false)) {
        await target.click({ timeout: 5_000 });
        await done
          .or(page.locator("p.error[role=alert]"))
          .first()
          .waitFor({ timeout: 10_000 })
          .catch(() => {});
      }
      return reached();
    },
    { timeoutMs: 60_000, intervalMs: 1_000, what: `${button} taken by Connect` },
  );
}

async function addSetting(page: Page, key: string, value: string): Promise<void> {
  await page.getByRole("button", { name: "Add a setting" }).click();
  // An empty row's name field is labelled by its place; it offers the plugin's names (a combobox).
  await page
    .getByLabel(/^Name of setting \d+$/)
    .last()
    .fill(key);
  await page.getByLabel(`Value of ${key}`, { exact: true }).fill(value);
}

describe("connect", () => {
  test("the workers of each Connect cluster are listed up or down", async () => {
    await withPage(browser, "connect workers", async (page) => {
      await signedIn(page, "/connect", "nodata");
      const workers = page.getByRole("table", { name: "Connect workers" });
      await workers.waitFor();
      const rows = workers.locator("tbody tr");
      await waitFor(async () => (await rows.count()) === 3, { what: "three workers" });
      const texts = await rows.allInnerTexts();
      expect(texts.filter((t) => t.startsWith(ALIAS) && t.includes("UP"))).toHaveLength(2);
      expect(texts.filter((t) => t.startsWith(DEAD) && t.includes("DOWN"))).toHaveLength(1);
    });
  }, 60_000);

  test("a writer creates a heartbeat connector after the plugin's messages per setting, sees it run, pauses, resumes, restarts its task, edits and deletes it", async () => {
    await withPage(browser, "connect lifecycle", async (page) => {
      await signedIn(page, "/connect", "write");
      await page.getByRole("button", { name: "Create connector…" }).click();
      await page.getByRole("heading", { name: "Create a connector" }).waitFor();
      await page.getByLabel("Name", { exact: true }).fill(CREATED);
      await page.getByLabel("Plugin").selectOption(HEARTBEAT);
      // The plugin's required setting without a default comes as a row of its own.
      const sourceAlias = page.getByLabel("Value of source.cluster.alias", { exact: true });
      await sourceAlias.waitFor();
      await addSetting(page, "heartbeats.topic.replication.factor", "three");

      await page.getByRole("button", { name: "Validate" }).click();
      await page.getByRole("status").filter({ hasText: "The plugin finds 2 problems" }).waitFor();
      expect(await fieldError(page, "source.cluster.alias").innerText()).toContain('Missing required configuration "source.cluster.alias"');
      expect(await fieldError(page, "heartbeats.topic.replication.factor").innerText()).toContain("Not a number of type SHORT");
      expect(await sourceAlias.getAttribute("aria-invalid")).toBe("true");
      expect(await seriousViolations(page)).toEqual([]);

      await sourceAlias.fill("src");
      await page.getByLabel("Value of heartbeats.topic.replication.factor", { exact: true }).fill("1");
      await addSetting(page, "target.cluster.alias", "dst");
      await addSetting(page, "target.cluster.bootstrap.servers", kafkaBootstrap());
      await page.getByRole("button", { name: "Validate" }).click();
      await page.getByRole("status").filter({ hasText: "The plugin accepts this configuration." }).waitFor();
      expect(await page.locator(".field-error").count()).toBe(0);

      await page.getByRole("button", { name: "Create", exact: true }).click();
      await page.getByRole("heading", { name: `Connector ${CREATED}` }).waitFor();
      await stateIs(page, "RUNNING");
      const task = page.getByRole("table", { name: "Tasks" }).getByRole("row", { name: /RUNNING/ });
      await waitFor(async () => (await task.count()) === 1, { timeoutMs: 60_000, intervalMs: 250, what: "task 0 running" });
      expect(await page.getByRole("table", { name: "Configuration" }).innerText()).toContain("target.cluster.bootstrap.servers");

      await act(page, "Pause", /^Paused:/, "PAUSED");
      await stateIs(page, "PAUSED");
      const paused = (await (await server.request(proxy("connectors", CREATED, "status"), { role: "read" })).json()) as {
        connector: { state: string };
      };
      expect(paused.connector.state).toBe("PAUSED");
      await act(page, "Resume", /^Resumed:/, "RUNNING");
      await stateIs(page, "RUNNING");

      await act(page, "Restart task 0", /^Restart of task 0 asked\.$/);
      await waitFor(async () => (await task.count()) === 1, { timeoutMs: 60_000, intervalMs: 250, what: "task 0 running again" });

      // Edited: a setting changed through the editor, saved, shown on its page.
      await page.getByRole("button", { name: "Edit configuration" }).click();
      await page.getByRole("heading", { name: `Edit ${CREATED}` }).waitFor();
      await page.getByLabel("Value of source.cluster.alias", { exact: true }).waitFor();
      await addSetting(page, "emit.heartbeats.interval.seconds", "2");
      await waitFor(
        async () => {
          if (page.url().endsWith("/edit")) await page.getByRole("button", { name: "Save", exact: true }).click();
          await page
            .getByRole("heading", { name: `Connector ${CREATED}` })
            .or(page.locator("p.error[role=alert]"))
            .first()
            .waitFor();
          return !page.url().endsWith("/edit");
        },
        { timeoutMs: 60_000, intervalMs: 1_000, what: "the configuration saved (Connect answers 409 while it rebalances)" },
      );
      const interval = page.getByRole("table", { name: "Configuration" }).getByRole("row", { name: /emit\.heartbeats\.interval\.seconds/ });
      expect(await interval.innerText()).toContain("2");
      await stateIs(page, "RUNNING");

      // The list shows it running with its task.
      await page.getByRole("link", { name: "Connect", exact: true }).first().click();
      const row = page.getByRole("table", { name: "Connectors" }).getByRole("row", { name: new RegExp(CREATED) });
      await row.waitFor();
      await waitFor(async () => /RUNNING/.test(await row.innerText()) && /1 running/.test(await row.innerText()), {
        timeoutMs: 30_000,
        what: "the list's row running",
      });
      await page.getByRole("link", { name: CREATED }).click();

      await page.getByRole("button", { name: "Delete…" }).click();
      const dialog = page.getByRole("dialog", { name: `Delete ${CREATED}` });
      await dialog.getByLabel("Type the connector's name to confirm").fill(CREATED);
      await dialog.getByRole("button", { name: "Delete connector" }).click();
      await page.getByRole("heading", { name: "Connect", exact: true }).waitFor();
      // The worker that took the delete tells the others through Connect's config topic; a
      // worker still rebalancing (other files use the same Connect cluster) may answer 5xx meanwhile.
      const gone = await waitFor(
        async () => {
          const answer = await server.request(proxy("connectors", CREATED), { role: "read" });
          return answer.status < 500 && answer;
        },
        { timeoutMs: 30_000, what: "Connect's answer for the deleted connector" },
      );
      expect(gone.status).toBe(404);
      await waitFor(async () => (await page.getByRole("link", { name: CREATED }).count()) === 0, { what: "the row gone" });
    });
  }, 180_000);

  test("a read user sees a connector named with spaces, its secret masked, and no action", async () => {
    await withPage(browser, "connect read user", async (page) => {
      await signedIn(page, "/connect", "read");
      await page.getByRole("table", { name: "Connectors" }).waitFor();
      expect(await page.getByRole("button", { name: "Create connector…" }).count()).toBe(0);
      await page.getByRole("link", { name: SHOWN }).click();
      await page.getByRole("heading", { name: `Connector ${SHOWN}` }).waitFor();
      const config = page.getByRole("table", { name: "Configuration" });
      const secretRow = config.getByRole("row", { name: /loupe\.ui\.secret/ });
      await secretRow.waitFor();
      expect(await secretRow.innerText()).toContain("********");
      expect(await config.innerText()).not.toContain(SECRET);
      await page.getByRole("table", { name: "Tasks" }).waitFor();
      for (const name of [/^Pause$/, /^Resume$/, /^Restart/, /^Edit/, /^Delete/])
        expect(await page.getByRole("button", { name }).count()).toBe(0);
      // The editor's address is no way around the role either.
      await page.goto(`${server.url}${pageOf(SHOWN)}/edit`);
      await page.getByText("Creating and changing connectors needs the write role.").waitFor();
    });
  }, 60_000);

  test("23: a setting's documentation renders the plugin's markup (code, links), and text that only looks like a tag stays text", async () => {
    await withPage(browser, "connect docs markup", async (page) => {
      await signedIn(page, `/connect/${ALIAS}/new`, "write");
      await page.getByLabel("Plugin").selectOption(HEARTBEAT);
      await page.getByLabel("Value of source.cluster.alias", { exact: true }).waitFor();
      await addSetting(page, "forwarding.admin.class", "org.apache.kafka.clients.admin.ForwardingAdmin");
      await addSetting(page, "config.providers", "file");
      const help = (key: string) =>
        page.locator(".setting-row", { has: page.getByLabel(`Value of ${key}`, { exact: true }) }).locator(".setting-help");

      // Connect writes "<code>(Map<String, Object> config)</code>": the code is code, the generics are text.
      const forwarding = help("forwarding.admin.class");
      await forwarding.locator("code").first().waitFor();
      expect(await forwarding.locator("code").first().innerText()).toBe("(Map<String, Object> config)");
      expect(await forwarding.innerText()).not.toContain("<code>");

      // A link of the documentation is a link, opened apart from Loupe.
      const link = help("config.providers").getByRole("link", { name: "Configuration Providers" });
      expect(await link.getAttribute("href")).toBe("https://kafka.apache.org/documentation/#config_providers");
      expect(await link.getAttribute("rel")).toBe("noopener noreferrer");
      expect(await help("config.providers").locator("code").first().innerText()).toBe("ConfigProvider");
      expect(await seriousViolations(page)).toEqual([]);
    });
  }, 60_000);

  test("a file source is refused to a writer with the guard rail's message shown where they acted", async () => {
    const name = FILE_CONNECTOR;
    const config = { "connector.class": FILE_SOURCE, "tasks.max": "1", topic: name, file: "/etc/hostname" };
    const direct = await server.request(proxy("connectors"), {
      method: "POST",
      role: "write",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name, config }),
    });
    expect(direct.status).toBe(403);
    const { message } = (await direct.json()) as { message: string };
    await withPage(browser, "connect file source refused", async (page) => {
      await signedIn(page, `/connect/${ALIAS}/new?plugin=${encodeURIComponent(FILE_SOURCE)}`, "write");
      await page.getByRole("heading", { name: "Create a connector" }).waitFor();
      expect(await page.getByLabel("Plugin").inputValue()).toBe(FILE_SOURCE);
      await page.getByLabel("Name", { exact: true }).fill(name);
      await addSetting(page, "topic", name);
      await addSetting(page, "file", "/etc/hostname");
      await page.getByRole("button", { name: "Create", exact: true }).click();
      await page.getByRole("alert").filter({ hasText: message }).waitFor();
      expect(page.url()).toContain("/new");
    });
    expect((await server.request(proxy("connectors", name), { role: "admin" })).status).toBe(404);
  }, 60_000);

  test("axe-core: no serious or critical violation on the list, the editor and a connector's page, in both themes", async () => {
    for (const colorScheme of ["light", "dark"] as const)
      await withPage(
        browser,
        `connect axe ${colorScheme}`,
        async (page) => {
          await signedIn(page, "/connect", "write");
          await page.getByRole("table", { name: "Connectors" }).waitFor();
          await page.getByRole("table", { name: "Connector plugins" }).waitFor();
          expect(await seriousViolations(page)).toEqual([]);
          await page.getByRole("link", { name: SHOWN }).click();
          await page.getByRole("table", { name: "Tasks" }).waitFor();
          expect(await seriousViolations(page)).toEqual([]);
          await page.getByRole("button", { name: "Edit configuration" }).click();
          await page.getByLabel("Value of source.cluster.alias", { exact: true }).fill("");
          await page.getByRole("button", { name: "Validate" }).click();
          await fieldError(page, "source.cluster.alias").waitFor();
          expect(await seriousViolations(page)).toEqual([]);
        },
        { colorScheme },
      );
  }, 90_000);
});
