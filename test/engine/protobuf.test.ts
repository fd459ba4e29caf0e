// @no-services
/**
 * Issue 29, the Protobuf pieces without a registry or a broker: the wire format's message indexes
 * (written and read, malformed ones refused), imports that must be among the references, and the
 * JSON of the types a query sees (64-bit integers by the LONG rule, unsigned ones, NaN, bytes,
 * maps with integer keys, Duration and the wrappers, unset optional fields left out).
 */
import { describe, expect, test } from "bun:test";
import { decodeMessage, encodeMessage, messageIndexes, ProtoSchemaError, parseProto, wireHeader } from "../../src/engine/protobuf.ts";

describe("29: the wire format's message indexes", () => {
  test.each([
    [[0], "000000000700"],
    [[1], "00000000070202"],
    [[2, 3], "0000000007040406"],
  ])("%j is written and read back", (indexes, hex) => {
    const head = wireHeader(7, indexes);
    expect(head.toString("hex")).toBe(hex);
    expect(messageIndexes(Buffer.concat([head, Buffer.from([0x08, 0x01])]))).toEqual({ indexes, start: head.length });
  });

  test.each([
    ["no index at all", [0, 0, 0, 0, 7]],
    ["a varint cut short", [0, 0, 0, 0, 7, 0x80]],
    ["more indexes than nesting allows", [0, 0, 0, 0, 7, 130, 1]],
    ["a negative index", [0, 0, 0, 0, 7, 2, 1]],
    ["fewer indexes than counted", [0, 0, 0, 0, 7, 4, 2]],
  ])("%s: not the wire format", (_what, bytes) => {
    expect(messageIndexes(Uint8Array.from(bytes))).toBeNull();
  });
});

describe("29: schemas and the JSON of their values", () => {
  const TEXT = `syntax = "proto3";
package t;
import "google/protobuf/duration.proto";
import "google/protobuf/wrappers.proto";
message M {
  message N { int32 a = 1; }
  google.protobuf.Duration d = 1;
  google.protobuf.Int64Value big = 2;
  uint64 u = 3;
  double x = 4;
  bytes b = 5;
  map<int64, string> m = 6;
  optional string o = 7;
  N n = 8;
  int64 small = 9;
}
message Other { string s = 1; }
`;

  test("29: values round-trip as a query sees them", () => {
    const schema = parseProto([{ name: "", text: TEXT }]);
    expect(schema.messageAt([1])?.fullName).toBe(".t.Other");
    expect(schema.messageAt([0, 0])?.fullName).toBe(".t.M.N");
    expect(schema.messageAt([2])).toBeUndefined();
    const m = schema.messageAt([0])!;
    const bytes = encodeMessage(m, {
      d: "1.500s",
      big: 9007199254740993n,
      u: "18446744073709551615",
      x: "NaN",
      b: "AQI=",
      m: { "-5": "neg" },
      n: { a: 1 },
      small: -3,
    });
    expect(decodeMessage(m, bytes, 0)).toEqual({
      d: "1.500s",
      big: "9007199254740993",
      u: "18446744073709551615",
      x: "NaN",
      b: "AQI=",
      m: { "-5": "neg" },
      n: { a: 1 },
      small: -3,
    });
  });

  test("29: nested messages are indexed as protoc counts them, a map field's entry type among them", () => {
    const schema = parseProto([
      {
        name: "",
        text: `syntax = "proto3";
package p;
message P {
  string message = 9;
  map<string, string> attrs = 1;
  message Inner { int32 a = 1; }
  oneof kind { string s = 2; }
  enum E { A = 0; }
  message Second { map<int32, int32> m = 1; message Deep { int32 d = 1; } }
}`,
      },
    ]);
    expect(schema.messageAt([0, 0])).toBeUndefined();
    expect(schema.messageAt([0, 1])?.fullName).toBe(".p.P.Inner");
    expect(schema.messageAt([0, 2])?.fullName).toBe(".p.P.Second");
    expect(schema.messageAt([0, 2, 1])?.fullName).toBe(".p.P.Second.Deep");
    expect(schema.messageAt([0, 3])).toBeUndefined();
  });

  test("29: an import that is not among the references, or text that is no Protobuf, is a schema error", () => {
    expect(() => parseProto([{ name: "", text: `syntax = "proto3"; import "other.proto"; message A { int32 a = 1; }` }])).toThrow(
      ProtoSchemaError,
    );
    expect(() => parseProto([{ name: "", text: "message {" }])).toThrow(ProtoSchemaError);
  });
});
