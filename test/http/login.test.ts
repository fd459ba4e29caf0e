import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { errorOf, ROLE_USERS, type TestRuntime, testRuntime } from "../helpers/runtime.ts";

let rt: TestRuntime;
beforeAll(async () => {
  rt = await testRuntime({ auth: { maxFailedLogins: 3, failedLoginWindow: "2s" } });
});
afterAll(() => rt.dispose());

const login = (body: unknown, headers: Record<string, string> = {}) =>
  rt.app.request("/api/login", { method: "POST", body: typeof body === "string" ? body : JSON.stringify(body), headers });

describe("POST /api/login", () => {
  test("answers the session object by default", async () => {
    const res = await login({ user: "alice", password: ROLE_USERS.admin.password }, { "content-type": "application/json" });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, any>;
    expect(body.success).toBe(true);
    expect(body.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(body.user).toEqual({ id: "alice", name: "alice", email: null, roles: ["admin"] });
    expect(body.schemaRegistryDelete).toBe(true);
  });

  test("answers the bare token for Accept: text/plain", async () => {
    const res = await login({ user: "reed", password: ROLE_USERS.read.password }, { accept: "text/plain" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const token = await res.text();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const auth = await rt.app.request("/api/auth", { headers: { "x-service-token": token } });
    expect(auth.status).toBe(200);
    const session = (await auth.json()) as Record<string, any>;
    expect(session.roles).toEqual(["read"]);
    expect(session.schemaRegistryDelete).toBe(false);
  });

  test("Accept with both text/plain and application/json gets the object", async () => {
    const res = await login({ user: "reed", password: ROLE_USERS.read.password }, { accept: "text/plain, application/json" });
    expect(((await res.json()) as any).success).toBe(true);
  });

  test("parses the body as JSON whatever the content type", async () => {
    const res = await login({ user: "wanda", password: ROLE_USERS.write.password }, { "content-type": "text/plain" });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).user.roles).toEqual(["write"]);
  });

  test("bad JSON is 400 INVALID_JSON", async () => {
    const res = await login("{user:", { "content-type": "application/json" });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).code).toBe("INVALID_JSON");
  });

  test("a missing field is 400 with field errors", async () => {
    const res = await login({ user: "alice" });
    expect(res.status).toBe(400);
    const err = await errorOf(res);
    expect(err.code).toBe("VALIDATION_FAILED");
    expect(err.details).toEqual({ errors: [{ field: "password", message: expect.any(String) }] });
  });

  test("wrong password and unknown user answer the same 401 UNAUTHORIZED", async () => {
    const a = await login({ user: "nora", password: "wrong" });
    const b = await login({ user: "nobody-here", password: "wrong" });
    expect(a.status).toBe(401);
    expect(b.status).toBe(401);
    const ea = await errorOf(a);
    const eb = await errorOf(b);
    expect(ea.message).toBe("UNAUTHORIZED");
    expect({ ...ea, requestId: "" }).toEqual({ ...eb, requestId: "" });
  });

  test("repeated failures on one account get 429 with Retry-After, then recover", async () => {
    const user = "wanda";
    for (let i = 0; i < 3; i++) expect((await login({ user, password: `bad-${i}` })).status).toBe(401);
    const locked = await login({ user, password: ROLE_USERS.write.password });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await errorOf(locked)).code).toBe("TOO_MANY_REQUESTS");
    // Another account is not locked by this one's failures.
    expect((await login({ user: "alice", password: ROLE_USERS.admin.password })).status).toBe(200);
    await Bun.sleep(2100);
    expect((await login({ user, password: ROLE_USERS.write.password })).status).toBe(200);
  });

  test("no secret reaches a log line", async () => {
    await login({ user: "alice", password: "a-very-secret-guess" });
    expect(rt.sink.text()).not.toContain("a-very-secret-guess");
    expect(rt.sink.text()).not.toContain(ROLE_USERS.admin.password);
  });
});

describe("first start with no users", () => {
  test("creates admin with the given password and stores only a hash", async () => {
    const fresh = await testRuntime({}, { withUsers: false, adminPassword: "first-start-pw" });
    try {
      expect(fresh.generatedAdminPassword).toBeUndefined();
      const row = fresh.store.sqlite.query("SELECT password_hash FROM users WHERE name = 'admin'").get() as { password_hash: string };
      expect(row.password_hash).toStartWith("$argon2id$");
      expect(row.password_hash).not.toContain("first-start-pw");
      const res = await fresh.app.request("/api/login", {
        method: "POST",
        body: JSON.stringify({ user: "admin", password: "first-start-pw" }),
      });
      expect(res.status).toBe(200);
    } finally {
      await fresh.dispose();
    }
  });

  test("creates admin with a random password that is handed back once", async () => {
    const fresh = await testRuntime({}, { withUsers: false });
    try {
      const pw = fresh.generatedAdminPassword!;
      expect(pw.length).toBeGreaterThanOrEqual(20);
      const res = await fresh.app.request("/api/login", { method: "POST", body: JSON.stringify({ user: "admin", password: pw }) });
      expect(res.status).toBe(200);
      const again = await fresh.auth.ensureBootstrapAdmin();
      expect(again).toEqual({ created: false });
    } finally {
      await fresh.dispose();
    }
  });
});
