/**
 * Every page of the router, opened by a direct link (as a bookmark or a shared link opens it) by
 * each kind of user: admin, write, read, nodata, and a reader limited to `payments.*`. Each page
 * offers only what the role allows and says in words what the user may not use (never the API's
 * "Role none may not GET ..."); the navigation lists only the pages the user may use. At 1024 px
 * wide nothing runs off the side. No page writes a console error or breaks the
 * Content-Security-Policy, and axe-core finds no serious or critical violation on any page, in
 * light and dark (as admin and as nodata: during their tours, each page checked in both themes
 * once it is open, the theme switched with the toggle, not by opening the page again).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { connectEnv, kafkaBootstrap, registryEnv, uniqueTopic } from "../cluster/cluster.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { compiledLoupe, createTopic, insert, launchChromium, seriousViolations, signIn, withPage } from "./browser.ts";

type Who = "admin" | "write" | "read" | "nodata" | "scoped";
type Level = "nodata" | "read" | "write" | "admin";

const RUN = uniqueTopic("ui-pages");
const TOPIC = `payments.${RUN}`;
const OUT = `payments.${RUN}-out`;
const OTHER = `other.${RUN}`;
const GROUP = `${RUN}-group`;
const CONNECTOR = `${RUN}-heartbeat`;
const SUBJECT = `${TOPIC}-value`;
const PROCESSOR = `${RUN}-projection`;
const ALIAS = "dev";
/** A store user whose only group reads `payments.*` on every cluster. */
const SCOPED = { name: `pat-${RUN}`.slice(0, 60), password: "pat-password-1", group: `payments-readers-${RUN}`.slice(0, 60) };

let server: ServerProcess;
let browser: Browser;
let processorId = "";
let redriveId = "";

const LEVELS: Record<Who, Level[]> = {
  admin: ["nodata", "read", "write", "admin"],
  write: ["nodata", "read", "write"],
  read: ["nodata", "read"],
  scoped: ["nodata", "read"],
  nodata: ["nodata"],
};
const can = (who: Who, level: Level) => LEVELS[who].includes(level);

async function must(res: Promise<Response>, what: string, ok = [200, 201]): Promise<Response> {
  const r = await res;
  if (!ok.includes(r.status)) throw new Error(`${what}: ${r.status} ${await r.text()}`);
  return r;
}
const json = (body: unknown) => ({
  headers: { "content-type": "application/json", accept: "application/json" },
  body: JSON.stringify(body),
});

