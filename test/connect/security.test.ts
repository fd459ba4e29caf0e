/**
 * What the Connect proxy lets through to a worker: an alias pointed at a small local HTTP
 * recorder shows the exact path, query, headers and body a worker receives. Traversal attempts
 * are sent on a raw socket, so no client-side URL normalisation hides what the server gets.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { eventually, heartbeatConfig } from "./helpers.ts";

interface Seen {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  body: string;
}

const seen: Seen[] = [];
const held = Promise.withResolvers<void>();
let recorder: ReturnType<typeof Bun.serve>;
let rt: TestRuntime;

beforeAll(async () => {
  recorder = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const raw = req.url.slice(req.url.indexOf("/", "http://".length));
      const q = raw.indexOf("?");
      const body = await req.text();
      seen.push({
        method: req.method,
        path: q < 0 ? raw : raw.slice(0, q),
        query: q < 0 ? "" : raw.slice(q + 1),
        headers: Object.fromEntries(req.headers),
        body,
      });
      // A request naming `hold` waits until the test lets it go: its audit entry stays pending meanwhile.
      if (body.includes('"hold-')) await held.promise;
      // A connector's config is an object (a change by a scoped caller reads it first).
      const answer = raw.split("?")[0]!.endsWith("/config") ? { "connector.class": "recorded" } : ["recorded"];
      return new Response(JSON.stringify(answer), {
        headers: { "content-type": "application/json", "set-cookie": "worker=1", "x-worker-secret": "leak", location: "http://elsewhere/" },
      });
    },
  });
  rt = await testRuntime({
    connect: {
      clusters: [
        { alias: "rec", urls: [`http://127.0.0.1:${recorder.port}`] },
        { alias: "rec-auth", urls: [`http://127.0.0.1:${recorder.port}`], auth: { username: "connect-user", password: "connect-pass" } },
      ],
      guardRails: { secretKeys: ["*.sig"] },
    },
  });
});
afterAll(async () => {
  await rt.dispose();
  recorder.stop(true);
}, 60_000);

/** One request on a raw socket: the path exactly as written. Resolves to the status and body. */
function rawRequest(path: string, token: string, method = "GET"): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: "127.0.0.1", port: Number(rt.url.port) });
    let data = "";
    sock.on("connect", () =>
      sock.write(`${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nx-service-token: ${token}\r\nConnection: close\r\n\r\n`),
    );
    sock.on("data", (d) => {
      data += d.toString("latin1");
    });
    sock.on("error", reject);
    sock.on("end", () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0);
      resolve({ status, body: data.slice(data.indexOf("\r\n\r\n") + 4) });
    });
    sock.setTimeout(10_000, () => sock.destroy(new Error("no answer")));
  });
}

