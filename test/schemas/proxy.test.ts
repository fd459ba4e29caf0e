/**
 * The schema registry proxy against the real registry (Apicurio's Confluent API): every route
 * as the Go and the Python clients call it, the shapes and codes they decode, failover between
 * hosts (a refused URL, a silent one), header and query filtering, validation, the delete flag,
 * audit entries and levels. Local stand-in hosts only record what reaches them or stay silent.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Role } from "../../src/config/schema.ts";
import type { AppError } from "../../src/errors.ts";
import { schemaRegistryUrl } from "../cluster/cluster.ts";
import { type MachineLag, startMachineLag, timedOn } from "../helpers/machine-lag.ts";
import { errorOf, ROLE_USERS, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { BAD, GO, PY, REFUSED, REGISTRY_TYPES, recorder, silentHost, subjectName, V1, V2, VND } from "./helpers.ts";

let rt: TestRuntime;
/** Deletes turned off. */
let off: TestRuntime;
/** A refused URL, the registry, then a recorder that must never be reached. */
let mixed: TestRuntime;
let behind: ReturnType<typeof recorder>;
/** Only a recorder, with upstream credentials configured. */
let recorded: TestRuntime;
let rec: ReturnType<typeof recorder>;
const subjects: string[] = [];

const registry = () => schemaRegistryUrl();

beforeAll(async () => {
  behind = recorder();
  rec = recorder({ body: '["recorded"]' });
  [rt, off, mixed, recorded] = await Promise.all([
    testRuntime({ schemaRegistry: { urls: [registry()], allowDelete: true } }),
    testRuntime({ schemaRegistry: { urls: [registry()] } }),
    testRuntime({ schemaRegistry: { urls: [REFUSED, registry(), behind.url], allowDelete: true, grace: "60s" } }),
    testRuntime({ schemaRegistry: { urls: [rec.url], auth: { username: "loupe-sr", password: "sr-secret" } } }),
  ]);
}, 60_000);
afterAll(async () => {
  // Soft delete then hard delete, straight at the registry: nothing is left in the shared one.
  for (const s of subjects) {
    const path = `${registry()}/subjects/${encodeURIComponent(s)}`;
    await fetch(path, { method: "DELETE" }).catch(() => {});
    await fetch(`${path}?permanent=true`, { method: "DELETE" }).catch(() => {});
  }
  await Promise.all([rt, off, mixed, recorded].map((r) => r?.dispose()));
  behind.stop();
  rec.stop();
}, 60_000);

const newSubject = (prefix?: string) => {
  const s = subjectName(prefix);
  subjects.push(s);
  return s;
};
const sr = (s: string) => `/api/proxy-sr/subjects/${encodeURIComponent(s)}`;

async function call(
  on: TestRuntime,
  method: string,
  path: string,
  opts: { role?: Role; headers?: Record<string, string>; body?: string } = {},
): Promise<Response> {
  return on.request(path, {
    method,
    role: opts.role ?? "admin",
    headers: opts.headers ?? GO.write,
    ...(opts.body !== undefined ? { body: opts.body } : {}),
  });
}

/** A 200 in one of the registry's media types, and its JSON. */
async function ok(res: Response): Promise<unknown> {
  const text = await res.text();
  expect({ status: res.status, text }).toMatchObject({ status: 200 });
  const type = (res.headers.get("content-type") ?? "").split(";")[0]!.trim();
  expect(REGISTRY_TYPES).toContain(type);
  return JSON.parse(text);
}

async function newestEntry(on: TestRuntime, role: Role) {
  const res = await on.request(`/api/audit?user=${ROLE_USERS[role].name}&limit=1`, { role: "admin" });
  return ((await res.json()) as Array<{ type: string; change: string; content: Record<string, string> }>)[0]!;
}

