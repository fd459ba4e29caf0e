import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { registryEnv } from "../cluster/cluster.ts";
import { registerSchema } from "../helpers/registry.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { createReadyTopic } from "../helpers/topics.ts";
import { WsClient } from "./ws-client.ts";

/**
 * The JDBC driver's select websocket `/api/ws/jdbc/data?sql=` (CLIENTS.md 5.6), against the real
 * broker: the token in the handshake header, the sql form-encoded, and the frames read as the
 * driver reads them (first character the type; the schema parsed as Avro before any row; row
 * values read by position, each a number, boolean or string).
 */
let rt: TestRuntime;
const topics: string[] = [];

beforeAll(async () => {
  rt = await testRuntime({ sql: { schemaRegistry: { urls: registryEnv().urls } } });
});
afterAll(async () => {
  await rt.dispose({ topics });
});

interface AvroRecord {
  type: string;
  name: string;
  fields: Array<{ name: string; type: unknown }>;
}

/** Every frame of a select, in order, until the server closes the socket. */
async function select(sql: string, role: "admin" | "read" | "nodata" = "read"): Promise<string[]> {
  const ws = await WsClient.open(rt.url, `/api/ws/jdbc/data?${new URLSearchParams({ sql })}`, {
    "x-service-token": await rt.token(role),
  });
  await ws.whenClosed(30_000);
  return ws.frames;
}

/** The frames as the driver takes them: the schema, the rows, the error, whether `3` ended them. */
function decode(frames: string[]) {
  const schema = frames.find((f) => f.startsWith("2"));
  return {
    schemaFirst: frames[0]?.startsWith("2") === true,
    schema: schema ? (JSON.parse(schema.slice(1)) as AvroRecord) : null,
    rows: frames.filter((f) => f.startsWith("0")).map((f) => f.slice(1)),
    error: frames.find((f) => f.startsWith("1"))?.slice(1) ?? null,
    ended: frames.at(-1) === "3",
  };
}

async function paymentsTopic(): Promise<string> {
  const t = await createReadyTopic(rt.kafka.default(), { prefix: "cc_payments", partitions: 1, track: topics });
  await rt.kafka.default().writes.produce(
    t,
    [1, 2, 3].map((i) => ({
      key: `p${i}`,
      value: JSON.stringify({
        id: `txn${i}`,
        time: 1_700_000_000_000 + i,
        amount: i + 0.5,
        currency: "EUR",
        approved: i !== 2,
        card: { id: i },
      }),
    })),
  );
  return t;
}

