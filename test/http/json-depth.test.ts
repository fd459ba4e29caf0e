/**
 * JSON nested without bound from outside: request bodies, websocket frames and the SQL of the
 * JDBC driver's text/plain INSERT, each 800 KB deep, through the real routes. Each is refused
 * with a 400 (or the websocket's INVALIDREQUEST) at once: never a stack overflow answered as a
 * 500 after seconds of work.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { checkJsonDepth, JsonDepthError, jsonDepthExceededAt, MAX_JSON_DEPTH, parseJson } from "../../src/util/json.ts";
import { LiveClient } from "../clients/ws-client.ts";
import { uniqueTopic } from "../cluster/cluster.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";

/** 800 KB: 400 000 levels of arrays. */
const DEEP_ARRAY = `${"[".repeat(400_000)}${"]".repeat(400_000)}`;
/** 800 KB: 100 000 levels of objects. */
const DEEP_OBJECT = `${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`;
/** Well inside the time a refusal takes (milliseconds); the regression took 2.3 s to fail. */
const QUICK_MS = 1_500;

const nested = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;

describe("the depth check", () => {
  test.each([
    ["exactly the bound", nested(MAX_JSON_DEPTH), -1],
    ["one level past it", nested(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH],
    ["brackets inside strings do not count", JSON.stringify(["[".repeat(1_000), "{".repeat(1_000)]), -1],
    ["an escaped quote does not end a string", JSON.stringify([`\\"${"[".repeat(1_000)}`, 1]), -1],
    ["an escaped backslash before a quote ends it", `["\\\\",${nested(MAX_JSON_DEPTH + 1)}]`, MAX_JSON_DEPTH + 5],
    // Each `{"a":[` opens two levels: the 65th opens level 129 with its `{`.
    ["objects and arrays mixed", `${'{"a":['.repeat(65)}1${"]}".repeat(65)}`, 64 * 6],
    ["siblings do not add up", `[${Array.from({ length: 300 }, () => nested(100)).join(",")}]`, -1],
  ])("%s", (_what, text, at) => {
    expect(jsonDepthExceededAt(text)).toBe(at);
  });

  test("what passes parses as JSON.parse parses it; what fails is a SyntaxError naming the bound", () => {
    const ok = `{"a":${nested(100)},"b":"]]]]"}`;
    expect(parseJson(ok)).toEqual(JSON.parse(ok));
    expect(() => checkJsonDepth(DEEP_OBJECT)).toThrow(JsonDepthError);
    expect(() => parseJson(DEEP_ARRAY)).toThrow(SyntaxError);
    expect(() => parseJson(DEEP_ARRAY)).toThrow(`JSON nested deeper than ${MAX_JSON_DEPTH} levels (at character ${MAX_JSON_DEPTH})`);
  });
});

describe("deep input through the routes", () => {
  let rt: TestRuntime;
  const topic = uniqueTopic("json-depth");

  beforeAll(async () => {
    rt = await testRuntime();
    // Logged in first: the timings below are the requests' own.
    await rt.token("admin");
    await rt.token("write");
    await rt.kafka.default().topics.create({ name: topic, partitions: 1, replication: 1 });
  });
  afterAll(() => rt.dispose({ topics: [topic] }));

  /** Sends the request and asserts a quick 400 with the COMPAT error body. */
  async function refusedQuickly(
    path: string,
    init: RequestInit & { role?: "admin" | "write" },
  ): Promise<{ code: string; message: string }> {
    const logged = rt.sink.lines.length;
    const t0 = performance.now();
    const res = await rt.request(path, init);
    const ms = performance.now() - t0;
    const body = await errorOf(res);
    expect({ status: res.status, code: body.code }).toMatchObject({ status: 400 });
    expect(ms).toBeLessThan(QUICK_MS);
    const log = rt.sink.lines.slice(logged).join("\n");
    expect(log).not.toContain("unhandled error");
    expect(log).not.toContain("RangeError");
    return body;
  }

  test.each([
    [
      "an audited route (topic creation), the deep part a field's value",
      "/api/topics",
      `{"topicName":"x","partitions":1,"replication":1,"configs":${DEEP_ARRAY}}`,
    ],
    ["an audited route, the whole body objects", "/api/topics", DEEP_OBJECT],
    ["the JDBC driver's prepared batch", `/api/jdbc/insert/prepared/${topic}`, `[{"key":"k","value":${DEEP_ARRAY}}]`],
    ["the login, before any authentication", "/api/login", DEEP_ARRAY],
  ])("22.10: an 800 KB body nested 100 000 levels and more: 400 INVALID_JSON at once, no 500 (%s)", async (_what, path, body) => {
    const refused = await refusedQuickly(path, { method: "POST", body, role: "admin" });
    expect(refused.code).toBe("INVALID_JSON");
    expect(refused.message).toContain(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  });

  test("a body nested exactly as deep as the bound is still taken (a topic's config values are checked as strings)", async () => {
    const res = await rt.request("/api/topics", {
      method: "POST",
      role: "admin",
      body: `{"topicName":"${uniqueTopic("never")}","partitions":1,"replication":1,"configs":{"a":${nested(MAX_JSON_DEPTH - 2)}}}`,
    });
    // Past the depth check, the schema of the body answers: configs are strings.
    const body = await errorOf(res);
    expect(body.code).toBe("VALIDATION_FAILED");
  });

  // The SQL parser recurses over nesting (QUERY_LIMITS.depth bounds it); chains of operators are
  // parsed without recursion. Each statement is 800 KB, sent as the driver sends it.
  const K = 800_000;
  const insertOf = (values: string) => `INSERT INTO \`${topic}\` (_value) VALUES (${values})`;
  test.each([
    ["parentheses", insertOf(`${"(".repeat(K / 2 - 30)}1${")".repeat(K / 2 - 30)}`)],
    ["NOT NOT NOT ...", insertOf(`${"NOT ".repeat(K / 4 - 20)}true`)],
    ["a long chain of AND", insertOf(`${"1 AND ".repeat(K / 6 - 10)}1`)],
  ])("an 800 KB INSERT of the JDBC driver (text/plain) nested deeply: a quick 400 naming where (%s)", async (_what, sql) => {
    const refused = await refusedQuickly("/api/jdbc/insert", {
      method: "POST",
      role: "write",
      body: sql,
      headers: { "content-type": "text/plain" },
    });
    expect(refused.code).toBe("VALIDATION_FAILED");
    expect(refused.message).toMatch(/ at line 1, column \d+\./);
  });

  test("22.10: an 800 KB INSERT of the JDBC driver whose column path is 49 000 fields deep: a quick 400, no 500", async () => {
    const sql = `INSERT INTO \`${topic}\` (_value${".a".repeat(49_000)}) VALUES (1)`;
    const refused = await refusedQuickly("/api/jdbc/insert", {
      method: "POST",
      role: "write",
      body: sql,
      headers: { "content-type": "text/plain" },
    });
    expect(refused.code).toBe("VALIDATION_FAILED");
    expect(refused.message).toMatch(/^Column path nested too deeply at line 1, column \d+\./);
  });

  test("22.10: a column path is bounded at QUERY_LIMITS.depth fields: 64 are written, 65 are refused where the 65th is", async () => {
    const path = (n: number) => Array.from({ length: n }, (_, i) => `f${i}`).join(".");
    const ok = await rt.request("/api/jdbc/insert", {
      method: "POST",
      role: "write",
      body: `INSERT INTO \`${topic}\` (_value.${path(64)}) VALUES (1)`,
      headers: { "content-type": "text/plain" },
    });
    expect(ok.status).toBe(200);
    const sql = `INSERT INTO \`${topic}\` (_value.${path(65)}) VALUES (1)`;
    const refused = await refusedQuickly("/api/jdbc/insert", {
      method: "POST",
      role: "write",
      body: sql,
      headers: { "content-type": "text/plain" },
    });
    expect(refused.message).toBe(
      `Column path nested too deeply at line 1, column ${sql.indexOf("f64") + 1}. Expected at most 64 fields in one column path.`,
    );
  });

  test("a processor's SQL nested 30 000 levels deep (within its 64 KiB bound): a quick 400", async () => {
    const sql = `INSERT INTO \`${topic}\` SELECT STREAM * FROM \`${topic}\` WHERE ${"(".repeat(30_000)}1${")".repeat(30_000)} = 1`;
    const refused = await refusedQuickly("/api/streams", { method: "POST", role: "write", body: JSON.stringify({ name: "deep", sql }) });
    expect(refused.message).toContain("nested too deeply");
  });

  test("22.10: a live websocket frame nested 400 000 levels deep is answered INVALIDREQUEST at once; the socket still serves", async () => {
    const c = await LiveClient.open(rt.url, crypto.randomUUID());
    try {
      const t0 = performance.now();
      c.ws.send(`{"type":"LOGIN","correlationId":1,"content":${DEEP_ARRAY}}`);
      const refused = await c.reply(0);
      expect(performance.now() - t0).toBeLessThan(QUICK_MS);
      expect(refused.type).toBe("INVALIDREQUEST");
      expect(refused.content).toContain(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
      // The same depth inside the content's JSON text.
      c.request("LOGIN", 2, DEEP_OBJECT);
      const inner = await c.reply(2);
      expect(inner.type).toBe("INVALIDREQUEST");
      expect(inner.content).toContain(`The content of LOGIN is not accepted: JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
      c.request("LOGIN", 3, { user: "alice", password: "alice-pw-1" });
      expect((await c.reply(3)).type).toBe("SUCCESS");
    } finally {
      c.close();
    }
  });
});
