/**
 * The ACL page in a real browser: an admin adds a binding with the form (only the operations
 * valid for the chosen type are offered), sees it by principal and by resource, asks whether the
 * principal may read the topic, and deletes it through the dialog; a nodata user sees the
 * bindings and may ask, but is offered neither the form nor a delete. axe-core in both themes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import type { ROLE_USERS } from "../helpers/runtime.ts";
import { bootstrap } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { compiledLoupe, launchChromium, openAs, seriousViolations, withPage } from "./browser.ts";

const RUN = `ui${Date.now().toString(36)}`;
const TOPIC = `${RUN}-payments`;
const PRINCIPAL = `User:${RUN}-carol`;

let server: ServerProcess;
let browser: Browser;

beforeAll(async () => {
  server = await startServerProcess(
    {
      kafka: {
        clusters: [
          {
            name: "local",
            bootstrapServers: bootstrap(),
            default: true,
            // What the test broker's server.properties say (test/cluster/cluster.ts).
            authorizer: { superUsers: ["User:ANONYMOUS"], allowEveryoneIfNoAclFound: true },
          },
        ],
      },
    },
    { executable: await compiledLoupe() },
  );
  browser = await launchChromium();
}, 120_000);

/** A DENY of Write on every topic of this run, for the principal. */
const DENY_WRITE = {
  resourceType: "Topic",
  resourceName: `${RUN}-`,
  patternType: "PREFIXED",
  principal: PRINCIPAL,
  permissionType: "Deny",
  host: "*",
  operation: "Write",
};
const change = (method: "PUT" | "DELETE", body: Record<string, string>) =>
  server.request("/api/acl", { method, role: "admin", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

afterAll(async () => {
  for (const operation of ["Read", "Write"])
    await change("DELETE", {
      resourceType: "Topic",
      resourceName: TOPIC,
      principal: PRINCIPAL,
      permissionType: "Allow",
      host: "*",
      operation,
    }).catch(() => {});
  await change("DELETE", DENY_WRITE).catch(() => {});
  await browser?.close();
  await server?.stop();
});

const signedIn = (page: Page, path: string, role: keyof typeof ROLE_USERS) => openAs(page, `${server.url}${path}`, role);

const optionsOf = (page: Page, form: string, label: string) =>
  page
    .getByRole("form", { name: form })
    .getByLabel(label)
    .locator("option")
    .evaluateAll((os) => os.map((o) => o.textContent));

describe("the ACL page", () => {
  test("an admin adds a binding, sees it by principal and by resource, asks about it, and deletes it", async () => {
    await withPage(browser, "acls admin", async (page) => {
      await signedIn(page, "/acls", "admin");
      await page.getByRole("heading", { name: "ACLs", level: 1 }).waitFor();
      const add = page.getByRole("form", { name: "Add a binding" });

      // Only the operations valid for the type are offered.
      await add.getByLabel("Resource type").selectOption("TransactionalId");
      expect(await optionsOf(page, "Add a binding", "Operation")).toEqual(["Describe", "Write", "All"]);
      await add.getByLabel("Resource type").selectOption("Cluster");
      expect(await add.getByLabel("Resource name").inputValue()).toBe("kafka-cluster");
      await add.getByLabel("Resource type").selectOption("Topic");
      expect(await optionsOf(page, "Add a binding", "Operation")).toContain("DescribeConfigs");

      await add.getByLabel("Principal").fill(PRINCIPAL);
      await add.getByLabel("Resource name").fill(TOPIC);
      await add.getByLabel("Operation").selectOption("Write");
      await add.getByRole("button", { name: "Add binding" }).click();
      await add.getByRole("status").getByText(`Added: Allow Write on Topic ${TOPIC} for ${PRINCIPAL}`).waitFor();

      // By principal: a table of the principal's bindings.
      await page.getByLabel("Search").fill(RUN);
      const byPrincipal = page.getByRole("table", { name: `Bindings of ${PRINCIPAL}` });
      await byPrincipal.getByRole("row", { name: new RegExp(`Topic ${TOPIC}.*Write.*Allow`) }).waitFor();
      expect(await seriousViolations(page)).toEqual([]);
      // By resource: a table of the topic's bindings.
      await page.getByLabel("resource", { exact: true }).check();
      await page
        .getByRole("table", { name: `Bindings of Topic ${TOPIC}` })
        .getByRole("row", { name: new RegExp(PRINCIPAL) })
        .waitFor();
      await page.waitForURL(/by=resource/);

      // The question: Write implies Describe.
      const explain = page.getByRole("form", { name: "May a principal do this?" });
      await explain.getByLabel("Principal").fill(PRINCIPAL);
      await explain.getByLabel("Resource name").fill(TOPIC);
      await explain.getByLabel("Operation").selectOption("Describe");
      await explain.getByRole("button", { name: "Explain" }).click();
      await explain.getByText("Allowed.", { exact: true }).waitFor();
      await explain.getByRole("table", { name: "Bindings on the resource" }).getByText("allows Write, which implies Describe").waitFor();

      // A prefixed DENY of Write added with the form wins over the literal ALLOW.
      await add.getByLabel("Resource name").fill(`${RUN}-`);
      await add.getByLabel("Pattern").selectOption("PREFIXED");
      await add.getByLabel("Permission").selectOption("Deny");
      await add.getByRole("button", { name: "Add binding" }).click();
      await add.getByRole("status").getByText(`Added: Deny Write on Topic ${RUN}-* for ${PRINCIPAL}`).waitFor();
      await explain.getByLabel("Operation").selectOption("Write");
      await explain.getByRole("button", { name: "Explain" }).click();
      await explain.getByText("Denied.", { exact: true }).waitFor();
      await explain.getByText("A DENY binding applies, and a DENY wins over every ALLOW.").waitFor();
      expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: "/tmp/acls-admin.png", fullPage: true });

      // Deleted through the dialog; gone from the page and from the cluster.
      await page.getByRole("button", { name: `Delete Allow Write on Topic ${TOPIC} for ${PRINCIPAL}` }).click();
      const dialog = page.getByRole("dialog", { name: "Delete the binding" });
      await dialog.getByRole("button", { name: "Delete" }).click();
      await dialog.waitFor({ state: "hidden" });
      await page.getByRole("table", { name: `Bindings of Topic ${TOPIC}` }).waitFor({ state: "detached" });
      const listed = (await (await server.request("/api/acl", { role: "admin" })).json()) as Array<Record<string, string>>;
      expect(listed.filter((a) => a.principal === PRINCIPAL).map((a) => `${a.permissionType} ${a.operation} ${a.resourceName}`)).toEqual([
        `Deny Write ${RUN}-`,
      ]);
    });
  }, 60_000);

  test("a nodata user sees the bindings and may ask, but is offered no form and no delete", async () => {
    const res = await change("PUT", {
      resourceType: "Topic",
      resourceName: TOPIC,
      principal: PRINCIPAL,
      permissionType: "Allow",
      host: "*",
      operation: "Read",
    });
    expect(res.status).toBe(200);
    await withPage(browser, "acls nodata", async (page) => {
      await signedIn(page, `/acls?q=${RUN}`, "nodata");
      await page
        .getByRole("table", { name: `Bindings of ${PRINCIPAL}` })
        .getByRole("row", { name: /Read/ })
        .waitFor();
      expect(await page.getByRole("form", { name: "Add a binding" }).count()).toBe(0);
      expect(await page.getByRole("button", { name: /^Delete/ }).count()).toBe(0);
      const explain = page.getByRole("form", { name: "May a principal do this?" });
      await explain.getByLabel("Principal").fill(PRINCIPAL);
      await explain.getByLabel("Resource name").fill(TOPIC);
      await explain.getByRole("button", { name: "Explain" }).click();
      await explain.getByText("Allowed.", { exact: true }).waitFor();
      await page.screenshot({ path: "/tmp/acls-nodata.png", fullPage: true });
    });
  }, 60_000);

  test("axe-core: no serious or critical violation, in both themes", async () => {
    for (const colorScheme of ["light", "dark"] as const)
      await withPage(
        browser,
        `acls axe ${colorScheme}`,
        async (page) => {
          expect((await change("PUT", DENY_WRITE)).status).toBe(200);
          await signedIn(page, `/acls?q=${RUN}`, "admin");
          await page.getByRole("table", { name: `Bindings of ${PRINCIPAL}` }).waitFor();
          const explain = page.getByRole("form", { name: "May a principal do this?" });
          await explain.getByLabel("Principal").fill(PRINCIPAL);
          await explain.getByLabel("Resource name").fill(`${TOPIC}-other`);
          await explain.getByLabel("Operation").selectOption("Write");
          await explain.getByRole("button", { name: "Explain" }).click();
          await explain.getByText("Denied.", { exact: true }).waitFor();
          expect(await seriousViolations(page)).toEqual([]);
          if (colorScheme === "dark") await page.screenshot({ path: "/tmp/acls-dark.png", fullPage: true });
        },
        { colorScheme },
      );
  }, 60_000);
});
