import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { z } from "zod";
import { defineRoute, json } from "../../src/http/route.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";

const boom = defineRoute({ method: "GET", path: "/api/test/boom", level: "nodata", summary: "throws", tags: ["test"], responses: {} });
const echoBody = z.object({ n: z.number().int().min(1) }).strict();
const echo = defineRoute({
  method: "POST",
  path: "/api/test/echo",
  level: "nodata",
  summary: "validates",
  tags: ["test"],
  request: { body: echoBody },
  responses: { 200: json(echoBody) },
});

let rt: TestRuntime;
beforeAll(async () => {
  rt = await testRuntime(
    { server: { bodyLimit: 1024 } },
    {
      app: {
        extraRoutes: (group) => {
          group.handle(boom, () => {
            throw new Error("secret internal detail at /srv/x.ts:12");
          });
          group.handle(echo, (c) => c.json(c.req.valid("json")));
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

  // Which methods a path has comes from Hono's router itself, parameters included.
  test.each([
    { method: "DELETE", path: "/api/audit", allow: "GET" },
    { method: "POST", path: "/api/consumers/some%20group", allow: "GET, DELETE" },
    { method: "PATCH", path: "/api/topics", allow: "GET, POST" },
    { method: "GET", path: "/api/sql/queries/7", allow: "DELETE" },
    { method: "PUT", path: "/api/topics/t/0/1", allow: "DELETE" },
  ])("wrong method: $method $path is 405 with Allow: $allow", async ({ method, path, allow }) => {
    const res = await rt.request(path, { method, role: "admin" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe(allow);
    expect((await errorOf(res)).code).toBe("METHOD_NOT_ALLOWED");
  });

  test("a page of the UI is not a method of an API path: 404", async () => {
    const res = await rt.request("/api/topics/t/0", { role: "admin" });
    expect(res.status).toBe(404);
    expect((await errorOf(res)).code).toBe("NOT_FOUND");
  });

  test("bad JSON: 400", async () => {
    const res = await rt.request("/api/test/echo", { method: "POST", role: "read", body: "{nope" });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).code).toBe("INVALID_JSON");
  });

  test("a declared JSON body is read as JSON whatever the content type says", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {
      const res = await rt.request("/api/test/echo", { method: "POST", role: "read", headers: { "content-type": type }, body: '{"n":2}' });
      expect(`${type}: ${res.status}`).toBe(`${type}: 200`);
      expect(await res.json()).toEqual({ n: 2 });
    }
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
