import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Subscription } from "../../src/domains/live/subscription.ts";
import type { Socket } from "../../src/http/websocket.ts";
import { uniqueTopic } from "../cluster/cluster.ts";
import { ROLE_USERS, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { createReadyTopic } from "../helpers/topics.ts";
import { waitFor } from "../helpers/wait.ts";
import { LiveClient, WsClient } from "./ws-client.ts";

/**
 * The live websocket `/api/kafka/ws/{clientId}` as the Go CLI and the Python client use it
 * (CLIENTS.md 5.5), against the real broker: frames sent exactly as they send them (content as
 * JSON text in a string, partition and offset as strings from Python), answers decoded with
 * their strictness (ERROR content a string, one reply per request echoing its id).
 */
let rt: TestRuntime;
const topics: string[] = [];
const groups: string[] = [];
const open: LiveClient[] = [];

beforeAll(async () => {
  rt = await testRuntime();
});
afterAll(async () => {
  for (const c of open) c.close();
  await rt.dispose({ topics, groups });
});

async function connect(clientId: string = crypto.randomUUID(), headers: Record<string, string> = {}): Promise<LiveClient> {
  const c = await LiveClient.open(rt.url, clientId, headers);
  open.push(c);
  return c;
}

/** Logs in over a socket, as the clients do; answers the token. */
async function login(c: LiveClient, role: keyof typeof ROLE_USERS = "admin", id = 1): Promise<string> {
  const u = ROLE_USERS[role];
  // Built by string formatting, as both clients build it.
  c.request("LOGIN", id, `{"user": "${u.name}", "password": "${u.password}"}`);
  const reply = await c.reply(id);
  expect(reply.type).toBe("SUCCESS");
  expect(typeof reply.content).toBe("string");
  return reply.content as string;
}

const topic = (partitions = 1) => createReadyTopic(rt.kafka.default(), { prefix: "ws", partitions, track: topics });

describe("live websocket", () => {
  test("LOGIN's answer is the first frame, echoes the correlationId (1 from Go, 2 from Python) and holds the token as a string", async () => {
    for (const id of [1, 2]) {
      const c = await connect();
      const u = ROLE_USERS.read;
      c.request("LOGIN", id, `{"user": "${u.name}", "password": "${u.password}"}`);
      const first = JSON.parse(await c.ws.next()) as { type: string; correlationId: number; content: unknown };
      expect(first).toMatchObject({ type: "SUCCESS", correlationId: id });
      expect(typeof first.content).toBe("string");
      // The token works for the HTTP API too.
      expect((await rt.request("/api/auth", { token: first.content as string })).status).toBe(200);
    }
    const bad = await connect();
    bad.request("LOGIN", 1, `{"user": "${ROLE_USERS.read.name}", "password": "wrong"}`);
    const refused = JSON.parse(await bad.ws.next()) as { type: string; correlationId: number; content: unknown };
    expect(refused).toMatchObject({ type: "ERROR", correlationId: 1 });
    expect(typeof refused.content).toBe("string");
  });

  test("a subscription with a WHERE receives exactly the matching records written after it, live", async () => {
    const t = await topic();
    const kafka = rt.kafka.default();
    // Written before the subscription: never delivered (it starts at the end).
    await kafka.writes.produce(t, [{ key: "old", value: JSON.stringify({ n: 100, name: "old" }) }]);
    const c = await connect();
    const token = await login(c);
    c.request("SUBSCRIBE", 3, { sqls: [`SELECT * FROM \`${t}\` WHERE n > 5`] }, token);
    const ok = await c.reply(3);
    expect(ok.type).toBe("SUCCESS");
    expect(typeof ok.content).toBe("string");
    expect(ok.content as string).toContain(t);

    await kafka.writes.produce(
      t,
      Array.from({ length: 10 }, (_, i) => ({ key: `k${i + 1}`, value: JSON.stringify({ n: i + 1, name: `r${i + 1}` }) })),
    );
    // A last matching record: once it is in, everything written before it was judged.
    await kafka.writes.produce(t, [{ key: "last", value: JSON.stringify({ n: 99, name: "last" }) }]);
    const got = await c.waitForRecords(6);
    await waitFor(() => got.some((r) => r.key === "last"), { what: "the last record" });
    expect(got.map((r) => r.key)).toEqual(["k6", "k7", "k8", "k9", "k10", "last"]);
    for (const r of got) {
      expect(r.topic).toBe(t);
      expect(Number.isInteger(r.timestamp) && Number.isInteger(r.offset) && r.partition === 0).toBe(true);
      expect(typeof r.value).toBe("string");
    }
    expect(JSON.parse(got[0]!.value)).toEqual({ n: 6, name: "r6" });
    // Nothing but records and the one answer came.
    expect(c.replies()).toEqual([]);
  });

  test("a projection shapes the records' values; several queries in one SUBSCRIBE; UNSUBSCRIBE ends one", async () => {
    const [a, b] = [await topic(), await topic()];
    const kafka = rt.kafka.default();
    const c = await connect();
    const token = await login(c);
    // The Go CLI sends several queries, newlines turned into spaces.
    c.request("SUBSCRIBE", 2, { sqls: [`SELECT name, n FROM \`${a}\` WHERE name LIKE 'x%'`, `SELECT * FROM \`${b}\``] }, token);
    const ok = await c.reply(2);
    expect(ok.type).toBe("SUCCESS");
    expect(ok.content).toBe(`${a},${b}`);
    await kafka.writes.produce(a, [
      { key: "1", value: JSON.stringify({ n: 1, name: "xa", extra: true }) },
      { key: "2", value: JSON.stringify({ n: 2, name: "ya" }) },
    ]);
    await kafka.writes.produce(b, [{ key: "b1", value: "plain text" }]);
    await waitFor(() => c.records().length >= 2, { what: "records of both topics" });
    const fromA = c.records().filter((r) => r.topic === a);
    expect(fromA.map((r) => JSON.parse(r.value))).toEqual([{ name: "xa", n: 1 }]);
    // A STRING value is its raw text.
    expect(c.records().find((r) => r.topic === b)?.value).toBe("plain text");

    c.request("UNSUBSCRIBE", 3, { topics: [a] }, token);
    expect((await c.reply(3)).type).toBe("SUCCESS");
    await kafka.writes.produce(a, [{ key: "3", value: JSON.stringify({ n: 3, name: "xb" }) }]);
    await kafka.writes.produce(b, [{ key: "b2", value: "after" }]);
    await waitFor(() => c.records().some((r) => r.key === "b2"), { what: "the record written after UNSUBSCRIBE" });
    expect(c.records().filter((r) => r.topic === a).length).toBe(1);
  });

  test("a second connection uses the first one's token; PUBLISH writes a record that a subscription sees, audited", async () => {
    const t = await topic();
    const first = await connect("admin");
    const token = await login(first, "write", 2);
    const sub = await connect("admin");
    sub.request("SUBSCRIBE", 5, { sqls: [`SELECT * FROM \`${t}\``] }, token);
    expect((await sub.reply(5)).type).toBe("SUCCESS");

    // Python opens a new connection for every request, with the token of its login connection.
    const pub = await connect("admin");
    pub.request("PUBLISH", 7, { topic: t, key: "None", value: "{'value':1}" }, token);
    const reply = JSON.parse(await pub.ws.next()) as { type: string; correlationId: number };
    expect(reply).toMatchObject({ type: "SUCCESS", correlationId: 7 });
    const [rec] = await sub.waitForRecords(1);
    expect(rec).toMatchObject({ topic: t, key: "None", value: "{'value':1}", partition: 0 });

    const audit = (await (await rt.request(`/api/audit?user=${ROLE_USERS.write.name}&limit=5`, { role: "admin" })).json()) as Array<{
      type: string;
      change: string;
      content: Record<string, string>;
    }>;
    expect(audit.find((e) => e.type === "TOPIC_DATA" && e.change === "INSERT" && e.content.topic === t)?.content.outcome).toBe("SUCCESS");
  });

  test("the token may come with the handshake instead of the request", async () => {
    const t = await topic();
    const token = await rt.token("write");
    const c = await connect(crypto.randomUUID(), { "x-service-token": token });
    c.request("PUBLISH", 1, { topic: t, key: "k", value: "v" });
    expect((await c.reply(1)).type).toBe("SUCCESS");
  });

  test("COMMIT stores the offsets of the consumer group named by the clientId (partition and offset as strings, as Python sends them)", async () => {
    const t = await topic(2);
    const group = uniqueTopic("ws-group");
    groups.push(group);
    const c = await connect(group);
    const token = await login(c);
    c.request(
      "COMMIT",
      4,
      {
        commits: [
          { topic: t, partition: "1", offset: "0" },
          { topic: t, partition: 0, offset: 0 },
        ],
      },
      token,
    );
    const reply = await c.reply(4);
    expect(reply).toMatchObject({ type: "SUCCESS", correlationId: 4 });
    const committed = await rt.kafka.default().groups.committedOffsets([group]);
    expect(
      committed
        .get(group)
        ?.map((o) => [o.topic, o.partition, o.offset])
        .sort(),
    ).toEqual([
      [t, 0, 0],
      [t, 1, 0],
    ]);
  });

  test("errors are ERROR or INVALIDREQUEST with string content, each echoing its request's id", async () => {
    const t = await topic();
    const c = await connect();
    const token = await login(c);
    const readToken = await rt.token("read");
    const nodataToken = await rt.token("nodata");
    const cases: Array<[string, number, () => void, string]> = [
      ["not JSON", 0, () => c.ws.send("{nope"), "INVALIDREQUEST"],
      ["unknown type", 11, () => c.request("SELECT", 11, {}, token), "INVALIDREQUEST"],
      ["content not JSON", 12, () => c.request("SUBSCRIBE", 12, "{sqls:", token), "INVALIDREQUEST"],
      [
        "content of the wrong shape",
        13,
        () => c.request("COMMIT", 13, { commits: [{ topic: t, partition: "x", offset: "1" }] }, token),
        "INVALIDREQUEST",
      ],
      ["invalid SQL", 14, () => c.request("SUBSCRIBE", 14, { sqls: ["SELEC * FROM x"] }, token), "INVALIDREQUEST"],
      ["unknown topic", 15, () => c.request("SUBSCRIBE", 15, { sqls: ["SELECT * FROM `no-such-topic-ws`"] }, token), "INVALIDREQUEST"],
      ["invalid token", 16, () => c.request("PUBLISH", 16, { topic: t, key: "k", value: "v" }, "not-a-token"), "ERROR"],
      ["read may not publish", 17, () => c.request("PUBLISH", 17, { topic: t, key: "k", value: "v" }, readToken), "ERROR"],
      ["nodata may not read records", 18, () => c.request("SUBSCRIBE", 18, { sqls: [`SELECT * FROM \`${t}\``] }, nodataToken), "ERROR"],
      ["read may not commit", 20, () => c.request("COMMIT", 20, { commits: [{ topic: t, partition: 0, offset: 0 }] }, readToken), "ERROR"],
      [
        "publish to a missing topic",
        19,
        () => c.request("PUBLISH", 19, { topic: "no-such-topic-ws", key: "k", value: "v" }, token),
        "ERROR",
      ],
    ];
    for (const [what, id, send, type] of cases) {
      send();
      const reply = await c.reply(id);
      expect({ what, type: reply.type, content: typeof reply.content }).toEqual({ what, type, content: "string" });
    }
    expect(c.replies()).toEqual([]);
    // The denied subscription is audited as /api/sql/data's denial is.
    const audit = (await (await rt.request(`/api/audit?user=${ROLE_USERS.nodata.name}&limit=1`, { role: "admin" })).json()) as Array<{
      type: string;
      change: string;
      content: Record<string, string>;
    }>;
    expect(audit[0]).toMatchObject({ type: "ACCESS", change: "DENY", content: { outcome: "FAILURE", method: "SUBSCRIBE" } });
  });

  test("a revoked token ends its subscriptions with an ERROR", async () => {
    const t = await topic();
    const c = await connect();
    const token = await login(c, "read");
    c.request("SUBSCRIBE", 2, { sqls: [`SELECT * FROM \`${t}\``] }, token);
    expect((await c.reply(2)).type).toBe("SUCCESS");
    expect((await rt.request("/api/logout", { method: "POST", token })).status).toBe(200);
    const ended = await c.reply(2);
    expect(ended.type).toBe("ERROR");
    expect(ended.content as string).toContain("revoked");
    await rt.kafka.default().writes.produce(t, [{ key: "k", value: "v" }]);
    // A request on the same connection still works, and no record came for the ended subscription.
    const other = await connect();
    other.request("PUBLISH", 1, { topic: t, key: "k2", value: "v2" }, await rt.token("write"));
    expect((await other.reply(1)).type).toBe("SUCCESS");
    expect(c.records()).toEqual([]);
  });

  test("closing the socket ends its subscriptions and gives their query slots back", async () => {
    const t = await topic();
    const c = await connect();
    const token = await login(c, "read");
    const streams = rt.streams.total;
    c.request("SUBSCRIBE", 2, { sqls: [`SELECT * FROM \`${t}\``, `SELECT * FROM \`${t}\` WHERE _key = 'a'`] }, token);
    expect((await c.reply(2)).type).toBe("SUCCESS");
    const running = () => rt.sql.queries.list(ROLE_USERS.read.name, false).length;
    expect(running()).toBe(2);
    expect(rt.streams.total).toBe(streams + 2);
    c.close();
    await waitFor(() => running() === 0, { what: "the subscriptions' queries to end" });
    expect(rt.streams.total).toBe(streams);
  });

  test("a correlationId beyond 2^53 is echoed with every digit", async () => {
    const c = await connect();
    c.ws.send('{"type":"UNSUBSCRIBE","correlationId":9223372036854775807,"content":"{\\"topics\\":[]}","authToken":""}');
    const raw = await c.ws.next();
    expect(raw).toContain('"correlationId":9223372036854775807');
    // No token on this connection: the answer is an ERROR, as a string.
    expect(JSON.parse(raw)).toMatchObject({ type: "ERROR", content: expect.any(String) });
  });

  test("a request that is no websocket handshake gets 426", async () => {
    const res = await rt.request("/api/kafka/ws/x");
    expect(res.status).toBe(426);
    expect(((await res.json()) as { error_code: number }).error_code).toBe(426);
  });

  test("the OpenAPI document lists both websockets with their 101", async () => {
    const doc = (await (await rt.request("/api/openapi.json")).json()) as {
      paths: Record<string, { get?: { responses: Record<string, unknown> } }>;
    };
    for (const path of ["/api/kafka/ws/{clientId}", "/api/ws/jdbc/data"]) expect(doc.paths[path]?.get?.responses["101"]).toBeDefined();
  });

  test("the handshake itself needs no token", async () => {
    const ws = await WsClient.open(rt.url, "/api/kafka/ws/anyone");
    ws.close();
  });
});

describe("live subscription backpressure", () => {
  /** A socket whose client stops reading until `resume()`: it is always behind while paused. */
  function slowSocket() {
    const frames: string[] = [];
    let paused = true;
    let wake: (() => void) | null = null;
    const socket: Socket = {
      send: (text) => {
        frames.push(text);
        return true;
      },
      wouldBlock: () => paused,
      drained: () => (paused ? new Promise<void>((resolve) => (wake = resolve)) : Promise.resolve()),
      closed: false,
      close: () => {},
    };
    return {
      socket,
      frames,
      resume() {
        paused = false;
        wake?.();
      },
    };
  }

  test("a client that stops reading stops the read: nothing more is fetched until its socket drains", async () => {
    const t = await topic();
    const kafka = rt.kafka.default();
    const slow = slowSocket();
    const sub = new Subscription({
      sql: rt.sql,
      compiled: await rt.sql.compile(`SELECT * FROM \`${t}\``, rt.sql.defaultCluster()),
      cluster: rt.sql.defaultCluster(),
      viewer: { name: "backpressure", groups: [], roles: ["admin"] },
      correlationId: "1",
      socket: slow.socket,
      answered: Promise.resolve(),
      onEnded: () => {},
    });
    await sub.start();
    // A reader that keeps up, on the same topic: once it has everything, the slow one had every chance to read it too.
    const fast = await connect();
    fast.request("SUBSCRIBE", 1, { sqls: [`SELECT * FROM \`${t}\``] }, await rt.token("read"));
    expect((await fast.reply(1)).type).toBe("SUCCESS");

    const total = 3000;
    const value = "x".repeat(1000);
    for (let i = 0; i < total; i += 500)
      await kafka.writes.produce(
        t,
        Array.from({ length: 500 }, (_, j) => ({ key: `k${i + j}`, value })),
      );
    await fast.waitForRecords(total, 30_000);
    // The slow subscription sent one frame and waits: it read no further than that frame's fetch.
    expect(slow.frames.length).toBe(1);
    const heldBack = sub.progress!.readRecords;
    expect(heldBack).toBeLessThan(total);

    slow.resume();
    const received = () => slow.frames.reduce((n, f) => n + (JSON.parse(f) as { content: unknown[] }).content.length, 0);
    await waitFor(() => received() === total, { timeoutMs: 30_000, what: "every record once the client reads again" });
    sub.stop();
  });
});

describe("live subscription lifetime", () => {
  test("a subscription ends with an ERROR when its token expires", async () => {
    let now = Date.now();
    const own = await testRuntime({}, { auth: { now: () => now } });
    try {
      const t = await createReadyTopic(own.kafka.default(), { prefix: "ws-expiry", partitions: 1, track: topics });
      const c = await LiveClient.open(own.url, "expiry");
      open.push(c);
      const token = await login(c, "read");
      c.request("SUBSCRIBE", 2, { sqls: [`SELECT * FROM \`${t}\``] }, token);
      expect((await c.reply(2)).type).toBe("SUCCESS");
      // Past the token's lifetime (8 h by default): the next check of open subscriptions ends it.
      now += 8 * 3_600_000 + 1;
      const ended = await c.reply(2);
      expect(ended.type).toBe("ERROR");
      expect(ended.content as string).toContain("expired");
      await waitFor(() => own.sql.queries.list(ROLE_USERS.read.name, false).length === 0, { what: "the query to end" });
    } finally {
      await own.dispose();
    }
  });
});
