// @no-services
/**
 * Stream programs run on hand-made records: filter, projection and re-key of stateless programs;
 * each aggregate under SQL's null rule; the windows of a timestamp at their bounds; what a group
 * emits; accumulators that go through JSON (the changelog) and come back unchanged in effect.
 * Every expectation is computed by hand.
 */
import { describe, expect, test } from "bun:test";
import { type AggregateProgram, compileStream, type RecordView } from "../../src/sql/index.ts";
import { NOW, record } from "./helpers.ts";
import { streamCatalog } from "./stream-helpers.ts";

function program(sql: string) {
  return compileStream(sql, streamCatalog, { now: NOW });
}

function aggregateOf(sql: string): AggregateProgram {
  const compiled = program(sql);
  expect(compiled.project).toBeNull();
  if (compiled.aggregate === null) throw new Error("not an aggregate program");
  return compiled.aggregate;
}

/** Folds the records into a fresh accumulator, through JSON after each one, as a restored state would be. */
function fold(aggregate: AggregateProgram, views: RecordView[]): unknown[] {
  let acc = aggregate.initial();
  for (const view of views) {
    aggregate.accumulate(acc, view);
    acc = JSON.parse(JSON.stringify(acc));
  }
  return acc;
}

const order = (value: unknown, fields: Parameters<typeof record>[0] = {}) => record({ ...fields, value });

describe("stateless programs", () => {
  const rekey = program(
    "INSERT INTO dst SELECT STREAM customer.name AS _key, id, total * 2 AS twice, UPPERCASE(status) FROM orders WHERE total > 10 AND status = 'paid'",
  );

  test.each([
    [{ id: 1, total: 20, status: "paid", customer: { name: "ann" } }, true],
    [{ id: 2, total: 10, status: "paid", customer: { name: "bob" } }, false],
    [{ id: 3, total: 50, status: "open", customer: { name: "bob" } }, false],
    [{ id: 4, total: null, status: "paid" }, false],
    [{ id: 5, status: "paid" }, false],
    ["not an object", false],
    [null, false],
  ] as [unknown, boolean][])("filter of %j is %p", (value, expected) => {
    expect(rekey.filter(order(value))).toBe(expected);
  });

  test.each([
    [
      { id: 1, total: 20, status: "paid", customer: { name: "ann" } },
      { key: "ann", value: { id: 1, twice: 40, "UPPERCASE(status)": "PAID" } },
    ],
    // A missing key field re-keys to a null key, not to "keep the input key".
    [
      { id: 6, total: 11, status: "paid" },
      { key: null, value: { id: 6, twice: 22, "UPPERCASE(status)": "PAID" } },
    ],
  ] as [unknown, unknown][])("projection of %j", (value, expected) => {
    expect(rekey.project?.(order(value, { key: "input-key" }))).toEqual(expected as never);
  });

  test("the client's program passes every record through with its key", () => {
    const client = compileStream(
      " SET autocreate=true; INSERT INTO target SELECT STREAM * FROM source WHERE _ktype=AVRO and _vtype=AVRO",
      streamCatalog,
    );
    const view = order({ a: 1 }, { key: { id: 7 } });
    expect(client.filter(view)).toBe(true);
    const output = client.project?.(view);
    expect(output).toEqual({ value: { a: 1 } });
    expect(output !== undefined && "key" in output).toBe(false);
  });

  test("a program that only re-keys keeps the value as it is", () => {
    const only = program("INSERT INTO dst SELECT STREAM _value.id AS _key FROM orders");
    expect(only.project?.(order({ id: 9, total: 1 }, { key: "old" }))).toEqual({ key: 9, value: { id: 9, total: 1 } });
  });

  test("metadata and the key are projected as in queries", () => {
    const meta = program("INSERT INTO dst SELECT STREAM _meta.*, _key, _meta.timestamp AS ts, _ts FROM src");
    const view = record({ key: "k", value: {}, partition: 2, offset: 41, timestamp: 1000, keySize: 1, valueSize: 2 });
    expect(meta.project?.(view)).toEqual({
      value: { partition: 2, offset: 41, timestamp: 1000, __keysize: 1, __valuesize: 2, _key: "k", ts: 1000, timestamp_2: 1000 },
    });
    expect(meta.columns).toEqual(["partition", "offset", "timestamp", "__keysize", "__valuesize", "_key", "ts", "timestamp_2"]);
  });

  test("timestamps compared with dates are read as epoch milliseconds, as in queries", () => {
    const recent = program("INSERT INTO dst SELECT * FROM src WHERE _meta.timestamp >= '2024-06-01T12:00:00Z'");
    expect(recent.filter(record({ timestamp: NOW }))).toBe(true);
    expect(recent.filter(record({ timestamp: NOW - 1 }))).toBe(false);
  });
});

