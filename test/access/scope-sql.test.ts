/**
 * Scopes where records are read and written by statement rather than by path: SQL queries and
 * their validation, INSERT, the JDBC driver's routes and socket, and the live websocket, against
 * the real broker. A user scoped to `payments.*` (except `payments.secret*`) reads those topics
 * only; a topic out of scope is invalid at its position, with one message whether it exists or not.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TopicAccess, validateSql } from "../../src/sql/index.ts";
import { compileInsert, validateInsert } from "../../src/sql/insert.ts";
import { LiveClient, WsClient } from "../clients/ws-client.ts";
import { uniqueTopic } from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { scopedUser, topicGroup } from "../helpers/scoped.ts";
import { createReadyTopic } from "../helpers/topics.ts";
import { waitFor } from "../helpers/wait.ts";

let rt: TestRuntime;
const topics: string[] = [];
const open: LiveClient[] = [];

/** Read on payments.* but not payments.secret*; write on payments.w* only. */
let token: string;
let pay: string;
let writable: string;
let secret: string;
let other: string;
const missing = uniqueTopic("payments-not.there");

const outside = (topic: string, line: number, column: number) =>
  `Topic '${topic}' is outside your scope at line ${line}, column ${column}.`;
const q = (sql: string) => `/api/sql/data?${new URLSearchParams({ sql })}`;
const validation = (sql: string) => `/api/sql/validation?${new URLSearchParams({ sql })}`;
const json = (body: unknown) => JSON.stringify(body);

beforeAll(async () => {
  rt = await testRuntime();
  const kafka = rt.kafka.default();
  const make = (prefix: string) => createReadyTopic(kafka, { name: uniqueTopic(prefix), track: topics });
  [pay, writable, secret, other] = await Promise.all([make("payments.in"), make("payments.w"), make("payments.secret"), make("orders")]);
  await kafka.writes.produce(pay, [{ key: "k1", value: json({ amount: 5 }) }]);
  await kafka.writes.produce(other, [{ key: "o1", value: json({ amount: 7 }) }]);
  token = await scopedUser(rt, "paula", [
    topicGroup("pay-read", ["payments.*"], ["payments.secret*"]),
    topicGroup("pay-write", ["payments.w*"], [], ["write"]),
  ]);
});
afterAll(async () => {
  for (const c of open) c.close();
  await rt.dispose({ topics });
});

describe("the compiler's topic check", () => {
  const catalog = { topicExists: (n: string) => n === "known" || n === "hidden" };
  const asked: [string, TopicAccess][] = [];
  const allowed = (topic: string, access: TopicAccess) => {
    asked.push([topic, access]);
    return topic === "known";
  };

  test.each([
    ["SELECT * FROM hidden", "Topic 'hidden' is outside your scope at line 1, column 15."],
    ["SELECT * FROM nowhere", "Topic 'nowhere' is outside your scope at line 1, column 15."],
    ["SELECT a.b FROM `hidden` WHERE LEN(a) > 1", "Topic 'hidden' is outside your scope at line 1, column 17."],
    ["SELECT * FROM known", null],
  ])("%p", (sql, message) => {
    asked.length = 0;
    expect(validateSql(sql, catalog, { topicAllowed: allowed }).message).toBe(message);
    // Asked once per statement, for reading: never per record, field or clause.
    expect(asked).toEqual([[sql.includes("known") ? "known" : sql.includes("hidden") ? "hidden" : "nowhere", "read"]]);
  });

  test("an INSERT asks for write, and callers without a predicate see every topic", () => {
    asked.length = 0;
    expect(validateInsert("INSERT INTO hidden (a) VALUES (1)", catalog, { topicAllowed: allowed }).message).toBe(
      "Topic 'hidden' is outside your scope at line 1, column 13.",
    );
    expect(asked).toEqual([["hidden", "write"]]);
    expect(compileInsert("INSERT INTO hidden (a) VALUES (1)", catalog).topic).toBe("hidden");
    expect(validateSql("SELECT * FROM hidden", catalog).isValid).toBe(true);
  });
});