beforeAll(async () => {
  const connect = connectEnv();
  const registry = registryEnv();
  server = await startServerProcess(
    {
      connect: { clusters: [{ alias: ALIAS, urls: connect.urls, ...(connect.topics ? { topics: connect.topics } : {}) }] },
      schemaRegistry: { urls: registry.urls, topics: registry.topics },
      // INFO lines kept, for the logs page (the other browser tests log warnings only).
      log: { level: "info" },
    },
    { executable: await compiledLoupe() },
  );
  await createTopic(server, TOPIC, 3);
  await createTopic(server, OTHER, 1);
  await insert(server, `INSERT INTO \`${TOPIC}\` (_key, id, city) VALUES ('k1', 1, 'Lyon')`);
  await must(
    server.request(`/api/consumers/${GROUP}/offsets`, {
      method: "PUT",
      role: "admin",
      ...json({ offsets: [{ topic: TOPIC, partition: 0, offset: 0 }] }),
    }),
    "the group's offsets",
  );
  await must(
    server.request(`/api/proxy-connect/${ALIAS}/connectors`, {
      method: "POST",
      role: "write",
      ...json({
        name: CONNECTOR,
        config: {
          "connector.class": "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
          "tasks.max": "1",
          "source.cluster.alias": "src",
          "target.cluster.alias": "dst",
          "target.cluster.bootstrap.servers": kafkaBootstrap(),
          "heartbeats.topic.replication.factor": "1",
        },
      }),
    }),
    "the connector",
  );
  const schema = JSON.stringify({ type: "record", name: "Payment", fields: [{ name: "id", type: "int" }] });
  await must(
    server.request(`/api/proxy-sr/subjects/${SUBJECT}/versions`, { method: "POST", role: "write", ...json({ schema }) }),
    "the subject",
  );
  const made = await must(
    server.request("/api/streams", {
      method: "POST",
      role: "write",
      ...json({
        name: PROCESSOR,
        sql: `SET autocreate = true; SET _vtype = JSON; INSERT INTO \`${OUT}\` SELECT STREAM id, city FROM \`${TOPIC}\``,
        runners: 1,
      }),
    }),
    "the processor",
  );
  processorId = ((await made.json()) as { id: string }).id;
  const redrive = await must(
    server.request("/api/redrives", { method: "POST", role: "write", ...json({ topic: TOPIC, target: OTHER, name: `${RUN}-copy` }) }),
    "the redrive job",
  );
  redriveId = ((await redrive.json()) as { id: string }).id;
  await must(
    server.request("/api/groups", {
      method: "POST",
      role: "admin",
      ...json({ name: SCOPED.group, roles: ["read"], clusters: ["*"], topics: { allow: ["payments.*"], deny: [] } }),
    }),
    "the scoped group",
  );
  await must(
    server.request("/api/users", {
      method: "POST",
      role: "admin",
      ...json({ name: SCOPED.name, password: SCOPED.password, groups: [SCOPED.group] }),
    }),
    "the scoped user",
  );
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  const quietly = (path: string) => server?.request(path, { method: "DELETE", role: "admin" }).catch(() => {});
  await quietly(`/api/streams/${processorId}`);
  await server?.request(`/api/redrives/${redriveId}/cancel`, { method: "PUT", role: "admin" }).catch(() => {});
  await quietly(`/api/proxy-connect/${ALIAS}/connectors/${CONNECTOR}`);
  await quietly(`/api/proxy-sr/subjects/${SUBJECT}`);
  await quietly(`/api/consumers/${GROUP}`);
  for (const t of [TOPIC, OUT, OTHER]) await quietly(`/api/topics/${t}`);
  await quietly(`/api/users/${SCOPED.name}`);
  await quietly(`/api/groups/${SCOPED.group}`);
  await browser?.close();
  await server?.stop();
}, 60_000);

/** A page of the router: the level it needs, what shows it is there, and what it offers to writers (or admins). */
interface PageSpec {
  path: () => string;
  title: string;
  level: Level;
  /** Resolves once the page shows its content (allowed). */
  shown: (page: Page) => Promise<void>;
  /** Controls offered only to those who may change things, by accessible name. */
  changes?: Array<{ role: "button" | "link"; name: string | RegExp }>;
  /** Controls offered only to admins without limits (changing ACLs, switching alert settings). */
  adminChanges?: Array<{ role: "button" | "link" | "switch"; name: string | RegExp }>;
  /** Controls offered to readers of records (not to nodata). */
  reads?: Array<{ role: "button" | "link"; name: string | RegExp }>;
  /** The page's words when refused. */
  refusal?: RegExp;
}

const main = (page: Page) => page.getByRole("main");
const heading = (name: string | RegExp) => (page: Page) => main(page).getByRole("heading", { name, level: 1 }).waitFor();

const ADMIN_WORDS = /is for Loupe's administrators: it needs the admin role on every cluster and every topic\./;
const READ_WORDS =
  /: it needs the read role\. The nodata role shows the cluster, its topics, partitions, offsets and configs, but no record\./;