describe("the registry's routes, as the clients call them", () => {
  test("the Go client's calls and the shapes it decodes, from register to delete", async () => {
    const s = newSubject("go");
    const h = GO.write;
    // Register: exactly {id} with 200; the same schema again answers the same id.
    const first = (await ok(await call(rt, "POST", `${sr(s)}/versions`, { headers: h, body: V1 }))) as { id: number };
    expect(Object.keys(first)).toEqual(["id"]);
    expect(Number.isInteger(first.id)).toBe(true);
    expect(await ok(await call(rt, "POST", `${sr(s)}/versions`, { headers: h, body: V1 }))).toEqual({ id: first.id });
    expect(await ok(await call(rt, "GET", `${sr(s)}/versions`, { headers: GO.read }))).toEqual([1]);
    expect(await ok(await call(rt, "GET", "/api/proxy-sr/subjects", { headers: GO.read }))).toContain(s);

    for (const v of ["1", "latest", "-1"]) {
      const version = await ok(await call(rt, "GET", `${sr(s)}/versions/${v}`, { headers: GO.read }));
      expect(version).toMatchObject({ subject: s, version: 1, id: first.id, schema: JSON.parse(V1).schema });
    }
    expect(await ok(await call(rt, "GET", `${sr(s)}/versions/1/schema`, { headers: GO.read }))).toMatchObject({ name: "Rec" });
    expect(await ok(await call(rt, "GET", `/api/proxy-sr/schemas/ids/${first.id}`, { headers: GO.read }))).toMatchObject({
      schema: JSON.parse(V1).schema,
    });

    // Compatibility: set on the subject (a JSON body with 200), read back as exactly {compatibilityLevel}.
    const put = await call(rt, "PUT", `/api/proxy-sr/config/${encodeURIComponent(s)}`, {
      headers: h,
      body: '{"compatibility":"BACKWARD"}',
    });
    expect(await ok(put)).toBeObject();
    expect(await ok(await call(rt, "GET", `/api/proxy-sr/config/${encodeURIComponent(s)}`, { headers: GO.read }))).toEqual({
      compatibilityLevel: "BACKWARD",
    });
    const check = `/api/proxy-sr/compatibility/subjects/${encodeURIComponent(s)}/versions/latest`;
    expect(await ok(await call(rt, "POST", check, { headers: h, body: V2 }))).toMatchObject({ is_compatible: true });
    expect(await ok(await call(rt, "POST", check, { headers: h, body: BAD }))).toMatchObject({ is_compatible: false });
    // The check changed nothing.
    expect(await ok(await call(rt, "GET", `${sr(s)}/versions`, { headers: GO.read }))).toEqual([1]);

    const second = (await ok(await call(rt, "POST", `${sr(s)}/versions`, { headers: h, body: V2 }))) as { id: number };
    expect(second.id).not.toBe(first.id);
    expect(await ok(await call(rt, "GET", `${sr(s)}/versions`, { headers: GO.read }))).toEqual([1, 2]);

    // Deletes: the Go client sends the vnd type as Content-Type even without a body.
    expect(await ok(await call(rt, "DELETE", `${sr(s)}/versions/2`, { headers: h }))).toBe(2);
    expect(await ok(await call(rt, "DELETE", sr(s), { headers: h }))).toEqual([1]);
    // A permanent delete also names the soft-deleted versions it removes (Apicurio: [1, 2]).
    expect(await ok(await call(rt, "DELETE", `${sr(s)}?permanent=true`, { headers: h }))).toContain(1);
    const gone = await call(rt, "GET", `${sr(s)}/versions`, { headers: GO.read });
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as { message: string }).message).toContain(s);
  }, 30_000);

  test("the Python client's calls: application/json both ways, exactly 200", async () => {
    const s = newSubject("py");
    const h = PY.write;
    const { id } = (await ok(await call(rt, "POST", `${sr(s)}/versions`, { headers: h, body: V1 }))) as { id: number };
    // PY puts the id in the path as a string; same thing on the wire.
    expect(await ok(await call(rt, "GET", `/api/proxy-sr/schemas/ids/${String(id)}`, { headers: h }))).toHaveProperty("schema");
    const put = await call(rt, "PUT", `/api/proxy-sr/config/${encodeURIComponent(s)}`, { headers: h, body: '{"compatibility":"FULL"}' });
    expect(await ok(put)).toBeObject();
    expect(await ok(await call(rt, "GET", `/api/proxy-sr/config/${encodeURIComponent(s)}`, { headers: h }))).toEqual({
      compatibilityLevel: "FULL",
    });
    // The global level: set to what it already is (the registry is shared), answered as the clients need.
    const global = (await ok(await call(rt, "GET", "/api/proxy-sr/config", { headers: h }))) as { compatibilityLevel: string };
    expect(Object.keys(global)).toEqual(["compatibilityLevel"]);
    const same = JSON.stringify({ compatibility: global.compatibilityLevel });
    expect(await ok(await call(rt, "PUT", "/api/proxy-sr/config", { headers: h, body: same }))).toBeObject();
    expect(await ok(await call(rt, "DELETE", `${sr(s)}/versions/1`, { headers: h }))).toBe(1);
  }, 30_000);

  test("a subject with spaces and slashes is one segment, round trip", async () => {
    const s = newSubject("odd name/with slash");
    expect(await ok(await call(rt, "POST", `${sr(s)}/versions`, { body: V1 }))).toHaveProperty("id");
    expect(await ok(await call(rt, "GET", `${sr(s)}/versions/latest`, { headers: GO.read }))).toMatchObject({ subject: s });
  }, 30_000);

  test("an Accept the registry does not speak is never 406; the registry's media type comes back", async () => {
    for (const accept of ["text/plain", "*/*", "application/json, text/event-stream"]) {
      const res = await call(rt, "GET", "/api/proxy-sr/subjects", { headers: { accept } });
      expect(Array.isArray(await ok(res))).toBe(true);
    }
    const vnd = await call(rt, "GET", "/api/proxy-sr/config", { headers: { accept: VND } });
    await ok(vnd);
  }, 30_000);
});

