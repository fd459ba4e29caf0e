/**
 * Browser tests: Debian's Chromium (/usr/bin/chromium, installed by .ci/run) driven by
 * playwright-core, against the compiled executable (`bun build.ts`) on the real test broker.
 * A test that cannot start Chromium fails; it never passes quietly. A failing test saves a
 * screenshot under test-results/.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { ROLE_USERS } from "../helpers/runtime.ts";
import type { ServerProcess } from "../helpers/server-process.ts";

const ROOT = resolve(import.meta.dir, "../..");
export const CHROMIUM = process.env.LOUPE_TEST_CHROMIUM ?? "/usr/bin/chromium";
const RESULTS = join(ROOT, "test-results");

let built: Promise<string> | null = null;

/**
 * The executable, built once per test run from this tree (UI bundle included): test/run.ts
 * builds it before the files run and names it in LOUPE_TEST_EXECUTABLE (parallel workers would
 * each build it again, and build.ts writes into src/); a file run on its own builds its own.
 */
export function compiledLoupe(): Promise<string> {
  const given = process.env.LOUPE_TEST_EXECUTABLE;
  if (given) return Promise.resolve(given);
  built ??= (async () => {
    const out = join(mkdtempSync(join(tmpdir(), "loupe-bin-")), "loupe");
    const proc = Bun.spawn([process.execPath, join(ROOT, "build.ts"), "--outfile", out], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    if (code !== 0) throw new Error(`bun build.ts failed (${code}):\n${stdout}\n${stderr}`);
    return out;
  })();
  return built;
}

/** Removes the executable (about 115 MB) once a file is done with it; a later compiledLoupe() builds it again. The run's own stays. */
export async function removeCompiledLoupe(): Promise<void> {
  if (process.env.LOUPE_TEST_EXECUTABLE) return;
  const done = built;
  built = null;
  if (done) rmSync(dirname(await done), { recursive: true, force: true });
}

/** `extraArgs`: more switches of Chromium's, e.g. the certificate key a test trusts. */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    // The machine's network is closed: no background connections, no component updates.
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      ...extraArgs,
    ],
  });
}

/** Runs `body` on a fresh page; on failure saves a screenshot named after `name`, then rethrows. */
export async function withPage(
  browser: Browser,
  name: string,
  body: (page: Page, context: BrowserContext) => Promise<void>,
  options: Parameters<Browser["newContext"]>[0] = {},
): Promise<void> {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  try {
    await body(page, context);
  } catch (err) {
    mkdirSync(RESULTS, { recursive: true });
    const file = join(RESULTS, `${name.replace(/[^a-z0-9]+/gi, "-").toLowerCase()}.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => {});
    throw Object.assign(err instanceof Error ? err : new Error(String(err)), { screenshot: file });
  } finally {
    await context.close();
  }
}

const AXE = readFileSync(join(ROOT, "node_modules/axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[] }>;
}

/** axe-core's serious and critical violations on the page as it is now. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol: the page's Content-Security-Policy stays on.
  await page.evaluate(AXE);
  const violations = (await page.evaluate("axe.run(document).then((r) => r.violations)")) as AxeViolation[];
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

/** Fills the login form the page shows as the user holding `role`, and submits it with Enter. */
export async function signIn(page: Page, role: keyof typeof ROLE_USERS): Promise<void> {
  await page.getByLabel("User name").fill(ROLE_USERS[role].name);
  await page.getByLabel("Password").fill(ROLE_USERS[role].password);
  await page.getByLabel("Password").press("Enter");
}

/** Opens `url` with no session (the login form shows) and signs in: the page asked for follows. */
export async function openAs(page: Page, url: string, role: keyof typeof ROLE_USERS): Promise<void> {
  await page.goto(url);
  await signIn(page, role);
}

/** Creates a topic through the server's API as admin (replication 1); throws with the answer when refused. */
export async function createTopic(
  server: ServerProcess,
  topicName: string,
  partitions: number,
  configs?: Record<string, string>,
): Promise<void> {
  const res = await server.request("/api/topics", {
    method: "POST",
    role: "admin",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ topicName, partitions, replication: 1, ...(configs ? { configs } : {}) }),
  });
  if (res.status !== 201) throw new Error(`creating ${topicName}: ${res.status} ${await res.text()}`);
}

/** Writes records through the JDBC insert route as the write user, as the driver sends them. */
export async function insert(server: ServerProcess, sql: string): Promise<void> {
  const res = await server.request("/api/jdbc/insert", {
    method: "POST",
    role: "write",
    headers: { "content-type": "text/plain" },
    body: sql,
  });
  if (res.status !== 200) throw new Error(`insert: ${res.status} ${await res.text()}`);
}
