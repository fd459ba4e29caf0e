/**
 * Loupe in a process of its own (`bun src/main.ts serve`), as it runs when installed: what a
 * test measures of it (how late it answers, how much memory it holds) is the server's alone, not
 * the test process's, whose heap holds every earlier test of the run and whose collections would
 * count as the server's delay. Its users are those of testRuntime (ROLE_USERS).
 *
 * A poller, a small process of its own too, asks the server every few milliseconds and says how
 * late each answer came and how much memory the server held then.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Role } from "../../src/config/schema.ts";
import { freePort } from "../cluster/cluster.ts";
import { startReporter } from "./reporter.ts";
import { bootstrap, ROLE_USERS, roleHashes } from "./runtime.ts";

const ROOT = resolve(import.meta.dir, "../..");

export interface ServerProcess {
  url: string;
  pid: number;
  /** Its directory (config and data): another process started on it goes on with the same store. */
  dir: string;
  /** Logs in and returns the token of the user holding `role`. */
  token(role: Role): Promise<string>;
  request(path: string, init?: RequestInit & { role?: Role }): Promise<Response>;
  /** The server's resident memory now, and its peak since it started (bytes). */
  rss(): number;
  peakRss(): number;
  /** Asks GET /api/auth every `everyMs` until stopped (see Poller). */
  poll(role: Role, everyMs: number): Promise<Poller>;
  stop(): Promise<void>;
  /** Stops it with SIGTERM, as systemd does, and keeps its directory: its exit code, and how long it took to exit (ms). */
  terminate(): Promise<{ code: number; ms: number }>;
  /** Kills it with SIGKILL, as a crash would, and keeps its directory. */
  kill(): Promise<void>;
}

export interface Poll {
  /** When the request was due and when its answer had been read (epoch ms with fractions). */
  due: number;
  answered: number;
  status: number;
  /** The server's resident memory when it answered (bytes). */
  rss: number;
}

export interface Poller {
  /** The polls due at or after `from` and answered by `to`. */
  between(from: number, to: number): Poll[];
  /** Resolved once a poll due at or after `from` was answered. */
  answeredSince(from: number): Promise<void>;
  stop(): Promise<void>;
}

/** The time base of every figure here: epoch milliseconds with fractions, the same in every process. */
export const epochNow = () => performance.timeOrigin + performance.now();

/** A value as TOML: strings as JSON writes them (valid TOML basic strings), tables inline. */
function toml(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(toml).join(", ")}]`;
  if (value !== null && typeof value === "object")
    return `{ ${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)} = ${toml(v)}`)
      .join(", ")} }`;
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  throw new Error(`no TOML for ${String(value)}`);
}

function procStatus(pid: number, field: "VmRSS" | "VmHWM"): number {
  const m = new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : 0;
}

export interface ServerProcessOptions {
  /** Arguments to bun before the script (e.g. a profiler's). */
  bunArgs?: string[];
  /** A compiled executable (`bun build.ts --outfile ...`) to run instead of src/main.ts. */
  executable?: string;
  /** The directory of a process that ended: the new one runs on its data (a restart). */
  dir?: string;
  /**
   * With `server.tls` in the config: the PEM of the CA the test trusts for it. The server is
   * then reached at https://localhost:<port>, and request() trusts that CA alone.
   */
  ca?: string;
}

/**
 * Starts Loupe on a free port and a fresh data directory, against the test broker; `config` is
 * merged over those settings.
 */
