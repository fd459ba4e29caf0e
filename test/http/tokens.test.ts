// @postgres
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { UserConfig } from "../../src/config/schema.ts";
import { errorOf, ROLE_USERS, type TestRuntime, testRuntime } from "../helpers/runtime.ts";

let rt: TestRuntime;
/** The clock of the service: tests advance it instead of sleeping. */
let clock = 1_700_000_000_000;
beforeAll(async () => {
  rt = await testRuntime({ auth: { tokenLifetime: "3s", idleTimeout: "1500ms" } }, { auth: { now: () => clock } });
});
afterAll(() => rt.dispose());

async function freshToken(user = "reed", password = ROLE_USERS.read.password, on = rt): Promise<string> {
  const res = await on.app.request("/api/login", {
    method: "POST",
    body: JSON.stringify({ user, password }),
    headers: { accept: "text/plain" },
  });
  if (res.status !== 200) throw new Error(`login failed: ${res.status}`);
  return res.text();
}
const authWith = (headers: Record<string, string>) => rt.app.request("/api/auth", { headers });
const as = (token: string, path: string, on = rt) => on.app.request(path, { headers: { "x-service-token": token } });

describe("tokens", () => {
  test("accepted from x-service-token and Authorization: Bearer, never from the query", async () => {
    const token = await freshToken();
    expect((await authWith({ "x-service-token": token })).status).toBe(200);
    expect((await authWith({ "X-Service-Token": token })).status).toBe(200);
    expect((await authWith({ authorization: `Bearer ${token}` })).status).toBe(200);
    const q = await rt.app.request(`/api/auth?token=${token}`);
    expect(q.status).toBe(401);
    expect((await errorOf(q)).message).toBe("Authentication required");
  });

  test("only a hash of the token is stored", async () => {
    const token = await freshToken();
    const rows = await rt.store.db.selectFrom("tokens").selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  test("an unknown token is 401", async () => {
    const res = await authWith({ "x-service-token": "not-a-token" });
    expect(res.status).toBe(401);
    expect((await errorOf(res)).code).toBe("UNAUTHORIZED");
  });

  test("stops working after the idle timeout", async () => {
    const token = await freshToken();
    clock += 800;
    expect((await authWith({ "x-service-token": token })).status).toBe(200); // use resets idle
    clock += 800;
    expect((await authWith({ "x-service-token": token })).status).toBe(200);
    clock += 1_500;
    expect((await authWith({ "x-service-token": token })).status).toBe(401);
  });

  test("stops working after its absolute lifetime even when used", async () => {
    const token = await freshToken();
    for (let i = 0; i < 3; i++) {
      clock += 900;
      expect((await authWith({ "x-service-token": token })).status).toBe(200);
    }
    clock += 300;
    expect((await authWith({ "x-service-token": token })).status).toBe(401);
  });

  test("logout revokes: POST with the header, GET with the header and the same ?token=", async () => {
    const a = await freshToken();
    const out = await rt.app.request("/api/logout", { method: "POST", headers: { "x-service-token": a } });
    expect(out.status).toBe(200);
    expect(await out.json()).toEqual({ success: true });
    expect((await authWith({ "x-service-token": a })).status).toBe(401);

    // What the clients send: GET with the token in the query and in the header.
    const b = await freshToken();
    const out2 = await rt.app.request(`/api/logout?token=${encodeURIComponent(b)}`, { headers: { "x-service-token": b } });
    expect(await out2.json()).toEqual({ success: true });
    expect((await authWith({ "x-service-token": b })).status).toBe(401);
    // The query token never reaches the access log.
    expect(rt.sink.text()).not.toContain(b);
  });

  test("regression: ?token= alone logged out whoever's token was in a link", async () => {
    const victim = await freshToken();
    const other = await freshToken("nora", ROLE_USERS.nodata.password);
    const alone = await rt.app.request(`/api/logout?token=${encodeURIComponent(victim)}`);
    expect(alone.status).toBe(400);
    expect((await errorOf(alone)).code).toBe("BAD_REQUEST");
    // Beside a different token in the header: refused too, and neither token is revoked.
    const mixed = await rt.app.request(`/api/logout?token=${encodeURIComponent(victim)}`, { headers: { "x-service-token": other } });
    expect(mixed.status).toBe(400);
    expect((await authWith({ "x-service-token": victim })).status).toBe(200);
    expect((await authWith({ "x-service-token": other })).status).toBe(200);
    expect((await rt.app.request("/api/logout")).status).toBe(400);
  });

  test("revocation holds across a restart of the service (store-backed)", async () => {
    const token = await freshToken();
    await rt.auth.logout(token);
    const row = await rt.store.db.selectFrom("tokens").select("revoked_at").where("revoked_at", "is not", null).execute();
    expect(row.length).toBeGreaterThan(0);
  });
});

describe("roles come from the current user record", () => {
  const configUsers = (): UserConfig[] => rt.config.users.map((u) => ({ ...u, roles: [...u.roles] }));
  afterAll(() => rt.auth.setUsers(rt.config.users));

  test("regression: a downgraded user's token kept its old roles (config users, reloaded)", async () => {
    const token = await freshToken();
    // GET /api/sql/queries needs the read level.
    expect((await as(token, "/api/sql/queries")).status).toBe(200);
    await rt.auth.setUsers(configUsers().map((u) => (u.name === "reed" ? { ...u, roles: ["nodata"] } : u)));
    expect((await as(token, "/api/sql/queries")).status).toBe(403);
    expect(((await (await as(token, "/api/auth")).json()) as { roles: string[] }).roles).toEqual(["nodata"]);
    // An upgrade applies at the next request too.
    await rt.auth.setUsers(configUsers().map((u) => (u.name === "reed" ? { ...u, roles: ["admin"] } : u)));
    expect((await as(token, "/api/audit")).status).toBe(200);
    await rt.auth.setUsers(rt.config.users);
    expect((await as(token, "/api/audit")).status).toBe(403);
  });

  test("regression: a removed user's token kept working until it expired", async () => {
    const token = await freshToken();
    await rt.auth.setUsers(configUsers().filter((u) => u.name !== "reed"));
    expect((await as(token, "/api/auth")).status).toBe(401);
    // Adding the user back does not bring the old token back: it was revoked.
    await rt.auth.setUsers(rt.config.users);
    expect((await as(token, "/api/auth")).status).toBe(401);
    expect((await freshToken()).length).toBeGreaterThan(0);
  });

  test("regression: a store user's token kept its roles after the user record changed", async () => {
    const store = await testRuntime({}, { withUsers: false, adminPassword: "store-admin-pw", auth: { now: () => clock } });
    /** The admin's record written to the table directly, as another instance or an operator would. */
    const setAdmin = (values: { roles?: string; disabled?: number }) =>
      store.store.db.updateTable("users").set(values).where("name", "=", "admin").execute();
    try {
      const token = await freshToken("admin", "store-admin-pw", store);
      expect((await as(token, "/api/audit", store)).status).toBe(200);
      // Through the service: applies at the next request.
      await setAdmin({ roles: '["read"]' });
      store.auth.invalidateUsers();
      expect((await as(token, "/api/audit", store)).status).toBe(403);
      expect((await as(token, "/api/sql/queries", store)).status).toBe(200);
      // Written to the table by other means: applies within a second.
      await setAdmin({ roles: "[]" });
      clock += 1_000;
      // No role and no group: signed in, and nothing more.
      expect((await as(token, "/api/auth", store)).status).toBe(200);
      expect((await as(token, "/api/sql/queries", store)).status).toBe(403);
      await setAdmin({ disabled: 1 });
      clock += 1_000;
      expect((await as(token, "/api/auth", store)).status).toBe(401);
      await setAdmin({ roles: '["admin"]', disabled: 0 });
      store.auth.invalidateUsers();
      expect((await as(token, "/api/audit", store)).status).toBe(200);
      await store.store.db.deleteFrom("users").where("name", "=", "admin").execute();
      store.auth.invalidateUsers();
      expect((await as(token, "/api/auth", store)).status).toBe(401);
    } finally {
      await store.dispose();
    }
  });
});
