/**
 * Turns the bytes of a record's key or value into what a query sees: JSON values, strings,
 * numbers, or null. Formats, and the wire format each expects:
 *
 *   STRING  UTF-8 text
 *   JSON    UTF-8 JSON text
 *   AVRO    schema-registry wire format: byte 0 = 0 (magic), bytes 1-4 = schema id (int32,
 *           big-endian), then Avro binary; or, with a schema from the topic's metadata and no
 *           registry id that resolves, the whole payload as Avro binary of that schema
 *   INT     4 bytes, big-endian two's complement (Kafka's IntegerSerializer)
 *   LONG    8 bytes, big-endian two's complement (LongSerializer); beyond 2^53 as a string
 *   FLOAT   4 bytes, IEEE 754 big-endian (FloatSerializer)
 *   DOUBLE  8 bytes, IEEE 754 big-endian (DoubleSerializer)
 *   BYTES   any bytes, shown as base64
 *
 * Without a format (no topic metadata, no SET), each record is inferred on its own: registry wire
 * format with an id the registry knows -> AVRO, valid JSON -> JSON, valid UTF-8 -> STRING, else
 * BYTES.
 *
 * A decoder throws DecodeError for a payload it cannot read; the executor skips and counts the
 * record. A schema that must be fetched first makes `decode` return a Promise (only the first
 * record of each schema id pays for it).
 */

import avro from "avsc";
import { AppError } from "../../http/errors.ts";
import type { SchemaRegistryClient } from "../../registry/client.ts";
import type { DataFormat } from "../../sql/index.ts";

export class DecodeError extends Error {
  override readonly name = "DecodeError";
}

/** What a decoder answers: the value, and JSON text of it when that comes for free. */
export interface Decoded {
  value: unknown;
  /** Valid JSON text of `value` (the payload itself for JSON), so `SELECT *` need not re-serialise. */
  json?: string;
}

export type Decoder = (bytes: Uint8Array) => Decoded | Promise<Decoded>;

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

function decodeString(bytes: Uint8Array): Decoded {
  return { value: text(bytes) };
}

function decodeLong(bytes: Uint8Array): Decoded {
  const n = fixed(bytes, 8, "LONG").getBigInt64(0);
  const safe = n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER);
  return { value: safe ? Number(n) : n.toString() };
}

/** Avro values as JSON values: bytes and fixed as base64, longs beyond 2^53 stay numbers (avsc). */
function avroToJson(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Buffer.isBuffer(value)) return value.toString("base64");
  if (Array.isArray(value)) return value.map(avroToJson);
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [k, avroToJson(v)]));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = avroToJson(v);
  return out;
}

function avroType(schemaText: string, what: string): avro.Type {
  try {
    return avro.Type.forSchema(JSON.parse(schemaText), { wrapUnions: "auto" });
  } catch (err) {
    throw new AppError("BAD_REQUEST", `${what} is not a valid Avro schema: ${(err as Error).message}`);
  }
}

function readAvro(type: avro.Type, bytes: Uint8Array, start: number): Decoded {
  try {
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset + start, bytes.byteLength - start);
    return { value: avroToJson(type.fromBuffer(buf)) };
  } catch (err) {
    throw new DecodeError(`not valid Avro: ${(err as Error).message}`);
  }
}

/**
 * Avro types by registry schema id, shared by the decoders of a query: `sync` answers without
 * I/O when the type is known, `load` fetches it. Ids the registry does not know are remembered
 * (as null) for the query so inference does not ask again for every record.
 */
class AvroTypes {
  readonly #types = new Map<number, avro.Type | null>();
  constructor(private readonly registry: SchemaRegistryClient | null) {}

  sync(id: number): avro.Type | null | undefined {
    return this.#types.get(id);
  }

  /** Treats `id` as unknown for the rest of the query (inference after a registry failure). */
  forget(id: number): null {
    this.#types.set(id, null);
    return null;
  }