const PAGES: PageSpec[] = [
  {
    path: () => "/",
    title: "Overview",
    level: "nodata",
    shown: async (page) => {
      await heading("Overview")(page);
      await page.getByRole("table", { name: "Brokers" }).locator("tbody tr").first().waitFor();
      await page
        .getByTestId("overview-figures")
        .getByText(/^records, [\d,]+ groups?$/)
        .waitFor();
    },
    // The consumer lag's groups link to their page, which needs read.
    reads: [{ role: "link", name: /^records, [\d,]+ groups?$/ }],
  },
  {
    path: () => `/topics?q=${TOPIC}`,
    title: "Topics",
    level: "nodata",
    shown: async (page) => {
      await heading("Topics")(page);
      await main(page).getByRole("link", { name: TOPIC, exact: true }).waitFor();
    },
    changes: [{ role: "button", name: "Create topic…" }],
  },
  {
    path: () => `/topics/${TOPIC}`,
    title: "Topic",
    level: "nodata",
    shown: async (page) => {
      await heading(new RegExp(TOPIC))(page);
      await main(page).getByText("STRING / JSON", { exact: false }).first().waitFor();
    },
    changes: [{ role: "button", name: "Delete topic…" }],
    reads: [{ role: "link", name: /^Query in SQL/ }],
  },
  {
    path: () => "/sql",
    title: "SQL",
    level: "read",
    shown: async (page) => {
      await heading("SQL")(page);
      await main(page).getByRole("button", { name: "Run" }).waitFor();
    },
    refusal: /^The SQL workbench shows the records of topics: it needs the read role\./,
  },
  {
    path: () => `/processors?q=${PROCESSOR}`,
    title: "Stream processors",
    level: "nodata",
    shown: async (page) => {
      await heading("Stream processors")(page);
      await main(page).getByRole("link", { name: PROCESSOR, exact: true }).waitFor();
    },
    changes: [{ role: "button", name: "Create a stream processor…" }],
  },
  {
    path: () => "/processors/new",
    title: "Stream processors",
    level: "write",
    shown: async (page) => {
      await heading("New stream processor")(page);
      await main(page).getByRole("button", { name: "Create" }).waitFor();
    },
    refusal: /^Creating a stream processor needs the write role\.$/,
  },
  {
    path: () => `/processors/${processorId}`,
    title: "Stream processors",
    level: "nodata",
    shown: async (page) => {
      await main(page)
        .getByRole("heading", { name: new RegExp(PROCESSOR) })
        .waitFor();
      await page.getByTestId("proc-state").waitFor();
    },
    // The write user owns it; an admin may change anyone's.
    changes: [{ role: "button", name: "Delete…" }],
  },
  {
    path: () => "/redrives",
    title: "Redrive",
    level: "nodata",
    shown: async (page) => {
      await heading("Redrive jobs")(page);
      await main(page)
        .getByRole("link", { name: `${RUN}-copy`, exact: true })
        .waitFor();
    },
    changes: [{ role: "button", name: "Create a redrive job…" }],
  },
  {
    path: () => "/redrives/new",
    title: "Redrive",
    level: "write",
    shown: async (page) => {
      await heading("New redrive job")(page);
      await main(page).getByRole("button", { name: "Create and dry run" }).waitFor();
    },
    refusal: /^Creating a redrive job needs the write role\.$/,
  },
  {
    path: () => `/redrives/${redriveId}`,
    title: "Redrive",
    level: "nodata",
    shown: async (page) => {
      await main(page)
        .getByRole("heading", { name: new RegExp(`${RUN}-copy`) })
        .waitFor();
      await main(page).getByRole("table", { name: "Progress per partition" }).waitFor();
    },
    // The write user owns it; an admin may change anyone's.
    changes: [
      { role: "button", name: "Dry run" },
      { role: "button", name: "Cancel job…" },
    ],
  },
  {
    path: () => `/consumers?q=${GROUP}`,
    title: "Consumer groups",
    level: "read",
    shown: async (page) => {
      await heading("Consumer groups")(page);
      await main(page).getByRole("link", { name: GROUP, exact: true }).waitFor();
    },
    refusal: /^Consumer groups show the offsets and lag of the groups reading topics: it needs the read role\./,
  },
  {
    path: () => `/consumers/${GROUP}`,
    title: "Consumer groups",
    level: "read",
    shown: async (page) => {
      await heading(new RegExp(GROUP))(page);
      await main(page)
        .getByRole("table", { name: /Offsets/ })
        .waitFor();
    },
    changes: [{ role: "button", name: "Reset offsets…" }],
    refusal: READ_WORDS,
  },
  {
    path: () => `/connect?q=${CONNECTOR}`,
    title: "Connect",
    level: "nodata",
    shown: async (page) => {
      await heading("Connect")(page);
      await main(page).getByRole("link", { name: CONNECTOR, exact: true }).waitFor();
    },
    changes: [{ role: "button", name: "Create connector…" }],
  },
  {
    path: () => `/connect/${ALIAS}/new`,
    title: "Connect",
    level: "write",
    shown: heading("Create a connector"),
    refusal: /^Creating and changing connectors needs the write role\.$/,
  },
  {
    path: () => `/connect/${ALIAS}/connectors/${CONNECTOR}`,
    title: "Connect",
    level: "nodata",
    shown: async (page) => {
      await heading(new RegExp(`Connector ${CONNECTOR}`))(page);
      await main(page).getByRole("table", { name: "Configuration" }).waitFor();
      // The actions come with the connector's status, a request of its own that may answer later.
      await main(page).getByRole("heading", { name: "Tasks" }).waitFor();
    },
    changes: [
      { role: "button", name: /^Edit/ },
      { role: "button", name: /^Delete/ },
    ],
  },
  {
    path: () => `/connect/${ALIAS}/connectors/${CONNECTOR}/edit`,
    title: "Connect",
    level: "write",
    shown: heading(`Edit ${CONNECTOR}`),
    refusal: /^Creating and changing connectors needs the write role\.$/,
  },
  {
    path: () => `/schemas?q=${SUBJECT}`,
    title: "Schemas",
    level: "nodata",
    shown: async (page) => {
      await heading("Schemas")(page);
      await main(page).getByRole("link", { name: SUBJECT, exact: true }).waitFor();
    },
    changes: [{ role: "button", name: "Register a schema…" }],
  },
  {
    path: () => `/schemas/${SUBJECT}`,
    title: "Schemas",
    level: "nodata",
    shown: async (page) => {
      await heading(new RegExp(SUBJECT))(page);
      await main(page).getByText("Schema of version 1").waitFor();
    },
  },
  {
    path: () => "/brokers",
    title: "Brokers",
    level: "nodata",
    shown: async (page) => {
      await heading("Brokers")(page);
      await main(page).getByRole("table", { name: "Configs of broker 1" }).waitFor();
    },
    adminChanges: [{ role: "button", name: /^Edit / }],
  },
  {
    path: () => "/acls",
    title: "ACLs",
    level: "nodata",
    shown: async (page) => {
      await heading("ACLs")(page);
      await main(page).getByRole("button", { name: "Explain" }).waitFor();
    },
    adminChanges: [{ role: "button", name: "Add binding" }],
  },
  {
    path: () => "/quotas",
    title: "Quotas",
    level: "nodata",
    shown: async (page) => {
      await heading("Quotas")(page);
      await main(page).getByRole("region", { name: "Which quota applies?" }).waitFor();
    },
    adminChanges: [{ role: "button", name: "Create quota…" }],
  },
  {
    // The topics made above raised "topic created" notifications.
    path: () => "/alerts",
    title: "Alerts",
    level: "nodata",
    shown: async (page) => {
      await heading("Alerts")(page);
      await main(page).getByRole("table", { name: "Alert notifications" }).waitFor();
    },
    reads: [{ role: "link", name: "Delivery status" }],
  },
  {
    path: () => "/alerts/settings",
    title: "Alerts",
    level: "nodata",
    shown: async (page) => {
      await heading("Alerts")(page);
      await main(page).getByRole("table", { name: "Consumers alert settings" }).waitFor();
    },
    changes: [{ role: "button", name: "Add condition" }],
    adminChanges: [{ role: "switch", name: /^1000 · / }],
  },
  {
    path: () => "/alerts/deliveries",
    title: "Alerts",
    level: "read",
    shown: async (page) => {
      await heading("Alerts")(page);
      await main(page).getByRole("heading", { name: "Failing and given up" }).waitFor();
    },
    refusal: READ_WORDS,
  },
  {
    path: () => "/audit",
    title: "Audit",
    level: "admin",
    shown: async (page) => {
      await heading("Audit")(page);
      await main(page).getByRole("table").first().waitFor();
    },
    refusal: ADMIN_WORDS,
  },
  {
    path: () => "/logs",
    title: "Logs",
    level: "admin",
    shown: async (page) => {
      await heading("Logs")(page);
      await main(page).getByRole("table", { name: "INFO log lines, newest first" }).waitFor();
    },
    refusal: ADMIN_WORDS,
  },
  {
    path: () => "/kafka-users",
    title: "Kafka users",
    level: "admin",
    shown: async (page) => {
      await heading("Kafka users")(page);
      await main(page).getByRole("button", { name: "Create user" }).waitFor();
    },
    refusal: ADMIN_WORDS,
  },
  {
    path: () => "/users",
    title: "Users",
    level: "admin",
    shown: async (page) => {
      await heading("Users")(page);
      await main(page).getByRole("button", { name: "Create user…" }).waitFor();
    },
    refusal: ADMIN_WORDS,
  },
  {
    path: () => "/groups",
    title: "Groups",
    level: "admin",
    shown: async (page) => {
      await heading("Groups")(page);
      await main(page).getByRole("button", { name: "Create group…" }).waitFor();
    },
    refusal: ADMIN_WORDS,
  },
  {
    path: () => "/service-accounts",
    title: "Service accounts",
    level: "admin",
    shown: async (page) => {
      await heading("Service accounts")(page);
      await main(page).getByRole("button", { name: "Create service account…" }).waitFor();
    },
    refusal: ADMIN_WORDS,
  },
  {
    path: () => "/masking",
    title: "Masking policies",
    level: "admin",
    shown: async (page) => {
      await heading("Masking policies")(page);
      await main(page).getByRole("button", { name: "Create policy…" }).waitFor();
    },
    refusal: ADMIN_WORDS,
  },
  {
    path: () => "/nowhere",
    title: "Not found",
    level: "nodata",
    shown: async (page) => {
      await heading("Not found")(page);
      await main(page).getByText("No page at /nowhere.").waitFor();
    },
  },
];

