import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { z } from "zod";
import { ACCESS_RULES } from "../../src/http/access.ts";
import { jsonBody } from "../../src/http/validate.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";

let rt: TestRuntime;
beforeAll(async () => {
  rt = await testRuntime(
    { server: { bodyLimit: 1024 } },
    {
      app: {
        rules: [
          ...ACCESS_RULES,
          { method: "GET", path: "/api/test/boom", level: "nodata", summary: "throws" },
          { method: "POST", path: "/api/test/echo", level: "nodata", summary: "validates" },
        ],
        extraApi: (api) => {
          api.get("/test/boom", () => {
            throw new Error("secret internal detail at /srv/x.ts:12");
          });
          api.post("/test/echo", async (c) => c.json(await jsonBody(c, z.object({ n: z.number().int().min(1) }).strict())));
        },
      },
    },
  );
});
afterAll(() => rt.dispose());

describe("error bodies", () => {
  test("unknown /api path: 404", async () => {
    const res = await rt.request("/api/no/such/thing", { role: "admin" });
    expect(res.status).toBe(404);
    expect((await errorOf(res)).code).toBe("NOT_FOUND");
    const anon = await rt.app.request("/api/nothing-here");
    expect(anon.status).toBe(404);
  });

  test("wrong method: 405 with Allow", async () => {
    const res = await rt.request("/api/audit", { method: "DELETE", role: "admin" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET");
    expect((await errorOf(res)).code).toBe("METHOD_NOT_ALLOWED");
  });

  test("bad JSON: 400", async () => {
    const res = await rt.request("/api/test/echo", { method: "POST", role: "read", body: "{nope" });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).code).toBe("INVALID_JSON");
  });

  test("validation: 400 with field errors", async () => {
    const res = await rt.request("/api/test/echo", { method: "POST", role: "read", body: JSON.stringify({ n: 0, x: 1 }) });
    expect(res.status).toBe(400);
    const err = await errorOf(res);
    expect(err.code).toBe("VALIDATION_FAILED");
    const fields = (err.details as { errors: { field: string }[] }).errors.map((e) => e.field).sort();
    expect(fields).toEqual(["(body)", "n"]);
  });

  test("bad query parameter: 400", async () => {
    const res = await rt.request("/api/audit?limit=abc", { role: "admin" });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toContain("limit");
  });

  test("no token: 401; wrong role: 403", async () => {
    const a = await rt.app.request("/api/audit");
    expect(a.status).toBe(401);
    expect((await errorOf(a)).code).toBe("UNAUTHORIZED");
    const f = await rt.request("/api/audit", { role: "write" });
    expect(f.status).toBe(403);
    expect((await errorOf(f)).code).toBe("FORBIDDEN");
  });

  test("body over the limit: 413", async () => {
    const res = await rt.request("/api/test/echo", { method: "POST", role: "read", body: JSON.stringify({ pad: "x".repeat(4096) }) });
    expect(res.status).toBe(413);
    expect((await errorOf(res)).code).toBe("PAYLOAD_TOO_LARGE");
  });

  test("unexpected failure: generic 500, details only in the log", async () => {
    const res = await rt.request("/api/test/boom", { role: "read" });
    expect(res.status).toBe(500);
    const err = await errorOf(res);
    expect(err).toEqual({ error_code: 500, message: "Internal server error", code: "INTERNAL", requestId: err.requestId });
    expect(rt.sink.text()).toContain("secret internal detail");
    expect(rt.sink.text()).toContain(err.requestId);
  });

  test("unknown cluster in x-service-cluster: 404", async () => {
    const res = await rt.request("/api/audit", { role: "admin", headers: { "x-service-cluster": "elsewhere" } });
    expect(res.status).toBe(404);
    expect((await errorOf(res)).message).toBe("Unknown cluster 'elsewhere'");
    const ok = await rt.request("/api/audit", { role: "admin", headers: { "x-service-cluster": "local" } });
    expect(ok.status).toBe(200);
  });

  test("a caller's request id is echoed; a missing one is made", async () => {
    const res = await rt.app.request("/api/health", { headers: { "x-request-id": "abc-123" } });
    expect(res.headers.get("x-request-id")).toBe("abc-123");
    const res2 = await rt.app.request("/api/health");
    expect(res2.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});
