// @no-services
/**
 * The `SELECT *` fast path: isJsonText() must never accept what JSON.parse rejects, and the lines
 * built from raw JSON bytes must be the lines built from the decoded text.
 */

import { describe, expect, test } from "bun:test";
import { RECORD_LINE } from "../../src/domains/sql/stream-answer.ts";
import { escapeJsonText, isJsonText } from "../../src/engine/decoders.ts";
import type { QueryRecord } from "../../src/engine/executor.ts";
import { RecordText } from "../../src/engine/record-text.ts";

const parses = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

const VALID = [
  "0",
  "-0",
  "1.5",
  "-1.5e+10",
  "1E-3",
  "12345678901234567890",
  "true",
  "false",
  "null",
  '""',
  '"a\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00e9\\uD800"',
  "{}",
  "[]",
  " { } ",
  '\t\n\r {"a" : [1, 2, {"b": null}] , "c":"d"}\n',
  "[[[[[]]]]]",
  '{"a":{"b":{"c":[true,false]}}}',
  "[1,-2,3.25e2]",
];
const INVALID = [
  "",
  " ",
  "01",
  "-",
  "1.",
  ".5",
  "1e",
  "1e+",
  "+1",
  "tru",
  "nul",
  "truex",
  "[1,]",
  "{,}",
  '{"a":1,}',
  '{"a"}',
  '{"a":}',
  "{a:1}",
  "[1 2]",
  '"abc',
  '"a\tb"',
  '"\\x"',
  '"\\u12g4"',
  '"\\u123"',
  "[",
  "]",
  "{",
  "}",
  '{"a":1}}',
  "[1]]",
  "1 2",
  "NaN",
  "Infinity",
  "'a'",
  "[1,,2]",
  '{"a":1 "b":2}',
  '{"a":1,"b"',
  "\u0000",
  "1x",
  "[1x]",
  "0x10",
  "--1",
];

describe("isJsonText", () => {
  test("accepts valid JSON text", () => {
    for (const t of VALID) {
      expect(parses(t)).toBe(true);
      expect([t, isJsonText(Buffer.from(t))]).toEqual([t, true]);
    }
  });

  test("rejects what JSON.parse rejects", () => {
    for (const t of INVALID) {
      expect(parses(t)).toBe(false);
      expect([t, isJsonText(Buffer.from(t))]).toEqual([t, false]);
    }
  });

  test("long strings, read a word at a time: every position and alignment of a special byte", () => {
    const dest = new Uint8Array(1024);
    const big = Buffer.alloc(4096);
    for (const special of ['"', "\\", '\\"', "\\n", "\\u0041", "\n", "\t", "\u0001", "é", "\u007f", "x"]) {
      for (let at = 0; at < 80; at++) {
        const text = `{"k":"${"a".repeat(at)}${special}${"b".repeat(80 - at)}","n":[1,"${"c".repeat(40)}"]}`;
        for (let shift = 0; shift < 4; shift++) {
          // The same bytes at each alignment inside a larger buffer, as record values lie in a fetch.
          const bytes = big.subarray(shift, shift + Buffer.byteLength(text));
          bytes.write(text);
          expect([text, isJsonText(bytes)]).toEqual([text, parses(text) && Buffer.byteLength(text) === text.length]);
          const end = escapeJsonText(bytes, dest, 0);
          if (end >= 0) expect(Buffer.from(dest.subarray(0, end)).toString()).toBe(JSON.stringify(text).slice(1, -1));
        }
      }
    }
  });

  test("leaves non-ASCII text and deep nesting to JSON.parse", () => {
    expect(isJsonText(Buffer.from('{"a":"é"}'))).toBe(false);
    expect(isJsonText(Buffer.from(`${"[".repeat(200)}${"]".repeat(200)}`))).toBe(false);
  });

  test("never accepts what JSON.parse rejects, escapes as JSON.stringify (random mutations)", () => {
    const alphabet = [
      "{",
      "}",
      "[",
      "]",
      '"',
      ":",
      ",",
      " ",
      "\\",
      "u",
      "0",
      "1",
      "9",
      "-",
      "+",
      ".",
      "e",
      "E",
      "a",
      "t",
      "r",
      "f",
      "n",
      "l",
      "s",
      "\n",
      "\t",
      "\u0001",
    ];
    let seed = 42;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    let accepted = 0;
    const dest = new Uint8Array(64);
    for (let k = 0; k < 200_000; k++) {
      let text: string;
      if (rnd(2) === 0) {
        const base = VALID[rnd(VALID.length)]!;
        const at = rnd(base.length + 1);
        text = base.slice(0, at) + (rnd(2) ? alphabet[rnd(alphabet.length)]! : "") + base.slice(at + rnd(2));
      } else {
        text = "";
        for (let j = rnd(12); j > 0; j--) text += alphabet[rnd(alphabet.length)];
      }
      const ok = isJsonText(Buffer.from(text));
      if (ok) accepted++;
      if (ok && !parses(text)) throw new Error(`isJsonText accepts ${JSON.stringify(text)}`);
      if (ok) {
        const end = escapeJsonText(Buffer.from(text), dest, 3);
        const want = JSON.stringify(text).slice(1, -1);
        if (Buffer.from(dest.subarray(3, end)).toString() !== want) throw new Error(`escapeJsonText(${JSON.stringify(text)})`);
      }
    }
    expect(accepted).toBeGreaterThan(1000);
  });
});

