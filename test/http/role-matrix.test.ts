import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createApp } from "../../src/app.ts";
import { ROLES, type Role } from "../../src/config/schema.ts";
import { ACCESS_RULES, LEVEL_ROLES, ruleKey } from "../../src/http/access.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";

/**
 * Walks every route the app registers, for no token and for each role, and checks
 * the answer against the access table: 401 without a token, 403 for a role outside
 * the rule, anything else for a role inside it.
 */
let rt: TestRuntime;
beforeAll(async () => {
  rt = await testRuntime();
});
afterAll(() => rt.dispose());

const rules = new Map(ACCESS_RULES.map((r) => [ruleKey(r.method, r.path), r]));

/** Concrete values for path parameters: harmless names no test uses. */
function concrete(path: string): string {
  return path
    .replace(/:partition\b/g, "0")
    .replace(/:offset\b/g, "0")
    .replace(/:([A-Za-z_]+)/g, (_m, name: string) => `rbac-probe-${name.toLowerCase()}`)
    .replace(/\*$/, "rbac-probe-page");
}

async function call(method: string, path: string, token?: string): Promise<number> {
  const abort = new AbortController();
  const headers: Record<string, string> = { accept: "application/json" };
  if (token) headers["x-service-token"] = token;
  const res = await rt.app.request(concrete(path), {
    method,
    headers,
    signal: abort.signal,
    ...(method === "GET" || method === "DELETE" ? {} : { body: "{}" }),
  });
  const status = res.status;
  abort.abort(); // ends event streams
  await res.body?.cancel().catch(() => {});
  return status;
}

async function freshToken(role: Role): Promise<string> {
  const { ROLE_USERS } = await import("../helpers/runtime.ts");
  const res = await rt.app.request("/api/login", {
    method: "POST",
    headers: { accept: "text/plain" },
    body: JSON.stringify({ user: ROLE_USERS[role].name, password: ROLE_USERS[role].password }),
  });
  return res.text();
}

const routes = () => {
  const seen = new Set<string>();
  const list: { method: string; path: string }[] = [];
  for (const r of rt.app.routes) {
    if (r.method === "ALL") continue;
    const key = ruleKey(r.method, r.path);
    if (seen.has(key)) continue;
    seen.add(key);
    list.push({ method: r.method, path: r.path });
  }
  return list;
};

describe("role matrix", () => {
  test("every registered route has a rule and every rule a route", () => {
    const registered = new Set(routes().map((r) => ruleKey(r.method, r.path)));
    for (const key of registered) expect(rules.has(key)).toBe(true);
    for (const key of rules.keys()) expect(registered.has(key)).toBe(true);
    expect(registered.size).toBeGreaterThan(10);
  });

  test("each route answers each caller as the table says", async () => {
    const failures: string[] = [];
    const tokens = Object.fromEntries(await Promise.all(ROLES.map(async (r) => [r, await rt.token(r)] as const))) as Record<Role, string>;
    for (const { method, path } of routes()) {
      const rule = rules.get(ruleKey(method, path))!;
      const anon = await call(method, path);
      if (rule.level === "public") {
        if (anon === 401 || anon === 403) failures.push(`${method} ${path} public but ${anon} without token`);
      } else if (anon !== 401) failures.push(`${method} ${path} without token: ${anon}, want 401`);
      for (const role of ROLES) {
        // Logout revokes the token it is given: use a throwaway one.
        const token = path.endsWith("/logout") ? await freshToken(role) : tokens[role];
        const status = await call(method, path, token);
        const allowed = rule.level === "public" || LEVEL_ROLES[rule.level].includes(role);
        if (allowed && (status === 401 || status === 403)) failures.push(`${method} ${path} as ${role}: ${status}, want allowed`);
        if (!allowed && status !== 403) failures.push(`${method} ${path} as ${role}: ${status}, want 403`);
      }
    }
    expect(failures).toEqual([]);
  });

  test("a route missing from the table stops start-up", () => {
    expect(() =>
      createApp({
        ...rt,
        clusters: { names: () => ["local"], defaultName: () => "local", health: async () => ({ connected: true }) },
        extraApi: (api) => api.get("/not-in-the-table", (c) => c.text("x")),
      }),
    ).toThrow("Routes without an access rule: GET /api/not-in-the-table");
  });
});
