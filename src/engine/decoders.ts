/**
 * Turns the bytes of a record's key or value into what a query sees: JSON values, strings,
 * numbers, or null. Formats, and the wire format each expects:
 *
 *   STRING  UTF-8 text
 *   JSON    UTF-8 JSON text
 *   AVRO    schema-registry wire format: byte 0 = 0 (magic), bytes 1-4 = schema id (int32,
 *           big-endian), then Avro binary; or, with a schema from the topic's metadata and no
 *           registry id that resolves, the whole payload as Avro binary of that schema
 *   PROTOBUF  schema-registry wire format with message indexes (protobuf.ts); or, with a
 *           descriptor set in the topic's metadata and no registry id that resolves, the whole
 *           payload as the metadata's message
 *   INT     4 bytes, big-endian two's complement (Kafka's IntegerSerializer)
 *   LONG    8 bytes, big-endian two's complement (LongSerializer); beyond 2^53 as a string
 *   FLOAT   4 bytes, IEEE 754 big-endian (FloatSerializer)
 *   DOUBLE  8 bytes, IEEE 754 big-endian (DoubleSerializer)
 *
 * AVRO, FLOAT and DOUBLE values are written with their types (avro-text.ts): a double 0 is `0.0`,
 * a decimal keeps its scale.
 *   BYTES   any bytes, shown as base64
 *
 * Without a format (no topic metadata, no SET), each record is inferred on its own: registry wire
 * format with an id the registry knows -> AVRO or PROTOBUF (as the schema says), valid JSON -> JSON, valid UTF-8 -> STRING, else
 * BYTES.
 *
 * A decoder throws DecodeError for a payload it cannot read; the executor skips and counts the
 * record. A schema that must be fetched first makes `decode` return a Promise (only the first
 * record of each schema id pays for it).
 */

import avro from "avsc";
import type { Type as ProtoType } from "protobufjs";
import { AppError } from "../errors.ts";
import type { SchemaRegistryClient } from "../registry/client.ts";
import type { DataFormat } from "../sql/index.ts";
import type { TypedValueText } from "../sql/planner.ts";
import { MAX_SCHEMA_DEPTH, parseJson } from "../util/json.ts";
import { avroText, avroTextAt, avroToJson, avroTypeOptions, javaDouble, javaFloat } from "./avro-text.ts";
import { JsonFieldError, JsonFields } from "./json-fields.ts";
import { decodeMessage, descriptorMessage, messageIndexes, type ProtoSchema, ProtoSchemaError, registryProto } from "./protobuf.ts";

export class DecodeError extends Error {
  override readonly name = "DecodeError";
}

/** What a decoder answers: the value, and JSON text of it when that comes for free. */
export interface Decoded {
  value: unknown;
  /** Valid JSON text of `value` (the payload itself for JSON), so `SELECT *` need not re-serialise. */
  json?: string;
  /** The typed text of a path into the value, for a decoder that knows its types (see TypedValueText). */
  typedAt?: TypedValueText;
  /** What a schema decoded the bytes as, when inference found one (the message browser shows it). */
  format?: "AVRO" | "PROTOBUF";
}

export type Decoder = (bytes: Uint8Array) => Decoded | Promise<Decoded>;

/** Decoders that answer a payload which is JSON text as that value, with `json` = the text itself. */
const JSON_TEXT_DECODERS = new WeakSet<Decoder>();

/**
 * True when `decoder` decodes every payload for which isJsonText() holds to `{ value: JSON.parse(text),
 * json: text }`, text being the payload's bytes (then ASCII): `SELECT *` without a WHERE may then
 * pass those bytes on as they are, neither parsed nor turned into a string.
 */
export function decodesJsonText(decoder: Decoder): boolean {
  return JSON_TEXT_DECODERS.has(decoder);
}

/** Decoders whose answer for plain ASCII text (isPlainText()) shows as that very text. */
const PLAIN_TEXT_DECODERS = new WeakSet<Decoder>();

