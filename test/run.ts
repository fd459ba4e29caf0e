/**
 * The suite as `npm test` runs it (after the type checks and the linter):
 *
 *   bun test/run.ts [--update-timings] [path or folder ...]
 *
 * 1. The services (test/cluster/services.ts) start once, in this process, while the files that
 *    need none run: those with a line `// @no-services`. They run without the services'
 *    variables, so a file marked by mistake fails (requireEnv names what is missing); an
 *    unmarked file runs in phase 2, with the services.
 * 2. Every other *.test.ts under test/ runs on the services, in LOUPE_TEST_WORKERS (default 3)
 *    `bun test --parallel --no-isolate` workers, the slowest first (test/timings.json). A file
 *    that stops, freezes or restarts a service starts its own (startCluster), never the shared
 *    ones. The preload (test/setup.ts) starts nothing here: the services' variables are set.
 * 3. Files with a line `// @serial` run after that, alone: one that must not share the machine
 *    with another file (none today).
 * 4. Files with a line `// @postgres` run once more on a PostgreSQL store (LOUPE_TEST_STORE=postgres,
 *    see test/helpers/store.ts), in the same workers: the store's own tests and a few API tests
 *    that lean on the store. Their times are kept as `postgres:<file>`.
 *
 * At the end it prints the time per folder and per phase, then each failed test again with the
 * lines bun printed before it (a long run's log is often read from its end). --update-timings (or
 * LOUPE_TEST_UPDATE_TIMINGS=1) writes the measured per-file times to test/timings.json (commit
 * it when the suite's shape changed; a file missing from it only starts in no particular order). The services'
 * variables (KAFKA_BOOTSTRAP, ...) already set are used, as by the preload (test/setup.ts).
 */

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { SERVICE_ENV_KEYS, startTestServices, type TestServices, wantedServices } from "./cluster/services.ts";

const ROOT = resolve(import.meta.dir, "..");
const TIMINGS = join(ROOT, "test/timings.json");
const TIMEOUT_MS = "60000";
const NO_SERVICES = /^\/\/ @no-services\b/m;
const SERIAL = /^\/\/ @serial\b/m;
const POSTGRES = /^\/\/ @postgres\b/m;

const args = process.argv.slice(2);
const updateTimings = args.includes("--update-timings") || process.env.LOUPE_TEST_UPDATE_TIMINGS === "1";
// Paths as given, from where the command ran; the files are then read from the root.
const only = args.filter((a) => !a.startsWith("--")).map((a) => relative(ROOT, resolve(a)));
process.chdir(ROOT);
// Three on two cores: most files wait on Kafka, Connect or a browser, so two workers left a
// quarter of the machine idle (a fresh-clone run: 509 s of this phase with two, 413 s with three).
const workers = Math.max(1, Number(process.env.LOUPE_TEST_WORKERS ?? 3) || 3);

const files = [...new Bun.Glob("test/**/*.test.ts").scanSync({ cwd: ROOT })]
  .map((f) => f.split("\\").join("/"))
  .filter((f) => only.length === 0 || only.some((o) => f === o || f.startsWith(`${o}/`)))
  .sort();
if (files.length === 0) {
  console.error(`[test/run] no test file under ${only.join(", ") || "test/"}`);
  process.exit(1);
}
const phases = { free: [] as string[], shared: [] as string[], serial: [] as string[], postgres: [] as string[] };
for (const f of files) {
  const text = readFileSync(f, "utf8");
  if (POSTGRES.test(text)) phases.postgres.push(f);
  if (NO_SERVICES.test(text)) phases.free.push(f);
  else if (SERIAL.test(text)) phases.serial.push(f);
  else phases.shared.push(f);
}

const scratch = mkdtempSync(join(tmpdir(), "loupe-run-"));
const known: Record<string, number> = existsSync(TIMINGS)
  ? (JSON.parse(readFileSync(TIMINGS, "utf8")) as { files: Record<string, number> }).files
  : {};

interface PhaseResult {
  name: string;
  ok: boolean;
  wallMs: number;
  files: Record<string, number>;
}

/** A failed test as the run's last lines repeat it: a long run's log is often read from its end. */
interface Failure {
  phase: string;
  file: string;
  line: string;
  context: string[];
}
const failures: Failure[] = [];
/** Lines kept before a `(fail)` line: the error bun prints just above it. */
const CONTEXT_LINES = 25;

