// @no-services
/**
 * Issue 23, what the topic pages compute without a server: config values in words, names
 * checked as typed, JSON indented without losing digits, the browser's read as SQL, and Avro
 * templates and checks as the server's encoder reads values. Table-driven; the page imports
 * the same modules.
 */
import { describe, expect, test } from "bun:test";
import { WRITE_FORMATS as SERVER_FORMATS } from "../../src/domains/topics/schemas.ts";
import { avroProblem, avroTemplate } from "../../ui/pages/TopicAvro.ts";
import { browseSql, hexDump, prettyJson, recordMatches } from "../../ui/pages/TopicRecordText.ts";
import {
  configInput,
  firstSentence,
  humanConfig,
  plainDoc,
  topicNameCollision,
  topicNameProblem,
  WRITE_FORMATS,
} from "../../ui/pages/TopicShared.ts";

describe("23: config values in words", () => {
  test.each([
    ["retention.ms", "604800000", "7 d"],
    ["retention.ms", "-1", "∞"],
    ["retention.bytes", "-1", "∞"],
    ["segment.bytes", "1073741824", "1 GiB"],
    ["max.message.bytes", "1048588", "≈ 1 MiB"],
    ["flush.messages", "9223372036854775807", "∞"],
    ["segment.ms", "90000000", "1 d 1 h"],
    ["segment.ms", "1500", "1 s 500 ms"],
    ["local.retention.ms", "-2", "as retention.ms"],
    ["min.compaction.lag.ms", "0", "0"],
    ["cleanup.policy", "compact", null],
    ["min.insync.replicas", "2", null],
    ["retention.ms", null, null],
  ] as const)("%s = %s reads %s", (name, value, words) => {
    expect(humanConfig(name, value)).toBe(words);
  });

  test.each([
    ["retention.ms", "7d", "604800000"],
    ["retention.ms", "7 d", "604800000"],
    ["segment.ms", "12h", "43200000"],
    ["segment.bytes", "1 GiB", "1073741824"],
    ["segment.bytes", "1 MB", "1000000"],
    ["retention.bytes", "∞", "-1"],
    ["retention.ms", "a week", "a week"],
    ["cleanup.policy", "7d", "7d"],
  ])("%s typed as %s is sent as %s", (name, typed, sent) => {
    expect(configInput(name, typed)).toBe(sent);
  });

  test("documentation is text, its first sentence apart", () => {
    expect(plainDoc("The <i>minimum</i> number of <code>acks</code> &amp; more.<p>Note: x")).toBe(
      "The minimum number of acks & more. Note: x",
    );
    expect(firstSentence("Set <code>a</code> here. Then more.")).toEqual({ head: "Set a here.", rest: "Then more." });
  });
});

describe("23: topic names as typed", () => {
  test.each([
    ["", "A topic needs a name."],
    ["orders v2!", "Only letters, digits, '.', '_' and '-': not a space, '!'."],
    ["..", "A topic cannot be named '.' or '..'."],
    ["x".repeat(250), "At most 249 characters (this one has 250)."],
    ["orders", "Topic 'orders' exists already."],
    ["orders.v2", null],
  ])("%s: %s", (name, problem) => {
    expect(topicNameProblem(name, ["orders"])).toBe(problem);
  });

  test("'.' and '_' collide in metric names", () => {
    expect(topicNameCollision("orders.v2", ["orders_v2"])).toBe(
      "'orders_v2' exists: Kafka's metrics cannot tell the two apart ('.' and '_' are the same there).",
    );
    expect(topicNameCollision("orders-v2", ["orders_v2"])).toBeNull();
  });
});