describe("failover between hosts", () => {
  test("a refused host is skipped and left out for the grace period; the next one answers", async () => {
    const before = Date.now();
    expect(Array.isArray(await ok(await call(mixed, "GET", "/api/proxy-sr/subjects", { headers: GO.read })))).toBe(true);
    const [dead, live, last] = mixed.schemas.hosts();
    expect(dead!.badUntil).toBeGreaterThanOrEqual(before + 60_000);
    expect(dead!.lastError).toContain("refused");
    expect(live!.badUntil).toBe(0);
    expect(last!.badUntil).toBe(0);
    expect(behind.seen).toEqual([]);
  }, 30_000);

  test("404, 409 and 422 are the registry's word: passed through, no other host tried, none marked bad", async () => {
    const s = newSubject("final");
    const missing = await call(mixed, "GET", `${sr(`${s}-none`)}/versions`, { headers: GO.read });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error_code: 40401 });

    expect(await ok(await call(mixed, "POST", `${sr(s)}/versions`, { body: V1 }))).toHaveProperty("id");
    await ok(await call(mixed, "PUT", `/api/proxy-sr/config/${encodeURIComponent(s)}`, { body: '{"compatibility":"BACKWARD"}' }));
    const conflict = await call(mixed, "POST", `${sr(s)}/versions`, { body: BAD });
    expect(conflict.status).toBe(409);
    expect(((await conflict.json()) as { message: string }).message).toMatch(/ncompatible/);

    const invalid = await call(mixed, "POST", `${sr(s)}/versions`, { body: JSON.stringify({ schema: "{not avro" }) });
    expect(invalid.status).toBe(422);
    expect(await invalid.json()).toMatchObject({ message: expect.any(String) });

    expect(behind.seen).toEqual([]);
    expect(
      mixed.schemas
        .hosts()
        .slice(1)
        .map((h) => h.badUntil),
    ).toEqual([0, 0]);
    // The failed register is audited as a failure with the registry's word.
    const entry = await newestEntry(mixed, "admin");
    expect(entry).toMatchObject({ type: "SCHEMA", change: "ADD" });
    expect(entry.content).toMatchObject({ subject: s, outcome: "FAILURE", registryStatus: "422" });
  }, 30_000);

  test("a 5xx moves on to the next host and leaves the failing one out", async () => {
    const failing = recorder({ status: 500, body: '{"error_code":50001,"message":"store unavailable"}' });
    const on = await testRuntime({ schemaRegistry: { urls: [failing.url, registry()], grace: "60s" } });
    try {
      expect(Array.isArray(await ok(await call(on, "GET", "/api/proxy-sr/subjects", { headers: GO.read })))).toBe(true);
      expect(await ok(await call(on, "GET", "/api/proxy-sr/config", { headers: GO.read }))).toHaveProperty("compatibilityLevel");
      // Tried once, then left out for the grace period.
      expect(failing.seen.length).toBe(1);
      const [bad, good] = on.schemas.hosts();
      expect(bad!.lastError).toBe("HTTP 500");
      expect(bad!.badUntil).toBeGreaterThan(Date.now() + 50_000);
      expect(good!.badUntil).toBe(0);
    } finally {
      await on.dispose();
      failing.stop();
    }
  }, 30_000);

  test("a register that times out on a silent host is sent to the next one: one version, one id", async () => {
    const silent = silentHost();
    const on = await testRuntime({ schemaRegistry: { urls: [silent.url, registry()], timeout: 1_000 } });
    const s = newSubject("retried");
    try {
      const { id } = (await ok(await call(on, "POST", `${sr(s)}/versions`, { body: V1 }))) as { id: number };
      expect(on.schemas.hosts()[0]!.lastError).toContain("no answer within 1000 ms");
      // The client, not knowing, registers again: the registry answers the same id.
      expect(await ok(await call(on, "POST", `${sr(s)}/versions`, { body: V1 }))).toEqual({ id });
      expect(await ok(await call(on, "GET", `${sr(s)}/versions`))).toEqual([1]);
    } finally {
      await on.dispose();
      silent.stop();
    }
  }, 30_000);

  test("an answer larger than maxResponseSize is refused with 502, not passed on", async () => {
    const big = recorder({ body: JSON.stringify(Array.from({ length: 500 }, (_, i) => `subject-${i}`)) });
    const on = await testRuntime({ schemaRegistry: { urls: [big.url], maxResponseSize: 1024 } });
    try {
      const res = await call(on, "GET", "/api/proxy-sr/subjects", { headers: GO.read });
      expect(res.status).toBe(502);
      expect((await errorOf(res)).message).toContain("more than 1024 bytes");
    } finally {
      await on.dispose();
      big.stop();
    }
  }, 30_000);

  test("every host down (one refusing, one silent): 503 within the bound, then at once, and the next evaluation raises 1003 for each host", async () => {
    const silent = silentHost();
    const down = await testRuntime({
      schemaRegistry: { urls: [REFUSED, silent.url], timeout: 1_000, grace: "60s" },
      alerts: { evaluationInterval: 0 },
    });
    // Upper bounds leave out what the loaded machine itself took meanwhile (a probe measures it).
    const machine: MachineLag = await startMachineLag();
    try {
      const first = await timedOn(machine, () => call(down, "GET", "/api/proxy-sr/subjects", { headers: GO.read }));
      expect(first.value.status).toBe(503);
      expect((await errorOf(first.value)).message).toContain("Schema registry is unreachable");
      // One timeout (the silent host) plus a refusal, not one timeout per retry.
      expect(first.ms).toBeGreaterThanOrEqual(900);
      expect(first.ownMs).toBeLessThan(3_000);

      const second = await timedOn(machine, () => call(down, "POST", `${sr("never-registered")}/versions`, { body: V1 }));
      expect(second.value.status).toBe(503);
      expect(second.value.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(second.ownMs).toBeLessThan(500);
      expect(down.schemas.hosts().every((h) => h.badUntil > Date.now())).toBe(true);

      // The SQL decoders see the same hosts as bad: no new timeout for them either.
      const third = await timedOn(machine, () => down.inserts.registry!.schemaById(1).catch((e: AppError) => e));
      expect((third.value as AppError).code).toBe("BAD_GATEWAY");
      expect(third.ownMs).toBeLessThan(500);

      // One pass: each host probed at once (the silent one within the 1 s timeout).
      await down.alertEvaluator.evaluate();
      const alerts = await down.notifications.list({ limit: 10, alertId: 1003 });
      expect(alerts.map((a) => a.annotations.summary).sort()).toEqual([
        `Schema registry host ${REFUSED} does not answer: connection refused`,
        `Schema registry host ${silent.url} does not answer: no answer within 1000 ms`,
      ]);
    } finally {
      await machine.stop();
      await down.dispose();
      silent.stop();
    }
  }, 30_000);
});

