/**
 * Issue 29, Protobuf values and keys decoded wherever Avro is: registry-framed records (the
 * Confluent wire format with message indexes) whose schema imports another registered file,
 * with nested, repeated, map, oneof, enum, 64-bit and well-known-type fields, queried by field,
 * filtered and projected; one record written by Google's own implementation (Python); records
 * whose bytes do not fit skipped and counted, never ending the stream.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { LiveClient, WsClient } from "../clients/ws-client.ts";
import { encodeWith, ORDER_PROTO, orderTypes, pythonDecode, pythonEncode, registerOrderSchema } from "../helpers/protobuf.ts";
import { confluentWire } from "../helpers/registry.ts";
import { q, sqlFixture, stream } from "./helpers.ts";

const f = sqlFixture();
const { order, refund, money } = orderTypes();

/** The wire format of the test's records: the header, the message indexes ([0] as the single byte 0), the message. */
const framed = (id: number, indexes: number[], body: Buffer) =>
  confluentWire(
    id,
    Buffer.concat([Buffer.from(indexes.length === 1 && indexes[0] === 0 ? [0] : [indexes.length * 2, ...indexes.map((i) => i * 2)]), body]),
  );

const O1 = {
  id: "o1",
  status: "PLACED",
  lines: [{ sku: "pen", qty: 3, price: { currency: "EUR", units: "250" } }],
  counts: { pens: "3" },
  card: "4111",
  placed_at: "2024-05-01T10:00:00Z",
  total: "750",
  extra: { gift: true, labels: ["a", 1] },
  note: "ring twice",
  tags: ["new"],
};
const O2 = {
  id: "o2",
  status: "SHIPPED",
  lines: [
    { sku: "ink", qty: 1, price: { currency: "EUR", units: "9007199254740993" } },
    { sku: "pad", qty: 2 },
  ],
  voucher: "SPRING",
  placed_at: "2024-05-02T08:30:00.500Z",
  total: "9007199254740993",
};
/** Written by Python's protobuf. */
const O3 = {
  id: "o3",
  status: "SHIPPED",
  lines: [{ sku: "cap", qty: 1, price: { currency: "USD", units: "12" } }],
  counts: { caps: "1", hats: "2" },
  voucher: "V3",
  placed_at: "2024-05-03T00:00:00.000001Z",
  total: "12",
  tags: ["py"],
};

/** What a query sees of them: proto names, defaults shown, unset messages and oneof members left out. */
const SEEN = [
  {
    id: "o1",
    status: "PLACED",
    lines: [{ sku: "pen", qty: 3, price: { currency: "EUR", units: 250 } }],
    counts: { pens: 3 },
    card: "4111",
    placed_at: "2024-05-01T10:00:00Z",
    total: 750,
    extra: { gift: true, labels: ["a", 1] },
    note: "ring twice",
    tags: ["new"],
  },
  {
    id: "o2",
    status: "SHIPPED",
    lines: [
      { sku: "ink", qty: 1, price: { currency: "EUR", units: "9007199254740993" } },
      { sku: "pad", qty: 2 },
    ],
    counts: {},
    voucher: "SPRING",
    placed_at: "2024-05-02T08:30:00.500Z",
    total: "9007199254740993",
    tags: [],
  },
  {
    id: "o3",
    status: "SHIPPED",
    lines: [{ sku: "cap", qty: 1, price: { currency: "USD", units: 12 } }],
    counts: { caps: 1, hats: 2 },
    voucher: "V3",
    placed_at: "2024-05-03T00:00:00.000001Z",
    total: 12,
    tags: ["py"],
  },
  { order_id: "o1", amount: 750 },
];

const values = (s: { records: Array<{ value: string }> }) => s.records.map((r) => JSON.parse(r.value));

