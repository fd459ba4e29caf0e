/**
 * The Host check against DNS rebinding (src/http/host-check.ts), over a real port: a page whose
 * name an attacker pointed at Loupe sends its own name in Host, and gets 421 on every route
 * before anything is read or said; the names Loupe is reached by get through.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { hostname } from "node:os";
import { hostMatcher, hostOf } from "../../src/http/host-check.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";

const EVIL = "rebind.attacker.example";

/**
 * One request over a socket of its own, as written. Answers the status and what was read once
 * `enough` holds of it (a socket kept open) or the server closed the socket.
 */
function raw(url: URL, head: string, enough: (text: string) => boolean = () => false): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const sock = connect(Number(url.port), url.hostname);
    let text = "";
    const done = () => {
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0), text });
      sock.destroy();
    };
    sock.on("data", (d) => {
      text += d.toString("latin1");
      if (enough(text)) done();
    });
    sock.on("error", reject);
    sock.on("close", done);
    sock.write(`${head}\r\n\r\n`);
  });
}

async function refused(res: Response, host: string, via = "Host"): Promise<void> {
  expect(res.status).toBe(421);
  const body = await errorOf(res);
  expect(body.code).toBe("MISDIRECTED_REQUEST");
  expect(body.message).toBe(
    `${via} '${host}' is not a name of this Loupe: add it to server.allowedHosts (LOUPE_ALLOWED_HOSTS) to serve it`,
  );
  // The security headers are on the refusal too.
  expect(res.headers.get("x-frame-options")).toBe("DENY");
}

describe("the default names", () => {
  let rt: TestRuntime;
  beforeAll(async () => {
    rt = await testRuntime();
  });
  afterAll(() => rt.dispose());

  test("22.13: /metrics answers 421 to a Host that is not this Loupe's, and says nothing of the cluster", async () => {
    const res = await rt.request("/metrics", { headers: { host: `${EVIL}:9991` } });
    await refused(res, EVIL);
    // The same page through a name of this Loupe: the figures.
    const ok = await rt.request("/metrics");
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("# TYPE");
  });

  test.each([
    ["the UI", "GET", "/"],
    ["a public API route", "GET", "/api/health"],
    ["an API route, before the token is looked at", "GET", "/api/topics"],
    ["the login, before the password is checked or counted", "POST", "/api/login"],
    ["an event stream", "GET", "/api/sse/audit"],
    ["an unknown path", "GET", "/api/no-such-thing"],
  ])("22.13: %s answers 421 to a foreign Host", async (_what, method, path) => {
    const res = await rt.request(path, {
      method,
      role: "admin",
      headers: { host: EVIL, accept: "text/event-stream" },
      ...(method === "POST" ? { body: JSON.stringify({ user: "alice", password: "wrong" }) } : {}),
    });
    await refused(res, EVIL);
  });

  test("22.13: a websocket handshake with a foreign Host is 421, not 101", async () => {
    const head = (host: string) =>
      [
        "GET /api/kafka/ws/rebinding HTTP/1.1",
        `Host: ${host}`,
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version: 13",
      ].join("\r\n");
    const bad = await raw(rt.url, head(EVIL), (t) => t.includes("}"));
    expect(bad.status).toBe(421);
    expect(bad.text).toContain('"code":"MISDIRECTED_REQUEST"');
    const good = await raw(rt.url, head(`127.0.0.1:${rt.url.port}`), (t) => t.includes("\r\n\r\n"));
    expect(good.status).toBe(101);
  });

  test.each([
    ["the listen address with its port", () => `127.0.0.1:${rt.url.port}`],
    ["localhost", () => "localhost"],
    ["localhost with a trailing dot, in capitals", () => "LOCALHOST.:9991"],
    ["a name under .localhost", () => "loupe.localhost:9991"],
    ["the IPv6 loopback", () => "[::1]:9991"],
    ["another IP address of the machine (a page served by that address)", () => "10.20.30.40:9991"],
    ["an IPv6 address", () => "[fd00::1]"],
    ["this machine's name", () => hostname()],
    ["this machine's name's first label", () => hostname().split(".")[0]!],
  ])("%s is served", async (_what, host) => {
    const res = await rt.request("/api/health", { headers: { host: host() } });
    expect(res.status).toBe(200);
  });

  test.each([
    ["a name that starts like an allowed one", "localhost.attacker.example"],
    ["an address followed by a name", "127.0.0.1.attacker.example"],
    ["a bracketed name", "[localhost]"],
    ["two ports", "localhost:80:80"],
  ])("22.13: %s is refused", async (_what, host) => {
    const res = await rt.request("/api/health", { headers: { host } });
    expect(res.status).toBe(421);
  });

  test("a request without Host (HTTP/1.0, no browser) is served", async () => {
    const res = await raw(rt.url, "GET /api/health HTTP/1.0");
    expect(res.status).toBe(200);
  });

  test("X-Forwarded-Host is not looked at unless configured: it neither lets a request in nor keeps one out", async () => {
    const res = await rt.request("/api/health", { headers: { "x-forwarded-host": EVIL } });
    expect(res.status).toBe(200);
    await refused(await rt.request("/api/health", { headers: { host: EVIL, "x-forwarded-host": "localhost" } }), EVIL);
  });
});

