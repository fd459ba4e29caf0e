/**
 * Identity and access in a real browser, against the compiled executable: an admin creates a
 * group scoped to topics, changes and deletes it; a group of the configuration file is shown
 * read-only; the API's refusal is said in the dialog; an admin creates a user in a group scoped
 * to `payments.*`, who signs in, sees their groups and only their topics, is refused another,
 * and changes their own password; a directory (LDAP) user sees their mapped groups and no
 * password change; a service account's token is shown once and works until the account is
 * disabled; the forms check what is typed with the API's request schemas and send nothing wrong;
 * only admins see the access pages; no serious or critical axe-core violation on any
 * of them, in light and dark.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { LDAP_PEOPLE_DN, ldapEnv, uniqueTopic } from "../cluster/cluster.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { waitFor } from "../helpers/wait.ts";
import { compiledLoupe, createTopic, launchChromium, openAs, seriousViolations, withPage } from "./browser.ts";

/** A group of the configuration file: the API refuses to change it, so the page offers nothing. */
const CONFIG_GROUP = { name: "platform", roles: ["admin"], clusters: ["*"], topics: { allow: ["*"], deny: [] } };

/** Topics of this run: one in the scope `payments.*`, one beside it. */
const RUN = uniqueTopic("ui-access");
const IN_SCOPE = `payments.${RUN}`;
const OUT_OF_SCOPE = `other.${RUN}`;

let server: ServerProcess;
let browser: Browser;

beforeAll(async () => {
  const ldap = ldapEnv();
  server = await startServerProcess(
    {
      groups: [CONFIG_GROUP],
      // The run's directory: its payments-team (bob is in it) maps to a group a test creates.
      ldap: {
        url: ldap.url,
        bindDn: ldap.bindDn,
        bindPassword: ldap.bindPassword,
        userBase: LDAP_PEOPLE_DN,
        groupMappings: { "payments-team": ["directory-payments"] },
      },
    },
    { executable: await compiledLoupe() },
  );
  await createTopic(server, IN_SCOPE, 1);
  await createTopic(server, OUT_OF_SCOPE, 1);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  for (const t of [IN_SCOPE, OUT_OF_SCOPE]) await server?.request(`/api/topics/${t}`, { method: "DELETE", role: "admin" }).catch(() => {});
  await browser?.close();
  await server?.stop();
});

/** Creates a group through the API as admin; throws with the answer when refused. */
async function createGroup(group: object): Promise<void> {
  const res = await server.request("/api/groups", {
    method: "POST",
    role: "admin",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(group),
  });
  if (res.status !== 201) throw new Error(`creating a group: ${res.status} ${await res.text()}`);
}

/** Signs in on the login form the page shows, as anyone. */
async function signInWith(page: Page, name: string, password: string): Promise<void> {
  await page.getByLabel("User name").fill(name);
  await page.getByLabel("Password").fill(password);
  await page.getByLabel("Password").press("Enter");
}

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
      await row.getByText("Configuration file").waitFor();
      await row.getByText("read-only").waitFor();
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

