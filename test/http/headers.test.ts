import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SECURITY_HEADERS } from "../../src/http/headers.ts";
import { uiBundle } from "../../src/ui/bundle.ts";
import { ASSETS } from "../../src/ui/manifest.gen.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";

let rt: TestRuntime;
beforeAll(async () => {
  rt = await testRuntime();
});
afterAll(() => rt.dispose());

/** The UI's page: its policy adds a fresh nonce for style elements (the SQL editor's), nothing else. */
const UI_PAGES = new Set(["/", "/topics/some-page", "/topics/orders.v1", "/consumers/billing.app"]);

function expectSecurityHeaders(res: Response, what: string, path = ""): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
    const got = res.headers.get(name);
    if (name === "Content-Security-Policy" && UI_PAGES.has(path)) {
      expect(got).toMatch(new RegExp(`^${value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}; style-src 'self' 'nonce-[A-Za-z0-9+/]{22}=='$`));
      continue;
    }
    expect(`${what}: ${name}=${got}`).toBe(`${what}: ${name}=${value}`);
  }
}

describe("security headers", () => {
  test("the policy allows only Loupe's own origin and no framing", () => {
    expect(SECURITY_HEADERS["Content-Security-Policy"]).toBe(
      "default-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'; object-src 'none'",
    );
    expect(SECURITY_HEADERS).toMatchObject({
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "no-referrer",
      "X-Frame-Options": "DENY",
    });
  });

  // Every kind of answer: the UI and its files, API answers, each error path, metrics, a stream.
  const cases: Array<{
    what: string;
    path: string;
    init?: RequestInit & { role?: "admin" | "write" | "read" | "nodata" };
    status: number;
  }> = [
    { what: "UI page", path: "/", status: 200 },
    { what: "UI client-side route", path: "/topics/some-page", status: 200 },
    { what: "UI asset", path: "/ui/main.js", status: 200 },
    { what: "UI stylesheet", path: "/ui/main.css", status: 200 },
    { what: "API reference page", path: "/api/docs", status: 200 },
    { what: "API reference script", path: "/api-docs.js", status: 200 },
    { what: "missing asset", path: "/nope.png", status: 404 },
    { what: "regression: a topic named like a file (orders.v1) was a 404 opened directly", path: "/topics/orders.v1", status: 200 },
    { what: "a group named like a file", path: "/consumers/billing.app", status: 200 },
    { what: "public API answer", path: "/api/health", status: 200 },
    { what: "OpenAPI document", path: "/api/openapi.json", status: 200 },
    { what: "metrics", path: "/metrics", status: 200 },
    { what: "authenticated API answer", path: "/api/audit", init: { role: "admin" }, status: 200 },
    { what: "unknown API path", path: "/api/nothing-here", status: 404 },
    { what: "wrong method", path: "/api/audit", init: { method: "DELETE", role: "admin" }, status: 405 },
    { what: "no token", path: "/api/audit", status: 401 },
    { what: "wrong role", path: "/api/audit", init: { role: "read" }, status: 403 },
    { what: "bad input", path: "/api/audit?limit=abc", init: { role: "admin" }, status: 400 },
    { what: "bad JSON", path: "/api/login", init: { method: "POST", body: "{" }, status: 400 },
    { what: "body over the limit", path: "/api/login", init: { method: "POST", body: "x".repeat(2 * 1024 * 1024) }, status: 413 },
  ];
  for (const c of cases)
    test(`${c.what}: ${c.status} with the headers`, async () => {
      const res = await rt.request(c.path, c.init);
      await res.arrayBuffer();
      expect(res.status).toBe(c.status);
      expectSecurityHeaders(res, c.what, c.path);
    });

  test("an event stream has them too", async () => {
    const ac = new AbortController();
    const res = await rt.request("/api/sse/audit", {
      role: "admin",
      headers: { accept: "application/json, text/event-stream" },
      signal: ac.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    expectSecurityHeaders(res, "audit stream");
    ac.abort();
    await res.body?.cancel().catch(() => {});
  });

  test("each UI page gets a nonce of its own, in its policy and in the page", async () => {
    const nonces = await Promise.all(
      [1, 2].map(async () => {
        const res = await rt.request("/sql");
        const html = await res.text();
        const inPolicy = /'nonce-([^']+)'/.exec(res.headers.get("Content-Security-Policy") ?? "")?.[1];
        const inPage = /<meta name="loupe-style-nonce" content="([^"]+)">/.exec(html)?.[1];
        expect(inPolicy).toBeDefined();
        expect(inPage).toBe(inPolicy!);
        return inPolicy;
      }),
    );
    expect(nonces[0]).not.toBe(nonces[1]);
  });

  test("the UI works under the policy: no inline script, style or event handler in any page", async () => {
    const bundle = await uiBundle();
    const pages = [...ASSETS.keys()].filter((p) => p.endsWith(".html"));
    expect(pages.length).toBeGreaterThanOrEqual(2);
    for (const page of pages) {
      const html = readFileSync(join(import.meta.dir, "../../assets", page), "utf8");
      const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
      for (const [, attrs, body] of scripts) {
        expect(`${page}: ${attrs}`).toMatch(/\bsrc="\/[^"]+"/);
        expect(`${page}: ${body!.trim()}`).toBe(`${page}: `);
      }
      expect(`${page}: ${/<style\b/i.test(html)}`).toBe(`${page}: false`);
      expect(`${page}: ${/\sstyle\s*=/i.test(html)}`).toBe(`${page}: false`);
      expect(`${page}: ${/\son[a-z]+\s*=/i.test(html)}`).toBe(`${page}: false`);
      expect(`${page}: ${/(src|href)="(https?:)?\/\//i.test(html)}`).toBe(`${page}: false`);
      // Every file a page loads is one Loupe serves.
      for (const [, ref] of html.matchAll(/(?:src|href)="(\/[^"]*)"/g))
        if (!ref!.startsWith("/api/")) expect(`${ref}: ${ASSETS.has(ref!) || bundle.has(ref!)}`).toBe(`${ref}: true`);
    }
    // Scripts build markup with classes, never inline styles or handlers, and never eval.
    const scripts: Array<[string, string]> = [
      ...[...ASSETS.keys()]
        .filter((p) => p.endsWith(".js"))
        .map((file): [string, string] => [file, readFileSync(join(import.meta.dir, "../../assets", file), "utf8")]),
      ...(await Promise.all(
        [...bundle].filter(([p]) => p.endsWith(".js")).map(async ([p, b]): Promise<[string, string]> => [p, await b.text()]),
      )),
    ];
    expect(scripts.map(([file]) => file)).toContain("/ui/main.js");
    for (const [file, js] of scripts)
      expect(`${file}: ${/\sstyle\s*=|\son[a-z]+\s*=\s*["']|\beval\(|new Function\(/.test(js)}`).toBe(`${file}: false`);
  });
});