/**
 * Copies a test process's output through as it comes, and notes each `(fail)` line with the
 * file it belongs to and the lines just before it (the error and its stack).
 */
async function relay(stream: ReadableStream<Uint8Array>, to: NodeJS.WriteStream, phase: string): Promise<void> {
  const decoder = new TextDecoder();
  const recent: string[] = [];
  let file = "";
  let partial = "";
  let following: { entry: Failure; left: number } | undefined;
  let summary = false;
  for await (const chunk of stream) {
    to.write(chunk);
    const lines = (partial + decoder.decode(chunk, { stream: true })).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      if (/^test\/\S+\.test\.ts:$/.test(line)) file = line.slice(0, -1);
      // bun's own summary at the end repeats the failed tests, without their files: not again.
      if (/^\d+ tests? failed:$/.test(line.trim())) summary = true;
      if (line.startsWith("(fail)") && !summary) failures.push({ phase, file, line, context: recent.slice(-CONTEXT_LINES) });
      // An error outside any test (bun counts it as a failure, with no `(fail)` line): the lines after it say what.
      if (/Unhandled error|unhandled rejection/i.test(line)) {
        const entry: Failure = { phase, file, line, context: [] };
        failures.push(entry);
        following = { entry, left: CONTEXT_LINES };
      } else if (following && following.left-- > 0) following.entry.context.push(line);
      recent.push(line);
      if (recent.length > CONTEXT_LINES * 2) recent.splice(0, CONTEXT_LINES);
    }
  }
}

/**
 * One `bun test` over `list`; per-file times come back through a timings file of its own, under
 * `key(file)` (the PostgreSQL phase keeps its own).
 */