/** The navigation's links for each level, in its order. */
const NAV: Array<[string, Level]> = [
  ["Overview", "nodata"],
  ["Brokers", "nodata"],
  ["Topics", "nodata"],
  ["SQL", "read"],
  ["Stream processors", "nodata"],
  ["Redrive", "nodata"],
  ["Consumer groups", "read"],
  ["Connect", "nodata"],
  ["Schemas", "nodata"],
  ["ACLs", "nodata"],
  ["Quotas", "nodata"],
  ["Alerts", "nodata"],
  ["Audit", "admin"],
  ["Logs", "admin"],
  ["Kafka users", "admin"],
  ["Users", "admin"],
  ["Groups", "admin"],
  ["Service accounts", "admin"],
  ["Masking policies", "admin"],
];

/** Console errors, failed scripts and Content-Security-Policy reports of the page, as they come. */
function consoleProblems(page: Page): string[] {
  const seen: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" || /Content Security Policy|Refused to/i.test(m.text())) seen.push(`${m.type()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => seen.push(`page error: ${e.message}`));
  return seen;
}

/**
 * What runs off the side at this width: the page scrolling sideways, or a control of the page
 * beyond the visible part of what holds it (data grids, which scroll sideways by design, apart).
 */
function offTheSide(page: Page): Promise<string[]> {
  // A script, not a function: the tests are type-checked without the DOM's types.
  return page.evaluate(`(() => {
    const out = [];
    const doc = document.scrollingElement;
    if (doc.scrollWidth > doc.clientWidth) out.push("the page is " + doc.scrollWidth + " px wide in " + doc.clientWidth + " px");
    const content = document.querySelector("main");
    for (const el of content.querySelectorAll("button, a, input, select, textarea")) {
      if (el.closest(".grid-scroll")) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      let box = content;
      for (let a = el.parentElement; a && a !== content; a = a.parentElement)
        if (getComputedStyle(a).overflowX !== "visible") { box = a; break; }
      const right = box.getBoundingClientRect().right;
      if (r.right > right + 1)
        out.push(el.tagName.toLowerCase() + ' "' + (el.textContent || "").trim().slice(0, 40) + '" ends at ' + Math.round(r.right) + " px, past " + Math.round(right) + " px");
    }
    return out;
  })()`) as Promise<string[]>;
}

