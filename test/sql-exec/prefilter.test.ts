// @no-services
/**
 * The prefilter must never rule out a record the whole WHERE would match: checked against the
 * language's own filter over a table of records and conditions, and it must rule out what it
 * can for the plain cases.
 */
import { describe, expect, test } from "bun:test";
import { buildPrefilter } from "../../src/engine/prefilter.ts";
import { analyze } from "../../src/sql/analyzer.ts";
import { compileQuery, parse, type RecordView } from "../../src/sql/index.ts";

const RECORDS = [
  '{"sel":7,"name":"a"}',
  '{"sel": 7 , "name":"b"}',
  '{ "sel" :\n7.0}',
  '{"sel":"7"}',
  '{"sel":70}',
  '{"sel":-7}',
  '{"sel":7e0}',
  '{"sel":null}',
  '{"sel":true}',
  '{"sel":[7]}',
  '{"sel":{"x":7}}',
  '{"other":{"sel":7}}',
  '{"name":"sel","sel":8}',
  '{"name":"\\"sel\\":7"}',
  '{"s\\u0065l":7}',
  '{"sel":8,"sel":7}',
  '{"sel":7,"sel":8}',
  '{"name":"sél","sel":"née"}',
  '{"name":"x"}',
  "[1,2]",
  '"text"',
  "not json at all",
  '  {"sel":7}',
  '{"sel":"abc","n":5}',
  '{"sel":"ABD","n":-1}',
  '{"sel":1234567890123,"n":0.5}',
];

const CONDITIONS = [
  "sel = 7",
  "sel != 7",
  "sel > 7",
  "sel <= 7",
  "sel BETWEEN 5 AND 9",
  "sel IN (7, 8)",
  "sel NOT IN (7)",
  "sel IS NULL",
  "sel IS NOT NULL",
  "sel LIKE 'a%'",
  "sel = 'née'",
  "UPPERCASE(sel) = 'ABC'",
  "COALESCE(sel, 7) = 7",
  "sel = 7 AND n > 0",
  "sel = 7 OR n > 0",
  "NOT sel = 7",
  "sel.x = 7",
  "sel[0] = 7",
  "sel + 1 = 8",
  "CAST(sel AS STRING) = '7'",
  "sel = 7 AND _meta.offset >= 0",
  "n < 1 AND sel LIKE '%B%'",
];

function view(value: unknown): RecordView {
  return { key: null, value, partition: 0, offset: 0, timestamp: 0, keySize: 0, valueSize: 0, lastOffset: () => 0 };
}

/** What inference decodes: JSON when it parses, else the text. */
function decode(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

describe("prefilter", () => {
  test.each(CONDITIONS)("never rules out a match: %s", (condition) => {
    const sql = `SELECT * FROM t WHERE ${condition}`;
    const now = Date.now();
    const plan = compileQuery(sql, null, { now });
    const pre = buildPrefilter(analyze(sql, parse(sql)).where, now);
    for (const text of RECORDS) {
      const matches = plan.filter(view(decode(text)));
      const kept = pre === null ? true : pre(Buffer.from(text));
      if (matches && !kept) throw new Error(`prefilter dropped ${text} for ${condition}`);
    }
  });

  test("rules out what it can", () => {
    const sql = "SELECT * FROM t WHERE sel = 7";
    const pre = buildPrefilter(analyze(sql, parse(sql)).where, Date.now())!;
    const kept = RECORDS.filter((t) => pre(Buffer.from(t)));
    // Everything whose sel token cannot be 7 is gone; doubts (escapes, non-objects, nested, arrays) stay.
    for (const t of ['{"sel":70}', '{"sel":-7}', '{"sel":null}', '{"name":"x"}', '{"name":"sel","sel":8}', '{"sel":"abc","n":5}'])
      expect(kept).not.toContain(t);
    for (const t of [
      '{"sel":7,"name":"a"}',
      '{"sel": 7 , "name":"b"}',
      '{ "sel" :\n7.0}',
      '{"sel":"7"}',
      '{"sel":7e0}',
      '{"s\\u0065l":7}',
      "[1,2]",
      '{"sel":[7]}',
      '{"other":{"sel":7}}',
    ])
      expect(kept).toContain(t);
  });

  test("no prefilter where no condition qualifies", () => {
    for (const where of ["_meta.offset > 3", "sel = 7 OR n = 1", "sel IS NULL", "a = b", "_key = 'x'"]) {
      const sql = `SELECT * FROM t WHERE ${where}`;
      expect(buildPrefilter(analyze(sql, parse(sql)).where, Date.now())).toBeNull();
    }
  });
});
