import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { manifestSource } from "../../scripts/gen-assets.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";

let rt: TestRuntime;
beforeAll(async () => {
  rt = await testRuntime();
});
afterAll(() => rt.dispose());

describe("service endpoints", () => {
  test("GET /api/health shows the store and the real cluster connected", async () => {
    const res = await rt.app.request("/api/health");
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.status).toBe("UP");
    expect(body.store).toEqual({ status: "UP" });
    expect(body.clusters).toHaveLength(1);
    expect(body.clusters[0]).toMatchObject({ name: "local", default: true, status: "UP", brokers: 1 });
  });

  test("health reports a cluster that cannot be reached as DOWN", async () => {
    const down = await testRuntime({
      kafka: {
        clusters: [
          { name: "local", bootstrapServers: process.env.KAFKA_BOOTSTRAP, default: true },
          { name: "gone", bootstrapServers: "127.0.0.1:1" },
        ],
      },
    });
    try {
      const t0 = Date.now();
      const body = (await (await down.app.request("/api/health")).json()) as any;
      expect(Date.now() - t0).toBeLessThan(10_000);
      expect(body.status).toBe("DEGRADED");
      expect(body.clusters.find((c: any) => c.name === "gone")).toMatchObject({ status: "DOWN", error: expect.any(String) });
    } finally {
      await down.dispose();
    }
  });

  test("GET /api/openapi.json is an OpenAPI 3.1 document of every API route", async () => {
    const doc = (await (await rt.app.request("/api/openapi.json")).json()) as any;
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.paths["/api/login"].post.requestBody.content["application/json"].schema.required).toEqual(["user", "password"]);
    expect(doc.paths["/api/audit"].get.description).toContain("Roles: admin");
    expect(doc.paths["/api/audit"].get.parameters.map((p: any) => p.name)).toContain("limit");
  });

  test("the OpenAPI document carries each declared route's schemas, roles and audit", async () => {
    const doc = (await (await rt.app.request("/api/openapi.json")).json()) as any;
    const records = doc.paths["/api/topics/{topicName}/{partition}/{offset}"].delete;
    expect(records.parameters.map((p: any) => `${p.in}:${p.name}`)).toEqual(["path:topicName", "path:partition", "path:offset"]);
    const create = doc.paths["/api/topics"].post;
    expect(create.description).toBe("Roles: admin, write. Audited as TOPIC ADD.");
    expect(create.requestBody.content["application/json"].schema.required).toEqual(["topicName"]);
    expect(Object.keys(create.responses)).toEqual(["201", "default"]);
    const topic = doc.paths["/api/topics/{topicName}"].get.responses["200"].content["application/json"].schema;
    expect(topic.properties.consumers.type).toBe("array");
    // Every route of the access table but the UI's own pages is in the document, and nothing else.
    const { ACCESS_RULES } = await import("../../src/routes.ts");
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops as object).map((m) => `${m.toUpperCase()} ${path}`),
    );
    const expected = ACCESS_RULES.filter((r) => r.path.startsWith("/api/") || r.path === "/metrics").map(
      (r) => `${r.method} ${r.path.replace(/:(\w+)/g, "{$1}")}`,
    );
    expect(documented.sort()).toEqual(expected.sort());
  });

  test("the API reference page is served from the binary, no CDN", async () => {
    const res = await rt.app.request("/api/docs");
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain("/api/openapi.json");
    expect(html).not.toMatch(/https?:\/\/(?!127\.)/);
  });

  test("the UI is served at / with an SPA fallback", async () => {
    const index = await rt.app.request("/");
    expect(index.status).toBe(200);
    expect(index.headers.get("content-type")).toContain("text/html");
    expect(await index.text()).toContain("<title>Loupe</title>");
    const deep = await rt.app.request("/topics/some-topic");
    expect(await deep.text()).toContain("<title>Loupe</title>");
    // The React bundle, built from ui/ (in memory from source, embedded in the executable).
    const css = await rt.app.request("/ui/main.css");
    expect(css.headers.get("content-type")).toContain("text/css");
    const js = await rt.app.request("/ui/main.js");
    expect(js.headers.get("content-type")).toContain("text/javascript");
    // (Not toContain: a failure would print the whole bundle.)
    expect((await js.text()).includes("Sign in")).toBe(true);
    expect((await rt.app.request("/missing.js")).status).toBe(404);
    expect((await rt.app.request("/ui/missing.js")).status).toBe(404);
  });

  test("the embedded asset manifest is current", () => {
    const current = readFileSync(join(import.meta.dir, "../../src/ui/manifest.gen.ts"), "utf8");
    expect(current).toBe(manifestSource());
  });
});