describe("what goes upstream", () => {
  test("only the registry's media types and the configured credentials; never the token, Authorization, Cookie, Host or X-Forwarded-*", async () => {
    const token = await recorded.token("admin");
    const res = await recorded.request("/api/proxy-sr/subjects?subjectPrefix=a%20b&deleted=true&evil=1&permanent=true", {
      headers: {
        "x-service-token": token,
        authorization: "Negotiate c2VjcmV0",
        cookie: "session=abc",
        "x-forwarded-for": "10.0.0.1",
        "x-forwarded-host": "evil.example",
        "x-custom": "1",
        accept: `${VND}, text/plain`,
      },
    });
    expect(await ok(res)).toEqual(["recorded"]);
    const seen = rec.seen.at(-1)!;
    expect(seen.url.pathname).toBe("/subjects");
    expect([...seen.url.searchParams]).toEqual([
      ["subjectPrefix", "a b"],
      ["deleted", "true"],
    ]);
    expect(seen.headers.authorization).toBe(`Basic ${Buffer.from("loupe-sr:sr-secret").toString("base64")}`);
    expect(seen.headers.accept).toBe(VND);
    expect(seen.headers.host).toBe(new URL(rec.url).host);
    const leaked = Object.entries(seen.headers).filter(
      ([k, v]) => k === "cookie" || k.startsWith("x-") || v.includes(token) || v.includes("Negotiate"),
    );
    expect(leaked).toEqual([]);
  }, 30_000);

  test("the Go client's bodiless DELETE keeps its registry Content-Type; text/plain JSON bodies go as the registry's type", async () => {
    const del = await recorded.request(`${sr("x")}/versions/3?permanent=true&deleted=true`, {
      method: "DELETE",
      role: "admin",
      headers: GO.write,
    });
    // Deletes are off on this runtime: refused before anything goes upstream.
    expect(del.status).toBe(403);
    const before = rec.seen.length;
    const res = await recorded.request(`${sr("x")}/versions?normalize=true&verbose=true`, {
      method: "POST",
      role: "admin",
      headers: { "content-type": "text/plain" },
      body: V1,
    });
    expect(res.status).toBe(502); // the recorder's `[]`-like answer is not a registration
    const seen = rec.seen[before]!;
    expect(seen.headers["content-type"]).toBe(VND);
    expect(seen.url.search).toBe("?normalize=true");
    expect(seen.body).toBe(V1);
  }, 30_000);
});

