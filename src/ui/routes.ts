import type { Context } from "hono";
import type { AppEnv } from "../http/context.ts";
import { openApiRoute } from "../http/openapi.ts";
import { defineRoute, RouteGroup, text } from "../http/route.ts";
import { uiBundle } from "./bundle.ts";
import { ASSETS } from "./manifest.gen.ts";

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  json: "application/json",
  svg: "image/svg+xml",
  png: "image/png",
  ico: "image/x-icon",
  woff2: "font/woff2",
};

const typeOf = (path: string) => TYPES[path.slice(path.lastIndexOf(".") + 1)] ?? "application/octet-stream";

function serve(path: string, cache: string): Response {
  const file = ASSETS.get(path)!;
  return new Response(Bun.file(file), {
    headers: { "content-type": typeOf(path), "cache-control": cache, "x-content-type-options": "nosniff" },
  });
}

const page = (description: string) => ({ 200: text(description, "text/html") });

const NONCE_META = '<meta name="loupe-style-nonce" content="">';
let indexHtml: Promise<string> | null = null;

/**
 * The UI's page, with a fresh nonce for the style elements its editor injects: in the page
 * (a meta element the app reads) and in this answer's Content-Security-Policy.
 */
async function uiPage(c: Context<AppEnv>): Promise<Response> {
  indexHtml ??= Bun.file(ASSETS.get("/index.html")!).text();
  const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
  c.set("styleNonce", nonce);
  const html = (await indexHtml).replace(NONCE_META, `<meta name="loupe-style-nonce" content="${nonce}">`);
  return new Response(html, {
    headers: { "content-type": typeOf("/index.html"), "cache-control": "no-store", "x-content-type-options": "nosniff" },
  });
}

export const uiApi = {
  docs: defineRoute({
    method: "GET",
    path: "/api/docs",
    level: "public",
    summary: "API reference page",
    tags: ["service"],
    responses: page("The reference page, reading /api/openapi.json"),
  }),
  index: defineRoute({
    method: "GET",
    path: "/",
    level: "public",
    summary: "Web UI",
    tags: ["ui"],
    responses: page("The UI"),
    hidden: true,
  }),
  assets: defineRoute({
    method: "GET",
    path: "/*",
    level: "public",
    summary: "Web UI assets and client-side routes",
    tags: ["ui"],
    responses: page("A file of the UI, or the UI for a client-side route"),
    hidden: true,
  }),
};

/** The API reference page (it reads the OpenAPI document, served beside it). */
export function apiDocsRoutes(openApi: () => Record<string, unknown>) {
  const app = new RouteGroup();
  app.handle(openApiRoute, (c) => c.json(openApi()));
  app.handle(uiApi.docs, () => serve("/api-docs.html", "no-cache"));
  return app;
}

/** The web UI: files embedded from assets/, and index.html for any other non-API path (client-side routes). */
export function uiRoutes() {
  const app = new RouteGroup();
  app.handle(uiApi.index, (c) => uiPage(c));
  app.handle(uiApi.assets, async (c) => {
    const path = c.req.path;
    if (path === "/api" || path.startsWith("/api/") || path === "/metrics") return c.notFound();
    if (ASSETS.has(path) && path !== "/index.html") return serve(path, "public, max-age=300");
    // Asked by browsers on pages that name no icon (the JSON answers opened in a tab).
    if (path === "/favicon.ico") return serve("/favicon.svg", "public, max-age=300");
    if (path.startsWith("/ui/")) {
      const file = (await uiBundle()).get(path);
      if (!file) return c.notFound();
      return new Response(file, {
        headers: { "content-type": typeOf(path), "cache-control": "no-cache", "x-content-type-options": "nosniff" },
      });
    }
    // A missing file with an extension at the top is a 404, not the page: broken links should
    // look broken. Deeper paths are the UI's own (a topic or group named `orders.v1`).
    if (/^\/[^/]*\.[a-z0-9]{1,8}$/i.test(path)) return c.notFound();
    return uiPage(c);
  });
  return app;
}