/**
 * True when `decoder` answers a payload for which isPlainText() holds with a value whose text
 * (as the answer shows a key) is the payload itself: STRING, and inference (such text is a
 * JSON number or literal shown as its text, or no JSON and shown as text; never a JSON string).
 */
export function decodesPlainText(decoder: Decoder): boolean {
  return PLAIN_TEXT_DECODERS.has(decoder);
}

/** Non-empty printable ASCII without `"` or `\`: text that needs no escaping in a JSON string. */
export function isPlainText(b: Uint8Array): boolean {
  const n = b.length;
  if (n === 0) return false;
  for (let i = 0; i < n; i++) {
    const c = b[i]!;
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

/** Deepest nesting scanJsonText() follows; deeper payloads are left to JSON.parse. */
const MAX_DEPTH = 128;
const stack = new Uint8Array(MAX_DEPTH);
const isWs = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
/** Runs of plain bytes at least this long are copied natively, shorter ones byte by byte. */
const NATIVE_COPY = 48;

// The output of the scan in progress (single-threaded: module state, no allocation per call).
let out: Uint8Array | null = null;
let at = 0;
/** First byte not yet written out. */
let run = 0;

/** Writes the plain bytes [run, end) of `b`, then `escape` and the byte it escapes (`c`). */
function flush(b: Uint8Array, end: number, c: number): void {
  const o = out!;
  const len = end - run;
  if (len >= NATIVE_COPY) {
    o.set(b.subarray(run, end), at);
    at += len;
  } else for (let i = run; i < end; i++) o[at++] = b[i]!;
  o[at++] = 0x5c;
  o[at++] = c === 0x0a ? 0x6e : c === 0x0d ? 0x72 : c === 0x09 ? 0x74 : c;
  run = end + 1;
}

/** Whitespace from `i`; outside strings, \n \r \t are escaped in the output. */
function skipWs(b: Uint8Array, i: number, n: number): number {
  for (; i < n; i++) {
    const c = b[i]!;
    if (c === 0x20) continue;
    if (c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    if (out !== null) flush(b, i, c);
  }
  return i;
}

/** Long strings with at least this many bytes left are scanned a word (4 bytes) at a time. */
const WORDS_FROM = 32;
// A 32-bit view of the buffer the bytes lie in, kept while records come from the same buffer.
let wordsOf: ArrayBufferLike | null = null;
let words: Uint32Array<ArrayBufferLike> = new Uint32Array(0);

/**
 * The first index from `i` that may not be plain string content (" \ control, non-ASCII), read
 * a word at a time: bytewise up to a word boundary, then whole words while none holds such a byte.
 */
function plainWords(b: Uint8Array, i: number, n: number): number {
  const base = b.byteOffset;
  if (b.buffer !== wordsOf) {
    wordsOf = b.buffer;
    words = new Uint32Array(wordsOf, 0, wordsOf.byteLength >>> 2);
  }
  for (; ((base + i) & 3) !== 0; i++) {
    const c = b[i]!;
    if (c < 0x20 || c >= 0x80 || c === 0x22 || c === 0x5c) return i;
  }
  for (; i + 4 <= n; i += 4) {
    const w = words[(base + i) >>> 2]!;
    const q = w ^ 0x22222222;
    const s = w ^ 0x5c5c5c5c;
    // A byte below 0x20 or from 0x80 up, or a zero byte in w ^ '"' or w ^ '\\' (a quote, a backslash).
    if (((w - 0x20202020) | w | ((q - 0x01010101) & ~q) | ((s - 0x01010101) & ~s)) & 0x80808080) return i;
  }
  return i;
}

/**
 * A JSON string from the quote at `i`: the index after its closing quote, or -1. ASCII only:
 * any byte from 0x80 up answers -1 (JSON.parse decides for such payloads).
 */
function jsonString(b: Uint8Array, i: number, n: number): number {
  if (out !== null) flush(b, i, 0x22);
  // Past this many plain bytes the string is likely long: words from then on.
  let long = i + 16;
  for (i++; i < n; i++) {
    const c = b[i]!;
    if (c >= 0x20 && c < 0x80 && c !== 0x22 && c !== 0x5c) {
      if (i === long && n - i >= WORDS_FROM) {
        long = -1;
        i = plainWords(b, i, n) - 1;
      }
      continue;
    }
    if (c === 0x22) {
      if (out !== null) flush(b, i, 0x22);
      return i + 1;
    }
    if (c !== 0x5c) return -1;
    if (out !== null) flush(b, i, 0x5c);
    const e = b[++i];
    // " \ / b f n r t
    if (e === 0x22 || e === 0x5c) {
      if (out !== null) flush(b, i, e);
      continue;
    }
    if (e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) continue;
    if (e !== 0x75 || i + 4 >= n) return -1;
    for (let k = 1; k <= 4; k++) {
      const h = b[i + k]!;
      if (!((h >= 0x30 && h <= 0x39) || (h >= 0x41 && h <= 0x46) || (h >= 0x61 && h <= 0x66))) return -1;
    }
    i += 4;
  }
  return -1;
}

/** A JSON number from `i`: the index after it, or -1. */
function jsonNumber(b: Uint8Array, i: number, n: number): number {
  if (b[i] === 0x2d) i++;
  if (i >= n) return -1;
  let c = b[i]!;
  if (c === 0x30) i++;
  else if (c >= 0x31 && c <= 0x39) {
    for (i++; i < n && b[i]! >= 0x30 && b[i]! <= 0x39; ) i++;
  } else return -1;
  if (i < n && b[i] === 0x2e) {
    const start = ++i;
    while (i < n && b[i]! >= 0x30 && b[i]! <= 0x39) i++;
    if (i === start) return -1;
  }
  if (i < n && (b[i] === 0x65 || b[i] === 0x45)) {
    i++;
    if (i < n && (b[i] === 0x2b || b[i] === 0x2d)) i++;
    const start = i;
    while (i < n && b[i]! >= 0x30 && b[i]! <= 0x39) i++;
    if (i === start) return -1;
  }
  c = i < n ? b[i]! : 0x20;
  // A number ends at a delimiter: `1x` or `01` is no number.
  return c === 0x2c || c === 0x7d || c === 0x5d || isWs(c) ? i : -1;
}

/** `"key" :` from `i` (after whitespace); the index after the colon, or -1. */
function jsonKey(b: Uint8Array, i: number, n: number): number {
  i = skipWs(b, i, n);
  if (i >= n || b[i] !== 0x22) return -1;
  i = jsonString(b, i, n);
  if (i < 0) return -1;
  i = skipWs(b, i, n);
  return i < n && b[i] === 0x3a ? i + 1 : -1;
}

/** The scan itself: the index after the text when it is valid, else -1. */
function scan(b: Uint8Array): number {
  const n = b.length;
  let i = 0;
  let depth = 0;
  for (;;) {
    // A value at i.
    i = skipWs(b, i, n);
    if (i >= n) return -1;
    const c = b[i]!;
    let opened = false;
    if (c === 0x7b || c === 0x5b) {
      i = skipWs(b, i + 1, n);
      if (i < n && b[i] === (c === 0x7b ? 0x7d : 0x5d)) i++;
      else {
        if (depth >= MAX_DEPTH) return -1;
        stack[depth++] = c;
        opened = true;
        if (c === 0x7b && (i = jsonKey(b, i, n)) < 0) return -1;
      }
    } else if (c === 0x22) {
      if ((i = jsonString(b, i, n)) < 0) return -1;
    } else if (c === 0x74) {
      if (i + 3 >= n || b[i + 1] !== 0x72 || b[i + 2] !== 0x75 || b[i + 3] !== 0x65) return -1;
      i += 4;
    } else if (c === 0x66) {
      if (i + 4 >= n || b[i + 1] !== 0x61 || b[i + 2] !== 0x6c || b[i + 3] !== 0x73 || b[i + 4] !== 0x65) return -1;
      i += 5;
    } else if (c === 0x6e) {
      if (i + 3 >= n || b[i + 1] !== 0x75 || b[i + 2] !== 0x6c || b[i + 3] !== 0x6c) return -1;
      i += 4;
    } else if ((i = jsonNumber(b, i, n)) < 0) return -1;
    if (opened) continue;
    // After a value: a comma, the end of containers, or the end of the text.
    for (;;) {
      i = skipWs(b, i, n);
      if (depth === 0) return i === n ? i : -1;
      if (i >= n) return -1;
      const d = b[i]!;
      const open = stack[depth - 1]!;
      if (d === 0x2c) {
        i++;
        if (open === 0x7b && (i = jsonKey(b, i, n)) < 0) return -1;
        break;
      }
      if (d !== (open === 0x7b ? 0x7d : 0x5d)) return -1;
      i++;
      depth--;
    }
  }
}

/**
 * True when the bytes are ASCII JSON text that JSON.parse accepts (RFC 8259, whitespace around
 * it allowed): a check on the bytes themselves, far cheaper than decoding and parsing them.
 * False means "not known to be": non-ASCII text, nesting deeper than MAX_DEPTH, or invalid.
 */
export function isJsonText(b: Uint8Array): boolean {
  out = null;
  return scan(b) >= 0;
}

/**
 * The same check, writing the text escaped as the content of a JSON string (what
 * JSON.stringify(text) holds between its quotes) into `dest` from `offset`: the offset after it,
 * or -1 when isJsonText() would answer false (what was written then is garbage). `dest` needs
 * room for twice the bytes.
 */
export function escapeJsonText(b: Uint8Array, dest: Uint8Array, offset: number): number {
  out = dest;
  at = offset;
  run = 0;
  const valid = scan(b) >= 0;
  out = null;
  if (!valid) return -1;
  const len = b.length - run;
  if (len >= NATIVE_COPY) {
    dest.set(b.subarray(run), at);
    at += len;
  } else for (let i = run; i < b.length; i++) dest[at++] = b[i]!;
  return at;
}

const utf8 = new TextDecoder("utf-8");
type Utf8Buffer = Buffer & { utf8Slice(start: number, end: number): string };
/** UTF-8 text of the bytes; Buffer's own slice is the faster path in Bun. */
const text = (bytes: Uint8Array): string =>
  Buffer.isBuffer(bytes) ? (bytes as Utf8Buffer).utf8Slice(0, bytes.byteLength) : utf8.decode(bytes);
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const NULL: Decoded = { value: null, json: "null" };

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function fixed(bytes: Uint8Array, size: number, what: string): DataView {
  if (bytes.byteLength !== size) throw new DecodeError(`${what} needs ${size} bytes, found ${bytes.byteLength}`);
  return view(bytes);
}

const base64 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");

/** Cheap test before JSON.parse: JSON text starts with one of these (after whitespace). */
function mayBeJson(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d) continue;
    // { [ " - 0-9 t f n
    return b === 0x7b || b === 0x5b || b === 0x22 || b === 0x2d || (b >= 0x30 && b <= 0x39) || b === 0x74 || b === 0x66 || b === 0x6e;
  }
  return false;
}

function decodeJson(bytes: Uint8Array): Decoded {
  const json = text(bytes);
  try {
    return { value: JSON.parse(json), json };
  } catch {
    throw new DecodeError("not valid JSON");
  }
}

/** A JSON decoder that reads only `fields` of an object (see json-fields.ts). */
function jsonFieldsDecoder(fields: readonly string[]): (bytes: Uint8Array) => Decoded {
  const reader = new JsonFields(fields);
  return (bytes) => {
    try {
      return { value: reader.read(bytes) };
    } catch (err) {
      if (err instanceof JsonFieldError) throw new DecodeError("not valid JSON");
      throw err;
    }
  };
}

function decodeString(bytes: Uint8Array): Decoded {
  return { value: text(bytes) };
}

function decodeLong(bytes: Uint8Array): Decoded {
  const n = fixed(bytes, 8, "LONG").getBigInt64(0);
  const safe = n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER);
  return { value: safe ? Number(n) : n.toString() };
}

