/**
 * The Protobuf schema the tests use, as `.proto` text (what the registry holds, parsed by
 * protobufjs to encode test records) and as an independent implementation: Google's Python
 * protobuf (protobuf_helper.py), which builds the same schema from FileDescriptorProtos and
 * encodes and decodes records with the message classes it makes of them.
 */
import { join } from "node:path";
import { common, parse, Root, type Type } from "protobufjs";
import { fromJson } from "protobufjs/ext/protojson";
import { registerProtobuf } from "./registry.ts";

export const COMMON_PROTO = `syntax = "proto3";
package loupe.test.common;

enum Status {
  STATUS_UNKNOWN = 0;
  PLACED = 1;
  SHIPPED = 2;
}

message Money {
  string currency = 1;
  int64 units = 2;
}
`;

export const ORDER_PROTO = `syntax = "proto3";
package loupe.test;

import "loupe/test/common.proto";
import "google/protobuf/timestamp.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/wrappers.proto";

message Order {
  message Line {
    string sku = 1;
    int32 qty = 2;
    loupe.test.common.Money price = 3;
  }
  string id = 1;
  loupe.test.common.Status status = 2;
  repeated Line lines = 3;
  map<string, int64> counts = 4;
  oneof payment {
    string card = 5;
    string voucher = 6;
  }
  google.protobuf.Timestamp placed_at = 7;
  int64 total = 8;
  google.protobuf.Struct extra = 9;
  google.protobuf.StringValue note = 10;
  repeated string tags = 11;
}

message Refund {
  string order_id = 1;
  int64 amount = 2;
}
`;

/** Registers common.proto (subject `<prefix>-common`), then order.proto (`<prefix>-value`) referencing it; answers their ids. */
export async function registerOrderSchema(subjectPrefix: string): Promise<{ common: number; order: number }> {
  const subject = `${subjectPrefix}-common`;
  const common = await registerProtobuf(subject, COMMON_PROTO);
  const order = await registerProtobuf(`${subjectPrefix}-value`, ORDER_PROTO, [{ name: "loupe/test/common.proto", subject, version: 1 }]);
  return { common, order };
}

/** The schema parsed by protobufjs, for encoding records in a test (not Loupe's code path). */
export function orderTypes(): { order: Type; refund: Type; money: Type } {
  const root = new Root();
  for (const name of ["timestamp", "struct", "wrappers"]) root.addJSON(common.get(`google/protobuf/${name}.proto`)?.nested ?? {});
  parse(COMMON_PROTO, root, { keepCase: true });
  parse(ORDER_PROTO, root, { keepCase: true });
  root.resolveAll();
  return {
    order: root.lookupType("loupe.test.Order"),
    refund: root.lookupType("loupe.test.Refund"),
    money: root.lookupType("loupe.test.common.Money"),
  };
}

const HELPER = join(import.meta.dir, "protobuf_helper.py");

/** Runs the Python helper; its standard output, trimmed. */
function python(args: string[], input?: unknown): string {
  const run = Bun.spawnSync(["/usr/bin/python3", HELPER, ...args], {
    stdin: input === undefined ? "ignore" : Buffer.from(JSON.stringify(input)),
  });
  if (run.exitCode !== 0) throw new Error(`protobuf_helper.py ${args.join(" ")}: ${run.stderr.toString()}`);
  return run.stdout.toString().trim();
}

/** The FileDescriptorSet of the schema (Python's, with the imported Google files). */
export function pythonDescriptorSet(): Buffer {
  return Buffer.from(python(["descriptor-set"]), "base64");
}

/** A record encoded by Python: framed in the wire format when `id` is given. */
export function pythonEncode(message: string, json: unknown, framing?: { id: number; indexes?: number[] }): Buffer {
  return Buffer.from(
    python(["encode"], { message, json, ...(framing ? { id: framing.id, indexes: framing.indexes ?? [0] } : {}) }),
    "base64",
  );
}

/** A record decoded by Python: its JSON (proto names, defaults shown) and, when framed, the id and indexes. */
export function pythonDecode(
  message: string,
  bytes: Uint8Array,
  framed: boolean,
): { id: number | null; indexes: number[] | null; value: any } {
  return JSON.parse(python(["decode"], { message, base64: Buffer.from(bytes).toString("base64"), framed }));
}

/** Encodes ProtoJSON `json` as `type` with protobufjs. */
export function encodeWith(type: Type, json: unknown): Buffer {
  return Buffer.from(type.encode(fromJson(type, json)).finish());
}