async function signInAs(page: Page, who: Who): Promise<void> {
  if (who === "scoped") {
    await page.getByLabel("User name").fill(SCOPED.name);
    await page.getByLabel("Password").fill(SCOPED.password);
    await page.getByLabel("Password").press("Enter");
  } else await signIn(page, who);
}

/** axe-core on the page as it is, in the theme now shown, then in the other one, switched with the toggle (and back). */
async function axeInBothThemes(page: Page, path: string): Promise<void> {
  const root = () => page.evaluate("document.documentElement.dataset.theme");
  expect({ path, theme: await root(), violations: await seriousViolations(page) }).toEqual({ path, theme: "light", violations: [] });
  await page.getByRole("button", { name: "Switch to dark theme" }).click();
  expect({ path, theme: await root(), violations: await seriousViolations(page) }).toEqual({ path, theme: "dark", violations: [] });
  await page.getByRole("button", { name: "Switch to light theme" }).click();
}

/**
 * Opens every page by its address as `who`, at 1024 × 768, and checks what each offers and says;
 * with `axe`, runs axe-core on each page in light and dark too.
 */
async function tour(who: Who, axe = false): Promise<void> {
  await withPage(
    browser,
    `pages ${who}`,
    async (page) => {
      const problems = consoleProblems(page);
      await page.goto(`${server.url}/`);
      await signInAs(page, who);
      await heading("Overview")(page);

      // The navigation lists what the user may open, nothing else.
      const nav = page.getByRole("navigation", { name: "Main" });
      await nav.getByRole("link", { name: "Overview" }).waitFor();
      const links = (await nav.getByRole("link").allInnerTexts()).map((t) => t.trim());
      expect(links).toEqual([...NAV.filter(([, level]) => can(who, level)).map(([name]) => name), "API"]);

      // The refusal is one page whatever the path: axe-core checks it once.
      let refusalChecked = false;
      for (const spec of PAGES) {
        const path = spec.path();
        problems.length = 0;
        await page.goto(`${server.url}${path}`);
        const allowed = can(who, spec.level);
        if (allowed) {
          await spec.shown(page);
          for (const c of spec.changes ?? [])
            expect({ path, control: String(c.name), offered: (await main(page).getByRole(c.role, { name: c.name }).count()) > 0 }).toEqual({
              path,
              control: String(c.name),
              offered: can(who, "write"),
            });
          for (const c of spec.adminChanges ?? [])
            expect({ path, control: String(c.name), offered: (await main(page).getByRole(c.role, { name: c.name }).count()) > 0 }).toEqual({
              path,
              control: String(c.name),
              offered: can(who, "admin"),
            });
          for (const c of spec.reads ?? [])
            expect({ path, control: String(c.name), offered: (await main(page).getByRole(c.role, { name: c.name }).count()) > 0 }).toEqual({
              path,
              control: String(c.name),
              offered: can(who, "read"),
            });
        } else {
          await heading(spec.title)(page);
          const words = await page.getByTestId("not-for-you").innerText();
          expect({ path, words }).toEqual({ path, words: expect.stringMatching(spec.refusal ?? /./) });
          const signedIn = who === "scoped" ? SCOPED.name : undefined;
          const about = await main(page).innerText();
          expect(about).toContain(`You are signed in as ${signedIn ?? ""}`);
          expect(about).not.toMatch(/may not (GET|POST|PUT|DELETE)/);
          // Nothing is offered that would fail: no button at all, the way back only.
          expect({ path, buttons: await main(page).getByRole("button").count() }).toEqual({ path, buttons: 0 });
        }
        expect({ path, offTheSide: await offTheSide(page) }).toEqual({ path, offTheSide: [] });
        expect({ path, console: problems }).toEqual({ path, console: [] });
        if (axe && (allowed || !refusalChecked)) await axeInBothThemes(page, path);
        if (!allowed) refusalChecked = true;
      }
    },
    { viewport: { width: 1024, height: 768 } },
  );
}