describe("23: records shown and searched", () => {
  test("JSON is indented without reading its numbers; text that is no JSON stays as it is", () => {
    expect(prettyJson('{"a":12345678901234567890,"b":[1,{}],"c":"x,\\"y"}')).toBe(
      '{\n  "a": 12345678901234567890,\n  "b": [\n    1,\n    {}\n  ],\n  "c": "x,\\"y"\n}',
    );
    expect(prettyJson('{"a": "open')).toBe('{"a": "open');
    expect(prettyJson("plain text")).toBe("plain text");
  });

  test("a hex dump shows offsets, bytes and their text", () => {
    expect(hexDump(new TextEncoder().encode('{"n":1}'))).toBe(`00000000  7b 22 6e 22 3a 31 7d${" ".repeat(27)}  {"n":1}`);
  });

  test("the quick filter matches key, value and headers, without case", () => {
    const r = { key: { text: "k1" }, value: { text: '{"city":"Lisbon"}' }, headers: [{ key: "trace", value: "T-9" }] };
    expect(["LISBON", "k1", "t-9", "trace", ""].map((q) => recordMatches(r, q))).toEqual([true, true, true, true, true]);
    expect(recordMatches(r, "oslo")).toBe(false);
  });

  test.each([
    [{ seek: "newest", limit: 50 }, "", "SELECT * FROM orders WHERE _meta.offset >= LAST_OFFSET() - 50 LIMIT 50"],
    [
      { seek: "offset", offset: 7, partition: 2, limit: 20 },
      "",
      "SELECT * FROM orders WHERE _meta.partition = 2 AND _meta.offset >= 7 LIMIT 20",
    ],
    [{ seek: "time", time: 1700000000000, limit: 100 }, "", "SELECT * FROM orders WHERE _meta.timestamp >= 1700000000000 LIMIT 100"],
    [
      { seek: "newest", limit: 50 },
      "Ada's",
      "SELECT * FROM orders WHERE (LOWERCASE(CAST(_key AS STRING)) LIKE '%ada''s%' OR LOWERCASE(CAST(_value AS STRING)) LIKE '%ada''s%') LIMIT 50",
    ],
  ] as const)("%j with filter %j is %s", (start, filter, sql) => {
    expect(browseSql("orders", start, filter)).toBe(sql);
  });
});

describe("23: Avro in the produce dialog", () => {
  const schema = JSON.stringify({
    type: "record",
    name: "Order",
    fields: [
      { name: "id", type: "long" },
      { name: "note", type: ["null", "string"], default: null },
      { name: "kind", type: { type: "enum", name: "Kind", symbols: ["A", "B"] } },
      { name: "items", type: { type: "array", items: { type: "record", name: "Item", fields: [{ name: "sku", type: "string" }] } } },
      { name: "next", type: ["null", "Item"], default: null },
      { name: "at", type: { type: "long", logicalType: "timestamp-millis" } },
    ],
  });

  test("the template holds every field: its default, now for a time, or the least value of its type", () => {
    const before = Date.now();
    const t = avroTemplate(schema) as Record<string, unknown> & { at: number };
    expect(t).toEqual({ id: 0, note: null, kind: "A", items: [], next: null, at: expect.any(Number) });
    expect(t.at).toBeGreaterThanOrEqual(before);
    expect(t.at).toBeLessThanOrEqual(Date.now());
  });

  test.each([
    [{ id: 1, kind: "A", items: [], at: 5 }, null],
    [{ id: 1, kind: "A", items: [{ sku: "s" }], at: 5, next: { sku: "t" } }, null],
    [{ id: "1", kind: "A", items: [], at: 5 }, 'id: "1" is not a long'],
    [{ id: 1, kind: "C", items: [], at: 5 }, 'kind: "C" is not one of A, B'],
    [{ id: 1, kind: "A", items: [{ sku: 3 }], at: 5 }, "items[0].sku: 3 is not a string"],
    [{ id: 1, kind: "A", items: [], at: 5, colour: "red" }, "colour: the schema's Order has no field 'colour'"],
    [{ kind: "A", items: [], at: 5 }, "id: not set, and the schema gives it no default"],
    [{ id: 1, kind: "A", items: [], at: 5, next: { sku: 1 } }, "next: an object fits none of the union's types"],
  ])("%j: %s", (value, problem) => {
    expect(avroProblem(schema, value)).toBe(problem);
  });

  test("the page writes the server's formats", () => {
    expect([...WRITE_FORMATS]).toEqual([...SERVER_FORMATS]);
  });
});
