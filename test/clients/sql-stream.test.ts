/**
 * The SQL data stream as lenses-python and lenses-go use it (CLIENTS.md §5.4): requests with
 * their headers and parameters, the stream read with their readers, every integer field decoded
 * as strictly as they decode it. Avro values are produced through the real schema registry.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import avro from "avsc";
import { sendsStatsInSeconds, statsIntervalMs } from "../../src/domains/sql/stream-answer.ts";
import { confluentWire, registerSchema } from "../helpers/registry.ts";
import { eventually } from "../kafka/helpers.ts";
import { jsonRecords, sqlFixture } from "../sql-exec/helpers.ts";
import { END_INTEGERS, goLines, pythonEvents, RECORD_INTEGERS, rawGet, STATS_INTEGERS, strictIntegers } from "./sql-wire.ts";

const f = sqlFixture();

const tripSchema = {
  type: "record",
  name: "Trip",
  namespace: "loupe.clients",
  fields: [
    { name: "vendor_id", type: "string" },
    { name: "tip_amount", type: "double" },
    { name: "fare", type: "float" },
    { name: "total", type: { type: "bytes", logicalType: "decimal", precision: 40, scale: 18 } },
    { name: "surcharge", type: ["null", "double"], default: null },
    { name: "price", type: { type: "fixed", name: "Price", size: 8, logicalType: "decimal", precision: 18, scale: 2 } },
  ],
};
// Written without logical types: the decimals are the bytes Avro stores.
const tripWriter = avro.Type.forSchema(tripSchema as avro.Schema);

/** Two's complement, big-endian, in `size` bytes (Avro's decimal). */
function unscaled(n: bigint, size: number): Buffer {
  const b = Buffer.alloc(size);
  let rest = BigInt.asUintN(size * 8, n);
  for (let i = size - 1; i >= 0; i--) {
    b[i] = Number(rest & 0xffn);
    rest >>= 8n;
  }
  return b;
}

const trips = [
  { vendor_id: "CMT", tip_amount: 0, fare: 0.1, total: unscaled(4935n * 10n ** 18n, 16), surcharge: 1, price: unscaled(-123n, 8) },
  { vendor_id: "VTS", tip_amount: 1.5, fare: 12, total: unscaled(1n, 16), surcharge: null, price: unscaled(250n, 8) },
];
// Java's text of these values, fields in schema order.
const tripTexts = [
  '{"vendor_id":"CMT","tip_amount":0.0,"fare":0.1,"total":4935.000000000000000000,"surcharge":1.0,"price":-1.23}',
  '{"vendor_id":"VTS","tip_amount":1.5,"fare":12.0,"total":0.000000000000000001,"surcharge":null,"price":2.50}',
];

/** A server of the app of its own, for requests written byte for byte (see rawGet). */
let server: ReturnType<typeof Bun.serve>;
afterAll(() => server?.stop(true));

let taxi: string;
let small: string;
let big: string;
const BIG_RECORDS = 4000;

beforeAll(async () => {
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, idleTimeout: 30, fetch: (req, srv) => f.rt.app.fetch(req, { server: srv }) });
  taxi = await f.topic("clients-taxi", 1);
  const id = await registerSchema(`${taxi}-value`, tripSchema);
  await f.produce(
    taxi,
    trips.map((t, i) => ({ key: `trip-${i}`, value: confluentWire(id, tripWriter.toBuffer(t)) })),
  );
  small = await f.topic("clients-small", 1);
  await f.produce(
    small,
    jsonRecords(20, (i) => ({ i, price: i + 0.5 })),
  );
  big = await f.topic("clients-big", 2);
  const pad = "z".repeat(4000);
  await f.produce(
    big,
    jsonRecords(BIG_RECORDS, (i) => ({ i, pad })),
    200,
  );
});

/** lenses-python SqlHandler: only `sql`, Content-Type and Accept both text/event-stream. */
async function pythonQuery(sql: string): Promise<{ status: number; text: string; events: ReturnType<typeof pythonEvents> }> {
  const res = await f.rt.request(`/api/sql/data?${new URLSearchParams({ sql })}`, {
    role: "read",
    headers: { "content-type": "text/event-stream", accept: "text/event-stream" },
  });
  const text = await res.text();
  return { status: res.status, text, events: pythonEvents(text) };
}

