/** The directory login's configuration the access tests share: the test directory (slapd) and its groups' mapping. */
import { expect } from "bun:test";
import { LDAP_PEOPLE_DN, ldapEnv } from "../cluster/cluster.ts";
import type { TestRuntime } from "../helpers/runtime.ts";

/** How often a directory token's groups are read again (the tests move their clock by it). */
export const REFRESH_MS = 60_000;

/** A directory login on the test directory, with `overrides` (a dead URL, shorter timeouts). */
export function ldapConfig(overrides: Record<string, unknown> = {}) {
  const env = ldapEnv();
  return {
    url: env.url,
    bindDn: env.bindDn,
    bindPassword: env.bindPassword,
    userBase: LDAP_PEOPLE_DN,
    groupMappings: { "payments-team": ["ldap-payments"], "analytics-readers": ["ldap-analytics"], "platform-admins": ["ldap-admins"] },
    connectTimeout: "2s",
    timeout: "2s",
    refreshInterval: REFRESH_MS,
    ...overrides,
  };
}

/** The Loupe groups the directory's groups map to. */
export const GROUPS = [
  { name: "ldap-payments", roles: ["read"], clusters: ["*"], topics: { allow: ["payments.*"], deny: [] } },
  { name: "ldap-analytics", roles: ["read"], clusters: ["*"], topics: { allow: ["analytics.*"], deny: [] } },
  { name: "ldap-admins", roles: ["admin"], clusters: ["*"], topics: { allow: ["*"], deny: [] } },
];

/** A login on `rt` as the clients send it. */
export async function loginOn(rt: TestRuntime, user: string, password: string): Promise<Response> {
  return rt.app.request("/api/login", { method: "POST", body: JSON.stringify({ user, password }) });
}

/** The token of a login on `rt` that must work. */
export async function tokenOn(rt: TestRuntime, user: string, password: string): Promise<string> {
  const res = await loginOn(rt, user, password);
  expect(res.status).toBe(200);
  return res.text();
}