describe("forms", () => {
  test("24: the user, group and service account forms check what is typed with the API's own request schemas: the field says what is wrong, and nothing is sent until it is right", async () => {
    const name = `checked-${RUN}`.slice(0, 60);
    await withPage(browser, "access forms checked", async (page) => {
      const sent: string[] = [];
      page.on("request", (r) => {
        const path = new URL(r.url()).pathname;
        if (r.method() !== "GET" && /^\/api\/(users|groups|service-accounts)\b/.test(path)) sent.push(`${r.method()} ${path}`);
      });
      await openAs(page, `${server.url}/users`, "admin");
      await page.getByRole("button", { name: "Create user…" }).click();
      const user = page.getByRole("dialog", { name: "Create a user" });
      await user.getByLabel("User name").fill("has space");
      await user.getByLabel("Password", { exact: true }).fill("short");
      await user.getByLabel("Repeat the password").fill("short");
      await user.getByRole("button", { name: "Create user" }).click();
      await user.getByText("1 to 128 letters, digits, '.', '_', '@' or '-', starting with a letter or digit").waitFor();
      await user.getByText("a password has at least 12 characters").waitFor();
      expect(await user.getByLabel("User name").getAttribute("aria-invalid")).toBe("true");
      // Put right, the field's message goes as it is typed, and the user is created.
      await user.getByLabel("User name").fill(name);
      await user.getByText("1 to 128 letters", { exact: false }).waitFor({ state: "detached" });
      expect(await user.getByLabel("User name").getAttribute("aria-invalid")).toBe("false");
      expect(sent).toEqual([]);
      await user.getByLabel("Password", { exact: true }).fill("a-long-enough-password");
      await user.getByLabel("Repeat the password").fill("a-long-enough-password");
      await user.getByRole("button", { name: "Create user" }).click();
      await user.waitFor({ state: "hidden" });
      await page.getByRole("status").getByText(`${name} is created.`).waitFor();
      expect(sent).toEqual(["POST /api/users"]);

      sent.length = 0;
      await page.goto(`${server.url}/groups`);
      await page.getByRole("button", { name: "Create group…" }).click();
      const group = page.getByRole("dialog", { name: "Create a group" });
      await group.getByLabel("Group name").fill("bad name");
      await group.getByLabel("Allowed topics").fill("payments.*\npay#ments");
      await group.getByRole("button", { name: "Create group" }).click();
      await group.getByText("1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit").waitFor();
      await group.getByText("a group needs at least one role").waitFor();
      await group.getByText("'pay#ments': a pattern holds letters, digits, '.', '_', '-', '*' or '?' only").waitFor();
      expect(await group.getByLabel("Allowed topics").getAttribute("aria-invalid")).toBe("true");

      await page.goto(`${server.url}/service-accounts`);
      await page.getByRole("button", { name: "Create service account…" }).click();
      const account = page.getByRole("dialog", { name: "Create a service account" });
      await account.getByLabel("Service account name").fill("bad/name");
      await account.getByRole("button", { name: "Create service account" }).click();
      await account.getByText("1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit").waitFor();
      expect(sent).toEqual([]);
      expect(await seriousViolations(page)).toEqual([]);
    });
    await server.request(`/api/users/${name}`, { method: "DELETE", role: "admin" });
  }, 60_000);
});

