// @postgres
/**
 * What a login leans on the store for, on SQLite and PostgreSQL: the first start's admin (only a
 * hash of its password stored) and a login on a full store (503, not 500). The login's own rules
 * (limits, answers, password changes) are in login.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { fillStore } from "../helpers/full-store.ts";
import { errorOf, ROLE_USERS, testRuntime } from "../helpers/runtime.ts";

describe("first start with no users", () => {
  test("creates admin with the given password and stores only a hash", async () => {
    const fresh = await testRuntime({}, { withUsers: false, adminPassword: "first-start-pw" });
    try {
      expect(fresh.generatedAdminPassword).toBeUndefined();
      const row = await fresh.store.db.selectFrom("users").select("password_hash").where("name", "=", "admin").executeTakeFirstOrThrow();
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

describe("a name the store cannot hold", () => {
  test("28: a NUL in the login name is an unknown user's, 401, on either store: PostgreSQL refused the lookup and the login answered 500", async () => {
    const rt = await testRuntime();
    try {
      for (const user of ["bob\u0000", "\u0000", `${ROLE_USERS.read.name}\u0000`]) {
        const res = await rt.app.request("/api/login", {
          method: "POST",
          body: JSON.stringify({ user, password: ROLE_USERS.read.password }),
        });
        expect(res.status).toBe(401);
        expect((await errorOf(res)).code).toBe("UNAUTHORIZED");
      }
      expect(rt.sink.text()).not.toContain("unhandled error");
    } finally {
      await rt.dispose();
    }
  });
});

describe("a full store", () => {
  test("regression: a login on a full store answered 500; it is 503 with Retry-After, and works again once there is room", async () => {
    const full = await testRuntime();
    try {
      const lift = await fillStore(full.store);
      const user = ROLE_USERS.read;
      const refused = await full.app.request("/api/login", {
        method: "POST",
        body: JSON.stringify({ user: user.name, password: user.password }),
      });
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe("30");
      expect((await errorOf(refused)).code).toBe("UNAVAILABLE");
      await lift();
      const ok = await full.app.request("/api/login", {
        method: "POST",
        body: JSON.stringify({ user: user.name, password: user.password }),
      });
      expect(ok.status).toBe(200);
    } finally {
      await full.dispose();
    }
  });
});
