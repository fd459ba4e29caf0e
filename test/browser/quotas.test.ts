/**
 * The quotas page in a real browser: an admin creates a quota for a user and client id, sees the
 * form refuse a value before anything is sent, changes and deletes it, and asks which quota
 * applies to that pair; other roles see the list and ask, with nothing to change offered.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import type { ROLE_USERS } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { compiledLoupe, launchChromium, openAs, seriousViolations, withPage } from "./browser.ts";

const TAG = `${process.pid}-${Date.now().toString(36)}`;
const USER = `ui-user-${TAG}`;
const CLIENT = `ui-client-${TAG}`;
const ENTITY = `user ${USER}, client id ${CLIENT}`;

let server: ServerProcess;
let browser: Browser;

beforeAll(async () => {
  server = await startServerProcess({}, { executable: await compiledLoupe() });
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  for (const path of [`/api/quotas/users/${USER}/clients/${CLIENT}`, `/api/quotas/users/${USER}`])
    await server?.request(path, { method: "DELETE", role: "admin" }).catch(() => {});
  await browser?.close();
  await server?.stop();
});

const signedIn = (page: Page, path: string, role: keyof typeof ROLE_USERS) => openAs(page, `${server.url}${path}`, role);

const row = (page: Page, entity: string) =>
  page
    .getByRole("table", { name: "Quotas" })
    .getByRole("row")
    .filter({ has: page.getByRole("rowheader", { name: entity, exact: true }) });

async function ask(page: Page, user: string, client: string) {
  const section = page.getByRole("region", { name: "Which quota applies?" });
  await section.getByLabel("User", { exact: true }).fill(user);
  await section.getByLabel("Client id", { exact: true }).fill(client);
  await section.getByRole("button", { name: "Ask" }).click();
  return page.getByRole("table", { name: `Quotas of user ${user} with client id ${client}` });
}

describe("the quotas page", () => {
  test("an admin creates, changes and deletes a quota, and asks which applies", async () => {
    await withPage(browser, "quotas admin", async (page) => {
      await signedIn(page, "/quotas", "admin");
      await page.getByRole("heading", { name: "Quotas", level: 1 }).waitFor();

      await page.getByRole("button", { name: "Create quota…" }).click();
      const dialog = page.getByRole("dialog", { name: "Create a quota" });
      await dialog.getByLabel("Applies to").selectOption({ label: "1 · user and client id" });
      await dialog.getByLabel(/^User/).fill(USER);
      await dialog.getByLabel("Client id", { exact: true }).fill(CLIENT);
      await dialog.getByLabel(/^Produce rate/).fill("fast");
      await dialog.getByRole("button", { name: "Create quota" }).click();
      // The PUT's own schema, in the browser: the field says what is wrong, nothing is sent.
      await dialog
        .getByText('producer_byte_rate must be a whole number of bytes per second from 1 to 9007199254740991, not "fast"')
        .waitFor();
      await dialog.getByLabel(/^Produce rate/).fill("1048576");
      await dialog.getByRole("button", { name: "Create quota" }).click();
      await page.getByRole("status").getByText(`The quota of the ${ENTITY} is saved.`).waitFor();
      await row(page, ENTITY).getByRole("cell", { name: "1 MiB/s" }).waitFor();
      expect(await row(page, ENTITY).getByRole("cell", { name: "1 · user and client id" }).count()).toBe(1);

      // A user-level entry too: the pair's own still applies to the pair.
      const put = await server.request(`/api/quotas/users/${USER}`, {
        method: "PUT",
        role: "admin",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ producer_byte_rate: "4096", request_percentage: "30" }),
      });
      expect(put.status).toBe(200);
      await page.reload();
      await row(page, `user ${USER}`).waitFor();
      const answer = await ask(page, USER, CLIENT);
      const produce = answer.getByRole("row").filter({ has: page.getByRole("rowheader", { name: "Produce rate" }) });
      // The answer renders after the request: wait for its rows (reading them at once read none on a loaded run).
      await produce.waitFor();
      expect(await produce.locator("td").allInnerTexts()).toEqual([
        "1 MiB/s",
        `1 · user and client id (${ENTITY})`,
        "this user and client id",
      ]);
      const request = answer.getByRole("row").filter({ has: page.getByRole("rowheader", { name: "Request time" }) });
      await request.waitFor();
      expect(await request.locator("td").allInnerTexts()).toEqual(["30 %", `3 · user (user ${USER})`, "every client id of this user"]);
      expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: "/tmp/quotas-admin.png", fullPage: true });

      // Edit: a cleared field removes that constraint, a filled one sets it.
      await row(page, ENTITY)
        .getByRole("button", { name: `Edit ${ENTITY}` })
        .click();
      const edit = page.getByRole("dialog", { name: `Edit the quota of the ${ENTITY}` });
      await edit.getByLabel(/^Produce rate/).fill("");
      await edit.getByLabel(/^Fetch rate/).fill("2048");
      await edit.getByRole("button", { name: "Save" }).click();
      await row(page, ENTITY).getByRole("cell", { name: "2 KiB/s" }).waitFor();
      expect(await row(page, ENTITY).locator("td").nth(1).innerText()).toBe("—");

      await row(page, ENTITY)
        .getByRole("button", { name: `Delete ${ENTITY}` })
        .click();
      await page
        .getByRole("dialog", { name: `Delete the quota of the ${ENTITY}` })
        .getByRole("button", { name: "Delete quota" })
        .click();
      await page.getByRole("status").getByText(`The quota of the ${ENTITY} is deleted.`).waitFor();
      await row(page, ENTITY).waitFor({ state: "detached" });
    });
  }, 90_000);

  test("a read user sees the quotas and asks, with nothing to change offered; axe-clean in the dark theme", async () => {
    const put = await server.request(`/api/quotas/users/${USER}`, {
      method: "PUT",
      role: "admin",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ consumer_byte_rate: "8192" }),
    });
    expect(put.status).toBe(200);
    await withPage(
      browser,
      "quotas read",
      async (page) => {
        await signedIn(page, "/quotas", "read");
        await row(page, `user ${USER}`).getByRole("cell", { name: "8 KiB/s" }).waitFor();
        expect(await page.getByRole("button", { name: "Create quota…" }).count()).toBe(0);
        expect(await page.getByRole("button", { name: /^(Edit|Delete) / }).count()).toBe(0);
        const answer = await ask(page, USER, `another-${CLIENT}`);
        const fetch = answer.getByRole("row").filter({ has: page.getByRole("rowheader", { name: "Fetch rate" }) });
        await fetch.getByRole("cell", { name: "8 KiB/s" }).waitFor();
        expect(await page.evaluate("document.documentElement.dataset.theme")).toBe("dark");
        expect(await seriousViolations(page)).toEqual([]);
        await page.screenshot({ path: "/tmp/quotas-read-dark.png", fullPage: true });
      },
      { colorScheme: "dark" },
    );
  }, 60_000);
});
