/**
 * Turns what an INSERT sets (a key, a value: literals or JSON values, nested objects for
 * fields) into the bytes a record carries, one encoder per format, each the inverse of its
 * decoder in src/engine/decoders.ts:
 *
 *   STRING  UTF-8 text of a string, number or boolean
 *   JSON    UTF-8 JSON text (integers beyond 2^53 keep every digit)
 *   AVRO    schema-registry wire format: byte 0 = 0 (magic), bytes 1-4 = schema id (int32,
 *           big-endian), then the Avro binary of the value in that schema; without a registry,
 *           the bare Avro binary of the topic metadata's schema
 *   PROTOBUF  the wire format with the message indexes (protobuf.ts), then the Protobuf binary
 *           of the value (JSON as ProtoJSON reads it; text is that JSON); without a registered
 *           schema, the bare binary of the message the topic metadata's descriptor set names
 *   INT     4 bytes, big-endian two's complement (Kafka's IntegerSerializer)
 *   LONG    8 bytes, big-endian two's complement (LongSerializer)
 *   FLOAT   4 bytes, IEEE 754 big-endian (FloatSerializer)
 *   DOUBLE  8 bytes, IEEE 754 big-endian (DoubleSerializer)
 *   BYTES   base64 text, decoded (what a query shows of BYTES)
 *
 * A null (or absent) key or value is a record without one. A value that does not fit throws
 * EncodeError naming the field; the caller adds where the value was written.
 */
import avro from "avsc";
import type { Type as ProtoType } from "protobufjs";
import type { InsertFormat } from "../sql/insert.ts";
import { JsonDepthError, MAX_JSON_DEPTH, MAX_SCHEMA_DEPTH, parseJson } from "../util/json.ts";
import { encodeMessage, wireHeader } from "./protobuf.ts";

export class EncodeError extends Error {
  override readonly name = "EncodeError";
  constructor(
    message: string,
    /** The field the value was meant for: `_key`, `_value`, `a.b`. */
    readonly field: string,
  ) {
    super(message);
  }
}

export type Encoder = (value: unknown, field: string) => Buffer | null;

/** An Avro schema as the encoder uses it: parsed, with the registry id it is written under. */
export interface AvroSchema {
  type: avro.Type;
  /** The registry's id; null: no registry, bare Avro binary. */
  id: number | null;
  /** The schema text (what the JDBC routes hand to the driver). */
  text: string;
}

/** A Protobuf message as the encoder writes it: the message, and the registry id and indexes it is framed with. */
export interface ProtoTarget {
  message: ProtoType;
  /** The registry's id; null: no registry schema, the bare binary. */
  id: number | null;
  /** The message's indexes in its schema (the wire format's), [0] for the file's first message. */
  indexes: number[];
  /** The registered `.proto` text (what the produce dialog shows); absent for a descriptor set. */
  text?: string;
}

/** Parses Avro schema text the way the query decoders do (unions unwrapped when unambiguous). */
export function parseAvroSchema(text: string): avro.Type {
  let parsed: unknown;
  try {
    parsed = parseJson(text, MAX_SCHEMA_DEPTH);
  } catch (e) {
    if (e instanceof JsonDepthError) throw e;
    // A bare type name such as "string".
    parsed = text;
  }
  return avro.Type.forSchema(parsed as avro.Schema, { wrapUnions: "auto" });
}

const describe = (v: unknown): string => {
  if (v === null) return "null";
  if (typeof v === "bigint") return `number ${v}`;
  if (typeof v === "string") return `string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v)}`;
  if (typeof v === "object") return Array.isArray(v) ? "an array" : "an object";
  return `${typeof v} ${String(v)}`;
};

const INTEGER_TEXT = /^\s*[-+]?\d+\s*$/;
const NUMBER_TEXT = /^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/;

/** A whole number within [min, max] as a bigint, from a number, a bigint or numeric text. */
function integer(v: unknown, field: string, what: string, min: bigint, max: bigint): bigint {
  let n: bigint | undefined;
  if (typeof v === "bigint") n = v;
  else if (typeof v === "number" && Number.isInteger(v)) n = BigInt(v);
  else if (typeof v === "string" && INTEGER_TEXT.test(v)) n = BigInt(v.trim());
  if (n === undefined) throw new EncodeError(`${field}: ${describe(v)} is not a whole number (${what})`, field);
  if (n < min || n > max) throw new EncodeError(`${field}: ${n} is out of range for ${what} (${min} to ${max})`, field);
  return n;
}

