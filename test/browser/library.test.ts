/**
 * The SQL workbench's query library in a real browser: a side panel, closed until opened (the
 * results come first) and left open or closed across visits; a run query appears in the history,
 * the editor's query is saved under a name, and after a reload the saved query opens into the
 * editor from the Saved tab (by click and by keyboard); no serious axe-core violation with the
 * panel open, in light and dark.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { compiledLoupe, createTopic, insert, launchChromium, openAs, seriousViolations, withPage } from "./browser.ts";

const TOPIC = `ui${Date.now().toString(36)}-library`;

let server: ServerProcess;
let browser: Browser;

beforeAll(async () => {
  server = await startServerProcess({}, { executable: await compiledLoupe() });
  await createTopic(server, TOPIC, 1);
  await insert(server, `INSERT INTO \`${TOPIC}\` (_key, n) VALUES ('a', 1), ('b', 2), ('c', 3)`);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await server?.request(`/api/topics/${TOPIC}`, { method: "DELETE", role: "admin" }).catch(() => {});
  await browser?.close();
  await server?.stop();
});

const AXE = readFileSync(join(import.meta.dir, "../../node_modules/axe-core/axe.min.js"), "utf8");

/**
 * axe-core's serious and critical violations on the page, the editor left out: its syntax
 * colours are CodeMirror's light ones in both themes (the editor's own matter, not the panel's).
 */