function avroType(schemaText: string, what: string): avro.Type {
  try {
    return avro.Type.forSchema(parseJson(schemaText, MAX_SCHEMA_DEPTH) as avro.Schema, avroTypeOptions());
  } catch (err) {
    throw new AppError("BAD_REQUEST", `${what} is not a valid Avro schema: ${(err as Error).message}`);
  }
}

function readAvro(type: avro.Type, bytes: Uint8Array, start: number): Decoded {
  try {
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset + start, bytes.byteLength - start);
    const decoded: unknown = type.fromBuffer(buf);
    // The typed text is written only for records the answer shows (see avro-text.ts).
    return {
      value: avroToJson(decoded),
      get json() {
        return avroText(type, decoded);
      },
      typedAt: (path) => avroTextAt(type, decoded, path),
    };
  } catch (err) {
    throw new DecodeError(`not valid Avro: ${(err as Error).message}`);
  }
}

/** What a registry schema id stands for in a query: an Avro type, a Protobuf schema, or one that cannot be read. */
type Registered =
  | { kind: "AVRO"; type: avro.Type }
  | { kind: "PROTOBUF"; schema: ProtoSchema }
  | { kind: "UNREADABLE"; schemaType: string; why: string };

/**
 * Types by registry schema id, shared by the decoders of a query: `sync` answers without I/O
 * when the type is known, `load` fetches it (a Protobuf schema with its references). Ids the
 * registry does not know are remembered (as null) for the query so inference does not ask again
 * for every record.
 */
