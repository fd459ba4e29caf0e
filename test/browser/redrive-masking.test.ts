/**
 * The redrive and masking policy pages in a real browser, against the compiled executable and the
 * real broker. A writer creates a redrive job from the form (a bad filter first, refused in the
 * API's words), its page opens on the dry run's counts per target and sample, Start follows, the
 * progress moves, and the job is paused, resumed and cancelled; a read user sees jobs but is
 * offered no change. An admin creates, edits and deletes a masking policy; the read user it masks
 * sees the workbench's column marked (the mark whole) and never the clear value; a writer is not
 * offered the page. axe-core on a job's dry run and on the policy form, in light and dark.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import type { KafkaPool } from "../../src/kafka/index.ts";
import { uniqueTopic } from "../cluster/cluster.ts";
import type { ROLE_USERS } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { waitFor } from "../helpers/wait.ts";
import { testPool } from "../kafka/helpers.ts";
import { compiledLoupe, createTopic, insert, launchChromium, openAs, seriousViolations, withPage } from "./browser.ts";

const DLQ = uniqueTopic("ui-rd-dlq");
const A = uniqueTopic("ui-rd-a");
const B = uniqueTopic("ui-rd-b");
const MASKED = uniqueTopic("ui-mask");
const POLICY = `ui-pii-${process.pid}`;
const HEADER = "__connect.errors.topic";
const SSN = "123-45-6789";

let server: ServerProcess;
let browser: Browser;
let pool: KafkaPool;

beforeAll(async () => {
  server = await startServerProcess({}, { executable: await compiledLoupe() });
  for (const t of [DLQ, A, B, MASKED]) await createTopic(server, t, 1);
  pool = testPool();
  // 30 dead letters: even n name A, odd n name B; 9, 19 and 29 have no header (unroutable).
  await pool.default().writes.produce(
    DLQ,
    Array.from({ length: 30 }, (_, n) => ({
      key: `k${n}`,
      value: JSON.stringify({ n }),
      ...(n % 10 === 9 ? {} : { headers: { [HEADER]: n % 2 === 0 ? A : B } }),
    })),
  );
  // Wide notes beside it: the grid is wider than the page, each column at its least width.
  const notes = ["a", "b", "c", "d", "e", "f"];
  await insert(
    server,
    `INSERT INTO \`${MASKED}\` (_key, id, ssn, city, ${notes.map((n) => `note_${n}`).join(", ")}) VALUES ('k1', 1, '${SSN}', 'Lyon', ${notes.map((n) => `'${n.repeat(30)}'`).join(", ")})`,
  );
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await server?.request(`/api/masking/policies/${POLICY}`, { method: "DELETE", role: "admin" }).catch(() => {});
  // The jobs stop for good, and the consumer group of the one that ran goes.
  const jobs = await server
    ?.request("/api/redrives", { role: "admin" })
    .then((r) => r.json() as Promise<{ redrives: Array<{ id: string; consumerGroup: string }> }>)
    .catch(() => ({ redrives: [] }));
  for (const j of jobs?.redrives ?? []) {
    await server.request(`/api/redrives/${j.id}/cancel`, { method: "PUT", role: "admin" }).catch(() => {});
    await pool
      ?.default()
      .groups.delete([j.consumerGroup])
      .catch(() => {});
  }
  for (const t of [DLQ, A, B, MASKED])
    await pool
      ?.default()
      .topics.delete(t)
      .catch(() => {});
  await pool?.close();
  await browser?.close();
  await server?.stop();
});

const signedIn = (page: Page, path: string, role: keyof typeof ROLE_USERS) => openAs(page, `${server.url}${path}`, role);

const stateIs = (page: Page, state: string) =>
  waitFor(async () => (await page.getByTestId("redrive-state").innerText()) === state, {
    timeoutMs: 30_000,
    intervalMs: 100,
    what: `state ${state}`,
  });

/**
 * axe-core on what is shown, in light and in dark. The theme is set as the toggle sets it (the
 * root's `data-theme`, which the styles read): a modal dialog leaves the toggle out of reach.
 */
async function axeInBothThemes(page: Page, what: string): Promise<void> {
  for (const theme of ["light", "dark"] as const) {
    await page.evaluate(`document.documentElement.dataset.theme = "${theme}"`);
    expect({ what, theme, violations: await seriousViolations(page) }).toEqual({ what, theme, violations: [] });
  }
  await page.evaluate(`document.documentElement.dataset.theme = "light"`);
}