describe("users", () => {
  test("an admin creates a user in a group scoped to payments.*; they sign in, see their groups and only their topics, and are refused another", async () => {
    const name = `pat-${RUN}`.slice(0, 60);
    const group = "payments";
    await withPage(browser, "access scoped user", async (page) => {
      await openAs(page, `${server.url}/groups`, "admin");
      await page.getByRole("button", { name: "Create group…" }).click();
      const groupDialog = page.getByRole("dialog", { name: "Create a group" });
      await groupDialog.getByLabel("Group name").fill(group);
      await groupDialog.getByRole("checkbox", { name: /^read/ }).check();
      await groupDialog.getByLabel("Allowed topics").fill("payments.*");
      await groupDialog.getByRole("button", { name: "Create group" }).click();
      await groupDialog.waitFor({ state: "hidden" });

      await accessNav(page).getByRole("link", { name: "Users", exact: true }).click();
      await page.getByRole("heading", { name: "Users" }).waitFor();
      await page.getByRole("button", { name: "Create user…" }).click();
      const userDialog = page.getByRole("dialog", { name: "Create a user" });
      await userDialog.getByLabel("User name").fill(name);
      await userDialog.getByLabel("Password", { exact: true }).fill("pat-first-password");
      await userDialog.getByLabel("Repeat the password").fill("pat-first-password");
      await userDialog.getByRole("checkbox", { name: new RegExp(`^${group}`) }).check();
      await userDialog.getByRole("button", { name: "Create user" }).click();
      await userDialog.waitFor({ state: "hidden" });
      await page
        .getByRole("table", { name: "Users" })
        .getByRole("row", { name: new RegExp(name) })
        .getByText(group)
        .waitFor();

      await page.getByRole("button", { name: "Log out" }).click();
      await page.waitForURL(/\/login$/);
      await signInWith(page, name, "pat-first-password");
      await page.getByRole("heading", { name: "Overview" }).waitFor();
      await page.getByTestId("who-groups").getByText(group).waitFor();
      for (const link of ["Users", "Groups", "Service accounts", "Audit"])
        expect(await accessNav(page).getByRole("link", { name: link, exact: true }).count()).toBe(0);

      // The topic list holds only their topic; it opens; the other one is refused, and the page says so.
      await accessNav(page).getByRole("link", { name: "Topics" }).click();
      await page.getByRole("searchbox").fill(RUN);
      await page.getByRole("link", { name: IN_SCOPE }).waitFor();
      expect(await page.getByRole("link", { name: OUT_OF_SCOPE }).count()).toBe(0);
      expect(await page.getByTestId("topic-count").innerText()).toStartWith("1 of");
      await page.getByRole("link", { name: IN_SCOPE }).click();
      await page.getByRole("navigation", { name: "Topic sections" }).waitFor();
      await page.goto(`${server.url}/topics/${OUT_OF_SCOPE}`);
      expect(await page.getByRole("alert").innerText()).toContain(`'${OUT_OF_SCOPE}'`);

      // Their own password, from the shell: the new one signs in, the old one no longer does.
      await page.getByRole("button", { name: "Change password…" }).click();
      const own = page.getByRole("dialog", { name: "Change your password" });
      await own.getByLabel("Current password").fill("pat-first-password");
      await own.getByLabel("New password", { exact: true }).fill("pat-second-password");
      await own.getByLabel("Repeat the new password").fill("pat-second-password");
      await own.getByRole("button", { name: "Change password" }).click();
      await own.waitFor({ state: "hidden" });
      await page.getByText("Your password is changed.").waitFor();
      const login = async (password: string) =>
        (
          await fetch(`${server.url}/api/login`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ user: name, password }),
          })
        ).status;
      expect(await login("pat-first-password")).toBe(401);
      expect(await login("pat-second-password")).toBe(200);
    });
  }, 120_000);

  test("an admin edits, disables, enables, resets the password of and deletes a user", async () => {
    const name = `dan-${RUN}`.slice(0, 60);
    const res = await server.request("/api/users", {
      method: "POST",
      role: "admin",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name, password: "dan-first-password", groups: [] }),
    });
    expect(res.status).toBe(201);
    await withPage(browser, "access user actions", async (page) => {
      await openAs(page, `${server.url}/users?q=${encodeURIComponent(name)}`, "admin");
      const row = page.getByRole("table", { name: "Users" }).getByRole("row", { name: new RegExp(name) });
      await row.getByRole("button", { name: `Edit ${name}` }).click();
      const edit = page.getByRole("dialog", { name: `Edit the user ${name}` });
      await edit.getByLabel("Email (optional)").fill("dan@example.com");
      await edit.getByRole("checkbox", { name: /^platform/ }).check();
      await edit.getByRole("button", { name: "Save" }).click();
      await edit.waitFor({ state: "hidden" });
      await row.getByText("dan@example.com").waitFor();
      await row.getByText("platform").waitFor();

      await row.getByRole("button", { name: `Disable ${name}` }).click();
      await row.getByText("Disabled").waitFor();
      await page.getByRole("status").getByText(`${name} is disabled.`).waitFor();
      await row.getByRole("button", { name: `Enable ${name}` }).click();
      await row.getByRole("button", { name: `Disable ${name}` }).waitFor();

      await row.getByRole("button", { name: `Reset the password of ${name}` }).click();
      const reset = page.getByRole("dialog", { name: `Reset the password of ${name}` });
      await reset.getByLabel("New password", { exact: true }).fill("dan-second-password");
      await reset.getByLabel("Repeat the new password").fill("dan-typo-password");
      await reset.getByText("The two passwords differ.").waitFor();
      expect(await reset.getByRole("button", { name: "Change password" }).isDisabled()).toBe(true);
      await reset.getByLabel("Repeat the new password").fill("dan-second-password");
      await reset.getByRole("button", { name: "Change password" }).click();
      await reset.waitFor({ state: "hidden" });
      const signIn = await fetch(`${server.url}/api/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ user: name, password: "dan-second-password" }),
      });
      expect(signIn.status).toBe(200);

      await row.getByRole("button", { name: `Delete ${name}` }).click();
      const confirm = page.getByRole("dialog", { name: `Delete the user ${name}` });
      await confirm.getByRole("button", { name: "Delete user" }).click();
      await confirm.waitFor({ state: "hidden" });
      await page.getByText("No user matches the search.").waitFor();
      expect((await server.request(`/api/users/${name}`, { role: "admin" })).status).toBe(404);
    });
  }, 90_000);
});

describe("own password", () => {
  test("a refusal is said in the dialog: a user of the configuration file changes it in the file", async () => {
    await withPage(browser, "access own password refused", async (page) => {
      await openAs(page, `${server.url}/`, "admin");
      await page.getByRole("button", { name: "Change password…" }).click();
      const own = page.getByRole("dialog", { name: "Change your password" });
      await own.getByLabel("Current password").fill("whatever-it-is");
      await own.getByLabel("New password", { exact: true }).fill("a-new-long-password");
      await own.getByLabel("Repeat the new password").fill("a-new-long-password");
      await own.getByRole("button", { name: "Change password" }).click();
      expect(await own.getByRole("alert").innerText()).toContain("defined in the configuration file");
      await page.keyboard.press("Escape");
      await own.waitFor({ state: "hidden" });
      // Focus is back where the user was.
      expect(await page.evaluate("document.activeElement?.textContent")).toBe("Change password…");
    });
  }, 60_000);
});

describe("directory users", () => {
  test("a directory user sees the groups their directory groups map to, and is offered no password change", async () => {
    await createGroup({ name: "directory-payments", roles: ["read"], clusters: ["*"], topics: { allow: ["payments.*"], deny: [] } });
    await withPage(browser, "access directory user", async (page) => {
      await page.goto(`${server.url}/`);
      await signInWith(page, "bob", "bob-ldap-pass");
      await page.getByTestId("who-groups").getByText("directory-payments").waitFor();
      expect(await page.getByTestId("who").innerText()).toContain("bob read");
      expect(await page.getByRole("button", { name: "Change password…" }).count()).toBe(0);
    });
  }, 60_000);
});

describe("service accounts", () => {
  test("the token is shown once with a copy button; it works until the account is disabled; an expiry is set; revoking removes it", async () => {
    const name = `etl-${RUN}`.slice(0, 60);
    const group = `sa-${RUN}`.slice(0, 60);
    await createGroup({ name: group, roles: ["read"], clusters: ["*"], topics: { allow: ["payments.*"], deny: [] } });
    await withPage(
      browser,
      "access service account",
      async (page, context) => {
        await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
        await openAs(page, `${server.url}/service-accounts`, "admin");
        await page.getByRole("button", { name: "Create service account…" }).click();
        const form = page.getByRole("dialog", { name: "Create a service account" });
        await form.getByLabel("Service account name").fill(name);
        await form.getByRole("checkbox", { name: new RegExp(`^${group}`) }).check();
        await form.getByRole("button", { name: "Create service account" }).click();

        const shown = page.getByRole("dialog", { name: `Service account ${name} created` });
        await shown.getByText("it cannot be shown again").waitFor();
        const token = await shown.getByLabel("Token").inputValue();
        expect(token).toStartWith(`${name}:`);
        await shown.getByRole("button", { name: "Copy token" }).click();
        await shown.getByRole("status").getByText("Copied to the clipboard.").waitFor();
        expect(await page.evaluate("navigator.clipboard.readText()")).toBe(token);
        await shown.getByRole("button", { name: "Done" }).click();
        await shown.waitFor({ state: "detached" });
        // Gone from the page once closed: nowhere to read it again.
        await waitFor(async () => !(await page.content()).includes(token.slice(name.length + 1)), {
          timeoutMs: 5_000,
          what: "the token to leave the page",
        });

        const asAccount = () => fetch(`${server.url}/api/auth`, { headers: { "x-service-token": token } });
        expect((await asAccount()).status).toBe(200);
        const row = page.getByRole("table", { name: "Service accounts" }).getByRole("row", { name: new RegExp(name) });
        await row.getByText(group).waitFor();
        // Its last use shows after a reload (the list is read again).
        await page.reload();
        await row.getByText(/just now|minute/).waitFor();

        await row.getByRole("button", { name: `Edit ${name}` }).click();
        const edit = page.getByRole("dialog", { name: `Edit the service account ${name}` });
        await edit.getByLabel("Valid through (optional)").fill("2099-12-31");
        await edit.getByRole("button", { name: "Save" }).click();
        await edit.waitFor({ state: "hidden" });
        await row.getByText("2099").waitFor();
        const expiresAt = (
          (await (await server.request(`/api/service-accounts/${name}`, { role: "admin" })).json()) as { expiresAt: number }
        ).expiresAt;
        expect(new Date(expiresAt).getFullYear()).toBe(2099);

        await row.getByRole("button", { name: `Disable ${name}` }).click();
        await row.getByText("Disabled").waitFor();
        expect((await asAccount()).status).toBe(401);

        await row.getByRole("button", { name: `Revoke ${name}` }).click();
        const confirm = page.getByRole("dialog", { name: `Revoke the service account ${name}` });
        await confirm.getByRole("button", { name: "Revoke" }).click();
        await confirm.waitFor({ state: "hidden" });
        await row.waitFor({ state: "detached" });
        expect((await server.request(`/api/service-accounts/${name}`, { role: "admin" })).status).toBe(404);
      },
      { colorScheme: "light" },
    );
  }, 90_000);
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
    await createGroup({ name: "axe-team", roles: ["read"], clusters: ["local"], topics: { allow: ["axe.*"], deny: ["axe.secret"] } });
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

  test("no serious or critical violation on the users page, a disabled user and the create dialog, in both themes", async () => {
    for (const [name, disabled] of [
      ["axe-user", false],
      ["axe-off", true],
    ] as const) {
      const res = await server.request("/api/users", {
        method: "POST",
        role: "admin",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name, password: "axe-user-password", groups: ["platform"], email: `${name}@example.com` }),
      });
      expect(res.status).toBe(201);
      if (disabled)
        await server.request(`/api/users/${name}`, {
          method: "PUT",
          role: "admin",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ disabled: true }),
        });
    }
    for (const colorScheme of ["light", "dark"] as const)
      await withPage(
        browser,
        `access axe users ${colorScheme}`,
        async (page) => {
          await openAs(page, `${server.url}/users`, "admin");
          await page.getByRole("table", { name: "Users" }).getByText("axe-off@example.com").waitFor();
          expect(await seriousViolations(page)).toEqual([]);
          await page.getByRole("button", { name: "Create user…" }).click();
          const dialog = page.getByRole("dialog", { name: "Create a user" });
          await dialog.getByRole("checkbox", { name: /^platform/ }).waitFor();
          await dialog.getByLabel("Password", { exact: true }).fill("one");
          await dialog.getByLabel("Repeat the password").fill("two");
          expect(await seriousViolations(page)).toEqual([]);
        },
        { colorScheme },
      );
  }, 90_000);

  test("no serious or critical violation on the service accounts page and the show-once dialog, in both themes", async () => {
    for (const colorScheme of ["light", "dark"] as const)
      await withPage(
        browser,
        `access axe service accounts ${colorScheme}`,
        async (page) => {
          await openAs(page, `${server.url}/service-accounts`, "admin");
          await page.getByRole("heading", { name: "Service accounts" }).waitFor();
          await page.getByRole("button", { name: "Create service account…" }).click();
          const form = page.getByRole("dialog", { name: "Create a service account" });
          await form.getByLabel("Service account name").fill(`axe-${colorScheme}`);
          await form.getByRole("checkbox", { name: /^platform/ }).check();
          await form.getByLabel("Valid through (optional)").fill("2099-12-31");
          expect(await seriousViolations(page)).toEqual([]);
          await form.getByRole("button", { name: "Create service account" }).click();
          await page
            .getByRole("dialog", { name: `Service account axe-${colorScheme} created` })
            .getByLabel("Token")
            .waitFor();
          expect(await seriousViolations(page)).toEqual([]);
          await page.keyboard.press("Escape");
          await page.getByRole("table", { name: "Service accounts" }).getByText(`axe-${colorScheme}`).waitFor();
          expect(await seriousViolations(page)).toEqual([]);
        },
        { colorScheme },
      );
  }, 90_000);
});
