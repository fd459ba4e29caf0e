/**
 * Identity and access in a real browser, against the compiled executable: an admin creates a
 * group scoped to topics, changes and deletes it; a group of the configuration file is shown
 * read-only; the API's refusal is said in the dialog; only admins see the access pages; no
 * serious or critical axe-core violation on any of them, in light and dark.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { compiledLoupe, launchChromium, openAs, seriousViolations, withPage } from "./browser.ts";

/** A group of the configuration file: the API refuses to change it, so the page offers nothing. */
const CONFIG_GROUP = { name: "platform", roles: ["admin"], clusters: ["*"], topics: { allow: ["*"], deny: [] } };

let server: ServerProcess;
let browser: Browser;

beforeAll(async () => {
  server = await startServerProcess({ groups: [CONFIG_GROUP] }, { executable: await compiledLoupe() });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

interface GroupAnswer {
  name: string;
  roles: string[];
  clusters: string[];
  topics: { allow: string[]; deny: string[] };
}

async function groupOf(name: string): Promise<{ status: number; group?: GroupAnswer }> {
  const res = await server.request(`/api/groups/${name}`, { role: "admin" });
  return res.status === 200 ? { status: 200, group: (await res.json()) as GroupAnswer } : { status: res.status };
}

const accessNav = (page: Page) => page.getByRole("navigation", { name: "Main" });

describe("groups", () => {
  test("an admin creates a group scoped to topics, changes it, and deletes it after a confirmation", async () => {
    await withPage(browser, "access group lifecycle", async (page) => {
      await openAs(page, `${server.url}/`, "admin");
      await accessNav(page).getByRole("link", { name: "Groups", exact: true }).click();
      await page.getByRole("heading", { name: "Groups" }).waitFor();

      await page.getByRole("button", { name: "Create group…" }).click();
      const dialog = page.getByRole("dialog", { name: "Create a group" });
      await dialog.getByLabel("Group name").fill("payments-team");
      await dialog.getByRole("checkbox", { name: /^read/ }).check();
      // Every cluster is the default; this group is for the one configured cluster.
      await dialog.getByRole("checkbox", { name: "Every cluster, also those added later" }).uncheck();
      await dialog.getByRole("checkbox", { name: "local", exact: true }).check();
      await dialog.getByLabel("Allowed topics").fill("payments.*\npayments-eu");
      await dialog.getByLabel("Denied topics").fill("payments.internal-*");
      await dialog.getByRole("button", { name: "Create group" }).click();
      await dialog.waitFor({ state: "hidden" });

      const row = page.getByRole("table", { name: "Groups" }).getByRole("row", { name: /payments-team/ });
      await row.getByText("payments.internal-*").waitFor();
      expect(await groupOf("payments-team")).toEqual({
        status: 200,
        group: expect.objectContaining({
          roles: ["read"],
          clusters: ["local"],
          topics: { allow: ["payments.*", "payments-eu"], deny: ["payments.internal-*"] },
        }),
      });

      // Change it from the keyboard: the dialog opens on Enter, Escape would cancel.
      await row.getByRole("button", { name: "Edit payments-team" }).focus();
      await page.keyboard.press("Enter");
      const edit = page.getByRole("dialog", { name: "Edit the group payments-team" });
      await edit.getByRole("checkbox", { name: /^write/ }).check();
      await edit.getByLabel("Denied topics").fill("");
      await edit.getByRole("button", { name: "Save" }).click();
      await edit.waitFor({ state: "hidden" });
      await row.getByText("write").waitFor();
      const changed = await groupOf("payments-team");
      expect(changed.group?.roles.toSorted()).toEqual(["read", "write"]);
      expect(changed.group?.topics.deny).toEqual([]);

      await row.getByRole("button", { name: "Delete payments-team" }).click();
      const confirm = page.getByRole("dialog", { name: "Delete the group payments-team" });
      await confirm.getByRole("button", { name: "Delete group" }).click();
      await confirm.waitFor({ state: "hidden" });
      await row.waitFor({ state: "detached" });
      expect((await groupOf("payments-team")).status).toBe(404);
    });
  }, 90_000);

  test("a group of the configuration file is shown read-only, with no edit or delete", async () => {
    await withPage(browser, "access config group", async (page) => {
      await openAs(page, `${server.url}/groups`, "admin");
      const row = page.getByRole("table", { name: "Groups" }).getByRole("row", { name: /platform/ });
      await row.getByText("Configuration file (read-only)").waitFor();
      expect(await row.getByRole("button").count()).toBe(0);
    });
  }, 60_000);

  test("the API's refusal is said in the dialog, and the form keeps what was typed", async () => {
    await withPage(browser, "access group refused", async (page) => {
      await openAs(page, `${server.url}/groups`, "admin");
      await page.getByRole("button", { name: "Create group…" }).click();
      const dialog = page.getByRole("dialog", { name: "Create a group" });
      await dialog.getByLabel("Group name").fill("bad-pattern");
      await dialog.getByRole("checkbox", { name: /^read/ }).check();
      await dialog.getByLabel("Allowed topics").fill("payments/eu");
      await dialog.getByRole("button", { name: "Create group" }).click();
      expect(await dialog.getByRole("alert").innerText()).toContain("a pattern holds letters, digits");
      expect(await dialog.getByLabel("Allowed topics").inputValue()).toBe("payments/eu");
      // A name taken by the configuration file: 409, said the same way.
      await dialog.getByLabel("Group name").fill("platform");
      await dialog.getByLabel("Allowed topics").fill("payments.*");
      await dialog.getByRole("button", { name: "Create group" }).click();
      await dialog.getByRole("alert").getByText("it is defined in the configuration file").waitFor();
    });
  }, 60_000);
});

describe("who sees the access pages", () => {
  for (const role of ["write", "read", "nodata"] as const)
    test(`a ${role} user has no access navigation`, async () => {
      await withPage(browser, `access nav ${role}`, async (page) => {
        await openAs(page, `${server.url}/`, role);
        await page.getByRole("heading", { name: "Overview" }).waitFor();
        await accessNav(page).getByRole("link", { name: "Topics" }).waitFor();
        for (const name of ["Users", "Groups", "Service accounts"])
          expect(await accessNav(page).getByRole("link", { name, exact: true }).count()).toBe(0);
      });
    }, 60_000);

  test("an admin has all three", async () => {
    await withPage(browser, "access nav admin", async (page) => {
      await openAs(page, `${server.url}/`, "admin");
      for (const name of ["Users", "Groups", "Service accounts"]) await accessNav(page).getByRole("link", { name, exact: true }).waitFor();
    });
  }, 60_000);
});

describe("axe-core", () => {
  test("no serious or critical violation on the groups page and its dialog, in both themes", async () => {
    const created = await server.request("/api/groups", {
      method: "POST",
      role: "admin",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "axe-team", roles: ["read"], clusters: ["local"], topics: { allow: ["axe.*"], deny: ["axe.secret"] } }),
    });
    expect(created.status).toBe(201);
    for (const colorScheme of ["light", "dark"] as const)
      await withPage(
        browser,
        `access axe groups ${colorScheme}`,
        async (page) => {
          await openAs(page, `${server.url}/groups`, "admin");
          await page.getByRole("table", { name: "Groups" }).getByText("axe.secret").waitFor();
          expect(await seriousViolations(page)).toEqual([]);
          await page.getByRole("button", { name: "Edit axe-team" }).click();
          await page.getByRole("dialog").getByRole("checkbox", { name: "local", exact: true }).waitFor();
          expect(await seriousViolations(page)).toEqual([]);
        },
        { colorScheme },
      );
  }, 90_000);
});