/** The figure of a tile ("Unroutable", ...) within `scope`. */
const tile = (page: Page, scope: string, label: string) =>
  page
    .locator(scope)
    .locator(".tile", { has: page.getByText(label, { exact: true }) })
    .locator("strong");

describe("dead-letter redrive page", () => {
  test("29: a writer creates a job from the form, sees the dry run's counts per target and sample before Start, watches it copy, pauses, resumes and cancels it; axe-core in both themes", async () => {
    await withPage(browser, "redrive flow", async (page) => {
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(e.message));
      await signedIn(page, "/redrives", "write");
      await page.getByRole("heading", { name: "No redrive job yet" }).waitFor();
      await page.getByRole("button", { name: "Create a redrive job…" }).click();
      await page.getByRole("heading", { name: "New redrive job" }).waitFor();
      await page.getByLabel("Source topic").fill(DLQ);
      expect(await page.getByLabel("Header", { exact: true }).inputValue()).toBe(HEADER);
      await page.getByLabel("Only the records where").fill("n >=");
      await page.getByLabel("Records per second at most").fill("2");
      await page.getByRole("button", { name: "Create and dry run" }).click();
      // The API's own words, where the user acted.
      await page
        .getByRole("alert")
        .filter({ hasText: /Invalid filter: .*line 1, column/ })
        .waitFor();
      await page.getByLabel("Only the records where").fill("n >= 1");
      await page.getByRole("button", { name: "Create and dry run" }).click();

      await page.waitForURL((u) => /^\/redrives\/rdr_[0-9a-f]+$/.test(u.pathname), { timeout: 15_000 });
      await stateIs(page, "PAUSED");
      const dry = page.getByRole("region", { name: "Dry run" });
      await dry.waitFor({ timeout: 30_000 });
      const perTarget = await dry.getByRole("table", { name: "Dry run per target" }).locator("tbody tr").allInnerTexts();
      expect(perTarget.map((r) => r.split("\t").map((c) => c.trim()))).toEqual(
        [
          [A, "14", "0"],
          [B, "12", "0"],
        ].sort((x, y) => x[0]!.localeCompare(y[0]!)),
      );
      expect(await tile(page, ".redrive-dry", "Would write").innerText()).toBe("26");
      expect(await tile(page, ".redrive-dry", "Unroutable").innerText()).toBe("3");
      expect(await tile(page, ".redrive-dry", "Left out by the filter").innerText()).toBe("1");
      const sample = dry.getByRole("table", { name: "Dry run sample" }).locator("tbody tr");
      expect(await sample.count()).toBe(10);
      expect(await sample.first().innerText()).toContain('{"n":1}');
      expect(await page.getByRole("button", { name: "Start", exact: true }).isEnabled()).toBe(true);
      await axeInBothThemes(page, "a job's page with its dry run");
      expect(
        ((await (await server.request(`/api/redrives`, { role: "admin" })).json()) as { redrives: Array<{ done: number }> }).redrives[0]!
          .done,
      ).toBe(0);

      await page.getByRole("button", { name: "Start", exact: true }).click();
      await stateIs(page, "RUNNING");
      const progress = page.getByTestId("redrive-progress");
      await waitFor(async () => /^[1-9]\d* of 30 /.test(await progress.innerText()), { timeoutMs: 30_000, what: "records copied" });
      await page.getByRole("button", { name: "Pause", exact: true }).click();
      await page
        .getByRole("status")
        .filter({ hasText: /^Paused/ })
        .waitFor();
      await stateIs(page, "PAUSED");
      await page.getByRole("button", { name: "Resume", exact: true }).click();
      await stateIs(page, "RUNNING");

      await page.getByRole("button", { name: "Cancel job…" }).click();
      const dialog = page.getByRole("dialog", { name: /^Cancel the redrive/ });
      await dialog.getByRole("button", { name: "Cancel the job" }).click();
      await stateIs(page, "CANCELLED");
      await page
        .getByRole("status")
        .filter({ hasText: /^Cancelled/ })
        .waitFor();
      for (const name of ["Start", "Pause", "Resume", "Cancel job…", "Dry run"])
        expect(await page.getByRole("button", { name, exact: true }).count()).toBe(0);
      // What it wrote shows per target, and the list shows the job.
      const written = Number(await tile(page, ".redrive-detail > .tiles", "Written").innerText());
      expect(written).toBeGreaterThan(0);
      expect(written).toBeLessThan(26);
      await page.getByRole("link", { name: "Redrive jobs", exact: true }).click();
      const row = page.getByRole("table", { name: "Redrive jobs" }).locator("tbody tr", { hasText: DLQ });
      expect(await row.innerText()).toContain("CANCELLED");
      expect(await row.innerText()).toContain(`header ${HEADER}`);
      expect(await row.innerText()).toContain("wanda");

      // The topic names the form offered are cached apart from the topic list's pages: the list,
      // opened next, read them as its own pages and broke.
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Topics" }).click();
      await page.getByRole("button", { name: "Create topic…" }).click();
      await page.getByRole("dialog", { name: /Create a topic/i }).waitFor();
      expect(pageErrors).toEqual([]);
    });
  }, 90_000);

  test("a range by time and offset from the form; a job never started is started only after a dry run; a read user sees the jobs and their progress, but no create form and no action", async () => {
    const res = await server.request("/api/redrives", {
      method: "POST",
      role: "write",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ topic: DLQ, target: A, name: "to-a" }),
    });
    const job = (await res.json()) as { id: string };
    await withPage(browser, "redrive range", async (page) => {
      await signedIn(page, "/redrives/new", "write");
      await page.getByLabel("Source topic").fill(DLQ);
      await page.getByLabel("Partitions").fill("0");
      // From a time (local, as typed) an hour before the records, up to offset 12 (not copied).
      const hourAgo = new Date(Date.now() - 3_600_000);
      const pad = (n: number) => String(n).padStart(2, "0");
      const local = `${hourAgo.getFullYear()}-${pad(hourAgo.getMonth() + 1)}-${pad(hourAgo.getDate())}T${pad(hourAgo.getHours())}:${pad(hourAgo.getMinutes())}:${pad(hourAgo.getSeconds())}`;
      await page.getByRole("group", { name: "From" }).getByLabel("A time").check();
      await page.getByLabel("From time (local)").fill(local);
      await page.getByRole("group", { name: "Up to" }).getByLabel("An offset").check();
      await page.getByLabel("Up to offset (each partition)").fill("12");
      await page.getByLabel("One topic").check();
      await page.getByLabel("Target topic").fill(B);
      await page.getByRole("button", { name: "Create and dry run" }).click();
      await page.getByRole("region", { name: "Dry run" }).waitFor({ timeout: 30_000 });
      expect(await page.getByTestId("redrive-progress").innerText()).toBe("0 of 12 (0%) records");
      expect(await page.getByRole("table", { name: "Progress per partition" }).locator("tbody tr").allInnerTexts()).toEqual([
        "0\t0\t12\t0\t12",
      ]);
      expect(await tile(page, ".redrive-dry", "Would write").innerText()).toBe("12");
    });
    await withPage(browser, "redrive dry run first", async (page) => {
      await signedIn(page, `/redrives/${job.id}`, "write");
      await stateIs(page, "PAUSED");
      const start = page.getByRole("button", { name: "Start", exact: true });
      expect(await start.isDisabled()).toBe(true);
      await page.getByText("Start comes after a dry run: it shows what the job would write.").waitFor();
      await page.getByRole("button", { name: "Dry run", exact: true }).click();
      await page.getByRole("region", { name: "Dry run" }).getByRole("table", { name: "Dry run per target" }).getByText(A).waitFor();
      expect(await tile(page, ".redrive-dry", "Would write").innerText()).toBe("30");
      expect(await start.isEnabled()).toBe(true);
      expect(await page.getByRole("button", { name: "Dry run again", exact: true }).count()).toBe(1);
    });
    await withPage(browser, "redrive read", async (page) => {
      await signedIn(page, "/redrives", "read");
      await page.getByRole("table", { name: "Redrive jobs" }).getByRole("link", { name: "to-a" }).click();
      await page.waitForURL((u) => u.pathname === `/redrives/${job.id}`);
      await stateIs(page, "PAUSED");
      await page.getByText("Changing a job needs the write role.").waitFor();
      expect(await page.getByTestId("redrive-progress").innerText()).toBe("0 of 30 (0%) records");
      expect(await page.getByRole("main").getByRole("button").count()).toBe(0);
      await page.goto(`${server.url}/redrives`);
      await page.getByRole("table", { name: "Redrive jobs" }).waitFor();
      expect(await page.getByRole("button", { name: /Create/ }).count()).toBe(0);
    });
  }, 60_000);
});

