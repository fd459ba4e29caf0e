// @no-services
import { describe, expect, test } from "bun:test";
import { avroName, columnTypes, deriveColumns } from "../../src/domains/jdbc/select.ts";
import { isInvalid, parseRequest } from "../../src/domains/live/frames.ts";

/** The live websocket's request frames as the clients write them, and what each parses to. */
describe("live request frames", () => {
  const cases: Array<[string, string, Record<string, unknown>]> = [
    [
      "Go LOGIN, content built by string formatting",
      '{"type":"LOGIN","correlationId":1,"content":"{\\"user\\": \\"u\\", \\"password\\": \\"p\\"}","authToken":""}',
      { type: "LOGIN", correlationId: "1", authToken: "", content: { user: "u", password: "p" } },
    ],
    [
      "Python COMMIT with partition and offset as strings",
      '{"type":"COMMIT","correlationId":7,"content":"{\\"commits\\":[{\\"topic\\":\\"t\\",\\"partition\\":\\"0\\",\\"offset\\":\\"12\\"}]}","authToken":"tok"}',
      { type: "COMMIT", correlationId: "7", authToken: "tok", content: { commits: [{ topic: "t", partition: 0, offset: 12 }] } },
    ],
    [
      "an int64 id beyond 2^53 keeps its digits",
      '{"type":"UNSUBSCRIBE","correlationId":9007199254740993,"content":"{\\"topics\\":[\\"a\\"]}","authToken":""}',
      { type: "UNSUBSCRIBE", correlationId: "9007199254740993", content: { topics: ["a"] } },
    ],
    [
      "content given as an object, a quoted token, a lower-case type",
      '{"type":"publish","correlationId":3,"content":{"topic":"t","key":"None","value":"v"},"authToken":"\\"tok\\""}',
      { type: "PUBLISH", correlationId: "3", authToken: "tok", content: { topic: "t", key: "None", value: "v" } },
    ],
  ];
  for (const [what, raw, want] of cases)
    test(what, () => {
      expect(parseRequest(raw)).toMatchObject(want);
    });

  const invalid: Array<[string, string, string, string]> = [
    ["not JSON", "{", "0", "not JSON"],
    ["not an object", "[1]", "0", "not a JSON object"],
    ["unknown type", '{"type":"PING","correlationId":4}', "4", "Unknown request type"],
    ["content not JSON text", '{"type":"SUBSCRIBE","correlationId":5,"content":"{sqls"}', "5", "not JSON text"],
    ["no query", '{"type":"SUBSCRIBE","correlationId":6,"content":"{\\"sqls\\":[]}"}', "6", "sqls names no query"],
    [
      "offset not a number",
      '{"type":"COMMIT","correlationId":8,"content":"{\\"commits\\":[{\\"topic\\":\\"t\\",\\"partition\\":0,\\"offset\\":\\"x\\"}]}"}',
      "8",
      "offset must be an integer",
    ],
    [
      "negative partition",
      '{"type":"COMMIT","correlationId":9,"content":"{\\"commits\\":[{\\"topic\\":\\"t\\",\\"partition\\":-1,\\"offset\\":0}]}"}',
      "9",
      "partition must be a non-negative integer",
    ],
  ];
  for (const [what, raw, id, message] of invalid)
    test(`invalid: ${what}`, () => {
      const r = parseRequest(raw);
      expect(isInvalid(r)).toBe(true);
      expect(r).toMatchObject({ correlationId: id, message: expect.stringContaining(message) });
    });
});

describe("JDBC result columns", () => {
  test.each([
    ["id", "id"],
    ["LEN(name) + 1", "LEN_name____1"],
    ["tags[1]", "tags_1_"],
    ["1st", "_1st"],
    ["__keysize", "__keysize"],
  ])("%p is the Avro name %p", (label, name) => expect(avroName(label)).toBe(name));

  test("types are sampled where no schema names the column; a null makes the column nullable", () => {
    const rows = [
      { a: 1, b: 1.5, c: "x", d: true, e: null },
      { a: 2, b: 2, c: "y", d: false, e: 3 },
    ];
    const labels = deriveColumns(null, null, rows);
    expect(columnTypes(labels, null, rows)).toEqual([
      { name: "a", type: "long" },
      { name: "b", type: "double" },
      { name: "c", type: "string" },
      { name: "d", type: "boolean" },
      { name: "e", type: ["null", "long"] },
    ]);
  });

  test("labels that become the same Avro name stay distinct", () => {
    expect(columnTypes(["a-b", "a_b"], null, []).map((c) => c.name)).toEqual(["a_b", "a_b_2"]);
  });
});