describe("queries", () => {
  test("a topic in scope is read", async () => {
    const res = await rt.request(q(`SELECT * FROM \`${pay}\``), { token });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { messages: { key: string }[] };
    expect(body.messages.map((m) => m.key)).toEqual(["k1"]);
  });

  test.each([
    ["another existing topic", () => other],
    ["a topic that does not exist", () => missing],
    ["a denied topic that matches the allow pattern", () => secret],
  ])("%s is invalid at its position, with the same message", async (_what, name) => {
    const t = name();
    for (const [sql, line, column] of [
      [`SELECT * FROM \`${t}\``, 1, 15],
      [`SELECT _key\nFROM \`${t}\` WHERE amount > 1`, 2, 6],
    ] as const) {
      const res = await rt.request(q(sql), { token });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        isValid: false,
        line,
        column,
        message: outside(t, line, column),
        code: "VALIDATION_FAILED",
      });
      // The validation route says exactly the same.
      const v = await rt.request(validation(sql), { token });
      expect(await v.json()).toEqual({ isValid: false, line, column, message: outside(t, line, column) });
    }
  });

  test("the event-stream form answers the same error line and no record", async () => {
    const res = await rt.request(q(`SELECT * FROM \`${other}\``), { token, headers: { accept: "text/event-stream" } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain(outside(other, 1, 15));
    expect(text).not.toContain("o1");
  });

  test("a field of a topic out of scope tells nothing of its schema: the scope error comes first", async () => {
    const res = await rt.request(validation(`SELECT no_such_field FROM \`${other}\``), { token });
    expect(((await res.json()) as { message: string }).message).toBe(outside(other, 1, 27));
  });

  test("a statement joining or uniting a topic out of scope with one in scope is refused and reads nothing", async () => {
    for (const sql of [
      `SELECT * FROM \`${pay}\` JOIN \`${other}\` ON _key = _key`,
      `SELECT * FROM \`${pay}\` UNION SELECT * FROM \`${other}\``,
      `SELECT * FROM \`${other}\` UNION SELECT * FROM \`${pay}\``,
    ]) {
      const res = await rt.request(q(sql), { token });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { isValid: boolean; message: string };
      expect(body.isValid).toBe(false);
      expect(JSON.stringify(body)).not.toContain("o1");
      expect(((await (await rt.request(validation(sql), { token })).json()) as { isValid: boolean }).isValid).toBe(false);
    }
  });

  test("validation of a topic in scope is valid", async () => {
    const v = await rt.request(validation(`SELECT * FROM \`${pay}\``), { token });
    expect(await v.json()).toEqual({ isValid: true, line: 0, column: 0, message: null });
  });

  test("a user with no data role validates queries of the topics in scope only, and runs none", async () => {
    const nadia = await scopedUser(rt, "nadia", [topicGroup("nadia-g", ["payments.*"], [], ["nodata"])]);
    const mine = await rt.request(validation(`SELECT * FROM \`${pay}\``), { token: nadia });
    expect(((await mine.json()) as { isValid: boolean }).isValid).toBe(true);
    const theirs = await rt.request(validation(`SELECT * FROM \`${other}\``), { token: nadia });
    expect(((await theirs.json()) as { message: string }).message).toBe(outside(other, 1, 15));
    expect((await rt.request(q(`SELECT * FROM \`${pay}\``), { token: nadia })).status).toBe(403);
  });
});

describe("INSERT and the JDBC driver", () => {
  const insert = (sql: string) =>
    rt.request("/api/jdbc/insert", { method: "POST", token, body: sql, headers: { "content-type": "text/plain" } });

  test("INSERT into a topic the user may only read is refused at its name; into a writable one it writes", async () => {
    for (const t of [pay, other, missing]) {
      const sql = `INSERT INTO \`${t}\` (_key, amount) VALUES ('x', 1)`;
      const res = await insert(sql);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { message: string }).message).toBe(outside(t, 1, 13));
      const v = await rt.request(validation(sql), { token });
      expect(await v.json()).toEqual({ isValid: false, line: 1, column: 13, message: outside(t, 1, 13) });
    }
    const ok = await insert(`INSERT INTO \`${writable}\` (_key, amount) VALUES ('w1', 1)`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ topic: writable, records: 1 });
    // The read-only topic got nothing.
    const read = (await (await rt.request(q(`SELECT * FROM \`${pay}\``), { token })).json()) as { messages: unknown[] };
    expect(read.messages).toHaveLength(1);
  });

  test("a prepared INSERT into a read-only topic is refused with the driver's error form", async () => {
    const sql = `INSERT INTO \`${pay}\` (_key, amount) VALUES (?, ?)`;
    const res = await rt.request(`/api/jdbc/insert/prepared?${new URLSearchParams({ sql })}`, { token });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ info: null, error: outside(pay, 1, 13) });
  });

  test("the table listing holds only the topics in scope", async () => {
    const res = await rt.request("/api/jdbc/metadata/table", { token });
    expect(res.status).toBe(200);
    const names = ((await res.json()) as { name: string }[]).map((t) => t.name);
    expect(names).toContain(pay);
    expect(names).toContain(writable);
    expect(names).not.toContain(other);
    expect(names).not.toContain(secret);
    for (const n of names) expect(n.startsWith("payments.") && !n.startsWith("payments.secret")).toBe(true);
    // An unrestricted reader still sees every topic.
    const all = ((await (await rt.request("/api/jdbc/metadata/table", { role: "read" })).json()) as { name: string }[]).map((t) => t.name);
    expect(all).toContain(other);
  });

  test("the driver's select socket answers a topic out of scope with its error frame", async () => {
    const run = async (sql: string) => {
      const ws = await WsClient.open(rt.url, `/api/ws/jdbc/data?${new URLSearchParams({ sql })}`, { "x-service-token": token });
      await ws.whenClosed(30_000);
      return ws.frames;
    };
    expect(await run(`SELECT * FROM \`${other}\``)).toEqual([`1${outside(other, 1, 15)}`]);
    const frames = await run(`SELECT * FROM \`${pay}\``);
    expect(frames.filter((f) => f.startsWith("0"))).toHaveLength(1);
    expect(frames.at(-1)).toBe("3");
  });
});

