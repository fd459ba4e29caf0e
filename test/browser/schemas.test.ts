/**
 * The schema registry in a real browser, against the compiled executable and the real registry:
 * a writer registers a new subject, then a second version after the compatibility check, sees
 * the diff of the two, sets the subject's compatibility level, has an incompatible change
 * refused with the registry's words, and deletes a version and the subject (deletes allowed);
 * no delete button where deletes are not allowed, or for a read user (who also gets no register
 * and no level change). axe-core on the list and a subject's page with its diff, light and dark.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { requireEnv, uniqueTopic } from "../cluster/cluster.ts";
import type { ROLE_USERS } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { waitFor } from "../helpers/wait.ts";
import { compiledLoupe, launchChromium, openAs, seriousViolations, withPage } from "./browser.ts";

const SUBJECT = `${uniqueTopic("ui-orders")}-value`;
/** Made through the API for the read user and the axe check: two versions. */
const SHOWN = `${uniqueTopic("ui-payments")}-value`;

const V1 = JSON.stringify({ type: "record", name: "Order", fields: [{ name: "id", type: "string" }] });
/** Adds a field with a default: backward compatible. */
const V2 = JSON.stringify({
  type: "record",
  name: "Order",
  fields: [
    { name: "id", type: "string" },
    { name: "note", type: "string", default: "" },
  ],
});
/** Changes a field's type: incompatible under BACKWARD. */
const V3 = JSON.stringify({
  type: "record",
  name: "Order",
  fields: [
    { name: "id", type: "int" },
    { name: "note", type: "string", default: "" },
  ],
});

let server: ServerProcess;
/** The same registry, with deletes not allowed. */
let noDelete: ServerProcess;
let browser: Browser;

const registryUrls = () => requireEnv("SCHEMA_REGISTRY_URL").split(",");
const sr = (...segments: Array<string | number>) => `/api/proxy-sr/${segments.map((s) => encodeURIComponent(String(s))).join("/")}`;

async function registerThroughApi(subject: string, schema: string): Promise<void> {
  const res = await server.request(sr("subjects", subject, "versions"), {
    method: "POST",
    role: "write",
    headers: { "content-type": "application/vnd.schemaregistry.v1+json" },
    body: JSON.stringify({ schema }),
  });
  if (res.status !== 200) throw new Error(`registering under ${subject}: ${res.status} ${await res.text()}`);
}

const versionsOf = async (subject: string) => {
  const res = await server.request(sr("subjects", subject, "versions"), { role: "read" });
  return res.status === 200 ? ((await res.json()) as number[]) : [];
};

beforeAll(async () => {
  const executable = await compiledLoupe();
  server = await startServerProcess({ schemaRegistry: { urls: registryUrls(), allowDelete: true } }, { executable });
  noDelete = await startServerProcess({ schemaRegistry: { urls: registryUrls(), allowDelete: false } }, { executable });
  await registerThroughApi(SHOWN, V1);
  await registerThroughApi(SHOWN, V2);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  for (const subject of [SUBJECT, SHOWN]) {
    await server?.request(sr("subjects", subject), { method: "DELETE", role: "admin" }).catch(() => {});
    await server?.request(`${sr("subjects", subject)}?permanent=true`, { method: "DELETE", role: "admin" }).catch(() => {});
  }
  await browser?.close();
  await server?.stop();
  await noDelete?.stop();
});

const signedIn = (page: Page, path: string, role: keyof typeof ROLE_USERS, on = server) => openAs(page, `${on.url}${path}`, role);
const subjectPage = (subject: string) => `/schemas/${encodeURIComponent(subject)}`;