describe("29: Protobuf through the schema registry", () => {
  let topic: string;
  let ids: { common: number; order: number };
  const BAD = Buffer.from([0xff, 0xff, 0xff]);

  beforeAll(async () => {
    topic = await f.topic("proto", 1);
    ids = await registerOrderSchema(topic);
    const key = (units: number) => framed(ids.common, [0], encodeWith(money, { currency: "EUR", units }));
    await f.produce(topic, [
      { key: key(1), value: framed(ids.order, [0], encodeWith(order, O1)) },
      { key: key(2), value: framed(ids.order, [0], encodeWith(order, O2)) },
      { key: key(3), value: pythonEncode("loupe.test.Order", O3, { id: ids.order }) },
      { key: key(4), value: framed(ids.order, [1], encodeWith(refund, { order_id: "o1", amount: "750" })) },
      { key: key(5), value: framed(ids.order, [0], BAD) },
    ]);
  });

  test("29: inferred from the wire format: references, nested, repeated, map, oneof, enums, int64 and well-known types", async () => {
    const s = await stream(f.rt, `SELECT * FROM \`${topic}\``);
    expect(s.end).toMatchObject({ totalRecords: 5 });
    const seen = values(s);
    expect(seen.slice(0, 4)).toEqual(SEEN);
    // Bytes the schema does not fit: inference shows them as what they are (not JSON, not text).
    expect(seen[4]).toBe(framed(ids.order, [0], BAD).toString("base64"));
    expect(JSON.parse(s.records[0].key)).toEqual({ currency: "EUR", units: 1 });
  });

  test("29: fields filter and project; a record whose bytes do not fit is skipped and counted", async () => {
    const sql = `SET value.format = PROTOBUF; SET key.format = PROTOBUF;
      SELECT id, _key.units AS k, lines[0].price.units AS units, lines[1].sku AS second, counts.caps AS caps, voucher, placed_at
      FROM \`${topic}\` WHERE status = 'SHIPPED' AND lines[0].qty = 1`;
    const s = await stream(f.rt, sql);
    expect(values(s)).toEqual([
      { id: "o2", k: 2, units: "9007199254740993", second: "pad", caps: null, voucher: "SPRING", placed_at: "2024-05-02T08:30:00.500Z" },
      { id: "o3", k: 3, units: 12, second: null, caps: 1, voucher: "V3", placed_at: "2024-05-03T00:00:00.000001Z" },
    ]);
    const all = await stream(f.rt, `SET value.format = PROTOBUF; SELECT * FROM \`${topic}\``);
    expect(values(all)).toEqual(SEEN);
    expect(all.end).toMatchObject({ totalRecords: 5, skippedRecords: 1, undecodableRecords: 1, isTopicEnd: true });
    const oneof = await stream(f.rt, `SELECT id FROM \`${topic}\` WHERE card IS NOT NULL OR extra.gift = true`);
    expect(values(oneof)).toEqual([{ id: "o1" }]);
  });

  test("29: the JSON answer and the message browser decode them too", async () => {
    const res = await f.rt.request(q(`SELECT id, note FROM \`${topic}\` WHERE id = 'o1'`), { role: "read" });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { messages: Array<{ value: string }> };
    expect(body.messages.map((m) => JSON.parse(m.value))).toEqual([{ id: "o1", note: "ring twice" }]);

    const page = await f.rt.request(`/api/topics/${topic}/records?seek=oldest`, { role: "read" });
    const browsed = (await page.json()) as {
      records: Array<{ key: { format: string; text: string }; value: { format: string; text: string; error?: string } }>;
    };
    expect(browsed.records.map((r) => r.value.format)).toEqual(["PROTOBUF", "PROTOBUF", "PROTOBUF", "PROTOBUF", "BYTES"]);
    expect(JSON.parse(browsed.records[2]!.value.text)).toEqual(SEEN[2]);
    expect(browsed.records[0]!.key).toMatchObject({ format: "PROTOBUF" });
    // The topic's page takes the subject's type for a side guessed from the wire format.
    const described = await (await f.rt.request(`/api/topics/${topic}`, { role: "read" })).json();
    expect(described).toMatchObject({ valueType: "PROTOBUF", valueSchema: ORDER_PROTO });
  });

  test("29: a live subscription and the JDBC driver's select get the decoded fields", async () => {
    const sql = `SELECT id, lines[0].sku AS sku FROM \`${topic}\` WHERE status = 'SHIPPED'`;
    const live = await LiveClient.open(f.rt.url, "proto-live", { "x-service-token": await f.rt.token("read") });
    try {
      live.request("SUBSCRIBE", 7, { sqls: [sql] });
      await live.reply(7);
      const o4 = { id: "o4", status: "SHIPPED", lines: [{ sku: "hat" }] };
      await f.produce(topic, [{ value: framed(ids.order, [0], encodeWith(order, o4)) }]);
      const [received] = await live.waitForRecords(1);
      expect(JSON.parse(received!.value)).toEqual({ id: "o4", sku: "hat" });
    } finally {
      live.close();
    }
    const ws = await WsClient.open(f.rt.url, `/api/ws/jdbc/data?${new URLSearchParams({ sql })}`, {
      "x-service-token": await f.rt.token("read"),
    });
    await ws.whenClosed(30_000);
    expect(ws.frames.filter((x) => x.startsWith("0")).map((x) => JSON.parse(x.slice(1)))).toEqual([
      { id: "o2", sku: "ink" },
      { id: "o3", sku: "cap" },
      { id: "o4", sku: "hat" },
    ]);
    expect(ws.frames.at(-1)).toBe("3");
  });

  test("29: an unframed record, or one whose message index names no message, is skipped and counted under PROTOBUF", async () => {
    const t = await f.topic("proto-mixed", 1);
    await f.produce(t, [
      { value: encodeWith(refund, { order_id: "bare", amount: "1" }) },
      { value: framed(ids.order, [1], encodeWith(refund, { order_id: "ok", amount: "2" })) },
      { value: framed(ids.order, [7], encodeWith(refund, { order_id: "no such index", amount: "3" })) },
    ]);
    const s = await stream(f.rt, `SET value.format = PROTOBUF; SELECT order_id FROM \`${t}\``);
    expect(values(s)).toEqual([{ order_id: "ok" }]);
    expect(s.end).toMatchObject({ totalRecords: 3, undecodableRecords: 2 });
  });
});