describe("RecordText with the stream's framing", () => {
  const record = (value: string, key: string | null): QueryRecord => ({
    timestamp: 17,
    partition: 2,
    key,
    offset: 99,
    topic: 't"x',
    value,
  });
  const text = (b: Uint8Array) => Buffer.from(b).toString("utf8");

  test("lines from raw JSON bytes are the lines from the text", () => {
    const values = [...VALID, `{"pad":"${"p".repeat(5000)}","q":"\\"\\\\"}`, `[\n\t"${"x".repeat(100)}\\"${"y".repeat(60)}",\r\n 1]`];
    const keys = [null, "k1", 'k"é\n', ""];
    const fromText = new RecordText(JSON.stringify('t"x'), RECORD_LINE).build(values.map((v, i) => record(v, keys[i % keys.length]!)));
    const raw = new RecordText(JSON.stringify('t"x'), RECORD_LINE);
    for (const [i, v] of values.entries()) expect(raw.addJson(17, 2, keys[i % keys.length]!, 99, Buffer.from(v))).toBe(true);
    expect(raw.count).toBe(values.length);
    expect(text(raw.take())).toBe(text(fromText));
    const lines = text(fromText).split("\n\n");
    expect(lines.pop()).toBe("");
    expect(lines.length).toBe(values.length);
    lines.forEach((line, i) => {
      expect(line.startsWith("data:1")).toBe(true);
      expect(JSON.parse(line.slice(6))).toEqual({
        timestamp: 17,
        partition: 2,
        key: keys[i % keys.length],
        offset: 99,
        topic: 't"x',
        value: values[i],
      });
    });
  });

  test("a value that is not plain JSON text writes nothing", () => {
    const lines = new RecordText('"t"', RECORD_LINE);
    expect(lines.addJson(1, 0, "a", 5, Buffer.from("[1]"))).toBe(true);
    for (const v of ["", "{", '"é"', "abc", '{"a":1}x']) expect(lines.addJson(1, 0, "b", 6, Buffer.from(v))).toBe(false);
    lines.add(1, 0, "c", 7, '"s"');
    expect(lines.count).toBe(2);
    expect(text(lines.take())).toBe(
      'data:1{"timestamp":1,"partition":0,"key":"a","offset":5,"topic":"t","value":"[1]"}\n\n' +
        'data:1{"timestamp":1,"partition":0,"key":"c","offset":7,"topic":"t","value":"\\"s\\""}\n\n',
    );
    expect(lines.count).toBe(0);
    expect(lines.take().byteLength).toBe(0);
  });

  test("grows past its buffer", () => {
    const lines = new RecordText('"t"', RECORD_LINE);
    const big = `"${"z".repeat(300_000)}"`;
    for (let i = 0; i < 3; i++) expect(lines.addJson(i, 0, null, i, Buffer.from(big))).toBe(true);
    const out = text(lines.take()).split("\n\n");
    expect(out.length).toBe(4);
    for (let i = 0; i < 3; i++) expect(JSON.parse(out[i]!.slice(6)).value).toBe(big);
  });
});

describe("RecordText with the JSON answer's framing", () => {
  const ELEMENT = { before: "", after: "," };
  const text = (b: Uint8Array) => Buffer.from(b).toString("utf8");
  const parseArray = (b: Uint8Array) => JSON.parse(`[${text(b).slice(0, -1)}]`);

  test("elements of an array, whatever path wrote them", () => {
    const t = new RecordText('"t"', ELEMENT);
    expect(t.addJson(1, 0, "a", 5, Buffer.from('{"x":1}'))).toBe(true);
    t.add(2, 1, null, 6, '"s"');
    expect(parseArray(t.take())).toEqual([
      { timestamp: 1, partition: 0, key: "a", offset: 5, topic: "t", value: '{"x":1}' },
      { timestamp: 2, partition: 1, key: null, offset: 6, topic: "t", value: '"s"' },
    ]);
  });

  test("long value text is written as JSON.stringify writes it: ASCII from its bytes, anything else as text", () => {
    const values = [
      JSON.stringify({ pad: "a".repeat(10_000), q: 'say "hi" \\ there\n' }),
      JSON.stringify({ pad: "é".repeat(5_000), emoji: "✓😀" }),
      JSON.stringify(["\u0001\u001f", "x".repeat(5_000)]),
      `${JSON.stringify({ a: "b".repeat(5_000) })}\n\t`,
    ];
    for (const value of values) {
      const t = new RecordText('"t"', RECORD_LINE);
      t.add(1, 0, 'k"é', 2, value);
      const line = text(t.take());
      expect(line).toBe(`data:1{"timestamp":1,"partition":0,"key":"k\\"é","offset":2,"topic":"t","value":${JSON.stringify(value)}}\n\n`);
    }
  });

  test("dropLast takes back the record added last, once", () => {
    const t = new RecordText('"t"', ELEMENT);
    t.add(1, 0, null, 1, "1");
    const one = t.byteLength;
    t.add(1, 0, null, 2, "2");
    t.dropLast();
    t.dropLast();
    expect(t.count).toBe(1);
    expect(t.byteLength).toBe(one);
    expect(parseArray(t.take()).map((r: { offset: number }) => r.offset)).toEqual([1]);
  });

  test("the bytes taken are a plain Uint8Array: slice() copies them", () => {
    const t = new RecordText('"t"', ELEMENT);
    t.add(1, 0, null, 1, "1");
    const copy = t.take().slice();
    t.add(9, 9, null, 9, "9");
    expect(parseArray(copy)[0].offset).toBe(1);
  });
});
