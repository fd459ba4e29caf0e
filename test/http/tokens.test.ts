import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { errorOf, ROLE_USERS, type TestRuntime, testRuntime } from "../helpers/runtime.ts";

let rt: TestRuntime;
beforeAll(async () => {
  rt = await testRuntime({ auth: { tokenLifetime: "3s", idleTimeout: "1500ms" } });
});
afterAll(() => rt.dispose());

async function freshToken(): Promise<string> {
  const res = await rt.app.request("/api/login", {
    method: "POST",
    body: JSON.stringify({ user: "reed", password: ROLE_USERS.read.password }),
    headers: { accept: "text/plain" },
  });
  return res.text();
}
const authWith = (headers: Record<string, string>) => rt.app.request("/api/auth", { headers });

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
    const rows = rt.store.sqlite.query("SELECT * FROM tokens").all();
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  test("an unknown token is 401", async () => {
    const res = await authWith({ "x-service-token": "not-a-token" });
    expect(res.status).toBe(401);
    expect((await errorOf(res)).code).toBe("UNAUTHORIZED");
  });

  test("stops working after the idle timeout", async () => {
    const token = await freshToken();
    await Bun.sleep(800);
    expect((await authWith({ "x-service-token": token })).status).toBe(200); // use resets idle
    await Bun.sleep(800);
    expect((await authWith({ "x-service-token": token })).status).toBe(200);
    await Bun.sleep(1700);
    expect((await authWith({ "x-service-token": token })).status).toBe(401);
  });

  test("stops working after its absolute lifetime even when used", async () => {
    const token = await freshToken();
    for (let i = 0; i < 3; i++) {
      await Bun.sleep(900);
      expect((await authWith({ "x-service-token": token })).status).toBe(200);
    }
    await Bun.sleep(600);
    expect((await authWith({ "x-service-token": token })).status).toBe(401);
  });

  test("logout revokes: POST with the header, GET with ?token=", async () => {
    const a = await freshToken();
    const out = await rt.app.request("/api/logout", { method: "POST", headers: { "x-service-token": a } });
    expect(out.status).toBe(200);
    expect(await out.json()).toEqual({ success: true });
    expect((await authWith({ "x-service-token": a })).status).toBe(401);

    const b = await freshToken();
    const out2 = await rt.app.request(`/api/logout?token=${encodeURIComponent(b)}`);
    expect(await out2.json()).toEqual({ success: true });
    expect((await authWith({ "x-service-token": b })).status).toBe(401);
    // The query token never reaches the access log.
    expect(rt.sink.text()).not.toContain(b);
  });

  test("revocation holds across a restart of the service (store-backed)", async () => {
    const token = await freshToken();
    await rt.auth.logout(token);
    const row = rt.store.sqlite.query("SELECT revoked_at FROM tokens WHERE revoked_at IS NOT NULL").all();
    expect(row.length).toBeGreaterThan(0);
  });
});