describe("aggregates", () => {
  const values: unknown[] = [4, null, undefined, "7", 10, true, -2, { n: 1 }];
  // COUNT(*) counts every record; COUNT(v) the non-null v; SUM and AVG numbers only (4, 10, -2);
  // MIN and MAX every value they can order against what they hold ("7" reads as 7, a boolean or an
  // object cannot be ordered against a number and is passed over).
  test.each([
    ["COUNT(*)", values, 8],
    ["COUNT(v)", values, 6],
    ["SUM(v)", values, 12],
    ["AVG(v)", values, 4],
    ["MIN(v)", values, -2],
    ["MAX(v)", values, 10],
    ["COUNT(*)", [], 0],
    ["COUNT(v)", [null, undefined], 0],
    ["SUM(v)", [], null],
    ["SUM(v)", [null, "5", true], null],
    ["AVG(v)", [], null],
    ["AVG(v)", [null, "x"], null],
    ["AVG(v)", [1, 2], 1.5],
    ["MIN(v)", [], null],
    ["MAX(v)", [null], null],
    ["MIN(v)", ["b", "a", "c"], "a"],
    ["MAX(v)", ["b", "a", "c"], "c"],
    ["SUM(v * 2)", [1, 2, null], 6],
    ["COUNT(_meta.offset)", [1, 2], 2],
  ] as [string, unknown[], unknown][])("%s over %j is %j", (aggregate, inputs, expected) => {
    const program = aggregateOf(`INSERT INTO totals SELECT STREAM _key, ${aggregate} AS r FROM src GROUP BY _key`);
    const acc = fold(
      program,
      inputs.map((v, i) => record({ key: "k", value: { v }, offset: i })),
    );
    expect(program.emit(["k"], acc, null)).toEqual({ key: "k", value: { _key: "k", r: expected } });
  });

  test("each aggregate of one projection keeps its own accumulator, through JSON", () => {
    const program = aggregateOf(
      "INSERT INTO totals SELECT STREAM status, COUNT(*) AS n, COUNT(total) AS c, SUM(total) AS s, AVG(total) AS a, MIN(total) AS lo, MAX(total) AS hi FROM orders GROUP BY status",
    );
    const acc = fold(
      program,
      [3, null, 5, "x"].map((total) => order({ status: "paid", total })),
    );
    expect(acc).toEqual(JSON.parse(JSON.stringify(acc)));
    expect(program.emit(["paid"], acc, null)).toEqual({
      key: "paid",
      value: { status: "paid", n: 4, c: 3, s: 8, a: 4, lo: 3, hi: 5 },
    });
    // A fresh group emits the empty aggregates.
    expect(program.emit(["open"], program.initial(), null)).toEqual({
      key: "open",
      value: { status: "open", n: 0, c: 0, s: null, a: null, lo: null, hi: null },
    });
  });

  test("an accumulator restored from JSON goes on where it was", () => {
    const program = aggregateOf("INSERT INTO totals SELECT STREAM _key, SUM(v) AS s, AVG(v) AS a FROM src GROUP BY _key");
    const first = fold(program, [record({ value: { v: 1 } }), record({ value: { v: 2 } })]);
    const restored = JSON.parse(JSON.stringify(first)) as unknown[];
    program.accumulate(restored, record({ value: { v: 6 } }));
    expect(program.emit([null], restored, null).value).toEqual({ _key: null, s: 9, a: 3 });
  });
});