  async load(id: number): Promise<avro.Type | null> {
    if (!this.registry) {
      this.#types.set(id, null);
      return null;
    }
    try {
      const s = await this.registry.schemaById(id);
      const type = s.schemaType.toUpperCase() === "AVRO" ? avroType(s.schema, `Schema id ${id}`) : null;
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

const wireId = (bytes: Uint8Array): number | null =>
  bytes.byteLength >= 5 && bytes[0] === 0 ? view(bytes).getInt32(1) : null;

export interface DecoderOptions {
  registry: SchemaRegistryClient | null;
}

/** Builds the decoders of one query; they share its cache of Avro schemas. */
export class DecoderFactory {
  readonly #avro: AvroTypes;
  readonly #hasRegistry: boolean;

  constructor(opts: DecoderOptions) {
    this.#avro = new AvroTypes(opts.registry);
    this.#hasRegistry = opts.registry !== null;
  }

  /**
   * The decoder for a format; `schema` is the topic metadata's schema text (AVRO only).
   * No format: inference per record. PROTOBUF is not supported (UNSUPPORTED).
   */
  create(format: DataFormat | undefined, schema: string | undefined, what: "key" | "value"): Decoder {
    const decoder = this.#create(format, schema, what);
    // An empty or missing payload is null whatever the format (tombstones, keyless records).
    return (bytes) => (bytes.byteLength === 0 && format !== "STRING" && format !== "BYTES" ? NULL : decoder(bytes));
  }

  #create(format: DataFormat | undefined, schema: string | undefined, what: "key" | "value"): Decoder {
    switch (format) {
      case undefined:
        return this.#infer();
      case "STRING":
        return decodeString;
      case "JSON":
        return decodeJson;
      case "BYTES":
        return (b) => ({ value: base64(b) });
      case "INT":
        return (b) => ({ value: fixed(b, 4, "INT").getInt32(0) });
      case "LONG":
        return decodeLong;
      case "FLOAT":
        return (b) => ({ value: fixed(b, 4, "FLOAT").getFloat32(0) });
      case "DOUBLE":
        return (b) => ({ value: fixed(b, 8, "DOUBLE").getFloat64(0) });
      case "AVRO":
        return this.#avroDecoder(schema === undefined ? null : avroType(schema, `The ${what} schema of the topic metadata`), what);
      case "PROTOBUF":
        throw new AppError("UNSUPPORTED", `PROTOBUF decoding of the ${what} is not supported`);
    }
  }

  #avroDecoder(metadataType: avro.Type | null, what: string): Decoder {
    const viaRegistry = (bytes: Uint8Array, type: avro.Type | null): Decoded => {
      if (type) return readAvro(type, bytes, 5);
      if (metadataType) return readAvro(metadataType, bytes, 0);
      throw new DecodeError(`schema id ${wireId(bytes)} of the ${what} is not in the schema registry`);
    };
    return (bytes) => {
      const id = this.#hasRegistry ? wireId(bytes) : null;
      if (id === null) {
        if (metadataType) return readAvro(metadataType, bytes, 0);
        throw new DecodeError(`the ${what} is not in the schema registry wire format and the topic has no ${what} schema`);
      }
      const known = this.#avro.sync(id);
      if (known !== undefined) return viaRegistry(bytes, known);
      return this.#avro.load(id).then((type) => viaRegistry(bytes, type));
    };
  }

  #infer(): Decoder {
    const rest = (bytes: Uint8Array): Decoded => {
      if (mayBeJson(bytes)) {
        try {
          return decodeJson(bytes);
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
      const known = this.#avro.sync(id);
      const decide = (type: avro.Type | null): Decoded => {
        if (!type) return rest(bytes);
        try {
          return readAvro(type, bytes, 5);
        } catch {
          return rest(bytes);
        }
      };
      if (known !== undefined) return decide(known);
      // Inference never fails a query: a registry that cannot answer means "not Avro".
      return this.#avro.load(id).catch(() => this.#avro.forget(id)).then(decide);
    };
  }
}