describe("configured names", () => {
  let rt: TestRuntime;
  beforeAll(async () => {
    rt = await testRuntime({
      server: { host: "loupe-listen.internal", allowedHosts: ["loupe.example.com", ".corp.example"], checkForwardedHost: true },
    });
  });
  afterAll(() => rt.dispose());

  test.each([
    ["a configured name, behind a proxy on 443", "loupe.example.com:443"],
    ["the listen host when it is a name", "loupe-listen.internal:9991"],
    ["a subdomain of a '.domain' entry", "kafka.eu.corp.example"],
    ["the domain of a '.domain' entry itself", "corp.example"],
  ])("22.13: %s is served", async (_what, host) => {
    expect((await rt.request("/api/health", { headers: { host } })).status).toBe(200);
  });

  test.each([
    ["a configured name as a prefix", "loupe.example.com.attacker.example"],
    ["a '.domain' entry as a prefix", "corp.example.attacker.example"],
    ["a name ending like the domain without its dot", "evilcorp.example"],
  ])("22.13: %s is refused", async (_what, host) => {
    expect((await rt.request("/api/health", { headers: { host } })).status).toBe(421);
  });

  test("22.13: with checkForwardedHost every name of X-Forwarded-Host must be allowed as well", async () => {
    const ok = await rt.request("/api/health", { headers: { "x-forwarded-host": "loupe.example.com" } });
    expect(ok.status).toBe(200);
    await refused(await rt.request("/api/health", { headers: { "x-forwarded-host": EVIL } }), EVIL, "X-Forwarded-Host");
    const chained = await rt.request("/api/health", { headers: { "x-forwarded-host": `loupe.example.com, ${EVIL}:443` } });
    await refused(chained, EVIL, "X-Forwarded-Host");
  });
});

describe("the check turned off", () => {
  test("'*' serves any Host", async () => {
    const rt = await testRuntime({ server: { allowedHosts: ["*"] } });
    try {
      expect((await rt.request("/api/health", { headers: { host: EVIL } })).status).toBe(200);
    } finally {
      await rt.dispose();
    }
  });
});

describe("hostOf and the matcher", () => {
  test.each([
    ["Loupe.Example.com:8443", "loupe.example.com"],
    ["[::1]:9991", "[::1]"],
    ["localhost.", "localhost"],
    ["  127.0.0.1  ", "127.0.0.1"],
    ["host:", "host"],
  ])("hostOf(%p) is %p", (header, host) => {
    expect(hostOf(header)).toBe(host);
  });

  test("listening on every interface adds no name; an address as server.host adds nothing either", () => {
    for (const listenHost of ["0.0.0.0", "::", "10.0.0.5", "::1", "[::]"]) {
      const allowed = hostMatcher({ listenHost, allowedHosts: [], checkForwardedHost: false, machineName: "box-1.corp.example" })!;
      expect(["box-1.corp.example", "box-1", "localhost", "10.0.0.5", "[::]"].every(allowed)).toBe(true);
      expect(["corp.example", "box-2", "", ":", "0.0.0.0.nip.io"].some(allowed)).toBe(false);
    }
  });
});
