// @postgres
/**
 * Open event streams end, each with its final line, when their token stops allowing them: a
 * logout, the user's removal or downgrade, the token's expiry, and a logout the full store
 * could not record.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { UserConfig } from "../../src/config/schema.ts";
import { isStoreFull } from "../../src/db/dialect.ts";
import { hashToken } from "../../src/domains/auth/service.ts";
import { StreamRegistry } from "../../src/http/sse.ts";
import { uniqueTopic } from "../cluster/cluster.ts";
import { fillStore } from "../helpers/full-store.ts";
import { ROLE_USERS, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { StreamReader } from "./stream-reader.ts";

async function loginAs(rt: TestRuntime, name: string, password: string): Promise<string> {
  const res = await rt.app.request("/api/login", { method: "POST", body: JSON.stringify({ user: name, password }) });
  if (res.status !== 200) throw new Error(`login failed: ${res.status}`);
  return res.text();
}

async function auditStream(rt: TestRuntime, token: string): Promise<StreamReader> {
  const res = await rt.request("/api/sse/audit", { token });
  expect(res.status).toBe(200);
  const s = new StreamReader(res);
  // The first heartbeat: the stream is open.
  expect(await s.until((t) => t.startsWith(":"))).toBe(true);
  return s;
}

/** Polls until no stream is open, within the deadline. */
async function allClosed(rt: TestRuntime, ms = 5_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (rt.streams.total > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return rt.streams.total === 0;
}

let clock = Date.now();
let rt: TestRuntime;
const topics: string[] = [];
beforeAll(async () => {
  rt = await testRuntime({ auth: { tokenLifetime: "1h" } }, { auth: { now: () => clock } });
});
afterAll(async () => {
  await rt.dispose({ topics });
});

describe("revoking a token closes its streams", () => {
  const admin = ROLE_USERS.admin;

  test("regression: a logged-out token's audit stream stayed open", async () => {
    const token = await loginAs(rt, admin.name, admin.password);
    const other = await loginAs(rt, admin.name, admin.password);
    const s = await auditStream(rt, token);
    const kept = await auditStream(rt, other);
    const started = Date.now();
    expect((await rt.request("/api/logout", { method: "POST", token })).status).toBe(200);
    expect(await s.end()).toBe(true);
    expect(Date.now() - started).toBeLessThan(3_000);
    // The audit stream's own last line (COMPAT.md: `data:` ends it).
    expect(s.lines().at(-1)).toBe("data:");
    // Another token of the same user keeps its stream.
    expect(await kept.until(() => false, 300)).toBe(false);
    expect(kept.done).toBe(false);
    kept.cancel();
    expect(await allClosed(rt)).toBe(true);
  });

  test("regression: a removed user's stream stayed open; a downgraded user's too", async () => {
    const users = (): UserConfig[] => rt.config.users.map((u) => ({ ...u, roles: [...u.roles] }));
    try {
      const removedToken = await loginAs(rt, admin.name, admin.password);
      const removed = await auditStream(rt, removedToken);
      await rt.auth.setUsers(users().filter((u) => u.name !== admin.name));
      expect(await removed.end()).toBe(true);
      expect(removed.lines().at(-1)).toBe("data:");

      await rt.auth.setUsers(rt.config.users);
      const downgradedToken = await loginAs(rt, admin.name, admin.password);
      const downgraded = await auditStream(rt, downgradedToken);
      // /api/sse/audit needs admin; read no longer allows it.
      await rt.auth.setUsers(users().map((u) => (u.name === admin.name ? { ...u, roles: ["read"] } : u)));
      expect(await downgraded.end()).toBe(true);
      expect(downgraded.lines().at(-1)).toBe("data:");
      // The token itself still works, with its new role.
      expect((await rt.request("/api/auth", { token: downgradedToken })).status).toBe(200);
    } finally {
      await rt.auth.setUsers(rt.config.users);
    }
    expect(await allClosed(rt)).toBe(true);
  });

  test("regression: a stream outlived its token's lifetime (closed by the periodic check)", async () => {
    const token = await loginAs(rt, admin.name, admin.password);
    const s = await auditStream(rt, token);
    clock += 3_600_000;
    // Nothing tells the registry: the check every second finds it.
    expect(await s.end(5_000)).toBe(true);
    expect(s.lines().at(-1)).toBe("data:");
    expect(await allClosed(rt)).toBe(true);
  });

  test("regression: a logged-out token's query stream kept reading (data:3 token revoked)", async () => {
    const topic = uniqueTopic("revoke-sql");
    topics.push(topic);
    const kafka = rt.kafka.default();
    await kafka.topics.create({ name: topic, partitions: 1, replication: 1 });
    // More than the socket buffers hold: a reader that reads nothing holds the query open.
    const pad = "z".repeat(4000);
    for (let i = 0; i < 3000; i += 100)
      await kafka.writes.produce(
        topic,
        Array.from({ length: 100 }, (_, j) => ({ key: `k${i + j}`, value: JSON.stringify({ i: i + j, pad }) })),
      );
    const token = await loginAs(rt, ROLE_USERS.read.name, ROLE_USERS.read.password);
    const res = await rt.request(`/api/sql/data?${new URLSearchParams({ sql: `SELECT * FROM \`${topic}\`` })}`, {
      token,
      headers: { accept: "text/event-stream" },
    });
    expect(res.status).toBe(200);
    const s = new StreamReader(res);
    expect(await s.until((t) => t.includes("data:1"))).toBe(true);
    expect(rt.sql.queries.list(ROLE_USERS.read.name, false)).toHaveLength(1);
    expect((await rt.request("/api/logout", { method: "POST", token })).status).toBe(200);
    expect(await s.end(10_000)).toBe(true);
    const last = s.lines().at(-1)!;
    expect(last.startsWith("data:3")).toBe(true);
    expect(JSON.parse(last.slice(6)).error).toBe("token revoked");
    // The query stopped: fewer records than the topic holds, and it is no longer running.
    expect(s.lines().filter((l) => l.startsWith("data:1")).length).toBeLessThan(3000);
    expect(await allClosed(rt)).toBe(true);
    const deadline = Date.now() + 5_000;
    while (rt.sql.queries.list(ROLE_USERS.read.name, false).length > 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(rt.sql.queries.list(ROLE_USERS.read.name, false)).toHaveLength(0);
  });
});

describe("logout on a full disk", () => {
  test("regression: a logout the full store could not record left the token working", async () => {
    const full = await testRuntime();
    let unfill: (() => Promise<void>) | undefined;
    try {
      const token = await loginAs(full, ROLE_USERS.admin.name, ROLE_USERS.admin.password);
      const s = await auditStream(full, token);
      unfill = await fillStore(full.store, { tokenUpdates: true });
      // The store really refuses the row change a revocation makes.
      const refused = await full.store.db
        .updateTable("tokens")
        .set({ revoked_at: Date.now() })
        .where("hash", "=", hashToken(token))
        .execute()
        .catch((e: unknown) => e);
      expect(isStoreFull(refused)).toBe(true);
      const out = await full.request("/api/logout", { method: "POST", token });
      expect(out.status).toBe(200);
      expect(await out.json()).toEqual({ success: true });
      expect((await full.request("/api/auth", { token })).status).toBe(401);
      expect(await s.end()).toBe(true);
      expect(s.lines().at(-1)).toBe("data:");
      expect(full.sink.text()).toContain("could not record a logout");
      // Once the store takes writes again, the revocation is recorded there too.
      await unfill();
      unfill = undefined;
      await full.auth.pruneTokens();
      expect((await full.request("/api/auth", { token })).status).toBe(401);
    } finally {
      await unfill?.();
      await full.dispose();
    }
  });
});

describe("streams that are no event streams (websockets)", () => {
  test("regression: the JDBC select socket outlived a change of its identity's access", async () => {
    // The registry against a stand-in of the auth service: what is checked here is the
    // registry's own rule (a changed scope key closes the lease through its close hook).
    let key = "scope-1";
    const session = { tokenHash: "hash-1", scope: { key } };
    const values: Record<string, unknown> = { session, rule: { level: "read" }, cluster: "default" };
    const c = { get: (k: string) => values[k], req: { raw: { signal: new AbortController().signal } } };
    const registry = new StreamRegistry(8, {
      auth: {
        checkToken: async () => ({ scope: { key, clusterRoles: () => ["read" as const], unrestricted: new Set() } }),
        onRevoke: () => {},
      },
      sweepMs: 3_600_000,
    });
    try {
      const closed: unknown[] = [];
      const release = registry.acquire("sam", c as never, (err) => closed.push(err));
      expect(await registry.sweep()).toBe(0);
      key = "scope-2";
      expect(await registry.sweep()).toBe(1);
      expect(closed).toHaveLength(1);
      expect((closed[0] as Error).message).toContain("access changed");
      release();
      expect(registry.total).toBe(0);
    } finally {
      registry.stop();
    }
  });
});
