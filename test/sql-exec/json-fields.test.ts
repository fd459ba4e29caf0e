// @no-services
/**
 * Reading some top-level fields of a JSON object from its bytes (a processor's decoder): the
 * wanted fields come out exactly as JSON.parse makes them, on every document of a generated
 * corpus; structure errors are refused; a program's value fields are what its SQL reads.
 */
import { describe, expect, test } from "bun:test";
import { DecodeError, DecoderFactory } from "../../src/engine/decoders.ts";
import { JsonFieldError, JsonFields } from "../../src/engine/json-fields.ts";
import { compileStream } from "../../src/sql/index.ts";

const bytes = (s: string) => Buffer.from(s, "utf8");

/** What JSON.parse gives for the wanted fields the document has (own fields only). */
function expected(text: string, names: string[]): unknown {
  const whole = JSON.parse(text);
  if (typeof whole !== "object" || whole === null || Array.isArray(whole)) return whole;
  const out: Record<string, unknown> = {};
  for (const n of names) if (Object.hasOwn(whole, n)) Object.defineProperty(out, n, { value: whole[n], enumerable: true });
  return out;
}

/** A small deterministic generator of JSON values (seeded), with the awkward cases in the mix. */
function corpus(count: number): string[] {
  let seed = 7;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const strings = ["", "plain", 'quo"te', "back\\slash", "tail\\", "ünï ✓", "\u0001ctl", "a/b", "line\nbreak", '\\\\"', "\ud83d\ude00"];
  const numbers = ["0", "-0", "12", "-7", "3.25", "1e3", "-2.5E-3", "123456789012345", "1234567890123456789", "1e400"];
  const value = (depth: number): string => {
    switch (rnd(depth > 2 ? 4 : 6)) {
      case 0:
        return JSON.stringify(strings[rnd(strings.length)]);
      case 1:
        return numbers[rnd(numbers.length)]!;
      case 2:
        return ["true", "false", "null"][rnd(3)]!;
      case 3:
        return JSON.stringify(`s${rnd(1000)}`.repeat(rnd(40)));
      case 4:
        return `[${Array.from({ length: rnd(4) }, () => value(depth + 1)).join(", ")}]`;
      default:
        return object(depth + 1);
    }
  };
  const keys = ["id", "sel", "name", "pad", "n\u00e9", "__proto__", "a\\u0062", "x", "id"];
  const object = (depth: number): string =>
    `{ ${Array.from({ length: rnd(6) }, () => `${JSON.stringify(keys[rnd(keys.length)]).replace("\\\\u0062", "\\u0062")} :${value(depth)}`).join(" ,\n")} }`;
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(i % 10 === 0 ? value(0) : object(0));
  return out;
}

describe("JsonFields", () => {
  const names = ["id", "sel", "name", "né", "__proto__", "ab"];
  const reader = new JsonFields(names);

  test("the wanted fields as JSON.parse makes them, on 3,000 generated documents", () => {
    let checked = 0;
    for (const text of corpus(3000)) {
      let want: unknown;
      try {
        want = expected(text, names);
      } catch {
        continue;
      }
      const got = reader.read(bytes(text));
      expect({ text, got }).toEqual({ text, got: want });
      if (got !== null && typeof got === "object" && !Array.isArray(got)) expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
      checked++;
    }
    expect(checked).toBeGreaterThan(2500);
  });

  test("a later duplicate wins; an escaped key names its field; __proto__ stays a field", () => {
    expect(reader.read(bytes('{"id":1,"id":2}'))).toEqual({ id: 2 });
    expect(reader.read(bytes('{"a\\u0062": 5}'))).toEqual({ ab: 5 });
    const p = reader.read(bytes('{"__proto__": {"x": 1}}')) as Record<string, unknown>;
    expect(Object.hasOwn(p, "__proto__")).toBe(true);
    expect(Object.getPrototypeOf(p)).toBe(Object.prototype);
  });

  test("a value that is not an object is parsed whole", () => {
    expect(reader.read(bytes(" [1, 2] "))).toEqual([1, 2]);
    expect(reader.read(bytes('"x"'))).toBe("x");
    expect(reader.read(bytes("42"))).toBe(42);
  });

  test.each([
    ["not json"],
    ["{"],
    ['{"id"}'],
    ['{"id":}'],
    ['{"id":1,}'],
    ['{"id":1 "sel":2}'],
    ['{"id":1}x'],
    ['{"pad":"open}'],
    ['{"pad":[1,2}'],
    ['{"pad":{"a":[}]}'],
    ['{"pad":tru}'],
    ['{"id":01}'],
    ['{"id":1.2.3}'],
    ['{"name":"a\u0001b"}'],
    ['{"name":"bad \\q escape"}'],
    ["{id:1}"],
  ])("refused: %s", (text) => {
    expect(() => reader.read(bytes(text))).toThrow(JsonFieldError);
  });

  test("inside a member it skips, only the structure is checked (documented)", () => {
    expect(reader.read(bytes('{"other":"a\u0001b","id":1}'))).toEqual({ id: 1 });
  });

  test("as a decoder: JSON and inference; not JSON is the JSON decoder's error, and inference's text", async () => {
    const factory = new DecoderFactory({ registry: null });
    const json = factory.create("JSON", undefined, "value", ["id"]);
    expect(await json(bytes('{"id":3,"x":[1]}'))).toEqual({ value: { id: 3 } });
    expect(() => json(bytes("nope"))).toThrow(DecodeError);
    const inferred = factory.create(undefined, undefined, "value", ["id"]);
    expect(await inferred(bytes('{"id":3,"x":[1]}'))).toEqual({ value: { id: 3 } });
    expect(((await inferred(bytes("{not json"))) as { value: unknown }).value).toBe("{not json");
  });
});

describe("a program's value fields", () => {
  const fieldsOf = (sql: string) => compileStream(sql).valueFields;
  test("the top-level fields its filter, projection, key, grouping and aggregates read", () => {
    expect(fieldsOf("INSERT INTO o SELECT STREAM id, name FROM i WHERE sel < 50")).toEqual(["sel", "id", "name"]);
    expect(fieldsOf("INSERT INTO o SELECT STREAM a.b.c AS x, UPPERCASE(d) AS _key FROM i")).toEqual(["a", "d"]);
    expect(fieldsOf("INSERT INTO o SELECT STREAM COUNT(*) AS n, SUM(amount) AS s FROM i GROUP BY TUMBLE(1, m), region")).toEqual([
      "amount",
      "region",
    ]);
    expect(fieldsOf("INSERT INTO o SELECT STREAM _key, _meta.offset FROM i")).toEqual([]);
  });
  test("none (the whole value) for *, _value and an index into it", () => {
    expect(fieldsOf("INSERT INTO o SELECT STREAM * FROM i WHERE sel < 5")).toBeNull();
    expect(fieldsOf("INSERT INTO o SELECT STREAM _value AS v FROM i")).toBeNull();
    expect(fieldsOf("INSERT INTO o SELECT STREAM _value[0] AS v FROM i")).toBeNull();
  });
});