export async function startServerProcess(config: Record<string, unknown> = {}, opts: ServerProcessOptions = {}): Promise<ServerProcess> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), "loupe-server-"));
  const port = await freePort();
  const hashes = await roleHashes();
  const settings: Record<string, unknown> = {
    dataDir: join(dir, "data"),
    log: { level: "warn" },
    users: (Object.keys(ROLE_USERS) as Role[]).map((role) => ({ name: ROLE_USERS[role].name, passwordHash: hashes[role], roles: [role] })),
    ...config,
    server: { host: "127.0.0.1", port, ...(config.server as Record<string, unknown> | undefined) },
  };
  settings.kafka ??= { clusters: [{ name: "local", bootstrapServers: bootstrap(), default: true }] };
  const file = join(dir, "loupe.toml");
  writeFileSync(
    file,
    `${Object.entries(settings)
      .map(([k, v]) => `${JSON.stringify(k)} = ${toml(v)}`)
      .join("\n")}\n`,
  );
  // Only the file configures it: no LOUPE_* variable of the test's environment.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("LOUPE_")));
  const program = opts.executable ? [opts.executable] : [process.execPath, ...(opts.bunArgs ?? []), join(ROOT, "src/main.ts")];
  const child = Bun.spawn([...program, "serve", "--config", file], {
    stdin: "ignore",
    stdout: "ignore",
    stderr: "inherit",
    env,
  });
  const url = opts.ca ? `https://localhost:${port}` : `http://127.0.0.1:${port}`;
  const tls = opts.ca ? { tls: { ca: opts.ca } } : {};
  const stop = async () => {
    child.kill("SIGTERM");
    await child.exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    const up = await fetch(`${url}/api/health`, tls).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`Loupe did not start on port ${port} (exit code ${child.exitCode})`);
    }
    await Bun.sleep(50);
  }
  const tokens = new Map<Role, string>();
  const token = async (role: Role) => {
    const cached = tokens.get(role);
    if (cached) return cached;
    const res = await fetch(`${url}/api/login`, {
      ...tls,
      method: "POST",
      headers: { accept: "application/json", "content-type": "application/json" },
      body: JSON.stringify({ user: ROLE_USERS[role].name, password: ROLE_USERS[role].password }),
    });
    if (res.status !== 200) throw new Error(`login as ${role} failed: ${res.status} ${await res.text()}`);
    const t = ((await res.json()) as { token: string }).token;
    tokens.set(role, t);
    return t;
  };
  return {
    url,
    pid: child.pid,
    dir,
    token,
    async request(path, init = {}) {
      const headers = new Headers(init.headers);
      if (init.role) headers.set("x-service-token", await token(init.role));
      return fetch(`${url}${path}`, { redirect: "manual", ...tls, ...init, headers });
    },
    rss: () => procStatus(child.pid, "VmRSS"),
    peakRss: () => procStatus(child.pid, "VmHWM"),
    poll: async (role, everyMs) => startPoller(url, await token(role), child.pid, everyMs),
    stop,
    async terminate() {
      const t0 = performance.now();
      child.kill("SIGTERM");
      const code = await child.exited;
      return { code, ms: performance.now() - t0 };
    },
    async kill() {
      child.kill("SIGKILL");
      await child.exited;
    },
  };
}

/** The poller's own program: one line per answer, "due answered status rss". */
const POLLER = `
const [url, token, pid, every] = process.argv.slice(1);
const now = () => performance.timeOrigin + performance.now();
const rss = () => { const m = /VmRSS:\\s+(\\d+)/.exec(require("node:fs").readFileSync("/proc/" + pid + "/status", "utf8")); return m ? Number(m[1]) * 1024 : 0; };
process.stdout.write("ready\\n");
let due = now();
for (;;) {
  const res = await fetch(url + "/api/auth", { headers: { "x-service-token": token } });
  await res.arrayBuffer();
  const answered = now();
  process.stdout.write(due.toFixed(1) + " " + answered.toFixed(1) + " " + res.status + " " + rss() + "\\n");
  due = answered + Number(every);
  await Bun.sleep(Math.max(0, due - now()));
}
`;

async function startPoller(url: string, token: string, pid: number, everyMs: number): Promise<Poller> {
  const polls: Poll[] = [];
  /** The poller ended (stopped, or failed: its error went to stderr). */
  let exited = false;
  let waiting: Array<{ from: number; resolve: () => void }> = [];
  const poller = await startReporter(POLLER, [url, token, String(pid), String(everyMs)], (line) => {
    const [due, answered, status, rss] = line.split(" ").map(Number) as [number, number, number, number];
    polls.push({ due, answered, status, rss });
    const met = waiting.filter((w) => due >= w.from);
    waiting = waiting.filter((w) => due < w.from);
    for (const w of met) w.resolve();
  });
  void poller.done.then(() => {
    exited = true;
    for (const w of waiting.splice(0)) w.resolve();
  });
  return {
    between: (from, to) => polls.filter((p) => p.due >= from && p.answered <= to),
    async answeredSince(from) {
      if (!polls.some((p) => p.due >= from) && !exited)
        await new Promise<void>((resolve) => {
          waiting.push({ from, resolve });
        });
      if (exited) throw new Error("the poller ended (see its error above)");
    },
    stop: () => poller.stop(),
  };
}