describe("group keys and what a group emits", () => {
  const view = order({ status: "paid", total: 5, customer: { name: "ann", city: "Oslo" } }, { key: { id: 1 } });

  test.each([
    ["INSERT INTO totals SELECT STREAM _key, COUNT(*) AS n FROM orders GROUP BY _key", [{ id: 1 }], true],
    ["INSERT INTO totals SELECT STREAM _key, COUNT(*) AS n FROM orders GROUP BY TUMBLE(1, m), _key", [{ id: 1 }], true],
    ["INSERT INTO totals SELECT STREAM _key.id, COUNT(*) AS n FROM orders GROUP BY _key.id", [1], false],
    ["INSERT INTO totals SELECT STREAM _key, status, COUNT(*) AS n FROM orders GROUP BY _key, status", [{ id: 1 }, "paid"], false],
    ["INSERT INTO totals SELECT STREAM status, COUNT(*) AS n FROM orders GROUP BY status", ["paid"], false],
    ["INSERT INTO totals SELECT STREAM COUNT(*) AS n FROM orders GROUP BY customer.zip", [null], false],
    ["INSERT INTO totals SELECT STREAM COUNT(*) AS n FROM orders GROUP BY TUMBLE(1, m)", [], false],
  ] as [string, unknown[], boolean][])("%s", (sql, groupKey, byRecordKey) => {
    const program = aggregateOf(sql.replace("customer.zip", "customer.city"));
    const expectedKey = sql.includes("customer.zip") ? ["Oslo"] : groupKey;
    expect(program.groupKey(view)).toEqual(expectedKey);
    expect(program.groupedByRecordKey).toBe(byRecordKey);
  });

  test.each([
    // One field: its value is the key.
    [
      "INSERT INTO totals SELECT STREAM status, COUNT(*) AS n FROM orders GROUP BY status",
      null,
      { key: "paid", value: { status: "paid", n: 1 } },
    ],
    // Several: an array of them, in GROUP BY order.
    [
      "INSERT INTO totals SELECT STREAM customer.city, status, COUNT(*) AS n FROM orders GROUP BY status, customer.city",
      null,
      { key: ["paid", "Oslo"], value: { city: "Oslo", status: "paid", n: 1 } },
    ],
    // None: a null key.
    [
      "INSERT INTO totals SELECT STREAM COUNT(*) AS n FROM orders GROUP BY TUMBLE(1, m)",
      { start: 0, end: 60_000 },
      {
        key: null,
        value: { n: 1, windowStart: 0, windowEnd: 60_000 },
      },
    ],
    // AS _key: that item is the key and not in the value; it may read the group's fields and aggregates.
    [
      "INSERT INTO totals SELECT STREAM CONCAT(UPPERCASE(status), '-', COUNT(*)) AS _key, SUM(total) AS s FROM orders GROUP BY status",
      null,
      { key: "PAID-1", value: { s: 5 } },
    ],
    // A GROUP BY alias; an expression of group fields and aggregates; a window's bounds last.
    [
      "INSERT INTO totals SELECT STREAM UPPERCASE(status) AS st, SUM(total) * 10 / COUNT(*) AS mean FROM orders GROUP BY HOP(5, m, 1, m), st",
      { start: 60_000, end: 360_000 },
      { key: "PAID", value: { st: "PAID", mean: 50, windowStart: 60_000, windowEnd: 360_000 } },
    ],
    // A projection that names windowStart keeps its own.
    [
      "INSERT INTO totals SELECT STREAM status AS windowStart, COUNT(*) AS n FROM orders WINDOW BY TUMBLE 1m GROUP BY status",
      { start: 120_000, end: 180_000 },
      { key: "paid", value: { windowStart: "paid", n: 1, windowEnd: 180_000 } },
    ],
  ] as [string, { start: number; end: number } | null, unknown][])("%s", (sql, window, expected) => {
    const program = aggregateOf(sql);
    const acc = fold(program, [view]);
    expect(program.emit(program.groupKey(view), acc, window)).toEqual(expected as never);
  });
});

describe("windows of a timestamp: start inclusive, end exclusive", () => {
  const windows = (sql: string, timestamp: number) => aggregateOf(sql).windowsOf(timestamp);
  const tumble = "INSERT INTO totals SELECT STREAM _key, COUNT(*) FROM src GROUP BY TUMBLE(1, m), _key";
  const hop = "INSERT INTO totals SELECT STREAM _key, COUNT(*) FROM src WINDOW BY HOP 5m, 1m GROUP BY _key";
  const hopSeconds = "INSERT INTO totals SELECT STREAM _key, COUNT(*) FROM src GROUP BY HOP(10, s, 5, s), _key";
  const span = (start: number, size: number) => ({ start, end: start + size });

  test.each([
    [tumble, 0, [span(0, 60_000)]],
    [tumble, 59_999, [span(0, 60_000)]],
    [tumble, 60_000, [span(60_000, 60_000)]],
    [tumble, 1_700_000_000_123, [span(1_699_999_980_000, 60_000)]],
    [hop, 600_000, [360_000, 420_000, 480_000, 540_000, 600_000].map((s) => span(s, 300_000))],
    [hop, 659_999, [360_000, 420_000, 480_000, 540_000, 600_000].map((s) => span(s, 300_000))],
    [hop, 660_000, [420_000, 480_000, 540_000, 600_000, 660_000].map((s) => span(s, 300_000))],
    [hop, 299_999, [0, 60_000, 120_000, 180_000, 240_000].map((s) => span(s, 300_000))],
    [hopSeconds, 12_345, [span(5_000, 10_000), span(10_000, 10_000)]],
    [hopSeconds, 15_000, [span(10_000, 10_000), span(15_000, 10_000)]],
    [hopSeconds, 14_999, [span(5_000, 10_000), span(10_000, 10_000)]],
  ] as [string, number, { start: number; end: number }[]][])("%s at %d", (sql, timestamp, expected) => {
    const found = windows(sql, timestamp);
    expect(found).toEqual(expected);
    for (const w of found) expect(w.start <= timestamp && timestamp < w.end).toBe(true);
  });

  test("a table has no windows", () => {
    expect(windows("INSERT INTO totals SELECT STREAM _key, COUNT(*) FROM src GROUP BY _key", 5)).toEqual([]);
  });
});