describe("29: INSERT writes Protobuf", () => {
  test("29: rows in the subject's schema, in the wire format, read back by Python's protobuf; a value that does not fit writes nothing", async () => {
    const t = await f.topic("proto-insert", 1);
    const ids = await registerOrderSchema(t);
    // The JDBC listing names the types an INSERT without SET writes.
    const tables = (await (await f.rt.request("/api/jdbc/metadata/table", { role: "read" })).json()) as Array<Record<string, string>>;
    expect(tables.find((x) => x.name === t)).toEqual({ name: t, keyType: "STRING", valueType: "PROTOBUF" });
    const insert = (sql: string) =>
      f.rt.request("/api/jdbc/insert", { method: "POST", role: "write", headers: { "content-type": "text/plain" }, body: sql });
    const res = await insert(
      `INSERT INTO \`${t}\` (_key, id, status, total, voucher, placed_at, note) VALUES ('k1', 'o9', 'SHIPPED', 9007199254740993, 'V9', '2024-05-01T10:00:00Z', 'hi')`,
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ records: 1, keyType: "STRING", valueType: "PROTOBUF" });
    const whole = await insert(
      `INSERT INTO \`${t}\` (_key, _value) VALUES ('k2', '{"id": "o10", "lines": [{"sku": "pen", "qty": 2, "price": {"currency": "EUR", "units": 3}}], "counts": {"pens": 2}, "card": "4111"}')`,
    );
    expect(whole.status).toBe(200);
    const bad = await insert(`INSERT INTO \`${t}\` (_key, id, total) VALUES ('k3', 'o11', 'many')`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toContain("total");

    const kafka = f.rt.kafka.default();
    const written: Buffer[] = [];
    const ends = await kafka.offsets.bounds([t]);
    for await (const r of kafka.reads.records({ topic: t, partitions: [{ partition: 0, from: 0, to: ends[0]!.latest }] }))
      written.push(Buffer.from(r.value!));
    expect(written).toHaveLength(2);
    const [first, second] = written.map((b) => pythonDecode("loupe.test.Order", b, true));
    expect(first).toMatchObject({ id: ids.order, indexes: [0] });
    expect(first!.value).toEqual({
      id: "o9",
      status: "SHIPPED",
      lines: [],
      counts: {},
      voucher: "V9",
      placed_at: "2024-05-01T10:00:00Z",
      total: "9007199254740993",
      note: "hi",
      tags: [],
    });
    expect(second!.value).toMatchObject({
      id: "o10",
      lines: [{ sku: "pen", qty: 2, price: { currency: "EUR", units: "3" } }],
      counts: { pens: "2" },
      card: "4111",
    });
  });
});