describe("live websocket", () => {
  async function connect(): Promise<LiveClient> {
    const c = await LiveClient.open(rt.url, crypto.randomUUID());
    open.push(c);
    return c;
  }

  test("SUBSCRIBE to a topic out of scope is refused naming it; to one in scope it delivers", async () => {
    const c = await connect();
    c.request("SUBSCRIBE", 1, { sqls: [`SELECT * FROM \`${other}\``] }, token);
    expect(await c.reply(1)).toEqual({ type: "INVALIDREQUEST", correlationId: 1, content: outside(other, 1, 15) });
    c.request("SUBSCRIBE", 2, { sqls: [`SELECT * FROM \`${pay}\``, `SELECT * FROM \`${missing}\``] }, token);
    expect(await c.reply(2)).toMatchObject({ type: "INVALIDREQUEST", content: outside(missing, 1, 15) });
    c.request("SUBSCRIBE", 3, { sqls: [`SELECT * FROM \`${pay}\``] }, token);
    expect(await c.reply(3)).toMatchObject({ type: "SUCCESS", content: pay });
    await rt.kafka.default().writes.produce(pay, [{ key: "live-1", value: json({ amount: 1 }) }]);
    expect((await c.waitForRecords(1)).map((r) => r.key)).toEqual(["live-1"]);
    c.close();
  });

  test("PUBLISH and COMMIT need write on every topic they name", async () => {
    const c = await connect();
    c.request("PUBLISH", 1, { topic: pay, key: "p", value: "v" }, token);
    expect(await c.reply(1)).toEqual({ type: "ERROR", correlationId: 1, content: `Topic '${pay}' is outside your scope` });
    c.request(
      "COMMIT",
      2,
      {
        commits: [
          { topic: writable, partition: 0, offset: 0 },
          { topic: other, partition: 0, offset: 0 },
        ],
      },
      token,
    );
    expect(await c.reply(2)).toEqual({ type: "ERROR", correlationId: 2, content: `Topic '${other}' is outside your scope` });
    c.request("PUBLISH", 3, { topic: writable, key: "p", value: "v" }, token);
    expect(await c.reply(3)).toMatchObject({ type: "SUCCESS", content: "OK" });
    c.close();
  });

  test("regression: the socket took roles from groups of every cluster, so write granted on another cluster allowed PUBLISH here", async () => {
    const elsewhere = await scopedUser(rt, "elsie", [
      topicGroup("elsie-read", ["*"]),
      { name: "elsie-write-elsewhere", roles: ["write"], clusters: ["some-other-cluster"], topics: { allow: ["*"] } },
    ]);
    const c = await connect();
    c.request("PUBLISH", 1, { topic: writable, key: "e", value: "v" }, elsewhere);
    expect(await c.reply(1)).toEqual({ type: "ERROR", correlationId: 1, content: "Role read may not PUBLISH" });
    c.close();
  });

  test("narrowing a group's topics ends an open subscription within seconds", async () => {
    const sam = await scopedUser(rt, "sam", [topicGroup("sam-g", ["payments.*"])]);
    const c = await connect();
    c.request("SUBSCRIBE", 1, { sqls: [`SELECT * FROM \`${pay}\``] }, sam);
    expect(await c.reply(1)).toMatchObject({ type: "SUCCESS" });
    const put = await rt.request("/api/groups/sam-g", {
      method: "PUT",
      role: "admin",
      body: json({ topics: { allow: ["payments.w*"], deny: [] } }),
    });
    expect(put.status).toBe(200);
    const ended = await waitFor(() => c.replies().find((r) => r.correlationId === 1 && r.type === "ERROR"), {
      timeoutMs: 5_000,
      what: "the subscription to end",
    });
    expect(ended.content).toBe(`The subscription to '${pay}' ended: your access changed`);
    // And a new SUBSCRIBE is decided by the new scope.
    c.request("SUBSCRIBE", 2, { sqls: [`SELECT * FROM \`${pay}\``] }, sam);
    expect(await c.reply(2)).toMatchObject({ type: "INVALIDREQUEST", content: outside(pay, 1, 15) });
    c.close();
  });
});
