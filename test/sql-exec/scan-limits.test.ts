/**
 * A search cut short by a bound says so with its answer, and goes on where it stopped: the end
 * record says what was read of what (per partition the offsets asked and the first not read),
 * which bound ended it and its value, and `resume`, which given back to the same query reads the
 * rest. A query that SETs no max.size reads the whole topic (bounded by time, not by size).
 * Records carry their headers when asked, and only then.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { RECORD_LINE } from "../../src/domains/sql/stream-answer.ts";
import { RecordText } from "../../src/engine/record-text.ts";
import { jsonRecords, q, sqlFixture, stream } from "./helpers.ts";

const f = sqlFixture();
/** 3 partitions of 1,000 records of some 330 bytes; one record holds amount 5000, near the end of partition 2. */
let wide: string;
const PER_PARTITION = 1000;
const PAD = "x".repeat(300);
const NEEDLE = { partition: 2, offset: 990 };

beforeAll(async () => {
  wide = await f.topic("scan", 3);
  const records = [];
  for (let p = 0; p < 3; p++)
    for (let i = 0; i < PER_PARTITION; i++) {
      const amount = p === NEEDLE.partition && i === NEEDLE.offset ? 5000 : i % 100;
      records.push({ key: `k${p}-${i}`, value: JSON.stringify({ i, amount, pad: PAD }), partition: p });
    }
  await f.produce(wide, records, 500);
});

const T = () => `\`${wide}\``;
const SEARCH = () => `SET max.size = 64k; SELECT * FROM ${T()} WHERE amount = 5000 LIMIT 10`;

describe("a search cut by a bound", () => {
  test("23: a scan cut by max.size says what was read of what and which limit, and its resume goes on until it finds the record", async () => {
    const first = await stream(f.rt, SEARCH());
    expect(first.records).toEqual([]);
    expect(first.end).toMatchObject({
      stopReason: "MAX_SIZE",
      isTopicEnd: false,
      // Which bound, its value, whether bytes read or returned reached it, and how far a query may raise it here.
      stopLimit: { setting: "max.size", value: 64 * 1024, of: "read", bound: 256 * 1024 * 1024 },
    });
    // What was read of what: every partition's range (its snapshot end), and how far the read got.
    const ranges = first.end.ranges as Array<{ partition: number; from: number; to: number; next: number }>;
    expect(ranges.map((r) => [r.partition, r.from, r.to])).toEqual([
      [0, 0, PER_PARTITION],
      [1, 0, PER_PARTITION],
      [2, 0, PER_PARTITION],
    ]);
    const readNow = ranges.reduce((n, r) => n + (r.next - r.from), 0);
    expect(readNow).toBe(first.end.totalRecords);
    expect(readNow).toBeLessThan(3 * PER_PARTITION);
    expect(first.end.resume).toMatch(/^\d+:\d+-1000(,\d+:\d+-1000)*;limit=10$/);

    // Continue: the same query with the end record's resume, until it finds the record or ends.
    let end = first.end;
    let read = first.end.totalRecords as number;
    const found: Array<{ partition: number; offset: number; value: string }> = [];
    for (let run = 0; run < 100 && end.resume; run++) {
      const next = await stream(f.rt, SEARCH(), { params: { resume: end.resume } });
      expect(next.error).toBeUndefined();
      found.push(...next.records);
      read += next.end.totalRecords;
      end = next.end;
    }
    expect(found.map((r) => [r.partition, r.offset, JSON.parse(r.value).amount])).toEqual([[NEEDLE.partition, NEEDLE.offset, 5000]]);
    expect(end.stopReason).toBe("END");
    expect(end.resume).toBeUndefined();
    // Each record was read once: the runs together read the topic, nothing twice, nothing left out.
    expect(read).toBe(3 * PER_PARTITION);
  }, 60_000);

  test("23: a search that SETs no max.size reads the whole topic: bounded by time, not by a size cap", async () => {
    // 24 MB: more than the 20 MiB that used to end a search silently.
    const big = await f.topic("scan-default", 1);
    const pad = "y".repeat(4000);
    const records = Array.from({ length: 6000 }, (_, i) => ({
      key: `k${i}`,
      value: JSON.stringify({ i, amount: i === 5990 ? 5000 : 1, pad }),
    }));
    await f.produce(big, records, 200);
    const s = await stream(f.rt, `SELECT _meta.offset AS o, amount FROM \`${big}\` WHERE amount = 5000 LIMIT 10`);
    expect(s.records.map((r: { value: string }) => JSON.parse(r.value))).toEqual([{ o: 5990, amount: 5000 }]);
    expect(s.end).toMatchObject({ stopReason: "END", isTopicEnd: true, totalRecords: 6000 });
    expect(s.end.totalSizeRead).toBeGreaterThan(20 * 1024 * 1024);
    expect(s.end.stopLimit).toBeUndefined();
  }, 60_000);

  test("23: a scan cut by max.query.time names the time and the server's bound", async () => {
    const s = await stream(f.rt, `SET max.query.time = 1ms; SELECT * FROM ${T()} WHERE amount = 5000`);
    expect(s.end).toMatchObject({
      stopReason: "MAX_QUERY_TIME",
      isTimeRemaining: false,
      stopLimit: { setting: "max.query.time", value: 1, bound: 3_600_000 },
    });
  });

  test("23: a scan cut by max.query.time while it reads resumes where it stopped", async () => {
    // The clock jumps past the query's time after a few looks at it (one per 64 records read).
    let looks = 0;
    const sink = new RecordText(JSON.stringify(wide), RECORD_LINE);
    const { end } = await f.execute(`SET max.query.time = 1h; SELECT * FROM ${T()} WHERE amount = 5000`, sink, () =>
      ++looks > 4 ? 1e12 : 0,
    );
    expect(end).toMatchObject({ stopReason: "MAX_QUERY_TIME", stopLimit: { setting: "max.query.time", value: 3_600_000 } });
    const ranges = end!.ranges as Array<{ from: number; next: number }>;
    expect(ranges.reduce((n, r) => n + (r.next - r.from), 0)).toBe(end!.totalRecords as number);
    expect(end!.totalRecords).toBeLessThan(3 * PER_PARTITION);
    expect(end!.resume).toMatch(/;limit=10000$/);
    const rest = await stream(f.rt, `SELECT * FROM ${T()} WHERE amount = 5000`, { params: { resume: end!.resume as string } });
    expect(rest.records.map((r: { offset: number }) => r.offset)).toEqual([NEEDLE.offset]);
    expect(rest.end.totalRecords + (end!.totalRecords as number)).toBe(3 * PER_PARTITION);
  });

  test("23: a record the answer's size bound takes back is the first the resumed query returns: no gap, no repeat", async () => {
    const sql = `SET max.size = 8k; SELECT * FROM ${T()} WHERE _meta.partition = 0`;
    const first = await stream(f.rt, sql);
    expect(first.end.stopLimit).toMatchObject({ setting: "max.size", of: "answer" });
    const last = first.records.at(-1).offset as number;
    expect(first.end.ranges).toEqual([{ partition: 0, from: 0, to: PER_PARTITION, next: last + 1 }]);
    const next = await stream(f.rt, sql, { params: { resume: first.end.resume } });
    expect(next.records[0].offset).toBe(last + 1);
  });

  test("23: the single JSON answer carries the ranges, the bound and the resume too", async () => {
    const res = await f.rt.request(q(SEARCH()), { role: "read", headers: { accept: "application/json" } });
    const body = (await res.json()) as Record<string, any>;
    expect(body).toMatchObject({ messages: [], stopReason: "MAX_SIZE", stopLimit: { setting: "max.size", of: "read" } });
    expect(body.ranges).toHaveLength(3);
    expect(typeof body.resume).toBe("string");
  });

  test("a resume narrows the query, never widens it; its LIMIT and skip are at most the query's", async () => {
    const s = await stream(f.rt, `SELECT i FROM ${T()} WHERE _meta.partition = 1 AND _meta.offset >= 10 LIMIT 3`, {
      params: { resume: "0:0-1000,1:0-1000,2:0-1000;limit=50" },
    });
    expect(s.records.map((r: { partition: number; offset: number }) => [r.partition, r.offset])).toEqual([
      [1, 10],
      [1, 11],
      [1, 12],
    ]);
    expect(s.end.ranges).toEqual([{ partition: 1, from: 10, to: PER_PARTITION, next: 13 }]);
    const skipped = await stream(f.rt, `SELECT i FROM ${T()} WHERE _meta.partition = 1 LIMIT 2, 2`, {
      params: { resume: "1:500-1000;limit=2;skip=1" },
    });
    expect(skipped.records.map((r: { offset: number }) => r.offset)).toEqual([501, 502]);
  });

  test("a resume that is not one is a 400 that says why", async () => {
    for (const resume of ["0:5", "0:9-3", "0:1-2,0:3-4", "x", "0:1-2;limit=0", "0:1-2;top=3"]) {
      const res = await f.rt.request(q(SEARCH(), { resume }), { role: "read", headers: { accept: "text/event-stream" } });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { message: string; error_code: number };
      expect(body.error_code).toBe(400);
      expect(body.message).toContain("resume");
    }
  });
});

