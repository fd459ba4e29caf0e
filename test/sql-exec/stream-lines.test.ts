/**
 * `SELECT *` without a WHERE writes plain JSON values straight from their bytes: its event stream
 * must carry exactly what the JSON answer (decoded the general way) carries, for every kind of
 * value, and skip and count the same records.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { json, sqlFixture, stream } from "./helpers.ts";

const f = sqlFixture();
let topic: string;

const VALUES: Array<string | null> = [
  '{"id":1,"name":"plain"}',
  '{"q":"a \\"quoted\\" \\\\ back\\/slash \\u00e9 \\n"}',
  '{\n  "pretty": [1, 2.5e3, -0, true, false, null],\r\n\t"nested": {"a": {}}\n}',
  `{"pad":"${"p".repeat(3000)}","after":"x"}`,
  '{"utf8":"héllo wörld ✓"}',
  '"just a string"',
  "42",
  "[]",
  "not json at all",
  '{"broken":',
  "",
  null,
  "\u0000\u0001binary",
  '{"sel":7}',
];

/** Keys: absent, text to escape, plain text, a number, JSON, a JSON string, not UTF-8. */
const KEYS: Array<(i: number) => string | Uint8Array | null> = [
  () => null,
  (i) => `k"${i}\\é`,
  (i) => `k${i}`,
  (i) => `${i * 1000}`,
  (i) => `{"a":${i}}`,
  (i) => `"q${i}"`,
  (i) => new Uint8Array([0xff, 0xfe, i]),
];

beforeAll(async () => {
  topic = await f.topic("lines", 2);
  await f.produce(
    topic,
    VALUES.map((v, i) => ({ key: KEYS[i % KEYS.length]!(i), value: v, partition: i % 2, timestamp: 1_700_000_000_000 + i })),
    4,
  );
});

const byOffset = (rs: Array<{ partition: number; offset: number }>) =>
  [...rs].sort((a, b) => a.partition - b.partition || a.offset - b.offset);

describe("stream lines from raw JSON bytes", () => {
  for (const set of ["", "SET value.format = JSON; ", "SET key.format = STRING; "]) {
    test(`SELECT * ${set || "(inferred formats)"}: the stream equals the JSON answer`, async () => {
      const sql = `${set}SELECT * FROM \`${topic}\``;
      const s = await stream(f.rt, sql);
      const j = await json(f.rt, sql);
      expect(s.res.status).toBe(200);
      expect(j.res.status).toBe(200);
      expect(s.error).toBeUndefined();
      expect(byOffset(s.records)).toEqual(byOffset(j.body.messages));
      expect(s.records.length + s.end.skippedRecords).toBe(VALUES.length);
      if (set.includes("value.format = JSON")) expect(s.end.skippedRecords).toBeGreaterThanOrEqual(3);
      else expect(s.end.skippedRecords).toBe(0);
      for (const r of s.records) expect(Object.keys(r)).toEqual(["timestamp", "partition", "key", "offset", "topic", "value"]);
      const pretty = s.records.find((r: { value: string }) => r.value.includes("pretty"));
      expect(pretty.value).toBe(VALUES[2]);
    });
  }

  test("LIMIT skip, n holds on the raw path", async () => {
    const all = await stream(f.rt, `SELECT * FROM \`${topic}\``);
    const some = await stream(f.rt, `SELECT * FROM \`${topic}\` LIMIT 2, 3`);
    expect(some.records).toEqual(all.records.slice(2, 5));
    // Records read count the two passed over; those returned do not.
    expect(some.end).toMatchObject({ totalRecords: 5, skippedRecords: 2, returnedRecords: 3, stopReason: "LIMIT" });
  });
});