class RegistryTypes {
  readonly #types = new Map<number, Registered | null>();
  constructor(private readonly registry: SchemaRegistryClient | null) {}

  sync(id: number): Registered | null | undefined {
    return this.#types.get(id);
  }

  /** Treats `id` as unknown for the rest of the query (inference after a registry failure). */
  forget(id: number): null {
    this.#types.set(id, null);
    return null;
  }

  async load(id: number): Promise<Registered | null> {
    const registry = this.registry;
    if (!registry) {
      this.#types.set(id, null);
      return null;
    }
    try {
      const s = await registry.schemaById(id);
      const kind = s.schemaType.toUpperCase();
      let type: Registered;
      if (kind === "AVRO") type = { kind, type: avroType(s.schema, `Schema id ${id}`) };
      else if (kind === "PROTOBUF") {
        try {
          type = { kind, schema: await registryProto(s, (subject, version) => registry.schemaByVersion(subject, version)) };
        } catch (err) {
          if (!(err instanceof ProtoSchemaError)) throw err;
          type = { kind: "UNREADABLE", schemaType: kind, why: err.message };
        }
      } else type = { kind: "UNREADABLE", schemaType: kind, why: `Loupe does not decode ${kind} schemas` };
      this.#types.set(id, type);
      return type;
    } catch (err) {
      if (err instanceof AppError && err.code === "NOT_FOUND") {
        this.#types.set(id, null);
        return null;
      }
      throw err;
    }
  }
}