describe("record headers", () => {
  let withHeaders: string;
  beforeAll(async () => {
    withHeaders = await f.topic("headers", 1);
    const kafka = f.rt.kafka.default();
    await kafka.writes.produce(withHeaders, [
      { key: "a", value: JSON.stringify({ n: 1 }), headers: { "trace-id": "abc-123", raw: new Uint8Array([0xff, 0x00, 0x01]) } },
      { key: "b", value: JSON.stringify({ n: 2 }) },
    ]);
    await f.produce(
      withHeaders,
      jsonRecords(1, () => "plain text, not JSON"),
    );
  });

  test("23: headers=true gives each record its headers (text, or base64 when not UTF-8); without it no record has the field", async () => {
    const asked = await stream(f.rt, `SELECT * FROM \`${withHeaders}\``, { params: { headers: "true" } });
    expect(asked.records.map((r: { headers: unknown }) => r.headers)).toEqual([
      [
        { key: "trace-id", value: "abc-123" },
        { key: "raw", value: "/wAB", encoding: "base64" },
      ],
      [],
      [],
    ]);
    // A projection and a value that is not JSON text take the other path of the answer: headers there too.
    const projected = await stream(f.rt, `SELECT n FROM \`${withHeaders}\` WHERE n = 1`, { params: { headers: "true" } });
    expect(projected.records[0].headers).toEqual([
      { key: "trace-id", value: "abc-123" },
      { key: "raw", value: "/wAB", encoding: "base64" },
    ]);
    const json = await f.rt.request(q(`SELECT * FROM \`${withHeaders}\` LIMIT 1`, { headers: "true" }), {
      role: "read",
      headers: { accept: "application/json" },
    });
    expect(((await json.json()) as { messages: Array<{ headers: unknown }> }).messages[0]!.headers).toHaveLength(2);

    const plain = await stream(f.rt, `SELECT * FROM \`${withHeaders}\``);
    for (const r of plain.records) expect(Object.keys(r)).toEqual(["timestamp", "partition", "key", "offset", "topic", "value"]);
  });
});