describe("23: every page opened by a direct link offers what the role allows and says in words what it does not", () => {
  for (const who of ["admin", "write", "read", "nodata", "scoped"] as const) {
    // The most and the least a user may see: axe-core on every page of theirs too.
    const axe = who === "admin" || who === "nodata";
    test(
      `as ${who}${axe ? "; axe-core finds no serious or critical violation on any page, in light and dark" : ""}`,
      () => tour(who, axe),
      240_000,
    );
  }

  test("the scoped user's overview counts the topics it may see, the broker's leaders and replicas too", async () => {
    await withPage(browser, "pages scoped overview", async (page) => {
      await page.goto(`${server.url}/`);
      await signInAs(page, "scoped");
      const brokers = page.getByRole("table", { name: "Brokers" });
      await brokers.locator("tbody tr").first().waitFor();
      const figure = (label: string) =>
        page
          .getByTestId("overview-figures")
          .locator(".tile", { has: page.getByText(label, { exact: true }) })
          .locator("strong")
          .innerText();
      const partitions = Number((await figure("Partitions")).replace(/,/g, ""));
      const cells = await brokers.locator("tbody tr").first().locator("td").allInnerTexts();
      // ID, host, port, rack, leader of, replicas: one broker leads and holds every visible partition.
      expect(cells.slice(4).map((c) => Number(c.replace(/,/g, "")))).toEqual([partitions, partitions]);
      // Fewer than the cluster holds (other tests make and drop topics meanwhile: an upper bound only).
      const all = (await (await server.request("/api/cluster", { role: "admin" })).json()) as { partitions: number };
      expect(partitions).toBeLessThan(all.partitions);
    });
  }, 60_000);
});