describe("registry answers Loupe does not pass on as they are", () => {
  test("an error without a JSON body gets the COMPAT body; a redirect is 502 and not followed", async () => {
    const answer: { status: number; body: string; type: string } = { status: 406, body: "", type: "text/plain" };
    const odd = recorder(answer);
    const on = await testRuntime({ schemaRegistry: { urls: [odd.url] } });
    try {
      for (const [status, body, want, text] of [
        [406, "", 406, "Schema registry answered 406"],
        [400, "Not able to deserialize data provided.", 400, "Not able to deserialize data provided."],
        [307, "", 502, "answered 307"],
      ] as const) {
        Object.assign(answer, { status, body });
        const res = await call(on, "GET", "/api/proxy-sr/subjects", { headers: GO.read });
        expect(res.status).toBe(want);
        expect((await errorOf(res)).message).toContain(text);
      }
      expect(odd.seen.length).toBe(3);
    } finally {
      await on.dispose();
      odd.stop();
    }
  }, 30_000);
});

describe("validation before anything goes upstream", () => {
  test("'..' and '%2e%2e' as the subject never reach the registry (the URL resolves them first: no such route)", async () => {
    for (const path of ["/api/proxy-sr/subjects/../versions", "/api/proxy-sr/subjects/%2e%2e/versions", "/api/proxy-sr/subjects/%2E%2e"]) {
      const before = rec.seen.length;
      const res = await recorded.request(path, { role: "admin", headers: GO.read });
      expect([400, 404]).toContain(res.status);
      await errorOf(res);
      expect(rec.seen.length).toBe(before);
    }
  }, 30_000);

  const cases: Array<[string, string, string, string?]> = [
    ["subject 'a/../b'", "GET", "/api/proxy-sr/subjects/a%2F..%2Fb/versions"],
    ["subject with a control character", "GET", "/api/proxy-sr/subjects/a%0Ab/versions"],
    ["version 0", "GET", "/api/proxy-sr/subjects/s/versions/0"],
    ["version -2", "GET", "/api/proxy-sr/subjects/s/versions/-2"],
    ["version 2^31", "GET", "/api/proxy-sr/subjects/s/versions/2147483648"],
    ["version 'first'", "GET", "/api/proxy-sr/subjects/s/versions/first/schema"],
    ["version '1.5'", "DELETE", "/api/proxy-sr/subjects/s/versions/1.5"],
    ["schema id 0", "GET", "/api/proxy-sr/schemas/ids/0"],
    ["schema id -1", "GET", "/api/proxy-sr/schemas/ids/-1"],
    ["schema id 'x'", "GET", "/api/proxy-sr/schemas/ids/x"],
    ["a register body that is not JSON", "POST", "/api/proxy-sr/subjects/s/versions", "{schema:"],
    ["a register body without schema", "POST", "/api/proxy-sr/subjects/s/versions", '{"schemaz":"x"}'],
    ["an empty register body", "POST", "/api/proxy-sr/subjects/s/versions", ""],
    ["an unknown schemaType", "POST", "/api/proxy-sr/subjects/s/versions", '{"schema":"{}","schemaType":"XML"}'],
    ["an unknown level", "PUT", "/api/proxy-sr/config", '{"compatibility":"SOMETIMES"}'],
    ["a level that is not a string", "PUT", "/api/proxy-sr/config/s", '{"compatibility":1}'],
    ["a level body without compatibility", "PUT", "/api/proxy-sr/config/s", "{}"],
    ["a check body that is not JSON", "POST", "/api/proxy-sr/compatibility/subjects/s/versions/latest", "nope"],
    ["a flag that is not a boolean", "GET", "/api/proxy-sr/subjects?deleted=yes"],
  ];
  for (const [what, method, path, body] of cases)
    test(`${what}: 400 with the COMPAT body`, async () => {
      const before = rec.seen.length;
      const res = await recorded.request(path, {
        method,
        role: "admin",
        headers: GO.write,
        ...(body !== undefined ? { body } : {}),
      });
      expect(res.status).toBe(400);
      await errorOf(res);
      expect(rec.seen.length).toBe(before);
    }, 30_000);

  test("levels are accepted in any case and sent in upper case", async () => {
    const before = rec.seen.length;
    const res = await recorded.request("/api/proxy-sr/config", {
      method: "PUT",
      role: "write",
      body: '{"compatibility":"backward_transitive"}',
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(rec.seen[before]!.body)).toEqual({ compatibility: "BACKWARD_TRANSITIVE" });
  }, 30_000);
});

describe("the delete flag, levels and audit", () => {
  test("schemaRegistryDelete: the flag and write or admin on the cluster", async () => {
    for (const [on, role, want] of [
      [rt, "admin", true],
      [rt, "write", true],
      [rt, "read", false],
      [rt, "nodata", false],
      [off, "admin", false],
      [off, "write", false],
    ] as const) {
      const login = await on.app.request("/api/login", {
        method: "POST",
        headers: { accept: "application/json" },
        body: JSON.stringify({ user: ROLE_USERS[role].name, password: ROLE_USERS[role].password }),
      });
      expect({ role, want, got: ((await login.json()) as { schemaRegistryDelete: boolean }).schemaRegistryDelete }).toEqual({
        role,
        want,
        got: want,
      });
      const session = await on.request("/api/auth", { role });
      expect(((await session.json()) as { schemaRegistryDelete: boolean }).schemaRegistryDelete).toBe(want);
    }
  }, 30_000);

  test("deletes turned off: 403 for every role, audited as a failed SCHEMA REMOVE, the subject untouched", async () => {
    const s = newSubject("off");
    await ok(await call(off, "POST", `${sr(s)}/versions`, { body: V1 }));
    for (const path of [sr(s), `${sr(s)}/versions/1`, `${sr(s)}/versions/latest?permanent=true`]) {
      const res = await call(off, "DELETE", path, { role: "admin" });
      expect(res.status).toBe(403);
      expect((await errorOf(res)).message).toContain("schemaRegistry.allowDelete");
      const entry = await newestEntry(off, "admin");
      expect(entry).toMatchObject({ type: "SCHEMA", change: "REMOVE" });
      expect(entry.content).toMatchObject({ subject: s, outcome: "FAILURE" });
    }
    expect(await ok(await call(off, "GET", `${sr(s)}/versions`))).toEqual([1]);
  }, 30_000);

  test("levels: reads for nodata, register, levels and deletes for write", async () => {
    const s = newSubject("levels");
    expect((await call(rt, "POST", `${sr(s)}/versions`, { role: "read", body: V1 })).status).toBe(403);
    expect((await call(rt, "PUT", "/api/proxy-sr/config", { role: "read", body: '{"compatibility":"NONE"}' })).status).toBe(403);
    expect((await call(rt, "POST", `${sr(s)}/versions`, { role: "write", body: V1 })).status).toBe(200);
    expect(await ok(await call(rt, "GET", `${sr(s)}/versions`, { role: "nodata" }))).toEqual([1]);
    const check = await call(rt, "POST", `/api/proxy-sr/compatibility/subjects/${encodeURIComponent(s)}/versions/1`, {
      role: "nodata",
      body: V2,
    });
    expect(await ok(check)).toHaveProperty("is_compatible");
    expect((await call(rt, "DELETE", `${sr(s)}/versions/1`, { role: "read" })).status).toBe(403);
    expect((await call(rt, "DELETE", `${sr(s)}/versions/1`, { role: "write" })).status).toBe(200);
  }, 30_000);

  test("audit: register ADD with the id, a level UPDATE, deletes REMOVE with the version", async () => {
    const s = newSubject("audit");
    const { id } = (await ok(await call(rt, "POST", `${sr(s)}/versions`, { role: "write", body: V1 }))) as { id: number };
    expect(await newestEntry(rt, "write")).toMatchObject({
      type: "SCHEMA",
      change: "ADD",
      content: { subject: s, id: String(id), version: "1", outcome: "SUCCESS", registryStatus: "200", registryHost: registry() },
    });
    await ok(
      await call(rt, "PUT", `/api/proxy-sr/config/${encodeURIComponent(s)}`, { role: "write", body: '{"compatibility":"forward"}' }),
    );
    expect(await newestEntry(rt, "write")).toMatchObject({
      type: "SCHEMA",
      change: "UPDATE",
      content: { subject: s, compatibility: "FORWARD", outcome: "SUCCESS" },
    });
    await ok(await call(rt, "DELETE", `${sr(s)}/versions/latest`, { role: "write" }));
    expect(await newestEntry(rt, "write")).toMatchObject({
      type: "SCHEMA",
      change: "REMOVE",
      content: { subject: s, version: "1", permanent: "false", outcome: "SUCCESS" },
    });
    const missing = await call(rt, "DELETE", `${sr(`${s}-none`)}/versions/1`, { role: "write" });
    expect(missing.status).toBe(404);
    expect(await newestEntry(rt, "write")).toMatchObject({
      type: "SCHEMA",
      change: "REMOVE",
      content: { subject: `${s}-none`, outcome: "FAILURE", registryStatus: "404" },
    });
  }, 30_000);

  test("no registry configured: 404 naming the setting", async () => {
    const none = await testRuntime();
    try {
      const res = await call(none, "GET", "/api/proxy-sr/subjects");
      expect(res.status).toBe(404);
      expect((await errorOf(res)).message).toContain("schemaRegistry.urls");
    } finally {
      await none.dispose();
    }
  }, 30_000);
});