function decimal(v: unknown, field: string, what: string): number {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "string" && NUMBER_TEXT.test(v)) return Number(v);
  throw new EncodeError(`${field}: ${describe(v)} is not a number (${what})`, field);
}

const INT32: [bigint, bigint] = [-(2n ** 31n), 2n ** 31n - 1n];
const INT64: [bigint, bigint] = [-(2n ** 63n), 2n ** 63n - 1n];

/** JSON text; bigints (integers beyond 2^53 written in the statement) keep their digits. */
export function jsonText(value: unknown): string {
  if (!hasBigInt(value)) return JSON.stringify(value);
  const marks: string[] = [];
  const text = JSON.stringify(value, (_k, v) => {
    if (typeof v !== "bigint") return v;
    marks.push(v.toString());
    return `\u0000${marks.length - 1}\u0000`;
  });
  return text.replace(/"\\u0000(\d+)\\u0000"/g, (_m, i: string) => marks[Number(i)]!);
}

function hasBigInt(v: unknown): boolean {
  if (typeof v === "bigint") return true;
  if (v === null || typeof v !== "object") return false;
  return Object.values(v).some(hasBigInt);
}

function fixed(size: number, write: (b: Buffer) => void): Buffer {
  const b = Buffer.alloc(size);
  write(b);
  return b;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The encoder of a format; AVRO needs the topic's schema, PROTOBUF its message. */
export function encoderFor(format: InsertFormat, schema?: AvroSchema, proto?: ProtoTarget): Encoder {
  const scalar = (v: unknown, field: string, what: string): string | number | bigint | boolean => {
    if (typeof v === "object" && v !== null)
      throw new EncodeError(`${field}: ${describe(v)} does not fit ${what}, which takes one value`, field);
    return v as string | number | bigint | boolean;
  };
  const nullable =
    (encode: Encoder): Encoder =>
    (v, field) =>
      v === null || v === undefined ? null : encode(v, field);
  switch (format) {
    case "STRING":
      return nullable((v, field) => Buffer.from(String(scalar(v, field, "STRING")), "utf8"));
    case "JSON":
      return nullable((v) => Buffer.from(jsonText(v), "utf8"));
    case "INT":
      return nullable((v, field) => fixed(4, (b) => b.writeInt32BE(Number(integer(scalar(v, field, "INT"), field, "INT", ...INT32)))));
    case "LONG":
      return nullable((v, field) => fixed(8, (b) => b.writeBigInt64BE(integer(scalar(v, field, "LONG"), field, "LONG", ...INT64))));
    case "FLOAT":
      return nullable((v, field) => {
        const n = decimal(scalar(v, field, "FLOAT"), field, "FLOAT");
        if (Math.abs(n) > 3.4028234663852886e38) throw new EncodeError(`${field}: ${n} is out of range for FLOAT`, field);
        return fixed(4, (b) => b.writeFloatBE(n));
      });
    case "DOUBLE":
      return nullable((v, field) => fixed(8, (b) => b.writeDoubleBE(decimal(scalar(v, field, "DOUBLE"), field, "DOUBLE"))));
    case "BYTES":
      return nullable((v, field) => {
        const text = scalar(v, field, "BYTES");
        if (typeof text !== "string" || text.length % 4 !== 0 || !BASE64.test(text))
          throw new EncodeError(`${field}: ${describe(text)} is not base64 text (BYTES are written as base64)`, field);
        return Buffer.from(text, "base64");
      });
    case "AVRO": {
      if (!schema) throw new Error("AVRO needs a schema");
      return (v, field) => {
        // A record schema with nothing set is still a record (its defaults); null is no value.
        if (v === null || (v === undefined && schema.type.typeName !== "record")) return null;
        const body = schema.type.toBuffer(toAvro(schema.type, v, field));
        if (schema.id === null) return body;
        const head = Buffer.alloc(5);
        head.writeInt32BE(schema.id, 1);
        return Buffer.concat([head, body]);
      };
    }
    case "PROTOBUF":
      if (!proto) throw new Error("PROTOBUF needs a message");
      return protoEncoder(proto);
  }
}

/**
 * Protobuf: null is no value; an object is the message's fields (every unset one its default);
 * text is the message as JSON (a whole `_value` of an INSERT, what the produce dialog sends).
 */
function protoEncoder(proto: ProtoTarget): Encoder {
  const head = proto.id === null ? null : wireHeader(proto.id, proto.indexes);
  const name = proto.message.fullName.slice(1);
  return (v, field) => {
    if (v === null) return null;
    let value: unknown = v ?? {};
    if (typeof value === "string") {
      try {
        value = parseJson(value, MAX_JSON_DEPTH);
      } catch (err) {
        throw new EncodeError(`${field}: not the JSON of a ${name} message (${(err as Error).message})`, field);
      }
    }
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw new EncodeError(`${field}: ${describe(value)} does not fit the message ${name}`, field);
    let body: Uint8Array;
    try {
      body = encodeMessage(proto.message, value);
    } catch (err) {
      // ProtoJSON names what failed: `.pkg.Msg.field: <why>: <value>`, or `pkg.Msg: unknown field: "x"`.
      const why = (err as Error).message;
      const failed = (why.split(":")[0] ?? "").replace(/^\./, "");
      const inner = failed.startsWith(`${name}.`)
        ? failed.slice(name.length + 1)
        : failed === name
          ? (/unknown field: "(.*)"$/.exec(why)?.[1] ?? null)
          : null;
      const path = inner === null ? field : field === "_value" ? inner : `${field}.${inner}`;
      throw new EncodeError(`${path}: does not fit the message ${name} (${why.replace(/^\./, "")})`, path);
    }
    return head ? Buffer.concat([head, body]) : Buffer.from(body);
  };
}

/**
 * The encoder of values given as text in their format (the produce dialog): JSON text is
 * checked and written as typed (every digit and space kept); Avro text is the value as JSON;
 * STRING the text itself; the numbers and BYTES their text, as INSERT reads a literal.
 */
export function textEncoder(side: {
  format: InsertFormat;
  avro?: AvroSchema;
  proto?: ProtoTarget;
}): (text: string, field: string) => Buffer | null {
  const json = (text: string, field: string): unknown => {
    try {
      return parseJson(text, MAX_JSON_DEPTH);
    } catch (err) {
      throw new EncodeError(`${field}: not valid JSON (${(err as Error).message})`, field);
    }
  };
  switch (side.format) {
    case "STRING":
      return (text) => Buffer.from(text, "utf8");
    case "JSON":
      return (text, field) => {
        json(text, field);
        return Buffer.from(text, "utf8");
      };
    case "AVRO": {
      const encode = encoderFor("AVRO", side.avro);
      return (text, field) => encode(json(text, field), field);
    }
    case "PROTOBUF": {
      const encode = encoderFor("PROTOBUF", undefined, side.proto);
      return (text, field) => encode(json(text, field), field);
    }
    default: {
      const encode = encoderFor(side.format);
      return (text, field) => encode(text.trim(), field);
    }
  }
}

const typeLabel = (type: avro.Type): string => {
  const name = type.typeName;
  if (name.startsWith("union")) return `union of ${(type as avro.types.UnwrappedUnionType).types.map(typeLabel).join(", ")}`;
  if (name === "logical:decimal" || name.startsWith("logical")) return typeLabel((type as avro.types.LogicalType).underlyingType ?? type);
  return type.name ? `${name} ${type.name}` : name;
};

/**
 * The value in the form avsc writes for `type`, checked: records take their fields (absent ones
 * get the schema's default, or null when the field allows it), unions the first branch the
 * value fits, enums their symbols, bytes and fixed base64 text, numbers numeric text too (the
 * JDBC driver sends keys as text).
 */
export function toAvro(type: avro.Type, v: unknown, field: string): unknown {
  const fail = (why?: string): never => {
    throw new EncodeError(`${field}: ${describe(v)} does not fit the schema's ${typeLabel(type)}${why ? ` (${why})` : ""}`, field);
  };
  const name = type.typeName;
  switch (name) {
    case "null":
      return v === null || v === undefined ? null : fail();
    case "boolean":
      return typeof v === "boolean" ? v : v === "true" ? true : v === "false" ? false : fail();
    case "int":
      return Number(integerOr(v, INT32, fail));
    case "long": {
      const n = integerOr(v, INT64, fail);
      if (n > BigInt(Number.MAX_SAFE_INTEGER) || n < BigInt(Number.MIN_SAFE_INTEGER)) fail("beyond 2^53, which this writer cannot hold");
      return Number(n);
    }
    case "float":
    case "double":
      if (typeof v === "number" || typeof v === "bigint" || (typeof v === "string" && NUMBER_TEXT.test(v))) return Number(v);
      return fail();
    case "string":
      return typeof v === "string" ? v : fail();
    case "bytes":
      return typeof v === "string" && v.length % 4 === 0 && BASE64.test(v) ? Buffer.from(v, "base64") : fail("bytes are written as base64");
    case "fixed": {
      const size = (type as avro.types.FixedType).size;
      const b = typeof v === "string" && BASE64.test(v) ? Buffer.from(v, "base64") : null;
      return b && b.length === size ? b : fail(`${size} bytes as base64`);
    }
    case "enum": {
      const symbols = (type as avro.types.EnumType).symbols;
      return typeof v === "string" && symbols.includes(v) ? v : fail(`one of ${symbols.join(", ")}`);
    }
    case "array": {
      if (!Array.isArray(v)) return fail();
      const items = (type as avro.types.ArrayType).itemsType;
      return v.map((item, i) => toAvro(items, item, `${field}[${i}]`));
    }
    case "map": {
      if (!isObject(v)) return fail();
      const values = (type as avro.types.MapType).valuesType as avro.Type;
      return Object.fromEntries(Object.entries(v).map(([k, item]) => [k, toAvro(values, item, `${field}.${k}`)]));
    }
    case "record":
    case "error": {
      const record = type as avro.types.RecordType;
      const given = v === undefined ? {} : isObject(v) ? v : fail();
      const known = new Set(record.fields.map((f) => f.name));
      const unknown = Object.keys(given).find((k) => !known.has(k));
      if (unknown !== undefined) {
        const path = field === "_value" ? unknown : `${field}.${unknown}`;
        throw new EncodeError(`${path}: the schema's ${typeLabel(type)} has no field '${unknown}'`, path);
      }
      const out: Record<string, unknown> = {};
      for (const f of record.fields) {
        const path = field === "_value" ? f.name : `${field}.${f.name}`;
        if (Object.hasOwn(given, f.name)) out[f.name] = toAvro(f.type, given[f.name], path);
        else {
          const fallback = f.defaultValue();
          if (fallback !== undefined) out[f.name] = fallback;
          else if (f.type.isValid(null)) out[f.name] = null;
          else if (f.type.typeName === "record") out[f.name] = toAvro(f.type, undefined, path);
          else throw new EncodeError(`${path}: not set, and the schema gives it no default`, path);
        }
      }
      return out;
    }
    case "union:unwrapped":
    case "union:wrapped": {
      const branches = (type as avro.types.UnwrappedUnionType).types;
      if (v === null || v === undefined) {
        if (branches.some((b) => b.typeName === "null")) return null;
        return fail();
      }
      for (const branch of branches) {
        if (branch.typeName === "null") continue;
        try {
          const value = toAvro(branch, v, field);
          return name === "union:wrapped" ? { [branch.branchName!]: value } : value;
        } catch (err) {
          if (!(err instanceof EncodeError)) throw err;
        }
      }
      return fail();
    }
    default:
      if (name.startsWith("logical:")) return toAvro((type as avro.types.LogicalType).underlyingType, v, field);
      return type.isValid(v) ? v : fail();
  }
}

function integerOr(v: unknown, [min, max]: [bigint, bigint], fail: (why?: string) => never): bigint {
  let n: bigint | undefined;
  if (typeof v === "bigint") n = v;
  else if (typeof v === "number" && Number.isInteger(v)) n = BigInt(v);
  else if (typeof v === "string" && INTEGER_TEXT.test(v)) n = BigInt(v.trim());
  if (n === undefined) return fail();
  if (n < min || n > max) return fail(`out of range ${min} to ${max}`);
  return n;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !Buffer.isBuffer(v);
}
