// @postgres
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { sanitizeContent } from "../../src/domains/audit/service.ts";
import { AppError } from "../../src/errors.ts";
import { defineRoute, json } from "../../src/http/route.ts";
import { ACCESS_RULES } from "../../src/routes.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { rowsOf } from "../helpers/store.ts";

const things = defineRoute({
  method: "POST",
  path: "/api/test/things/{name}",
  level: "write",
  summary: "t",
  audit: { type: "TOPIC", change: "ADD" },
  tags: ["test"],
  request: { params: z.object({ name: z.string() }) },
  responses: { 201: json(z.object({ ok: z.boolean() })) },
});

let rt: TestRuntime;
beforeAll(async () => {
  rt = await testRuntime(
    {},
    {
      app: {
        // An audited route to exercise the access-rule-driven audit on success and failure.
        extraRoutes: (group) =>
          group.handle(things, async (c) => {
            const body = (await c.req.json()) as Record<string, unknown>;
            c.set("auditContent", body);
            if (c.req.param("name") === "fail") throw new AppError("CONFLICT", "Thing 'fail' already exists");
            return c.json({ ok: true }, 201);
          }),
      },
    },
  );
});
afterAll(() => rt.dispose());

describe("audit", () => {
  test("records successes and failures, with secrets masked", async () => {
    const ok = await rt.request("/api/test/things/alpha", {
      method: "POST",
      role: "write",
      body: JSON.stringify({ "sasl.jaas.config": 'org.x required password="hunter2";', "ssl.key.password": "hunter3", retention: "1000" }),
    });
    expect(ok.status).toBe(201);
    const bad = await rt.request("/api/test/things/fail", { method: "POST", role: "write", body: JSON.stringify({ password: "hunter4" }) });
    expect(bad.status).toBe(409);
    const denied = await rt.request("/api/test/things/beta", { method: "POST", role: "read", body: "{}" });
    expect(denied.status).toBe(403);

    const res = await rt.request("/api/audit?type=TOPIC", { role: "admin" });
    expect(res.status).toBe(200);
    const entries = (await res.json()) as any[];
    expect(entries.length).toBe(3);
    // newest first
    expect(entries[0]).toMatchObject({ type: "TOPIC", change: "ADD", userId: "reed", content: { name: "beta", outcome: "FAILURE" } });
    expect(entries[0].content.reason).toContain("FORBIDDEN");
    expect(entries[1]).toMatchObject({
      userId: "wanda",
      content: { name: "fail", outcome: "FAILURE", reason: "CONFLICT: Thing 'fail' already exists", password: "********" },
    });
    expect(entries[2]).toMatchObject({
      userId: "wanda",
      content: { name: "alpha", outcome: "SUCCESS", retention: "1000", "sasl.jaas.config": "********", "ssl.key.password": "********" },
    });
    const stored = JSON.stringify(await rowsOf(rt.store, "SELECT * FROM audit"));
    for (const secret of ["hunter2", "hunter3", "hunter4"]) expect(stored).not.toContain(secret);
    expect(entries.every((e) => typeof e.timestamp === "number")).toBe(true);
  });

  test("regression: a denied read of the audit log left no trace", async () => {
    const since = Date.now();
    const denied = await rt.request("/api/audit?limit=5", { role: "write" });
    expect(denied.status).toBe(403);
    const group = await rt.request("/api/consumers/some%20group%2541", { role: "nodata" });
    expect(group.status).toBe(403);
    const res = await rt.request(`/api/audit?type=ACCESS&from=${since}`, { role: "admin" });
    expect(res.status).toBe(200);
    const entries = (await res.json()) as any[];
    expect(entries).toEqual([
      {
        type: "ACCESS",
        change: "DENY",
        userId: "nora",
        timestamp: expect.any(Number),
        content: {
          group: "some group%41",
          method: "GET",
          path: "/api/consumers/some%20group%2541",
          outcome: "FAILURE",
          reason: "FORBIDDEN: role does not allow this action",
        },
      },
      {
        type: "ACCESS",
        change: "DENY",
        userId: "wanda",
        timestamp: expect.any(Number),
        content: { method: "GET", path: "/api/audit", outcome: "FAILURE", reason: "FORBIDDEN: role does not allow this action" },
      },
    ]);
  });

  test("every route's denial is audited: by its own type when audited, else as ACCESS DENY", async () => {
    const since = Date.now();
    for (const rule of ACCESS_RULES.filter((r) => r.level === "admin" || r.level === "write")) {
      const path = rule.path.replace(/:([A-Za-z]+)/g, "deny-$1").replace(/\*$/, "x");
      const res = await rt.request(path, {
        method: rule.method,
        role: "nodata",
        ...(rule.method === "GET" || rule.method === "DELETE" ? {} : { body: "{}" }),
      });
      await res.arrayBuffer();
      expect(`${rule.method} ${rule.path}: ${res.status}`).toBe(`${rule.method} ${rule.path}: 403`);
    }
    const entries = (await (await rt.request(`/api/audit?from=${since}&user=nora`, { role: "admin" })).json()) as any[];
    const expected = ACCESS_RULES.filter((r) => r.level === "admin" || r.level === "write").map((r) =>
      r.audit ? `${r.audit.type} ${r.audit.change}` : "ACCESS DENY",
    );
    expect(entries.map((e) => `${e.type} ${e.change}`).reverse()).toEqual(expected);
    expect(entries.every((e) => e.content.outcome === "FAILURE" && e.content.reason.startsWith("FORBIDDEN"))).toBe(true);
  });

  test("masks secrets nested in JSON text and objects", () => {
    const out = sanitizeContent({
      config: JSON.stringify({ "connection.password": "p1", name: "c", nested: { token: "t1" } }),
      obj: { "database.password": "p2", keep: 1 },
      token: "t2",
    });
    expect(out.config).toBe(JSON.stringify({ "connection.password": "********", name: "c", nested: { token: "********" } }));
    expect(out.obj).toBe(JSON.stringify({ "database.password": "********", keep: 1 }));
    expect(out.token).toBe("********");
  });

  test("filters by type, user, time range and limit", async () => {
    const t0 = Date.now();
    await rt.audit.record({ type: "ACL", change: "REMOVE", user: "alice", content: { principal: "User:x" } });
    await rt.audit.record({ type: "ACL", change: "ADD", user: "bob", content: { principal: "User:y" } });
    const byUser = (await (await rt.request("/api/audit?type=ACL&user=bob", { role: "admin" })).json()) as any[];
    expect(byUser.map((e) => e.userId)).toEqual(["bob"]);
    const since = (await (await rt.request(`/api/audit?from=${t0}`, { role: "admin" })).json()) as any[];
    expect(since.map((e) => e.change)).toEqual(["ADD", "REMOVE"]);
    // Of bob's: the denial test above leaves ACL entries (of nora's refused ACL changes) before t0.
    const until = (await (await rt.request(`/api/audit?to=${t0 - 1}&type=ACL&user=bob`, { role: "admin" })).json()) as any[];
    expect(until).toEqual([]);
    const iso = (await (
      await rt.request(`/api/audit?from=${encodeURIComponent(new Date(t0).toISOString())}&limit=1`, { role: "admin" })
    ).json()) as any[];
    expect(iso.length).toBe(1);
    const tooMany = await rt.request("/api/audit?limit=100001", { role: "admin" });
    expect(tooMany.status).toBe(400);
    const badType = await rt.request("/api/audit?type=NOPE", { role: "admin" });
    expect((await errorOf(badType)).code).toBe("VALIDATION_FAILED");
  });

  test("28: a NUL in the user filter answers 400 on PostgreSQL, which refuses the text (it answered 500), and no entry on SQLite", async () => {
    const res = await rt.request("/api/audit?user=bob%00", { role: "admin" });
    if (rt.store.kind === "postgres") {
      expect(res.status).toBe(400);
      const body = await errorOf(res);
      expect(body.code).toBe("BAD_REQUEST");
      expect(body.message).toContain("NUL character");
    } else {
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual([]);
    }
  });

  test("retention removes entries by age and by count", async () => {
    for (let i = 0; i < 5; i++) await rt.audit.record({ type: "QUOTAS", change: "UPDATE", user: "alice" });
    const [{ n: before }] = (await rowsOf<{ n: number }>(rt.store, "SELECT count(*) AS n FROM audit")) as [{ n: number }];
    // The pruning's own entry (AUDIT_LOG) comes after: what was kept is the 3 newest before it.
    const others = async () => (await rowsOf<{ n: number }>(rt.store, "SELECT count(*) AS n FROM audit WHERE type != 'AUDIT_LOG'"))[0]!.n;
    await rt.audit.prune({ maxAgeMs: 0, maxEntries: 3 });
    expect(await others()).toBe(3);
    expect(before).toBeGreaterThan(3);
    await rt.audit.prune({ maxAgeMs: 1, maxEntries: 0, now: Date.now() + 10_000 });
    expect(await others()).toBe(0);
  });

  test("27: retention by size exports each pruned entry as a JSON line before removing it, and audits the pruning", async () => {
    const exportDir = mkdtempSync(join(tmpdir(), "loupe-audit-export-"));
    try {
      await rt.audit.prune({ maxAgeMs: 1, maxEntries: 0, now: Date.now() + 10_000 });
      const tag = `size-${Date.now()}`;
      for (let i = 0; i < 10; i++)
        await rt.audit.record({ type: "QUOTAS", change: "UPDATE", user: "alice", content: { tag, i, pad: "x".repeat(200) } });
      const all = await rowsOf<{ id: number; bytes: number; content: string }>(
        rt.store,
        "SELECT id, length(content) AS bytes, content FROM audit ORDER BY id DESC",
      );
      // Room for the 4 newest entries' content, not a 5th.
      const maxBytes = all.slice(0, 4).reduce((n, r) => n + r.bytes, 0) + 10;
      const removed = await rt.audit.prune({ maxAgeMs: 0, maxEntries: 0, maxBytes, exportDir });
      expect(removed).toBe(all.length - 4);
      const kept = await rowsOf<{ id: number }>(rt.store, "SELECT id FROM audit WHERE type != 'AUDIT_LOG' ORDER BY id DESC");
      expect(kept.map((r) => r.id)).toEqual(all.slice(0, 4).map((r) => r.id));
      const files = readdirSync(exportDir);
      expect(files).toEqual([`audit-pruned-${new Date().toISOString().slice(0, 10)}.jsonl`]);
      const lines = readFileSync(join(exportDir, files[0]!), "utf8")
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(lines.map((l) => l.id)).toEqual(
        all
          .slice(4)
          .map((r) => r.id)
          .reverse(),
      );
      expect(lines[0]).toMatchObject({
        type: expect.any(String),
        change: expect.any(String),
        userId: expect.any(String),
        timestamp: expect.any(Number),
      });
      expect(lines.filter((l) => l.content.tag === tag).map((l) => Number(l.content.i))).toEqual([0, 1, 2, 3, 4, 5]);
      // The pruning is in the log: how many, and where they went.
      const [entry] = (await (await rt.request("/api/audit?type=AUDIT_LOG&limit=1", { role: "admin" })).json()) as any[];
      expect(entry).toMatchObject({ type: "AUDIT_LOG", change: "REMOVE", userId: "loupe" });
      expect(entry.content).toMatchObject({
        reason: "retention",
        entries: String(all.length - 4),
        export: join(exportDir, files[0]!),
        outcome: "SUCCESS",
      });
    } finally {
      rmSync(exportDir, { recursive: true, force: true });
    }
  });

  test("GET /api/sse/audit streams new entries as data:<json> lines", async () => {
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req, srv) => rt.app.fetch(req, { server: srv }) });
    try {
      const ac = new AbortController();
      const res = await fetch(`http://127.0.0.1:${server.port}/api/sse/audit`, {
        headers: { "x-service-token": await rt.token("admin"), accept: "application/json, text/event-stream" },
        signal: ac.signal,
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/event-stream");
      const reader = res.body!.getReader();
      // The first heartbeat comes once the stream has subscribed to new entries.
      let text = new TextDecoder().decode((await reader.read()).value);
      await rt.audit.record({ type: "SCHEMA", change: "ADD", user: "alice", content: { subject: "s1-value", password: "zzz" } });
      const deadline = Date.now() + 5000;
      while (!text.includes("s1-value") && Date.now() < deadline) text += new TextDecoder().decode((await reader.read()).value);
      const line = text.split("\n").find((l) => l.startsWith("data:{"))!;
      const entry = JSON.parse(line.slice(5));
      expect(entry).toMatchObject({
        type: "SCHEMA",
        change: "ADD",
        userId: "alice",
        content: { subject: "s1-value", password: "********" },
      });
      ac.abort();
      const denied = await fetch(`http://127.0.0.1:${server.port}/api/sse/audit`, {
        headers: { "x-service-token": await rt.token("write") },
      });
      expect(denied.status).toBe(403);
    } finally {
      server.stop(true);
    }
  });
});