async function violationsBesideEditor(page: Page): Promise<Array<{ id: string; impact: string | null }>> {
  await page.evaluate(AXE);
  const violations = (await page.evaluate('axe.run({ exclude: [[".editor"]] }).then((r) => r.violations)')) as Array<{
    id: string;
    impact: string | null;
  }>;
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

const editorText = (page: Page) => page.getByRole("textbox", { name: "SQL query" }).innerText();

/** Opens the library beside the editor (it is closed until asked for): the panel. */
async function openLibrary(page: Page) {
  await page.getByRole("button", { name: "Query library" }).click();
  const panel = page.getByRole("complementary", { name: "Query library" });
  await panel.waitFor();
  return panel;
}

/** Replaces the editor's text as a person would: select all, type. */
async function typeQuery(page: Page, text: string): Promise<void> {
  const editor = page.getByRole("textbox", { name: "SQL query" });
  await editor.click();
  await page.keyboard.press("Control+A");
  await page.keyboard.insertText(text);
}

describe("the query library", () => {
  test("23: the library is a side panel, closed until opened, then left open across visits; Close closes it", async () => {
    await withPage(
      browser,
      "library side panel",
      async (page) => {
        // Another user than the tests below: their history starts empty.
        await openAs(page, `${server.url}/sql?q=${encodeURIComponent(`SELECT * FROM \`${TOPIC}\``)}`, "admin");
        const toggle = page.getByRole("button", { name: "Query library" });
        await toggle.waitFor();
        expect(await toggle.getAttribute("aria-expanded")).toBe("false");
        expect(await page.getByRole("complementary", { name: "Query library" }).count()).toBe(0);
        const panel = await openLibrary(page);
        expect(await toggle.getAttribute("aria-expanded")).toBe("true");
        // Beside the results, not above them: the rows stay in view at 1024 x 700.
        await page.getByRole("button", { name: "Run", exact: true }).click();
        await page.getByTestId("run-status").getByText("3 rows (END)").waitFor();
        const row = (await page.getByRole("table", { name: "Results" }).locator("tbody tr").first().boundingBox())!;
        const side = (await panel.boundingBox())!;
        expect(row.y + row.height).toBeLessThanOrEqual(700);
        expect(side.x).toBeGreaterThanOrEqual(row.x + row.width);
        await page.reload();
        await page.getByRole("complementary", { name: "Query library" }).waitFor();
        await page.getByRole("complementary", { name: "Query library" }).getByRole("button", { name: "Close" }).click();
        expect(await page.getByRole("complementary", { name: "Query library" }).count()).toBe(0);
        expect(await toggle.getAttribute("aria-expanded")).toBe("false");
      },
      { viewport: { width: 1024, height: 700 } },
    );
  }, 90_000);

  test("a run query is in the history; a saved query opens into the editor after a reload", async () => {
    await withPage(browser, "library history saved", async (page) => {
      const ran = `SELECT * FROM \`${TOPIC}\` WHERE n > 1`;
      const kept = `SELECT n FROM \`${TOPIC}\` WHERE n = 3`;
      await openAs(page, `${server.url}/sql?q=${encodeURIComponent(ran)}`, "read");
      const library = await openLibrary(page);
      const history = page.getByRole("list", { name: "Queries run, newest first" });
      await page.getByText("No queries run yet").waitFor();

      await page.getByRole("button", { name: "Run", exact: true }).click();
      await page.getByTestId("run-status").getByText("2 rows (END)").waitFor();
      // The line says how the run ended, once it has.
      await history.getByRole("button", { name: ran }).getByText("2 rows (END)").waitFor();

      // Save the editor's current text (not the one run) under a name.
      await typeQuery(page, kept);
      await library.getByRole("button", { name: "Save as…" }).click();
      const name = page.getByLabel("Name of the saved query");
      await name.fill("Third record");
      await name.press("Enter");
      await page.getByRole("status").getByText("Saved as “Third record”.").waitFor();
      expect(await page.getByRole("tab", { name: /^Saved/ }).getAttribute("aria-selected")).toBe("true");

      // A fresh page: the library comes from the server, not from the page's memory.
      await page.goto(`${server.url}/sql`);
      await page.getByRole("textbox", { name: "SQL query" }).waitFor();
      expect(await editorText(page)).not.toContain(kept);
      await page.getByRole("tab", { name: /^Saved/ }).click();
      await page.getByRole("button", { name: /^Third record/ }).click();
      expect(await editorText(page)).toBe(kept);

      // From the keyboard: the History tab by arrow key, its entry by Enter.
      await page.getByRole("tab", { name: /^Saved/ }).focus();
      await page.keyboard.press("ArrowLeft");
      expect(await page.getByRole("tab", { name: "History" }).getAttribute("aria-selected")).toBe("true");
      await history.getByRole("button", { name: ran }).focus();
      await page.keyboard.press("Enter");
      expect(await editorText(page)).toBe(ran);
    });
  }, 90_000);

  test("a saved query is deleted after a confirmation; clearing the history empties it", async () => {
    await withPage(browser, "library delete clear", async (page) => {
      const res = await server.request("/api/sql/saved/Doomed", {
        method: "PUT",
        role: "write",
        body: JSON.stringify({ text: "SELECT 1" }),
      });
      expect(res.status).toBe(200);
      await openAs(page, `${server.url}/sql?q=${encodeURIComponent(`SELECT * FROM \`${TOPIC}\``)}`, "write");
      await openLibrary(page);
      await page.getByRole("button", { name: "Run", exact: true }).click();
      await page.getByTestId("run-status").getByText("3 rows (END)").waitFor();

      await page.getByRole("tab", { name: /^Saved/ }).click();
      await page.getByRole("button", { name: "Delete the saved query Doomed" }).click();
      await page.getByRole("button", { name: "Delete Doomed" }).click();
      await page.getByText("No saved queries.").waitFor();

      await page.getByRole("tab", { name: "History" }).click();
      await page.getByRole("button", { name: "Clear history…" }).click();
      await page.getByRole("button", { name: "Clear history", exact: true }).click();
      await page.getByText("No queries run yet").waitFor();
    });
  }, 90_000);

  test("a name the server refuses is said beside the form", async () => {
    await withPage(browser, "library refused", async (page) => {
      await openAs(page, `${server.url}/sql`, "read");
      await openLibrary(page);
      await typeQuery(page, "   ");
      await page.getByRole("button", { name: "Save as…" }).click();
      await page.getByLabel("Name of the saved query").fill("blank");
      await page.getByRole("button", { name: "Save", exact: true }).click();
      expect(await page.locator("form.library-save").getByRole("alert").innerText()).toContain("the query is empty");
    });
  }, 90_000);

  test("axe-core: no serious or critical violation with the library open, in both themes", async () => {
    for (const colorScheme of ["light", "dark"] as const)
      await withPage(
        browser,
        `library axe ${colorScheme}`,
        async (page) => {
          await openAs(page, `${server.url}/sql?q=${encodeURIComponent(`SELECT * FROM \`${TOPIC}\``)}`, "read");
          await openLibrary(page);
          await page.getByRole("button", { name: "Run", exact: true }).click();
          await page.getByTestId("run-status").getByText("3 rows (END)").waitFor();
          await page.getByRole("list", { name: "Queries run, newest first" }).waitFor();
          if (colorScheme === "light") expect(await seriousViolations(page)).toEqual([]);
          expect(await violationsBesideEditor(page)).toEqual([]);
          await page.getByRole("tab", { name: /^Saved/ }).click();
          await page.getByRole("button", { name: "Save as…" }).click();
          await page.getByLabel("Name of the saved query").fill("Third record");
          if (colorScheme === "light") expect(await seriousViolations(page)).toEqual([]);
          expect(await violationsBesideEditor(page)).toEqual([]);
        },
        { colorScheme },
      );
  }, 90_000);
});