/**
 * Reads a Protobuf message in the registry's wire format with its schema: the message indexes,
 * then the message they name.
 */
function readFramedProto(schema: ProtoSchema, bytes: Uint8Array, id: number): Decoded {
  const framing = messageIndexes(bytes);
  if (!framing) throw new DecodeError(`not valid Protobuf: the message indexes after schema id ${id} are malformed`);
  const type = schema.messageAt(framing.indexes);
  if (!type) throw new DecodeError(`not valid Protobuf: schema id ${id} has no message at index [${framing.indexes.join(", ")}]`);
  return readProto(type, bytes, framing.start);
}

function readProto(type: ProtoType, bytes: Uint8Array, start: number): Decoded {
  let value: unknown;
  try {
    value = decodeMessage(type, bytes, start);
  } catch (err) {
    throw new DecodeError(`not valid Protobuf (${type.fullName.slice(1)}): ${(err as Error).message}`);
  }
  return {
    value,
    format: "PROTOBUF",
    get json() {
      return JSON.stringify(value);
    },
  };
}

const wireId = (bytes: Uint8Array): number | null => (bytes.byteLength >= 5 && bytes[0] === 0 ? view(bytes).getInt32(1) : null);

export interface DecoderOptions {
  registry: SchemaRegistryClient | null;
}

