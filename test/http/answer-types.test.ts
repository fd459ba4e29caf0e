// @no-services
/**
 * A handler's answer is checked against its route's declared responses at compile time
 * (`RouteGroup.handle`). The `@ts-expect-error` lines are the test: `tsc --noEmit` fails when
 * one of them compiles, that is when a wrong body, a wrong status or a text for a JSON answer
 * passes unnoticed. The route also answers at run time, as declared.
 */
import { describe, expect, test } from "bun:test";
import { z } from "zod";
import { defineRoute, json, RouteGroup, relayed, text } from "../../src/http/route.ts";

const thing = z.object({ name: z.string(), count: z.number().int(), note: z.string().nullable() });

const api = {
  get: defineRoute({
    method: "GET",
    path: "/api/things/{name}",
    level: "public",
    summary: "A thing",
    tags: ["test"],
    request: { params: z.object({ name: z.string() }) },
    responses: { 200: json(thing) },
  }),
  create: defineRoute({
    method: "POST",
    path: "/api/things",
    level: "public",
    summary: "Create a thing",
    tags: ["test"],
    responses: { 201: text("`Thing created`") },
  }),
  upstream: defineRoute({
    method: "GET",
    path: "/api/upstream",
    level: "public",
    summary: "An upstream's answer passed on",
    tags: ["test"],
    responses: { 200: relayed(json(thing)) },
  }),
};

function routes(): RouteGroup {
  const app = new RouteGroup();
  app.handle(api.get, (c) => c.json({ name: c.req.valid("param").name, count: 1, note: null }));
  // @ts-expect-error 24.api: a field the schema does not have in place of one it requires
  app.handle(api.get, (c) => c.json({ name: "x", count: 1, notes: null }));
  // @ts-expect-error 24.api: a field of the wrong type
  app.handle(api.get, (c) => c.json({ name: "x", count: "1", note: null }));
  // @ts-expect-error 24.api: a status the route does not declare
  app.handle(api.get, (c) => c.json({ name: "x", count: 1, note: null }, 201));
  // @ts-expect-error 24.api: text where JSON is declared
  app.handle(api.get, (c) => c.text("x"));
  app.handle(api.create, (c) => c.text("Thing created", 201));
  // @ts-expect-error 24.api: the declared text answer's status is 201
  app.handle(api.create, (c) => c.text("Thing created", 200));
  // A relayed answer is the upstream's Response, unchecked.
  app.handle(api.upstream, () => new Response("{}", { headers: { "content-type": "application/json" } }));
  return app;
}

describe("24.api: answers are checked against their declared responses", () => {
  test("24.api.6: a route whose handler type-checks answers as declared", async () => {
    // The guard is read from the context by the route's middleware: set before routing.
    const outer = new RouteGroup();
    outer.use("*", async (c, next) => {
      c.set("guard", async (_rule, _c, n) => {
        await n();
      });
      await next();
    });
    outer.route("/", routes());
    const res = await outer.request("/api/things/a");
    expect(res.status).toBe(200);
    expect(thing.parse(await res.json())).toEqual({ name: "a", count: 1, note: null });
  });
});