describe("JDBC select websocket", () => {
  test("SELECT * sends the schema first, then one flat row per record in the schema's field order, then 3", async () => {
    const t = await paymentsTopic();
    const got = decode(await select(`SELECT * FROM \`${t}\``));
    expect(got.error).toBeNull();
    expect(got.schemaFirst).toBe(true);
    expect(got.ended).toBe(true);
    expect(got.schema).toMatchObject({ type: "record", name: t.replace(/[^A-Za-z0-9_]/g, "_") });
    expect(got.schema!.fields).toEqual([
      { name: "id", type: "string" },
      { name: "time", type: "long" },
      { name: "amount", type: "double" },
      { name: "currency", type: "string" },
      { name: "approved", type: "boolean" },
      // A nested value is a column of its JSON text.
      { name: "card", type: "string" },
    ]);
    expect(got.rows.length).toBe(3);
    const names = got.schema!.fields.map((f) => f.name);
    for (const text of got.rows) {
      const row = JSON.parse(text) as Record<string, unknown>;
      expect(Object.keys(row)).toEqual(names);
      // Read by position: each value a number, boolean or string.
      for (const v of Object.values(row)) expect(["number", "boolean", "string"]).toContain(typeof v);
    }
    expect(JSON.parse(got.rows[1]!)).toEqual({
      id: "txn2",
      time: 1_700_000_000_002,
      amount: 2.5,
      currency: "EUR",
      approved: false,
      card: '{"id":2}',
    });
  });

  test("a projection names the columns (labels made Avro names), with a WHERE and LIMIT", async () => {
    const t = await paymentsTopic();
    const got = decode(await select(`SELECT id, amount AS total, LEN(currency) FROM \`${t}\` WHERE amount > 2 LIMIT 1`));
    expect(got.error).toBeNull();
    expect(got.schemaFirst && got.ended).toBe(true);
    expect(got.schema!.fields.map((f) => f.name)).toEqual(["id", "total", "LEN_currency_"]);
    expect(got.rows.map((r) => JSON.parse(r))).toEqual([{ id: "txn2", total: 2.5, LEN_currency_: 3 }]);
  });

  test("a query with no rows still sends its schema, then 3", async () => {
    const t = await paymentsTopic();
    const got = decode(await select(`SELECT id, amount FROM \`${t}\` WHERE amount > 100`));
    expect(got).toMatchObject({ schemaFirst: true, ended: true, error: null, rows: [] });
    expect(got.schema!.fields.map((f) => f.name)).toEqual(["id", "amount"]);
  });

  test("for SELECT *, the columns and their types come from the topic's stored Avro schema", async () => {
    const t = await createReadyTopic(rt.kafka.default(), { prefix: "jdbc-avro", partitions: 1, track: topics });
    const schema = JSON.stringify({
      type: "record",
      name: "Payment",
      fields: [
        { name: "id", type: "string" },
        { name: "amount", type: "double" },
        { name: "count", type: "int" },
        { name: "note", type: ["null", "string"] },
        { name: "card", type: { type: "record", name: "Card", fields: [{ name: "id", type: "long" }] } },
      ],
    });
    const stored = await rt.request(`/api/metadata/topics/${t}?keyType=STRING&valueType=AVRO&valueSchema=${encodeURIComponent(schema)}`, {
      method: "POST",
      role: "write",
    });
    expect(stored.status).toBe(200);
    const got = decode(await select(`SELECT * FROM \`${t}\``));
    expect(got).toMatchObject({ schemaFirst: true, ended: true, error: null, rows: [] });
    expect(got.schema!.fields).toEqual([
      { name: "id", type: "string" },
      { name: "amount", type: "double" },
      { name: "count", type: "int" },
      { name: "note", type: ["null", "string"] },
      { name: "card", type: "string" },
    ]);
  });

  test("Avro records (registry wire format) come as flat rows of typed values, a nested record as its JSON text", async () => {
    const t = await createReadyTopic(rt.kafka.default(), { prefix: "jdbc-avro-rows", partitions: 1, track: topics });
    await registerSchema(`${t}-value`, {
      type: "record",
      name: "Trip",
      fields: [
        { name: "id", type: "string" },
        { name: "amount", type: "double" },
        { name: "count", type: "int" },
        { name: "paid", type: "boolean" },
        { name: "card", type: { type: "record", name: "Card", fields: [{ name: "last4", type: "string" }] } },
      ],
    });
    // Written as the driver inserts: text/plain, ISO-8859-1, its SET prefix.
    const inserted = await rt.request("/api/jdbc/insert", {
      method: "POST",
      role: "write",
      headers: { "content-type": "text/plain" },
      body: Buffer.from(
        `SET _ktype='STRING'; SET _vtype='AVRO'; INSERT INTO \`${t}\` (_key, id, amount, count, paid, card.last4) VALUES ('k1', 'a', 0.0, 1, true, '4242'), ('k2', 'b', 2.5, 2, false, '0005')`,
        "latin1",
      ),
    });
    expect(inserted.status).toBe(200);
    const got = decode(await select(`SELECT * FROM \`${t}\``));
    expect(got).toMatchObject({ schemaFirst: true, ended: true, error: null });
    expect(got.schema!.fields.map((f) => f.name)).toEqual(["id", "amount", "count", "paid", "card"]);
    expect(got.rows.map((r) => JSON.parse(r))).toEqual([
      { id: "a", amount: 0, count: 1, paid: true, card: '{"last4":"4242"}' },
      { id: "b", amount: 2.5, count: 2, paid: false, card: '{"last4":"0005"}' },
    ]);
  });

  test("a query bounded by its time ends with 3", async () => {
    const t = await paymentsTopic();
    // 1 ms: the time runs out while the read is planned, and the answer still ends with 3.
    const got = decode(await select(`SET max.query.time=1; SELECT * FROM \`${t}\``));
    expect(got).toMatchObject({ schemaFirst: true, ended: true, error: null });
    expect(got.rows.length).toBeLessThanOrEqual(3);
  });

  test("an unknown topic is an error frame, and nothing follows it", async () => {
    const frames = await select("SELECT * FROM `no-such-topic-jdbc`");
    expect(frames.length).toBe(1);
    expect(frames[0]!.startsWith("1")).toBe(true);
    expect(frames[0]!).toContain("no-such-topic-jdbc");
  });

  test("invalid SQL is an error frame", async () => {
    const frames = await select("SELEC * FROM x");
    expect(frames.length).toBe(1);
    expect(frames[0]!.startsWith("1")).toBe(true);
  });

  test("the handshake needs a token of a role that reads records (401 without, 403 for nodata)", async () => {
    const t = await paymentsTopic();
    const path = `/api/ws/jdbc/data?${new URLSearchParams({ sql: `SELECT * FROM \`${t}\`` })}`;
    const handshake = {
      upgrade: "websocket",
      connection: "Upgrade",
      "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
      "sec-websocket-version": "13",
    };
    expect((await rt.request(path, { headers: handshake })).status).toBe(401);
    expect((await rt.request(path, { headers: handshake, role: "nodata" })).status).toBe(403);
    await expect(WsClient.open(rt.url, path)).rejects.toThrow("handshake");
    // Bearer works as well as x-service-token.
    const ws = await WsClient.open(rt.url, path, { authorization: `Bearer ${await rt.token("read")}` });
    await ws.whenClosed(30_000);
    expect(decode(ws.frames).rows.length).toBe(3);
  });
});
