/**
 * Start-up of Loupe: how long `serve` takes to answer its first GET /api/health and how much
 * memory it holds then, and what `loupe --version` costs, each beside Bun's own floor measured
 * in the same run (an empty Bun.serve, `bun -e 'void 0'`).
 *
 *   bun bench/startup.ts [--runs=5] [--binary=PATH | --no-build]
 *
 * Measures `bun src/main.ts` and the compiled executable: built by `bun build.ts` into a
 * temporary directory unless --binary names one or --no-build skips it. Each start is a fresh
 * data directory (migrations included), against the broker in KAFKA_BOOTSTRAP (else none
 * reachable: the health answer then says DOWN, which is still an answer). The median of the
 * runs is printed. Targets (issue 24): first answer under 0.3 s, --version under 50 ms.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort } from "../test/cluster/cluster.ts";
import { arg, log, measuredRun } from "./common.ts";

const ROOT = resolve(import.meta.dir, "..");

export interface StartFigure {
  /** What was started. */
  name: string;
  /** Median seconds to the first answer (start-up) or to the exit (--version). */
  seconds: number;
  /** Median peak RSS then, in MB. */
  peakMb: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function peakRssKb(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Seconds from spawn to the first HTTP answer of `path` (any status), and the peak RSS then. */
async function timeToAnswer(
  program: string[],
  port: number,
  path: string,
  env?: Record<string, string>,
): Promise<{ s: number; kb: number }> {
  const t0 = performance.now();
  const child = Bun.spawn(program, { stdin: "ignore", stdout: "ignore", stderr: "ignore", env: env ?? process.env });
  try {
    const deadline = t0 + 30_000;
    for (;;) {
      const answered = await fetch(`http://127.0.0.1:${port}${path}`).then(
        async (r) => {
          await r.arrayBuffer();
          return true;
        },
        () => false,
      );
      if (answered) return { s: (performance.now() - t0) / 1000, kb: peakRssKb(child.pid) };
      if (child.exitCode !== null || performance.now() > deadline)
        throw new Error(`${program.join(" ")} did not answer (exit ${child.exitCode})`);
      await Bun.sleep(2);
    }
  } finally {
    child.kill("SIGKILL");
    await child.exited;
  }
}

/** `serve` of `program` on a fresh data directory, `runs` times. */
async function serveStart(name: string, program: string[], runs: number): Promise<StartFigure> {
  const secs: number[] = [];
  const kbs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const dir = mkdtempSync(join(tmpdir(), "loupe-start-"));
    const port = await freePort();
    const bootstrap = process.env.KAFKA_BOOTSTRAP ?? "127.0.0.1:9";
    writeFileSync(
      join(dir, "loupe.toml"),
      [
        `dataDir = ${JSON.stringify(join(dir, "data"))}`,
        `server = { host = "127.0.0.1", port = ${port} }`,
        `log = { level = "warn" }`,
        // A user with a hash: no password is generated (and hashed) at start.
        `users = [{ name = "admin", passwordHash = ${JSON.stringify(await Bun.password.hash("bench-pass"))}, roles = ["admin"] }]`,
        `kafka = { clusters = [{ name = "bench", bootstrapServers = ${JSON.stringify(bootstrap)}, default = true }] }`,
      ].join("\n"),
    );
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("LOUPE_"))) as Record<string, string>;
    try {
      const r = await timeToAnswer([...program, "serve", "--config", join(dir, "loupe.toml")], port, "/api/health", env);
      secs.push(r.s);
      kbs.push(r.kb);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return { name, seconds: median(secs), peakMb: median(kbs) / 1024 };
}

/** An empty Bun.serve: the floor of any Bun server's start-up and memory. */
async function emptyServe(runs: number): Promise<StartFigure> {
  const secs: number[] = [];
  const kbs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const port = await freePort();
    const r = await timeToAnswer(
      [process.execPath, "-e", `Bun.serve({ hostname: "127.0.0.1", port: ${port}, fetch: () => new Response("ok") })`],
      port,
      "/",
    );
    secs.push(r.s);
    kbs.push(r.kb);
  }
  return { name: "empty Bun.serve (Bun's floor)", seconds: median(secs), peakMb: median(kbs) / 1024 };
}

/** A command that exits by itself: wall time and peak RSS, `runs` times. */
function command(name: string, program: string[], runs: number): StartFigure {
  const secs: number[] = [];
  const kbs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const r = measuredRun(program);
    if (!r.ok) throw new Error(`${program.join(" ")} failed: ${r.stderr}`);
    secs.push(r.seconds);
    kbs.push(r.peakKb);
  }
  return { name, seconds: median(secs), peakMb: median(kbs) / 1024 };
}

/** Builds the executable into a temporary directory (the caller removes it). */
export function buildBinary(): string {
  const dir = mkdtempSync(join(tmpdir(), "loupe-bin-"));
  const outfile = join(dir, "loupe");
  const r = Bun.spawnSync([process.execPath, join(ROOT, "build.ts"), "--outfile", outfile], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (!r.success) throw new Error(`bun build.ts failed: ${r.stderr.toString()}`);
  return outfile;
}

/** Every start-up figure, the floors first. `binary`: the executable to measure too, if any. */
export async function startupFigures(binary: string | null, runs: number): Promise<StartFigure[]> {
  const main = join(ROOT, "src/main.ts");
  const out: StartFigure[] = [];
  out.push(await emptyServe(runs));
  out.push(command("bun -e 'void 0' (Bun's floor)", [process.execPath, "-e", "void 0"], runs));
  out.push(await serveStart("bun src/main.ts serve: first /api/health answer", [process.execPath, main], runs));
  out.push(command("bun src/main.ts --version", [process.execPath, main, "--version"], runs));
  if (binary) {
    out.push(await serveStart("loupe serve (compiled): first /api/health answer", [binary], runs));
    out.push(command("loupe --version (compiled)", [binary, "--version"], runs));
  }
  return out;
}

export function startupTable(figures: StartFigure[]): string[] {
  const lines = ["| Start-up | Seconds (median) | Peak RSS MB | Target |", "|---|--:|--:|---|"];
  for (const f of figures) {
    const target = f.name.includes("--version")
      ? `< 0.050 s ${f.seconds < 0.05 ? "PASS" : "FAIL"}`
      : f.name.includes("/api/health")
        ? `< 0.3 s ${f.seconds < 0.3 ? "PASS" : "FAIL"}`
        : "reference";
    lines.push(`| ${f.name} | ${f.seconds.toFixed(3)} | ${f.peakMb.toFixed(0)} | ${target} |`);
  }
  return lines;
}

/** Measures with `binary`, else the executable built here (or --binary), unless --no-build. */
export async function runStartup(runs: number, binary?: string): Promise<string[]> {
  const given = binary ?? arg("binary", "");
  const built = given === "" && !process.argv.includes("--no-build") ? buildBinary() : null;
  try {
    const exe = given || built;
    log(`start-up: ${runs} runs each${exe ? `, executable ${exe}` : ""}`);
    return startupTable(await startupFigures(exe, runs));
  } finally {
    if (built) rmSync(resolve(built, ".."), { recursive: true, force: true });
  }
}

if (import.meta.main) console.log((await runStartup(Number(arg("runs", "5")))).join("\n"));
