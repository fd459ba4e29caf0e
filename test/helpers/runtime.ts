import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AppDeps } from "../../src/app.ts";
import { buildRuntime, type Runtime } from "../../src/compose.ts";
import { parseConfig } from "../../src/config/load.ts";
import type { Role } from "../../src/config/schema.ts";
import type { AuthOptions } from "../../src/domains/auth/service.ts";
import { websocket } from "../../src/http/websocket.ts";
import type { LogSink } from "../../src/log/logger.ts";
import { testStoreSection } from "./store.ts";

export const ROLE_USERS: Record<Role, { name: string; password: string }> = {
  admin: { name: "alice", password: "alice-pw-1" },
  write: { name: "wanda", password: "wanda-pw-1" },
  read: { name: "reed", password: "reed-pw-1" },
  nodata: { name: "nora", password: "nora-pw-1" },
};

let hashes: Promise<Record<Role, string>> | undefined;
export function roleHashes(): Promise<Record<Role, string>> {
  return (hashes ??= (async () => {
    const out = {} as Record<Role, string>;
    for (const [role, u] of Object.entries(ROLE_USERS)) out[role as Role] = await Bun.password.hash(u.password, "argon2id");
    return out;
  })());
}

export function bootstrap(): string {
  const b = process.env.KAFKA_BOOTSTRAP;
  if (!b) throw new Error("KAFKA_BOOTSTRAP is not set: the test preload did not start a broker");
  return b;
}

/** Captures log lines a test can inspect (and keeps test output quiet). */
export class MemorySink implements LogSink {
  lines: string[] = [];
  write(line: string): void {
    this.lines.push(line);
  }
  text(): string {
    return this.lines.join("\n");
  }
}

export interface TestRuntime extends Runtime {
  dataDir: string;
  sink: MemorySink;
  /** Where the test server listens (websocket tests connect here). */
  url: URL;
  /** Logs in and returns the token of the user holding `role`. */
  token(role: Role): Promise<string>;
  request(path: string, init?: RequestInit & { role?: Role; token?: string }): Promise<Response>;
  /**
   * Stops the server and the runtime and removes its data. `made`: what the test file made on
   * the default cluster, deleted first (groups, then topics; a failure there is ignored).
   */
  dispose(made?: { topics?: Iterable<string>; groups?: string[] }): Promise<void>;
}

/**
 * A runtime on a fresh data directory (and store: see test/helpers/store.ts), against the test
 * broker, with one user per role.
 * `raw` settings are merged over those defaults.
 */
export async function testRuntime(
  raw: Record<string, unknown> = {},
  opts: { withUsers?: boolean; adminPassword?: string; app?: Partial<AppDeps>; auth?: AuthOptions } = {},
): Promise<TestRuntime> {
  const dataDir = mkdtempSync(join(tmpdir(), "loupe-test-"));
  const h = await roleHashes();
  const users =
    opts.withUsers === false
      ? []
      : (Object.keys(ROLE_USERS) as Role[]).map((role) => ({
          name: ROLE_USERS[role].name,
          passwordHash: h[role],
          roles: [role],
        }));
  // SQLite in dataDir, or a database of its own on PostgreSQL under LOUPE_TEST_STORE=postgres.
  const store = await testStoreSection(dataDir);
  const config = parseConfig({
    dataDir,
    users,
    kafka: { clusters: [{ name: "local", bootstrapServers: bootstrap(), default: true }] },
    // Topics and groups listed on every request: tests make them behind Loupe's back and list at once.
    inventory: { refreshInterval: 0 },
    ...store.section,
    ...raw,
  });
  const sink = new MemorySink();
  const rt = await buildRuntime(config, {
    sink,
    ...(opts.adminPassword ? { adminPassword: opts.adminPassword } : {}),
    ...(opts.app ? { app: opts.app } : {}),
    ...(opts.auth ? { auth: opts.auth } : {}),
  }).catch(async (e: unknown) => {
    await store.drop();
    throw e;
  });
  const tokens = new Map<Role, string>();
  // request() goes through a real HTTP server, wired as src/main.ts wires it: responses reach the
  // client as they reach real clients (streams through Bun's HTTP writer, not read in-process).
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 30,
    fetch: (req, srv) => rt.app.fetch(req, { server: srv }),
    websocket,
  });
  const t: TestRuntime = Object.assign(rt, {
    dataDir,
    sink,
    url: server.url,
    async token(role: Role) {
      const cached = tokens.get(role);
      if (cached) return cached;
      const res = await rt.app.request("/api/login", {
        method: "POST",
        headers: { accept: "application/json" },
        body: JSON.stringify({ user: ROLE_USERS[role].name, password: ROLE_USERS[role].password }),
      });
      if (res.status !== 200) throw new Error(`login as ${role} failed: ${res.status} ${await res.text()}`);
      const token = ((await res.json()) as { token: string }).token;
      tokens.set(role, token);
      return token;
    },
    async request(path: string, init: RequestInit & { role?: Role; token?: string } = {}) {
      const headers = new Headers(init.headers);
      const token = init.token ?? (init.role ? await t.token(init.role) : undefined);
      if (token) headers.set("x-service-token", token);
      if (init.body !== undefined && !headers.has("content-type")) headers.set("content-type", "application/json");
      return fetch(new URL(path, server.url), { redirect: "manual", ...init, headers });
    },
    async dispose(made: { topics?: Iterable<string>; groups?: string[] } = {}) {
      const kafka = rt.kafka.default();
      if (made.groups?.length) await kafka.groups.delete(made.groups).catch(() => {});
      for (const topic of made.topics ?? []) await kafka.topics.delete(topic).catch(() => {});
      server.stop(true);
      await rt.close();
      await store.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  });
  return t;
}

/** Asserts the COMPAT.md error body and returns it. */
export async function errorOf(
  res: Response,
): Promise<{ error_code: number; message: string; code: string; requestId: string; details?: unknown }> {
  const body = (await res.json()) as { error_code: number; message: string; code: string; requestId: string };
  if (body.error_code !== res.status) throw new Error(`error_code ${body.error_code} != status ${res.status}`);
  if (typeof body.message !== "string" || typeof body.code !== "string" || typeof body.requestId !== "string")
    throw new Error(`not an error body: ${JSON.stringify(body)}`);
  if (res.headers.get("x-request-id") !== body.requestId) throw new Error("requestId differs from x-request-id");
  return body;
}
