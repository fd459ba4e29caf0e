/**
 * Login and session as the three clients do them (CLIENTS.md section 0): each request is sent
 * with exactly the client's headers and body, each answer decoded with the client's strictness.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ROLE_USERS, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { array, asResponse, bool, errorAnswer, GO_HEADERS, jsonAnswer, object, send, serve, str, textAnswer } from "./strict.ts";

let rt: TestRuntime;
let server: Bun.Server<unknown>;
const admin = ROLE_USERS.admin;
const reader = ROLE_USERS.read;

beforeAll(async () => {
  rt = await testRuntime();
  server = serve(rt.app);
});
afterAll(async () => {
  server.stop(true);
  await rt.dispose();
});

/** The answer of `GET /api/auth` the Go client (GO c `User`) and the Python client read. */
const session = object({ token: str, user: str, roles: array(str), schemaRegistryDelete: bool });
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

const auth = (token: string, extra: Record<string, string> = {}) =>
  send(server.url, "GET", "/api/auth", { ...GO_HEADERS, "x-service-token": token, ...extra });

describe("the Go client", () => {
  test("regression: with no Accept the login answered the JSON object, which the Go client used whole as its token, and /api/auth's user was an object it cannot decode", async () => {
    const login = await send(
      server.url,
      "POST",
      "/api/login",
      { ...GO_HEADERS, "Content-Type": "application/json" },
      `{"user":"${admin.name}", "password": "${admin.password}"}`,
    );
    const body = await textAnswer(asResponse(login), 200);
    expect(body).toMatch(TOKEN);
    const s = await jsonAnswer(asResponse(await auth(body)), 200, session);
    expect(s).toEqual({ token: body, user: admin.name, roles: ["admin"], schemaRegistryDelete: false });
    // The client switches to the token of the answer and goes on with it.
    expect((await send(server.url, "GET", "/api/topics", { ...GO_HEADERS, "x-service-token": s.token })).status).toBe(200);
  });

  test("with Kerberos it adds `Authorization: Negotiate` to every request: a valid token header still wins", async () => {
    const token = await rt.token("read");
    const s = await jsonAnswer(
      asResponse(await auth(token, { Authorization: "Negotiate YIIGhgYJKoZIhvcSAQICAQBuggZ1MIIGcaADAgEFoQMCAQ6i" })),
      200,
      session,
    );
    expect(s.user).toBe(reader.name);
  });

  test("logs out with GET /api/logout?token= and the header; any 2xx, and the token stops working", async () => {
    const token = await (
      await rt.app.request("/api/login", {
        method: "POST",
        headers: { accept: "text/plain" },
        body: JSON.stringify({ user: reader.name, password: reader.password }),
      })
    ).text();
    const res = await send(server.url, "GET", `/api/logout?token=${token}`, { ...GO_HEADERS, "x-service-token": token });
    expect(res.status).toBeGreaterThanOrEqual(200);
    expect(res.status).toBeLessThan(300);
    expect((await auth(token)).status).toBe(401);
  });

  test("a failed login is 401 with the COMPAT body naming UNAUTHORIZED", async () => {
    const res = await send(
      server.url,
      "POST",
      "/api/login",
      { ...GO_HEADERS, "Content-Type": "application/json" },
      `{"user":"${admin.name}", "password": "wrong"}`,
    );
    expect((await errorAnswer(asResponse(res), 401)).message).toContain("UNAUTHORIZED");
  });
});

describe("the Python client", () => {
  test("logs in with a text/plain JSON body and Accept text/plain (exactly 200), then takes json['token'] from /api/auth", async () => {
    const login = await send(
      server.url,
      "POST",
      "/api/login",
      { "Content-Type": "text/plain", Accept: "text/plain" },
      JSON.stringify({ user: admin.name, password: admin.password }),
    );
    const token = await textAnswer(asResponse(login), 200);
    expect(token).toMatch(TOKEN);
    const s = await jsonAnswer(asResponse(await send(server.url, "GET", "/api/auth", { "x-service-token": token })), 200, session);
    expect(s.token).toBe(token);
    expect(s.user).toBe(admin.name);
  });
});

describe("the JDBC driver", () => {
  test("logs in with Content-Type application/json and Accept text/plain and takes the whole body", async () => {
    const login = await send(
      server.url,
      "POST",
      "/api/login",
      { "Content-Type": "application/json", Accept: "text/plain" },
      JSON.stringify({ user: reader.name, password: reader.password }),
    );
    const token = await textAnswer(asResponse(login), 200);
    expect(token).toMatch(TOKEN);
    expect((await auth(token)).status).toBe(200);
  });
});

describe("the login answer follows Accept", () => {
  test.each([
    ["no Accept", "text", undefined],
    ["*/*", "text", "*/*"],
    ["text/plain", "text", "text/plain"],
    ["application/*", "text", "application/*"],
    ["application/json", "json", "application/json"],
    ["text/plain, application/json", "json", "text/plain, application/json"],
  ] as const)("%s answers %s", async (_what, kind, accept) => {
    const headers: Record<string, string> = { "Content-Type": "application/json", ...(accept ? { Accept: accept } : {}) };
    const res = asResponse(
      await send(server.url, "POST", "/api/login", headers, JSON.stringify({ user: reader.name, password: reader.password })),
    );
    if (kind === "text") expect(await textAnswer(res, 200)).toMatch(TOKEN);
    else {
      const body = await jsonAnswer(
        res,
        200,
        object({ success: bool, token: str, user: object({ id: str, name: str, roles: array(str) }), schemaRegistryDelete: bool }),
      );
      expect(body.user.name).toBe(reader.name);
    }
  });
});

describe("token headers", () => {
  test.each([
    ["the bare token", 200, (t: string) => ({ "x-service-token": t })],
    [
      "regression: the token in double quotes (a kept JSON-quoted answer) was refused",
      200,
      (t: string) => ({ "x-service-token": `"${t}"` }),
    ],
    ["the header name in another case", 200, (t: string) => ({ "X-Service-Token": t })],
    ["Bearer with the token in double quotes", 200, (t: string) => ({ Authorization: `Bearer "${t}"` })],
    ["Negotiate beside the token", 200, (t: string) => ({ Authorization: "Negotiate abc=", "x-service-token": t })],
    ["Basic beside the quoted token", 200, (t: string) => ({ Authorization: "Basic YTpi", "x-service-token": `"${t}"` })],
    ["Negotiate alone", 401, (_t: string) => ({ Authorization: "Negotiate abc=" })],
    ["Negotiate beside a wrong token", 401, (_t: string) => ({ Authorization: "Negotiate abc=", "x-service-token": "nope" })],
    ["an empty pair of quotes", 401, (_t: string) => ({ "x-service-token": '""' })],
  ] as const)("%s answers %d", async (_what, status, headers) => {
    const token = await rt.token("nodata");
    const res = await send(server.url, "GET", "/api/auth", headers(token));
    expect(res.status).toBe(status);
    if (status === 200) expect((await jsonAnswer(asResponse(res), 200, session)).token).toBe(token);
  });
});