/** Builds the decoders of one query; they share its cache of registry schemas. */
export class DecoderFactory {
  readonly #registry: RegistryTypes;
  readonly #hasRegistry: boolean;

  constructor(opts: DecoderOptions) {
    this.#registry = new RegistryTypes(opts.registry);
    this.#hasRegistry = opts.registry !== null;
  }

  /**
   * The decoder for a format; `schema` is the topic metadata's schema text (AVRO: the schema;
   * PROTOBUF: the descriptor set and message name, see descriptorMessage). No format: inference
   * per record. PROTOBUF without a registry or a descriptor set is UNSUPPORTED. `fields`: only
   * these top-level fields of a JSON object are read (json-fields.ts), for a reader that needs
   * no more (a stream processor); the answer then has no `json` text.
   */
  create(format: DataFormat | undefined, schema: string | undefined, what: "key" | "value", fields?: readonly string[] | null): Decoder {
    const json = fields ? jsonFieldsDecoder(fields) : decodeJson;
    const decoder = this.#create(format, schema, what, json);
    // An empty or missing payload is null whatever the format (tombstones, keyless records).
    const wrapped: Decoder = (bytes) => (bytes.byteLength === 0 && format !== "STRING" && format !== "BYTES" ? NULL : decoder(bytes));
    // JSON, and inference: JSON text is JSON (a registry id needs a 0 byte first, never JSON text).
    if ((format === undefined || format === "JSON") && !fields) JSON_TEXT_DECODERS.add(wrapped);
    if (format === undefined || format === "STRING") PLAIN_TEXT_DECODERS.add(wrapped);
    return wrapped;
  }

