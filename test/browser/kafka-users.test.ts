/**
 * The Kafka users page in a real browser (the shared broker's SCRAM credentials): an admin
 * creates a user with the form, gives it a new password in a dialog and deletes it after typing
 * its name; the password is never shown. Others are told the page is for administrators. axe
 * in both themes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import type { ROLE_USERS } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { compiledLoupe, launchChromium, openAs, seriousViolations, withPage } from "./browser.ts";

const RUN = `ui${Date.now().toString(36)}`;
const USER = `${RUN}-svc`;
const PASSWORD = `${RUN}-first-secret`;

let server: ServerProcess;
let browser: Browser;

beforeAll(async () => {
  server = await startServerProcess({}, { executable: await compiledLoupe() });
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await server?.request(`/api/kafka-users/${USER}`, { method: "DELETE", role: "admin" }).catch(() => {});
  await browser?.close();
  await server?.stop();
});

const signedIn = (page: Page, path: string, role: keyof typeof ROLE_USERS) => openAs(page, `${server.url}${path}`, role);
const credentials = async () =>
  ((await (await server.request("/api/kafka-users", { role: "admin" })).json()) as Array<{ name: string; credentials: unknown[] }>).find(
    (u) => u.name === USER,
  )?.credentials;

describe("the Kafka users page", () => {
  test("an admin creates a user, gives it a new password and deletes it; the password never shows", async () => {
    await withPage(browser, "kafka users admin", async (page) => {
      await signedIn(page, "/kafka-users", "admin");
      await page.getByRole("heading", { name: "Kafka users", level: 1 }).waitFor();
      const form = page.getByRole("form", { name: "Create a Kafka user" });
      await form.getByLabel("Name").fill(USER);
      await form.getByLabel("Password").fill(PASSWORD);
      await form.getByRole("button", { name: "Create user" }).click();
      await form.getByRole("status").getByText(`Created ${USER}`).waitFor();
      const row = page.getByRole("table", { name: "Kafka users" }).getByRole("row", { name: new RegExp(USER) });
      await row.getByText("SCRAM-SHA-512 (4096 iterations)").waitFor();
      expect(await form.getByLabel("Password").inputValue()).toBe("");
      expect(await page.content()).not.toContain(PASSWORD);
      expect(await credentials()).toEqual([{ mechanism: "SCRAM-SHA-512", iterations: 4096 }]);
      expect(await seriousViolations(page)).toEqual([]);

      await page.getByRole("button", { name: `New password for ${USER}` }).click();
      const rotate = page.getByRole("dialog", { name: `New password for ${USER}` });
      await rotate.getByLabel("New password").fill("short");
      await rotate.getByRole("button", { name: "Set password" }).click();
      await rotate.getByText(/a password has at least 8 characters/).waitFor();
      expect(await seriousViolations(page)).toEqual([]);
      await rotate.getByLabel("New password").fill(`${RUN}-second-secret`);
      await rotate.getByRole("button", { name: "Set password" }).click();
      await rotate.waitFor({ state: "hidden" });
      const audit = (await (await server.request("/api/audit?type=KAFKA_USER&limit=1", { role: "admin" })).json()) as Array<{
        change: string;
        content: Record<string, string>;
      }>;
      expect(audit[0]).toMatchObject({ change: "UPDATE", content: { name: USER, outcome: "SUCCESS" } });
      await page.screenshot({ path: "/tmp/kafka-users-admin.png", fullPage: true });

      await page.getByRole("button", { name: `Delete ${USER}` }).click();
      const confirm = page.getByRole("dialog", { name: `Delete ${USER}` });
      await confirm.getByLabel("Type the user's name to confirm").fill(USER);
      await confirm.getByRole("button", { name: "Delete user" }).click();
      await confirm.waitFor({ state: "hidden" });
      await row.waitFor({ state: "detached" });
      expect(await credentials()).toBeUndefined();
    });
  }, 60_000);

  test("a write user is told the page is for administrators, and offered nothing", async () => {
    await withPage(browser, "kafka users write", async (page) => {
      await signedIn(page, "/kafka-users", "write");
      await page
        .getByText(
          "Managing the Kafka cluster's SCRAM users is for Loupe's administrators: it needs the admin role on every cluster and every topic.",
        )
        .waitFor();
      expect(await page.getByRole("main").getByRole("button").count()).toBe(0);
    });
  }, 60_000);

  test("axe-core: no serious or critical violation, in both themes", async () => {
    for (const colorScheme of ["light", "dark"] as const)
      await withPage(
        browser,
        `kafka users axe ${colorScheme}`,
        async (page) => {
          await signedIn(page, "/kafka-users", "admin");
          await page.getByRole("form", { name: "Create a Kafka user" }).waitFor();
          await page.getByRole("table", { name: "Kafka users" }).or(page.getByText("The cluster has no SCRAM user.")).first().waitFor();
          expect(await seriousViolations(page)).toEqual([]);
        },
        { colorScheme },
      );
  }, 60_000);
});
