import { expect } from "bun:test";
import type { GroupConfig } from "../../src/config/schema.ts";
import type { TestRuntime } from "./runtime.ts";

export const SCOPED_PASSWORD = "scoped-user-password";

/** The body of a group; `topics.deny` defaults to none. */
export type GroupSpec = Omit<GroupConfig, "topics"> & { topics: { allow: string[]; deny?: string[] } };

/**
 * A store user in new groups (made through the admin API), logged in: the token of an identity
 * limited to the groups' clusters and topics. Group and user names must be unique per runtime.
 */
export async function scopedUser(rt: TestRuntime, name: string, groups: GroupSpec[]): Promise<string> {
  for (const g of groups) {
    const body = JSON.stringify({ ...g, topics: { allow: g.topics.allow, deny: g.topics.deny ?? [] } });
    const res = await rt.request("/api/groups", { method: "POST", role: "admin", body });
    if (res.status !== 201 && res.status !== 409) expect(`${res.status} ${await res.text()}`).toBe("201");
  }
  const body = JSON.stringify({ name, password: SCOPED_PASSWORD, groups: groups.map((g) => g.name) });
  const made = await rt.request("/api/users", { method: "POST", role: "admin", body });
  if (made.status !== 201) expect(`${made.status} ${await made.text()}`).toBe("201");
  const login = await rt.app.request("/api/login", { method: "POST", body: JSON.stringify({ user: name, password: SCOPED_PASSWORD }) });
  expect(login.status).toBe(200);
  return login.text();
}

/** A group reading (or more) only the topics matching `allow`, except `deny`, on every cluster. */
export function topicGroup(name: string, allow: string[], deny: string[] = [], roles: GroupConfig["roles"] = ["read"]): GroupSpec {
  return { name, roles, clusters: ["*"], topics: { allow, deny } };
}