/** lenses-go LSQL: JSON Content-Type on a bodiless GET, two Accept headers, gzip accepted. */
const GO_HEADERS: Array<[string, string]> = [
  ["Content-Type", "application/json"],
  ["Accept", "application/json, text/event-stream"],
  ["Accept", "application/vnd.schemaregistry.v1+json"],
  ["Accept-Encoding", "gzip"],
];

/** The Go client's request written byte for byte: each Accept its own header line. */
async function goQuery(sql: string, params: Record<string, string>) {
  const token = await f.rt.token("read");
  return rawGet(`${server.url}api/sql/data?${new URLSearchParams({ sql, ...params })}`, [...GO_HEADERS, ["x-service-token", token]]);
}

describe("lenses-python", () => {
  test("validation answers 200 whether the query is valid or not, hints and backquoted settings included", async () => {
    const cases: Array<[string, boolean]> = [
      [`SELECT * FROM \`${taxi}\` WHERE _sample=2 AND _sampleWindow=200`, true],
      ["SET `max.time`=5000; SET `max.zero.polls` = 20;\nSELECT * FROM `" + small + "` WHERE _ktype=STRING", true],
      [`SELECT * FROM \`${taxi}\` WHERE _sample=0`, false],
      [`SELECT * FROM \`${taxi}\` WHERE _sampleWindow=200`, false],
      ["SELEC * FROM x", false],
    ];
    for (const [sql, valid] of cases) {
      const res = await f.rt.request(`/api/sql/validation?${new URLSearchParams({ sql })}`, {
        role: "read",
        headers: { "content-type": "application/json" },
      });
      expect(res.status).toBe(200);
      const body = strictIntegers(await res.text(), ["line", "column"]);
      expect(body.isValid).toBe(valid);
      if (!valid) expect(typeof body.message).toBe("string");
    }
  });

  test("regression: _sample and _sampleWindow were read as fields and the query answered 0 rows", async () => {
    const s = await pythonQuery(`SELECT * FROM \`${small}\` WHERE _sample=2 AND _sampleWindow=200`);
    expect(s.status).toBe(200);
    const records = s.events.filter((e) => e.type === 1);
    // At most 2 per 200 ms of the query's run: at least the first 2 of a topic read in one go.
    expect(records.length).toBeGreaterThanOrEqual(2);
    expect(records.length).toBeLessThanOrEqual(20);
    expect(s.events.at(-1)!.type).toBe(2);
    const end = strictIntegers(s.events.at(-1)!.json, END_INTEGERS);
    expect(end).toMatchObject({ totalRecords: 20, skippedRecords: 20 - records.length, isTopicEnd: true });
  });

  test("regression: an Avro double 0 was written 0, not 0.0; decimals keep their scale, fields in schema order", async () => {
    const s = await pythonQuery(`SELECT * FROM \`${taxi}\``);
    const records = s.events.filter((e) => e.type === 1).map((e) => strictIntegers(e.json, RECORD_INTEGERS));
    expect(records).toHaveLength(2);
    // As the Python test does: a substring of the value text.
    expect(records[0]!.value as string).toContain('"tip_amount":0.0');
    expect(records[0]!.value as string).toContain('"total":4935.000000000000000000');
    expect(records.map((r) => r.value)).toEqual(tripTexts);
    expect(records[0]!.key).toBe("trip-0");
  });

  test("regression: a projected Avro double was written 0; a column that is a path into the value keeps its type, a computed one is a number", async () => {
    const s = await pythonQuery(
      `SELECT fare, tip_amount, total AS t, price, surcharge, tip_amount + 1 AS plus, _value.vendor_id FROM \`${taxi}\``,
    );
    expect(s.events.filter((e) => e.type === 3)).toEqual([]);
    const values = s.events.filter((e) => e.type === 1).map((e) => JSON.parse(e.json).value as string);
    expect(values).toEqual([
      '{"fare":0.1,"tip_amount":0.0,"t":4935.000000000000000000,"price":-1.23,"surcharge":1.0,"plus":1,"vendor_id":"CMT"}',
      '{"fare":12.0,"tip_amount":1.5,"t":0.000000000000000001,"price":2.50,"surcharge":null,"plus":2.5,"vendor_id":"VTS"}',
    ]);
  });

  test("the sample hints with a filter on an Avro topic, and several SETs with backquoted names", async () => {
    const s = await pythonQuery(
      `SET \`max.time\`=5000; SET \`max.zero.polls\` = 20; SET max.bytes = 1m;\nSELECT * FROM \`${taxi}\` WHERE tip_amount >= 0 AND _sample=2 AND _sampleWindow=200`,
    );
    expect(s.events.filter((e) => e.type === 3)).toEqual([]);
    expect(s.events.filter((e) => e.type === 1).map((e) => JSON.parse(e.json).value)).toEqual(tripTexts);
    const end = strictIntegers(s.events.at(-1)!.json, END_INTEGERS);
    expect(end).toMatchObject({ isTopicEnd: true, isTimeRemaining: true, isStopped: false, recordsLimit: 10_000 });
  });

  test("an invalid hint is one type 3 event with its position", async () => {
    const s = await pythonQuery(`SELECT * FROM \`${small}\` WHERE _sample=2 AND _sampleWindow=-5`);
    const events = s.events.filter((e) => e.type !== 0);
    expect(events.map((e) => e.type)).toEqual([3]);
    const error = strictIntegers(events[0]!.json, ["fromLine", "toLine", "fromColumn", "toColumn"]);
    expect(error.fromLine).toBe(1);
    expect(error.fromColumn).toBe(`SELECT * FROM \`${small}\` WHERE _sample=2 AND _sampleWindow=`.length + 1);
    expect(error.error).toContain("Invalid value '-5' for _sampleWindow");
  });
});

