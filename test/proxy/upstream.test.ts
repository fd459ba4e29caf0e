// @no-services
/**
 * The failover core both proxies share, against local HTTP servers that answer, fail, stall or
 * refuse on purpose (the proxies' own tests run against the real Connect workers and registry).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createServer, type Server as NetServer, type Socket } from "node:net";
import { AppError } from "../../src/errors.ts";
import { intSegment, nameSegment } from "../../src/proxy/paths.ts";
import { pickHeaders, Upstream, type UpstreamOptions } from "../../src/proxy/upstream.ts";
import { freePort } from "../cluster/cluster.ts";

const seen: { path: string; headers: Record<string, string> }[] = [];
const ok = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    const url = new URL(req.url);
    seen.push({ path: url.pathname + url.search, headers: Object.fromEntries(req.headers) });
    if (url.pathname === "/big") return new Response("x".repeat(4096));
    if (url.pathname === "/missing") return Response.json({ error_code: 40401, message: "Subject not found" }, { status: 404 });
    return Response.json({ from: "ok", path: url.pathname }, { headers: { "set-cookie": "a=b", "x-secret": "1" } });
  },
});
const failing = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("boom", { status: 500 }) });
/** Answers "not now" (Connect's 500 while it rebalances) to its first `notNowFor` requests, then 200; counts each method. */
let notNowFor = 0;
const asked: string[] = [];
const settling = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    asked.push(req.method);
    if (asked.length <= notNowFor)
      return Response.json({ error_code: 500, message: "Request cannot be completed because a rebalance is expected" }, { status: 500 });
    return Response.json({ settled: true });
  },
});
const settlingUrl = `http://127.0.0.1:${settling.port}`;
// Accepts connections and never answers: a frozen host.
const sockets: Socket[] = [];
const silent: NetServer = createServer((s) => sockets.push(s));
await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
const silentUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
const refusedUrl = `http://127.0.0.1:${await freePort()}`;
const okUrl = `http://127.0.0.1:${ok.port}`;
const failingUrl = `http://127.0.0.1:${failing.port}`;

afterAll(() => {
  ok.stop(true);
  failing.stop(true);
  settling.stop(true);
  for (const s of sockets) s.destroy();
  silent.close();
});

function upstream(urls: string[], extra: Partial<UpstreamOptions> = {}): Upstream {
  return new Upstream({ name: "Test backend", urls, timeoutMs: 500, graceMs: 10_000, maxBytes: 1024, failoverOn5xx: false, ...extra });
}

async function failure(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error("expected a failure");
}