  #create(format: DataFormat | undefined, schema: string | undefined, what: "key" | "value", json: Decoder): Decoder {
    switch (format) {
      case undefined:
        return this.#infer(json);
      case "STRING":
        return decodeString;
      case "JSON":
        return json;
      case "BYTES":
        return (b) => ({ value: base64(b) });
      case "INT":
        return (b) => ({ value: fixed(b, 4, "INT").getInt32(0) });
      case "LONG":
        return decodeLong;
      case "FLOAT":
        return (b) => {
          const value = fixed(b, 4, "FLOAT").getFloat32(0);
          const json = javaFloat(value);
          return { value, json, typedAt: (path) => (path.length === 0 ? json : undefined) };
        };
      case "DOUBLE":
        return (b) => {
          const value = fixed(b, 8, "DOUBLE").getFloat64(0);
          const json = javaDouble(value);
          return { value, json, typedAt: (path) => (path.length === 0 ? json : undefined) };
        };
      case "AVRO":
        return this.#avroDecoder(schema === undefined ? null : avroType(schema, `The ${what} schema of the topic metadata`), what);
      case "PROTOBUF":
        return this.#protoDecoder(schema === undefined ? null : metadataMessage(schema, what), what);
    }
  }

  /**
   * Registry-framed bytes by the id's schema; when the id does not resolve (or without a
   * registry), the bytes as `fallback` reads them, else `missing` says why not.
   */
  #framed(
    bytes: Uint8Array,
    read: (type: Registered, id: number, bytes: Uint8Array) => Decoded | null,
    fallback: ((bytes: Uint8Array) => Decoded) | null,
    missing: (id: number | null, type: Registered | null) => string,
  ): Decoded | Promise<Decoded> {
    const id = this.#hasRegistry ? wireId(bytes) : null;
    const decide = (type: Registered | null): Decoded => {
      const found = type && id !== null ? read(type, id, bytes) : null;
      if (found) return found;
      if (fallback) return fallback(bytes);
      throw new DecodeError(missing(id, type));
    };
    if (id === null) return decide(null);
    const known = this.#registry.sync(id);
    if (known !== undefined) return decide(known);
    return this.#registry.load(id).then(decide);
  }

  #avroDecoder(metadataType: avro.Type | null, what: string): Decoder {
    const fallback = metadataType ? (bytes: Uint8Array) => readAvro(metadataType, bytes, 0) : null;
    const read = (t: Registered, id: number, bytes: Uint8Array) => {
      if (t.kind === "AVRO") return readAvro(t.type, bytes, 5);
      if (fallback) return null;
      throw new DecodeError(`schema id ${id} of the ${what} is a ${t.kind === "PROTOBUF" ? "PROTOBUF" : t.schemaType} schema, not AVRO`);
    };
    const missing = (id: number | null) =>
      id === null
        ? `the ${what} is not in the schema registry wire format and the topic has no ${what} schema`
        : `schema id ${id} of the ${what} is not in the schema registry`;
    return (bytes) => this.#framed(bytes, read, fallback, missing);
  }

  #protoDecoder(metadataType: ProtoType | null, what: string): Decoder {
    if (!metadataType && !this.#hasRegistry)
      throw new AppError(
        "UNSUPPORTED",
        `PROTOBUF decoding of the ${what} needs the schema registry (records in its wire format) or a descriptor set in the topic's metadata, and there is neither`,
      );
    const fallback = metadataType ? (bytes: Uint8Array) => readProto(metadataType, bytes, 0) : null;
    const missing = (id: number | null) =>
      id === null
        ? `the ${what} is not in the schema registry wire format and the topic has no ${what} descriptor set`
        : `schema id ${id} of the ${what} is not in the schema registry`;
    return (bytes) =>
      this.#framed(
        bytes,
        (t, id) => {
          if (t.kind === "PROTOBUF") return readFramedProto(t.schema, bytes, id);
          if (fallback) return null;
          if (t.kind === "UNREADABLE" && t.schemaType === "PROTOBUF")
            throw new DecodeError(`schema id ${id} of the ${what} cannot be read: ${t.why}`);
          throw new DecodeError(`schema id ${id} of the ${what} is a ${t.kind === "AVRO" ? "AVRO" : t.schemaType} schema, not PROTOBUF`);
        },
        fallback,
        missing,
      );
  }

  #infer(json: Decoder): Decoder {
    const rest = (bytes: Uint8Array): Decoded => {
      if (mayBeJson(bytes)) {
        try {
          return json(bytes) as Decoded;
        } catch {
          /* text or bytes */
        }
      }
      try {
        return { value: strictUtf8.decode(bytes) };
      } catch {
        return { value: base64(bytes) };
      }
    };
    return (bytes) => {
      const id = this.#hasRegistry ? wireId(bytes) : null;
      if (id === null) return rest(bytes);
      const known = this.#registry.sync(id);
      const decide = (type: Registered | null): Decoded => {
        try {
          if (type?.kind === "AVRO") return readAvro(type.type, bytes, 5);
          if (type?.kind === "PROTOBUF") return readFramedProto(type.schema, bytes, id);
        } catch {
          /* not what the id says: text or bytes */
        }
        return rest(bytes);
      };
      if (known !== undefined) return decide(known);
      // Inference never fails a query: a registry that cannot answer means "no registry schema".
      return this.#registry
        .load(id)
        .catch(() => this.#registry.forget(id))
        .then(decide);
    };
  }
}

/** A topic metadata's PROTOBUF schema read, or a 400 saying why it cannot be. */
function metadataMessage(text: string, what: string): ProtoType {
  try {
    return descriptorMessage(text);
  } catch (err) {
    if (!(err instanceof ProtoSchemaError)) throw err;
    throw new AppError("BAD_REQUEST", `The ${what} descriptor set of the topic metadata cannot be read: ${err.message}`);
  }
}