describe("23: no Content-Security-Policy report while working in an editor", () => {
  test("typing over a selection in the workbench and in a processor's program types it, and the console stays clean", async () => {
    await withPage(
      browser,
      "pages editor csp",
      async (page) => {
        const problems = consoleProblems(page);
        await page.goto(`${server.url}/sql`);
        await signInAs(page, "write");
        await heading("SQL")(page);
        for (const path of ["/sql", "/processors/new"]) {
          await page.goto(`${server.url}${path}`);
          const editor = page.locator(".cm-content");
          await editor.click();
          // Chrome replaced a selection itself, marking the line with a style attribute the policy refuses.
          await page.keyboard.press("Control+a");
          await page.keyboard.type(`SELECT id FROM \`${TOPIC}\``);
          await page.keyboard.press("Enter");
          await page.keyboard.type("LIMIT 5");
          await page.keyboard.press("Shift+Home");
          await page.keyboard.type("LIMIT 3");
          await page.keyboard.press("Control+a");
          await page.keyboard.type("SELECT (1)");
          expect({ path, text: await editor.innerText() }).toEqual({ path, text: "SELECT (1)" });
          expect({ path, console: problems }).toEqual({ path, console: [] });
        }
      },
      { viewport: { width: 1024, height: 768 } },
    );
  }, 60_000);
});
