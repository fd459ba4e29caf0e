/**
 * Bounds on what an answer produces: the single JSON answer stops at JSON_ANSWER_MAX_BYTES of
 * output whatever max.size asks; max.size bounds the bytes produced as well as those read; a
 * max.size or max.query.time beyond the server's bounds is lowered and said so.
 */
import { describe, expect, test } from "bun:test";
import { JSON_ANSWER_MAX_BYTES } from "../../src/domains/sql/json-answer.ts";
import { json, sqlFixture, stream } from "./helpers.ts";

const f = sqlFixture({ sql: { maxSize: "64m", maxQueryTime: "10m" } });

describe("the single JSON answer", () => {
  test("produces at most JSON_ANSWER_MAX_BYTES whatever max.size asks, ends with MAX_SIZE; the stream form reads on", async () => {
    const t = await f.topic("big");
    const value = JSON.stringify({ pad: "x".repeat(100_000) });
    const count = Math.ceil((JSON_ANSWER_MAX_BYTES * 1.25) / value.length);
    await f.produce(
      t,
      Array.from({ length: count }, () => ({ value })),
      5,
    );

    const sql = `SET max.size = 1g; SELECT * FROM \`${t}\``;
    const res = await f.rt.request(`/api/sql/data?${new URLSearchParams({ sql })}`, {
      role: "read",
      headers: { accept: "application/json" },
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text.length).toBeLessThanOrEqual(JSON_ANSWER_MAX_BYTES);
    const body = JSON.parse(text) as { messages: unknown[]; stopReason: string; clampedSettings: unknown };
    expect(body.messages.length).toBeGreaterThan(0);
    expect(body.messages.length).toBeLessThan(count);
    expect(body.stopReason).toBe("MAX_SIZE");
    expect(body.clampedSettings).toEqual({ "max.size": 64 * 1024 * 1024 });

    const streamed = await stream(f.rt, sql);
    // How it ended first: a short answer then says why (status, error line or stop reason).
    expect(streamed.res.status).toBe(200);
    expect(streamed.error).toBeUndefined();
    expect(streamed.end).toMatchObject({ stopReason: "END", clampedSettings: { "max.size": 64 * 1024 * 1024 } });
    expect(streamed.records.length).toBe(count);
  }, 60_000);

  test("a small answer ends with END and names no clamped setting", async () => {
    const t = await f.topic("small");
    await f.produce(t, [{ value: '{"a":1}' }, { value: '{"a":2}' }]);
    const { res, body } = await json(f.rt, `SELECT * FROM \`${t}\``);
    expect(res.status).toBe(200);
    expect(Object.keys(body)).toEqual(["messages", "offsets", "stopReason", "ranges"]);
    expect(body.messages.map((m: { value: string }) => m.value)).toEqual(['{"a":1}', '{"a":2}']);
    expect(body).toMatchObject({ offsets: [{ partition: 0, min: 0, max: 1 }], stopReason: "END" });
    const empty = await json(f.rt, `SELECT * FROM \`${t}\` WHERE a = 3`);
    expect(empty.body).toEqual({
      messages: [],
      offsets: [{ partition: 0, min: 0, max: 1 }],
      stopReason: "END",
      // What was read of what: the whole partition, nothing left.
      ranges: [{ partition: 0, from: 0, to: 2, next: 2 }],
    });
  });
});

describe("max.size counts what the answer produces", () => {
  test("regression: projections many times the value passed max.size, which counted only the bytes read", async () => {
    const t = await f.topic("produced");
    const value = JSON.stringify({ pad: "y".repeat(10_000) });
    await f.produce(
      t,
      Array.from({ length: 40 }, () => ({ value })),
      10,
    );
    const cols = Array.from({ length: 20 }, (_, i) => `_value AS v${i}`).join(", ");
    // 40 records of 10 kB read (400 kB); each answers 20 copies of its value (200 kB).
    const s = await stream(f.rt, `SET max.size = 1m; SELECT ${cols} FROM \`${t}\``);
    expect(s.end).toMatchObject({ stopReason: "MAX_SIZE", isTopicEnd: false });
    const produced = s.lines.filter((l) => l.type === 1).reduce((n, l) => n + Buffer.byteLength(l.raw) + 2, 0);
    expect(produced).toBeLessThanOrEqual(1024 * 1024);
    expect(s.records.length).toBeGreaterThan(0);
    expect(s.records.length).toBeLessThan(40);
  });

  test("a max.query.time beyond the server's bound is lowered, and the end record says so", async () => {
    const t = await f.topic("time");
    await f.produce(t, [{ value: "1" }]);
    const s = await stream(f.rt, `SET max.query.time = 2h; SELECT * FROM \`${t}\``, { params: { stats: "100" } });
    expect(s.end).toMatchObject({ stopReason: "END", clampedSettings: { "max.query.time": 600_000 } });
  });
});