describe("schemas", () => {
  test("a writer registers two versions after the check, compares them, sets the level, is refused an incompatible change and deletes", async () => {
    await withPage(browser, "schemas lifecycle", async (page) => {
      await signedIn(page, "/schemas", "write");
      await page.getByRole("button", { name: "Register a schema…" }).click();
      const card = page.getByRole("region", { name: "Register a schema under a new subject" });
      await card.getByLabel("Subject", { exact: true }).fill(SUBJECT);
      await card.getByRole("textbox", { name: "Schema", exact: true }).fill(V1);
      await card.getByRole("button", { name: "Check and register" }).click();
      await page.getByRole("heading", { name: `Subject ${SUBJECT}` }).waitFor();
      await page.getByRole("figure", { name: "Schema of version 1" }).waitFor();
      // Shown indented, one field per line.
      expect(await page.locator("pre.schema").innerText()).toContain('\n  "fields": [');
      expect(await versionsOf(SUBJECT)).toEqual([1]);

      // A compatible second version: checked, then registered.
      const register = page.getByRole("form", { name: `Register a schema under ${SUBJECT}` });
      await register.getByRole("textbox", { name: "Schema", exact: true }).fill(V2);
      await register.getByRole("button", { name: "Check and register" }).click();
      await register.getByRole("status").filter({ hasText: "Registered as version 2" }).waitFor();
      await page.getByRole("figure", { name: "Schema of version 2" }).waitFor();
      expect(await versionsOf(SUBJECT)).toEqual([1, 2]);

      // The diff of the two.
      await page.getByLabel("Compare with").selectOption("1");
      const diff = page.getByRole("table", { name: "Changes from version 1 to version 2" });
      await diff.waitFor();
      expect(await page.getByTestId("diff-summary").innerText()).toMatch(/lines? added/);
      const added = await diff.locator("tr.diff-add").allInnerTexts();
      expect(added.some((l) => l.includes('"note"'))).toBe(true);
      expect(await seriousViolations(page)).toEqual([]);
      await page.getByLabel("Compare with").selectOption("");

      // The subject's own level.
      await page.getByLabel(`Compatibility level of ${SUBJECT}`).selectOption("BACKWARD");
      await page.getByRole("button", { name: "Save level" }).click();
      await waitFor(async () => (await page.getByTestId("subject-level").innerText()) === "BACKWARD (its own)", { what: "level BACKWARD" });
      const level = await server.request(sr("config", SUBJECT), { role: "read" });
      expect(((await level.json()) as { compatibilityLevel: string }).compatibilityLevel).toBe("BACKWARD");

      // An incompatible change: the check says so; registering anyway is refused with the registry's words.
      await register.getByRole("textbox", { name: "Schema", exact: true }).fill(V3);
      await register.getByRole("button", { name: "Check and register" }).click();
      await register.getByRole("alert").filter({ hasText: "Not compatible with the latest version" }).waitFor();
      expect(await seriousViolations(page)).toEqual([]);
      await register.getByRole("button", { name: "Register anyway" }).click();
      const refusal = register.getByRole("alert").filter({ hasText: /incompatible/i });
      await refusal.waitFor();
      expect(await versionsOf(SUBJECT)).toEqual([1, 2]);

      // Deletes are allowed on this server.
      await page.getByRole("button", { name: "Delete version 2…" }).click();
      let dialog = page.getByRole("dialog", { name: `Delete version 2 of ${SUBJECT}` });
      await dialog.getByRole("button", { name: "Delete version" }).click();
      await dialog.waitFor({ state: "hidden" });
      await page.getByRole("figure", { name: "Schema of version 1" }).waitFor();
      expect(await versionsOf(SUBJECT)).toEqual([1]);

      await page.getByRole("button", { name: "Delete subject…" }).click();
      dialog = page.getByRole("dialog", { name: `Delete subject ${SUBJECT}` });
      await dialog.getByLabel("Type the subject's name to confirm").fill(SUBJECT);
      await dialog.getByRole("button", { name: "Delete subject" }).click();
      await page.getByRole("heading", { name: "Schemas", exact: true }).waitFor();
      expect(await versionsOf(SUBJECT)).toEqual([]);
      const subjects = (await (await server.request(sr("subjects"), { role: "read" })).json()) as string[];
      expect(subjects).not.toContain(SUBJECT);
    });
  }, 120_000);

  test("a read user sees the subject's schema, but is offered no register, no level change and no delete", async () => {
    await withPage(browser, "schemas read user", async (page) => {
      await signedIn(page, `/schemas?q=${encodeURIComponent(SHOWN)}`, "read");
      await page.getByRole("link", { name: SHOWN }).click();
      await page.getByRole("figure", { name: "Schema of version 2" }).waitFor();
      await page.getByTestId("subject-level").filter({ hasNotText: "…" }).waitFor();
      expect(await page.getByRole("button", { name: "Register a schema…" }).count()).toBe(0);
      expect(await page.getByRole("form", { name: /Register a schema/ }).count()).toBe(0);
      expect(await page.getByLabel(`Compatibility level of ${SHOWN}`).count()).toBe(0);
      expect(await page.getByRole("button", { name: /^Delete/ }).count()).toBe(0);
    });
  }, 60_000);

  test("a writer is offered no delete where the server does not allow deletes", async () => {
    await withPage(browser, "schemas no delete", async (page) => {
      await signedIn(page, subjectPage(SHOWN), "write", noDelete);
      await page.getByRole("figure", { name: "Schema of version 2" }).waitFor();
      await page.getByRole("form", { name: `Register a schema under ${SHOWN}` }).waitFor();
      const auth = (await (await noDelete.request("/api/auth", { role: "write" })).json()) as { schemaRegistryDelete: boolean };
      expect(auth.schemaRegistryDelete).toBe(false);
      expect(await page.getByRole("button", { name: /^Delete/ }).count()).toBe(0);
    });
  }, 60_000);

  test("axe-core: no serious or critical violation on the list and a subject's page with its diff, in both themes", async () => {
    for (const colorScheme of ["light", "dark"] as const)
      await withPage(
        browser,
        `schemas axe ${colorScheme}`,
        async (page) => {
          await signedIn(page, `/schemas?q=${encodeURIComponent(SHOWN)}`, "write");
          await page.getByRole("link", { name: SHOWN }).waitFor();
          expect(await seriousViolations(page)).toEqual([]);
          await page.goto(`${server.url}${subjectPage(SHOWN)}?v=2&diff=1`);
          await page.getByRole("table", { name: "Changes from version 1 to version 2" }).waitFor();
          expect(await seriousViolations(page)).toEqual([]);
        },
        { colorScheme },
      );
  }, 90_000);
});
