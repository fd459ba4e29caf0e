/**
 * The UI's login and shell in a real browser, against the compiled executable: a deep link
 * without a session shows the login form and continues to the page asked for; a wrong password
 * is said where the user acted; the shell shows who is signed in; logout returns to the login
 * form; the theme toggles; no Content-Security-Policy violation; axe-core finds no serious or
 * critical violation.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { ROLE_USERS } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { compiledLoupe, launchChromium, seriousViolations, signIn, withPage } from "./browser.ts";

let server: ServerProcess;
let browser: Browser;

beforeAll(async () => {
  server = await startServerProcess({}, { executable: await compiledLoupe() });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** Console messages of the page that report a blocked resource or script (CSP). */
function cspViolations(page: Page): string[] {
  const seen: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) seen.push(m.text());
  });
  return seen;
}

describe("login and the shell", () => {
  test("a deep link without a session shows the login form, then the page asked for", async () => {
    await withPage(browser, "deep link login", async (page) => {
      const csp = cspViolations(page);
      await page.goto(`${server.url}/topics?cluster=local`);
      await page.waitForURL(/\/login\?next=/);
      expect(new URL(page.url()).searchParams.get("next")).toBe("/topics?cluster=local");
      await expect(page.locator('input[type="password"]').count()).resolves.toBe(1);
      await signIn(page, "read");
      await page.waitForURL(`${server.url}/topics?cluster=local`);
      await page.getByRole("heading", { name: "Topics" }).waitFor();
      const who = page.getByTestId("who");
      await who.waitFor();
      expect(await who.innerText()).toContain(`${ROLE_USERS.read.name} read`);
      // The token is kept for the tab, never in the URL.
      expect(page.url()).not.toContain("token");
      expect(await page.evaluate(() => sessionStorage.getItem("loupe.token"))).toBeTruthy();
      expect(csp).toEqual([]);
    });
  }, 60_000);

  test("a wrong password is said on the form, and nothing else happens", async () => {
    await withPage(browser, "wrong password", async (page) => {
      await page.goto(`${server.url}/`);
      await page.waitForURL(/\/login$/);
      await page.getByLabel("User name").fill(ROLE_USERS.read.name);
      await page.getByLabel("Password").fill("not-the-password");
      await page.getByRole("button", { name: "Sign in" }).click();
      const alert = page.getByRole("alert");
      await alert.waitFor();
      expect(await alert.innerText()).toBe("Wrong user name or password.");
      expect(new URL(page.url()).pathname).toBe("/login");
    });
  }, 60_000);

  test("the overview, the theme toggle and logout", async () => {
    await withPage(
      browser,
      "overview theme logout",
      async (page) => {
        await page.goto(`${server.url}/`);
        await signIn(page, "admin");
        await page.getByRole("heading", { name: "Overview" }).waitFor();
        await page.getByRole("cell", { name: "local" }).waitFor();
        expect(await page.evaluate("document.documentElement.dataset.theme")).toBe("light");
        await page.getByRole("button", { name: "Switch to dark theme" }).click();
        expect(await page.evaluate("document.documentElement.dataset.theme")).toBe("dark");
        const background = await page.evaluate("getComputedStyle(document.body).backgroundColor");
        expect(background).toBe("rgb(15, 20, 25)");
        const token = await page.evaluate(() => sessionStorage.getItem("loupe.token"));
        await page.getByRole("button", { name: "Log out" }).click();
        await page.waitForURL(/\/login$/);
        expect(await page.evaluate(() => sessionStorage.getItem("loupe.token"))).toBeNull();
        // The token is revoked on the server, not only forgotten by the page.
        const res = await fetch(`${server.url}/api/auth`, { headers: { authorization: `Bearer ${token}` } });
        expect(res.status).toBe(401);
      },
      { colorScheme: "light" },
    );
  }, 60_000);

  test("a 401 anywhere (the token revoked elsewhere) returns to the login form, then to the same page", async () => {
    await withPage(browser, "revoked token", async (page) => {
      await page.goto(`${server.url}/consumers?q=some`);
      await signIn(page, "read");
      await page.waitForURL(`${server.url}/consumers?q=some`);
      await page.getByRole("heading", { name: "Consumer groups" }).waitFor();
      // The token is revoked outside this page; the next call the page makes is a 401.
      const token = await page.evaluate(() => sessionStorage.getItem("loupe.token"));
      const out = await fetch(`${server.url}/api/logout`, { method: "POST", headers: { authorization: `Bearer ${token}` } });
      expect(out.status).toBe(200);
      await page.getByRole("link", { name: "Topics" }).click();
      await page.waitForURL(/\/login\?next=%2Ftopics/);
      await signIn(page, "read");
      await page.waitForURL(`${server.url}/topics`);
      await page.getByRole("heading", { name: "Topics" }).waitFor();
    });
  }, 60_000);

  test("axe-core: no serious or critical violation on the login page and the overview, in both themes", async () => {
    for (const colorScheme of ["light", "dark"] as const)
      await withPage(
        browser,
        `axe ${colorScheme}`,
        async (page) => {
          await page.goto(`${server.url}/`);
          await page.getByLabel("User name").waitFor();
          expect(await seriousViolations(page)).toEqual([]);
          await signIn(page, "admin");
          await page.getByRole("cell", { name: "local" }).waitFor();
          expect(await seriousViolations(page)).toEqual([]);
        },
        { colorScheme },
      );
  }, 60_000);
});