describe("lenses-go", () => {
  test("stats=2 is seconds; statistics and end fields are integers with the clients' meanings; offsets=true", async () => {
    // The Go client's headers, as fetch sends them (the two Accept values joined in one line).
    // Its reader does not read until the query is over: backpressure holds the query until
    // max.time, and a statistics line is due 2 s in.
    const headers = new Headers(GO_HEADERS.filter(([k]) => k !== "Accept-Encoding"));
    const res = await f.rt.request(
      `/api/sql/data?${new URLSearchParams({ sql: `SET \`max.time\`=3000; SET max.bytes = 100m; SELECT * FROM \`${big}\` WHERE i >= 0`, stats: "2", offsets: "true" })}`,
      { role: "read", headers },
    );
    expect(await eventually(async () => f.rt.sql.queries.size === 0, 20_000)).toBe(true);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const text = await res.text();
    // Every event is `data:<digit><json>` followed by a blank line; no comment lines.
    expect(text.endsWith("\n\n")).toBe(true);
    for (const line of text.split("\n\n").slice(0, -1)) expect(line).toMatch(/^data:[0-4]/);
    const lines = goLines(text);
    expect(pythonEvents(text).map((e) => e.type)).toEqual(lines.map((l) => l.type));
    for (const heartbeat of lines.filter((l) => l.type === 0)) expect(heartbeat.json).toBe("");
    for (const r of lines.filter((l) => l.type === 1).slice(0, 50)) strictIntegers(r.json, RECORD_INTEGERS);

    const end = lines.at(-1)!;
    expect(end.type).toBe(2);
    const body = strictIntegers(end.json, END_INTEGERS) as Record<string, any>;
    const returned = lines.filter((l) => l.type === 1).length;
    expect(body.totalRecords).toBeGreaterThanOrEqual(returned);
    expect(body.skippedRecords).toBe(body.totalRecords - returned);
    expect(body.size).toBeLessThanOrEqual(body.totalSizeRead);
    expect(body.offsets.length).toBeGreaterThan(0);
    for (const o of body.offsets) expect(Number.isInteger(o.partition) && Number.isInteger(o.min) && Number.isInteger(o.max)).toBe(true);

    const stats = lines.filter((l) => l.type === 4);
    if (body.stopReason === "MAX_QUERY_TIME") {
      // max.time ran out: the time flag says so, and a statistics line came at 2 s (not 2 ms).
      expect(body.isTimeRemaining).toBe(false);
      expect(stats.length).toBeGreaterThanOrEqual(1);
      expect(stats.length).toBeLessThanOrEqual(2);
    } else {
      // The client's buffers took the whole topic before 3 s: no wait for the reader.
      expect(body.stopReason).toBe("END");
    }
    for (const line of stats) {
      const s = strictIntegers(line.json, STATS_INTEGERS) as Record<string, number>;
      // The clients' fields, plus what the read covers once it is planned (an integer too: Go
      // ignores a field it does not know, Python keeps statistics as text).
      const added = Object.keys(s).filter((k) => !(STATS_INTEGERS as readonly string[]).includes(k));
      expect(added.filter((k) => k !== "offsetsToRead")).toEqual([]);
      if (added.length > 0) strictIntegers(line.json, ["offsetsToRead"]);
      expect(Object.keys(s).length - added.length).toBe(STATS_INTEGERS.length);
      expect(s.recordsLimit).toBe(10_000);
      expect(s.maxSize).toBe(100 * 1024 * 1024);
      expect(s.totalBytes).toBeGreaterThanOrEqual(s.currentSize!);
      expect(s.totalRecords).toBeGreaterThanOrEqual(s.recordsSkipped!);
    }
  }, 60_000);

  test("stats=100 from the Go client (two Accept header lines) is 100 s; from another client 100 ms", async () => {
    const sql = `SELECT * FROM \`${big}\` WHERE i >= 0`;
    const go = await goQuery(sql, { stats: "100" });
    expect(go.status).toBe(200);
    const goEnd = goLines(go.body).at(-1)!;
    expect(goEnd.type).toBe(2);
    expect(goLines(go.body).filter((l) => l.type === 4)).toHaveLength(0);
    // The same query, read as fast, with statistics every 100 ms while it runs.
    const t0 = performance.now();
    const other = await f.rt.request(`/api/sql/data?${new URLSearchParams({ sql, stats: "100" })}`, {
      role: "read",
      headers: { accept: "text/event-stream" },
    });
    const lines = goLines(await other.text());
    const ranMs = performance.now() - t0;
    expect(lines.filter((l) => l.type === 4).length).toBeLessThanOrEqual(Math.ceil(ranMs / 100));
    if (ranMs > 400) expect(lines.filter((l) => l.type === 4).length).toBeGreaterThanOrEqual(1);
  }, 60_000);

  test("a query the Go client reads at once: no statistics before 2 s, end with offsets", async () => {
    const res = await goQuery(`SELECT * FROM \`${small}\` LIMIT 5`, { stats: "2", offsets: "true" });
    const lines = goLines(res.body);
    expect(lines.filter((l) => l.type === 1)).toHaveLength(5);
    expect(lines.filter((l) => l.type === 4)).toHaveLength(0);
    const end = strictIntegers(lines.at(-1)!.json, END_INTEGERS);
    expect(end).toMatchObject({
      totalRecords: 5,
      skippedRecords: 0,
      recordsLimit: 5,
      isTopicEnd: false,
      offsets: [{ partition: 0, min: 0, max: 4 }],
    });
  });

  test("stats: seconds below 100 and from the Go client whatever the value, else milliseconds (SPEC)", () => {
    const go = sendsStatsInSeconds("application/json, text/event-stream, application/vnd.schemaregistry.v1+json");
    expect(go).toBe(true);
    expect(sendsStatsInSeconds("text/event-stream")).toBe(false);
    expect(sendsStatsInSeconds(undefined)).toBe(false);
    const cases: Array<[number | undefined, boolean, number | null]> = [
      [undefined, true, null],
      [0, true, null],
      [2, true, 2_000],
      [120, true, 120_000], // --stats=2m
      [3600, true, 3_600_000], // --stats=1h
      [2, false, 2_000],
      [99, false, 99_000],
      [150, false, 150],
      [4000, false, 4_000],
    ];
    for (const [value, fromGo, ms] of cases) expect(statsIntervalMs(value, fromGo)).toBe(ms);
  });
});