async function runPhase(
  name: string,
  list: string[],
  env: Record<string, string | undefined>,
  extra: string[],
  key = (f: string) => f,
): Promise<PhaseResult> {
  if (list.length === 0) return { name, ok: true, wallMs: 0, files: {} };
  const timings = join(scratch, `${name}.json`);
  const seed: Record<string, number> = {};
  for (const f of list) if (known[key(f)] !== undefined) seed[f] = known[key(f)]!;
  writeFileSync(timings, JSON.stringify({ version: 1, files: seed }));
  console.error(`\n[test/run] ${name}: ${list.length} files${extra.length ? ` (${extra.join(" ")})` : ""}`);
  const t0 = performance.now();
  const child = Bun.spawn(
    [process.execPath, "test", "--timeout", TIMEOUT_MS, `--timings=${timings}`, "--update-timings", ...extra, ...list.map((f) => `./${f}`)],
    { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  const [code] = await Promise.all([child.exited, relay(child.stdout, process.stdout, name), relay(child.stderr, process.stderr, name)]);
  const wallMs = performance.now() - t0;
  const measured = existsSync(timings) ? (JSON.parse(readFileSync(timings, "utf8")) as { files: Record<string, number> }).files : {};
  const own: Record<string, number> = {};
  for (const f of list) if (measured[f] !== undefined) own[key(f)] = measured[f];
  return { name, ok: code === 0, wallMs, files: own };
}

const t0 = performance.now();
const baseEnv: Record<string, string | undefined> = { ...process.env };
const wanted = wantedServices();
let services: TestServices | undefined;
let servicesFailed: unknown;
const starting = (
  phases.shared.length + phases.serial.length > 0 && wanted.length > 0 ? startTestServices(wanted, "test/run") : Promise.resolve(undefined)
).then(
  (s) => {
    services = s;
  },
  (err) => {
    servicesFailed = err;
  },
);

// The compiled executable the browser and crash tests run, built once, beside the services' start.
const needsExecutable = [...phases.shared, ...phases.serial].some((f) => readFileSync(f, "utf8").includes("compiledLoupe("));
const executable = join(scratch, "loupe");
const building = needsExecutable
  ? (async () => {
      const proc = Bun.spawn([process.execPath, "build.ts", "--outfile", executable], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
      const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
      if (code !== 0) throw new Error(`bun build.ts failed (${code}):\n${out}\n${err}`);
      baseEnv.LOUPE_TEST_EXECUTABLE = executable;
    })()
  : Promise.resolve();

const freeEnv: Record<string, string | undefined> = { ...baseEnv, LOUPE_TEST_CLUSTER: "0" };
for (const k of SERVICE_ENV_KEYS) delete freeEnv[k];
const results: PhaseResult[] = [];
results.push(await runPhase("no services", phases.free, freeEnv, []));

const waitStart = performance.now();
await starting;
await building.catch((err) => {
  servicesFailed = err;
});
const waitedMs = performance.now() - waitStart;
if (servicesFailed) {
  console.error(
    `[test/run] the services did not start or the executable was not built: ${servicesFailed instanceof Error ? servicesFailed.stack : String(servicesFailed)}`,
  );
} else {
  const sharedEnv = { ...baseEnv, ...services?.env };
  // --no-isolate: each worker keeps one module registry across its files, as one `bun test`
  // process always did (about 0.6 s of CPU less per file than re-loading src/ for each).
  results.push(await runPhase("services", phases.shared, sharedEnv, [`--parallel=${workers}`, "--no-isolate"]));
  results.push(await runPhase("serial", phases.serial, sharedEnv, []));
  results.push(
    await runPhase(
      "postgres",
      phases.postgres,
      { ...sharedEnv, LOUPE_TEST_STORE: "postgres" },
      [`--parallel=${workers}`, "--no-isolate"],
      (f) => `postgres:${f}`,
    ),
  );
}
await services?.stop();
const totalMs = performance.now() - t0;

// The time per folder: what its files took (under --parallel, two files' times overlap).
const perFile: Record<string, number> = {};
for (const r of results) Object.assign(perFile, r.files);
const folders = new Map<string, { ms: number; files: number }>();
for (const [f, ms] of Object.entries(perFile)) {
  const parts = f.split("/");
  const folder = parts.length > 2 ? parts.slice(0, 2).join("/") : "test";
  const entry = folders.get(folder) ?? { ms: 0, files: 0 };
  entry.ms += ms;
  entry.files++;
  folders.set(folder, entry);
}
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`.padStart(8);
const lines = ["", "[test/run] time per folder (sum of its files' times):"];
for (const [folder, e] of [...folders].sort((a, b) => b[1].ms - a[1].ms)) lines.push(`${s(e.ms)}  ${folder} (${e.files} files)`);
lines.push("[test/run] slowest files:");
for (const [f, ms] of Object.entries(perFile)
  .sort((a, b) => b[1] - a[1])
  .slice(0, 8))
  lines.push(`${s(ms)}  ${f}`);
lines.push("[test/run] phases (wall time):");
for (const r of results) if (r.wallMs > 0) lines.push(`${s(r.wallMs)}  ${r.name}${r.ok ? "" : " (FAILED)"}`);
if (waitedMs >= 1000) lines.push(`${s(waitedMs)}  waiting for the services after the first phase`);
lines.push(`${s(totalMs)}  in all`);
if (failures.length > 0) {
  lines.push(`[test/run] ${failures.length} failed test${failures.length === 1 ? "" : "s"} (each with the lines before it):`);
  for (const f of failures)
    lines.push("", `--- ${f.phase}: ${f.file || "?"}`, ...(f.line.startsWith("(fail)") ? [...f.context, f.line] : [f.line, ...f.context]));
  lines.push("", `[test/run] failed: ${failures.map((f) => `${f.file} ${f.line}`).join(" | ")}`);
}
console.error(lines.join("\n"));

if (updateTimings) {
  const merged = Object.entries({ ...known, ...perFile }).filter(([f]) => existsSync(f.replace(/^postgres:/, "")));
  const sorted = Object.fromEntries(merged.sort((a, b) => a[0].localeCompare(b[0])));
  writeFileSync(TIMINGS, `${JSON.stringify({ version: 1, files: sorted }, null, 2)}\n`);
  console.error(`[test/run] wrote ${relative(ROOT, TIMINGS)}`);
}
rmSync(scratch, { recursive: true, force: true });
const missing = [...files, ...phases.postgres.map((f) => `postgres:${f}`)].filter((f) => perFile[f] === undefined);
if (missing.length > 0 && !servicesFailed) console.error(`[test/run] no time for: ${missing.join(", ")}`);
process.exit(servicesFailed || results.some((r) => !r.ok) ? 1 : 0);