describe("what reaches a Connect worker", () => {
  test("only Loupe's accept and content-type headers: never the token, the client's Authorization, Cookie, Host or X-Forwarded-*", async () => {
    const token = await rt.token("write");
    seen.length = 0;
    const res = await rt.request("/api/proxy-connect/rec/connectors/a%20b/config", {
      method: "PUT",
      token,
      headers: {
        authorization: "Bearer client-bearer-value",
        cookie: "session=client-cookie",
        "x-forwarded-for": "10.0.0.1",
        "x-forwarded-host": "evil.example",
        "x-real-ip": "10.0.0.2",
        "x-custom": "client-custom",
        "content-type": "text/plain",
        accept: "text/html",
      },
      body: JSON.stringify(heartbeatConfig()),
    });
    expect(res.status).toBe(200);
    // Only the content type comes back of the worker's headers.
    expect(res.headers.get("set-cookie")).toBeNull();
    expect(res.headers.get("x-worker-secret")).toBeNull();
    expect(res.headers.get("location")).toBeNull();
    expect(res.headers.get("content-type")).toContain("application/json");
    const got = seen[0]!;
    expect(got.path).toBe("/connectors/a%20b/config");
    const text = JSON.stringify(got.headers);
    for (const leak of [token, "client-bearer-value", "client-cookie", "10.0.0.1", "evil.example", "client-custom"])
      expect(text).not.toContain(leak);
    expect(got.headers.authorization).toBeUndefined();
    expect(got.headers.cookie).toBeUndefined();
    expect(got.headers.host).toBe(`127.0.0.1:${recorder.port}`);
    expect(got.headers.accept).toBe("application/json");
    expect(got.headers["content-type"]).toBe("application/json");
    expect(Object.keys(got.headers).filter((h) => h.startsWith("x-"))).toEqual([]);
  });

  test("the configured basic auth is the only Authorization a worker sees", async () => {
    seen.length = 0;
    const res = await rt.request("/api/proxy-connect/rec-auth/connectors", {
      role: "nodata",
      headers: { authorization: "Basic Y2xpZW50OnNlY3JldA==" },
    });
    expect(res.status).toBe(200);
    expect(seen[0]!.headers.authorization).toBe(`Basic ${btoa("connect-user:connect-pass")}`);
  });

  test("only the query parameters a route takes go on; Connect's internal `forward` never does", async () => {
    seen.length = 0;
    await rt.request("/api/proxy-connect/rec/connectors?expand=status&expand=info&forward=false&token=x", { role: "nodata" });
    await rt.request("/api/proxy-connect/rec/connectors/c/restart?includeTasks=true&onlyFailed=true&forward=false&x=1", {
      method: "POST",
      // An admin without limits: a scoped caller's change reads the config first (its own test).
      role: "admin",
    });
    await rt.request("/api/proxy-connect/rec/connectors/c/status?expand=info&forward=false", { role: "nodata" });
    await rt.request("/api/proxy-connect/rec/connector-plugins?connectorsOnly=false&forward=true", { role: "nodata" });
    expect(seen.map((s) => `${s.method} ${s.path}?${s.query}`)).toEqual([
      "GET /connectors?expand=status&expand=info",
      "POST /connectors/c/restart?includeTasks=true&onlyFailed=true",
      "GET /connectors/c/status?",
      "GET /connector-plugins?connectorsOnly=false",
    ]);
  });

  test("a body goes on as the JSON the guard rails read: one value per key, re-serialised", async () => {
    seen.length = 0;
    // Two values for one key: JSON.parse keeps the last; the worker gets only that one.
    const body = `{"name":"dup","config":{"connector.class":"FileStreamSource","connector.class":"org.apache.kafka.connect.mirror.MirrorHeartbeatConnector","tasks.max":2}}`;
    const res = await rt.request("/api/proxy-connect/rec/connectors", { method: "POST", role: "write", body });
    expect(res.status).toBe(200);
    expect(JSON.parse(seen[0]!.body)).toEqual({
      name: "dup",
      config: { "connector.class": "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector", "tasks.max": 2 },
    });
    expect(seen[0]!.body).not.toContain("FileStreamSource");
  });

  test("regression: a connector's secrets reached the audit table in the pending intent stored before the change", async () => {
    const name = `hold-${Date.now()}`;
    const secrets = { "ssl.key": "pem-pending", "webhook.sig": "sig-pending", "database.password": "pw-pending" };
    const answer = rt.request("/api/proxy-connect/rec/connectors", {
      method: "POST",
      role: "write",
      body: JSON.stringify({ name, config: { ...heartbeatConfig(), ...secrets } }),
    });
    const rows = () => rt.store.db.selectFrom("audit").select(["outcome", "content"]).where("type", "=", "CONNECTOR").execute();
    const pending = await eventually("the pending intent", async () =>
      (await rows()).find((r) => r.outcome === "PENDING" && r.content.includes(name)),
    );
    expect(JSON.parse(pending.content)).toEqual({
      clusterAlias: "rec",
      name,
      "connector.class": "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
      outcome: "PENDING",
    });
    held.resolve();
    expect((await answer).status).toBe(200);
    const done = (await rows()).find((r) => r.content.includes(name))!;
    expect(done.outcome).toBe("SUCCESS");
    expect(JSON.parse(JSON.parse(done.content).config)).toMatchObject({ "ssl.key": "********", "webhook.sig": "********" });
    const stored = (await rows()).map((r) => r.content).join();
    for (const v of Object.values(secrets)) expect(stored).not.toContain(v);
  });

  test("traversal in any encoding is 400, or resolved by Bun before routing into another Loupe route; no worker ever sees a path step", async () => {
    const token = await rt.token("admin");
    // [path as sent, method, status, what the worker saw (null: nothing)]
    const cases: [string, string, number, string | null][] = [
      // Encoded slashes keep the name one segment: refused by the name check.
      ["/api/proxy-connect/rec/connectors/..%2Fconnector-plugins", "GET", 400, null],
      ["/api/proxy-connect/rec/connectors/a%2F..%2F..%2Fconnector-plugins/status", "GET", 400, null],
      ["/api/proxy-connect/rec/connectors/%2F..%2F/config", "GET", 400, null],
      ["/api/proxy-connect/rec/connectors/a%5C..%5Cb/status", "GET", 400, null],
      ["/api/proxy-connect/rec/connectors/a%00b/status", "GET", 400, null],
      ["/api/proxy-connect/rec/connectors/a/tasks/-1/status", "GET", 400, null],
      ["/api/proxy-connect/rec/connectors/a/tasks/1e3/status", "GET", 400, null],
      // Bun's URL parser resolves `%2e%2e` and `.%2e` like `..` (WHATWG) before Loupe sees the
      // request: what remains is routed as any path is, under that route's own rule.
      ["/api/proxy-connect/rec/connectors/%2e%2e/status", "GET", 404, null],
      ["/api/proxy-connect/rec/connectors/%2E%2E", "DELETE", 404, null],
      ["/api/proxy-connect/rec/connectors/.%2e/config", "PUT", 404, null],
      ["/api/proxy-connect/rec/connector-plugins/%2e%2e/config/validate", "PUT", 404, null],
      ["/api/proxy-connect/rec/connectors/a/tasks/%2e%2e/status", "GET", 200, "/connectors/a/status"],
      ["/api/proxy-connect/rec/connectors/../connector-plugins", "GET", 200, "/connector-plugins"],
      // An alias is looked up, never put into a URL.
      ["/api/proxy-connect/%2e%2e/connectors", "GET", 404, null],
      ["/api/proxy-connect/..%2Frec/connectors", "GET", 404, null],
    ];
    for (const [path, method, status, upstream] of cases) {
      seen.length = 0;
      const res = await rawRequest(path, token, method);
      expect([path, res.status, seen.map((s) => s.path)[0] ?? null]).toEqual([path, status, upstream]);
      if (status >= 400)
        expect(JSON.parse(res.body.slice(res.body.indexOf("{"), res.body.lastIndexOf("}") + 1))).toMatchObject({ error_code: status });
    }
  });
});