describe("masking policies page", () => {
  test("29: an admin creates, edits and deletes a policy; the read user it masks sees the workbench's column marked (the mark whole, not cut) and never the clear value; a writer is not offered the page; axe-core on the form in both themes", async () => {
    await withPage(browser, "masking admin", async (page) => {
      await signedIn(page, "/masking", "admin");
      await page.getByRole("heading", { name: "Masking policies", level: 1 }).waitFor();
      await page.getByRole("button", { name: "Create policy…" }).click();
      const dialog = page.getByRole("dialog", { name: "Create a masking policy" });
      await dialog.getByLabel("Policy name").fill(POLICY);
      await dialog.getByLabel("Topic patterns").fill(MASKED);
      // The form says what the schema says, before anything is sent.
      await dialog.getByRole("button", { name: "Create policy" }).click();
      await dialog.getByText("name at least one field pattern").waitFor();
      await axeInBothThemes(page, "the policy form with a field's problem");
      await dialog.getByLabel("Field patterns").fill("ssn");
      await dialog.getByLabel(/^Keep the last N characters/).check();
      await dialog.getByLabel("Characters kept").fill("4");
      await dialog.getByRole("group", { name: "Masked roles" }).getByLabel("read", { exact: true }).check();
      await dialog.getByRole("button", { name: "Create policy" }).click();
      await page
        .getByRole("status")
        .filter({ hasText: `${POLICY} is created.` })
        .waitFor();
      const row = page.getByRole("table", { name: "Masking policies" }).locator("tr", { hasText: POLICY });
      expect(await row.innerText()).toContain("Keep the last 4");

      await page.getByRole("button", { name: `Edit ${POLICY}` }).click();
      const edit = page.getByRole("dialog", { name: `Edit the policy ${POLICY}` });
      // Nothing changed yet: nothing to save.
      expect(await edit.getByRole("button", { name: "Save" }).isDisabled()).toBe(true);
      await edit.getByLabel("Characters kept").fill("2");
      await edit.getByRole("button", { name: "Save" }).click();
      await page
        .getByRole("status")
        .filter({ hasText: `${POLICY} is saved.` })
        .waitFor();
      expect(await row.innerText()).toContain("Keep the last 2");
    });

    await withPage(browser, "masking read workbench", async (page) => {
      await signedIn(page, `/sql?q=${encodeURIComponent(`SELECT * FROM \`${MASKED}\``)}&run=1`, "read");
      await page.getByTestId("run-status").getByText("1 rows (END)").waitFor({ timeout: 30_000 });
      await page.getByRole("columnheader", { name: "value.ssn (masked)" }).waitFor();
      // The mark is read whole: the column is as wide as its name and the mark (it was cut to "value.ssn (m…").
      const cut = `(() => { const th = [...document.querySelectorAll("th")].find((t) => t.textContent === "value.ssn (masked)"); return th.scrollWidth - th.clientWidth; })()`;
      await waitFor(async () => (await page.evaluate(cut)) === 0, { timeoutMs: 5_000, what: "the masked mark shown whole" });
      expect(await page.getByRole("columnheader", { name: "value.city", exact: true }).count()).toBe(1);
      await page.getByRole("cell", { name: "*********89" }).waitFor();
      const html = await page.content();
      for (const clear of [SSN, "123-45", "45-67"]) expect({ clear, found: html.includes(clear) }).toEqual({ clear, found: false });
      expect(await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Masking policies" }).count()).toBe(0);
    });

    await withPage(browser, "masking write", async (page) => {
      await signedIn(page, "/masking", "write");
      await page
        .getByTestId("not-for-you")
        .filter({ hasText: /^Managing data masking policies is for Loupe's administrators/ })
        .waitFor();
      expect(await page.getByRole("main").getByRole("button").count()).toBe(0);
    });

    await withPage(browser, "masking delete", async (page) => {
      await signedIn(page, "/masking", "admin");
      await page.getByRole("button", { name: `Delete ${POLICY}` }).click();
      await page
        .getByRole("dialog", { name: `Delete the policy ${POLICY}` })
        .getByRole("button", { name: "Delete policy" })
        .click();
      await page
        .getByRole("status")
        .filter({ hasText: `${POLICY} is deleted.` })
        .waitFor();
      await page.getByText("No policies yet.").waitFor();
    });
    expect((await server.request(`/api/masking/policies/${POLICY}`, { role: "admin" })).status).toBe(404);
  }, 90_000);
});