describe("Upstream", () => {
  test("a refused URL and a silent one are skipped for the next, and left out for the grace period", async () => {
    let now = 1_000;
    const u = upstream([refusedUrl, silentUrl, okUrl], { now: () => now });
    const t0 = performance.now();
    const first = await u.send({ method: "GET", path: "/a" });
    expect(first.status).toBe(200);
    expect(first.url).toBe(okUrl);
    // The silent host cost one timeout, not more.
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect(u.states().map((s) => s.badUntil > now)).toEqual([true, true, false]);
    expect(u.states()[0]!.lastError).toBe("connection refused");
    expect(u.states()[1]!.lastError).toBe("no answer within 500 ms");
    // Within the grace period the bad ones are not tried: the answer comes at once.
    const t1 = performance.now();
    expect((await u.send({ method: "GET", path: "/b" })).status).toBe(200);
    expect(performance.now() - t1).toBeLessThan(200);
    now += 10_001;
    expect(u.states().every((s) => s.badUntil <= now)).toBe(true);
  });

  test("every URL down: 503 naming each, then 503 at once until the grace period ends", async () => {
    let now = 5_000;
    const u = upstream([refusedUrl, silentUrl], { now: () => now });
    const e = await failure(u.send({ method: "GET", path: "/" }));
    expect(e.status).toBe(503);
    expect(e.message).toContain(`${refusedUrl}: connection refused`);
    expect(e.message).toContain(`${silentUrl}: no answer within 500 ms`);
    const t0 = performance.now();
    const again = await failure(u.send({ method: "GET", path: "/" }));
    expect(performance.now() - t0).toBeLessThan(50);
    expect(again.status).toBe(503);
    expect(again.headers?.["retry-after"]).toBe("10");
    now += 10_001;
    expect((await failure(u.send({ method: "GET", path: "/" }))).message).toContain("connection refused");
  });

  test("an HTTP answer is final unless the hosts share a store; 4xx is final always", async () => {
    const connectLike = upstream([failingUrl, okUrl]);
    expect((await connectLike.send({ method: "GET", path: "/" })).status).toBe(500);
    const registryLike = upstream([failingUrl, okUrl], { failoverOn5xx: true });
    const moved = await registryLike.send({ method: "GET", path: "/" });
    expect([moved.status, moved.url]).toEqual([200, okUrl]);
    expect(registryLike.states()[0]!.lastError).toBe("HTTP 500");
    const notFound = await upstream([okUrl, failingUrl], { failoverOn5xx: true }).send({ method: "GET", path: "/missing" });
    expect(notFound.status).toBe(404);
    expect(JSON.parse(new TextDecoder().decode(notFound.body))).toEqual({ error_code: 40401, message: "Subject not found" });
  });

  test("24: a read answered 'not now' is asked again, the next URL first, within its window; a write never is", async () => {
    const retryReads = { statuses: [409, 500], windowMs: 5_000 };
    // The next URL first: the failing one answers 500, the other 200 at once.
    const moved = await upstream([failingUrl, okUrl], { retryReads }).send({ method: "GET", path: "/" });
    expect([moved.status, moved.url]).toEqual([200, okUrl]);
    // One URL, "not now" three times: asked again until it settles.
    asked.length = 0;
    notNowFor = 3;
    const settled = await upstream([settlingUrl], { retryReads }).send({ method: "GET", path: "/" });
    expect(settled.status).toBe(200);
    expect(asked).toEqual(["GET", "GET", "GET", "GET"]);
    // A write: sent once, the worker's answer passed on as it is.
    asked.length = 0;
    notNowFor = 3;
    const write = await upstream([settlingUrl, okUrl], { retryReads }).send({ method: "POST", path: "/", body: "{}" });
    expect(write.status).toBe(500);
    expect(asked).toEqual(["POST"]);
    // Still "not now" when the window ends: that answer, Connect's own body, not a 503 of Loupe's.
    const t0 = performance.now();
    const late = await upstream([failingUrl], { retryReads: { statuses: [500], windowMs: 400 } }).send({ method: "GET", path: "/" });
    expect(late.status).toBe(500);
    expect(new TextDecoder().decode(late.body)).toBe("boom");
    expect(performance.now() - t0).toBeGreaterThanOrEqual(300);
  });

  test("an answer over the size cap is 502; only the content type comes back", async () => {
    const u = upstream([okUrl]);
    const e = await failure(u.send({ method: "GET", path: "/big" }));
    expect(e.status).toBe(502);
    expect(e.message).toContain("more than 1024 bytes");
    const a = await u.send({ method: "GET", path: "/x" });
    expect(a.contentType).toContain("application/json");
    expect(Object.keys(a)).toEqual(["status", "contentType", "body", "url"]);
  });

  test("only the named headers and the configured credentials go upstream", async () => {
    const client = new Headers({
      "content-type": "application/json",
      accept: "application/vnd.schemaregistry.v1+json",
      "x-service-token": "loupe-token",
      authorization: "Bearer client",
      cookie: "c=1",
      "x-forwarded-for": "10.0.0.1",
      host: "evil",
    });
    const headers = pickHeaders(client, ["content-type", "accept"]);
    expect(headers).toEqual({ "content-type": "application/json", accept: "application/vnd.schemaregistry.v1+json" });
    seen.length = 0;
    await upstream([okUrl], { authorization: "Basic dTpw" }).send({
      method: "GET",
      path: "/h",
      query: new URLSearchParams({ expand: "status" }),
      headers,
    });
    const got = seen[0]!;
    expect(got.path).toBe("/h?expand=status");
    expect(got.headers.authorization).toBe("Basic dTpw");
    for (const name of ["x-service-token", "cookie", "x-forwarded-for"]) expect(got.headers[name]).toBeUndefined();
    expect(got.headers.host).toBe(`127.0.0.1:${ok.port}`);
  });

  test("22.6: a URL's user info goes upstream as basic auth only; every URL handed out or named is without it", async () => {
    let now = 1_000;
    const withCreds = (url: string) => url.replace("http://", "http://lo%40upe:SECRET-pw@");
    const u = upstream([withCreds(refusedUrl), withCreds(okUrl)], { now: () => now });
    seen.length = 0;
    const answer = await u.send({ method: "GET", path: "/c" });
    expect(answer.url).toBe(okUrl);
    expect(seen[0]!.headers.authorization).toBe(`Basic ${Buffer.from("lo@upe:SECRET-pw").toString("base64")}`);
    expect(u.urls).toEqual([refusedUrl, okUrl]);
    expect(JSON.stringify(u.states())).not.toContain("SECRET");
    // The configured auth wins over a URL's user info.
    seen.length = 0;
    await upstream([withCreds(okUrl)], { authorization: "Basic dTpw" }).send({ method: "GET", path: "/c" });
    expect(seen[0]!.headers.authorization).toBe("Basic dTpw");
    // Every host down: the 503 (at once and after the grace period) names them without credentials.
    const down = upstream([withCreds(refusedUrl), withCreds(silentUrl)], { now: () => now });
    const e = await failure(down.send({ method: "GET", path: "/" }));
    expect(e.message).toContain(`${refusedUrl}: connection refused`);
    const again = await failure(down.send({ method: "GET", path: "/" }));
    now += 1;
    for (const m of [e.message, again.message]) expect(m).not.toContain("SECRET");
    const probe = await failure(down.sendTo(down.urls[0]!, { method: "GET", path: "/" }));
    expect(probe.message).toBe(`Test backend at ${refusedUrl}: connection refused`);
  });

  test("a cancelled client request cancels the upstream one and marks no host bad", async () => {
    const u = upstream([silentUrl, okUrl], { timeoutMs: 5_000 });
    const ac = new AbortController();
    const pending = u.send({ method: "GET", path: "/", signal: ac.signal });
    ac.abort();
    expect((await failure(pending)).status).toBe(400);
    expect(u.states().every((s) => s.badUntil === 0)).toBe(true);
  });
});

describe("path segments", () => {
  test.each([
    ["my connector", "my%20connector"],
    ["team/orders sink", "team%2Forders%20sink"],
    ["a..b", "a..b"],
    ["50%", "50%25"],
  ])("%p is one encoded segment", (name, encoded) => {
    expect(nameSegment("connector name", name)).toBe(encoded);
  });

  test.each([
    ["..", ".."],
    [".", "."],
    ["../connector-plugins", "../connector-plugins"],
    ["a/../../b", "a/../../b"],
    ["a/.", "a/."],
    ["empty", ""],
    ["a backslash", "a\\b"],
    ["a NUL", "a\u0000b"],
    ["1,025 characters", "x".repeat(1025)],
  ])("%s is refused with 400", (_label, name) => {
    expect(() => nameSegment("connector name", name)).toThrow(AppError);
  });

  test("integers", () => {
    expect(intSegment("task id", "0")).toBe("0");
    expect(intSegment("version", "2147483647", 1)).toBe("2147483647");
    for (const bad of ["-1", "1.5", "2147483648", "", "1e3", "0x10"]) expect(() => intSegment("version", bad, 1)).toThrow(AppError);
    expect(() => intSegment("version", "0", 1)).toThrow("out of range");
  });
});
