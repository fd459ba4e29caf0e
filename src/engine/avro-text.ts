/**
 * Avro values as JSON text written with their types, as the older product wrote them (its
 * clients match the text, not the parsed value):
 *
 *   double, float  always with a fraction or an exponent: 0.0, 1.5, 3.0E10 is written 30000000000.0
 *                  (a float by its shortest decimal: 0.1, not 0.10000000149011612); NaN and the
 *                  infinities as the strings "NaN", "Infinity", "-Infinity"
 *   decimal        (logical type on bytes or fixed) the exact number with all of its scale:
 *                  4935.000000000000000000
 *   record         fields in schema order
 *   bytes, fixed   base64 strings, as the query sees them
 *
 * JSON.stringify would write a whole double as an integer (`0`), which a client that reads the
 * text as Java wrote it does not find.
 */

import avro from "avsc";

/** A decimal read from Avro: its unscaled digits and scale, exact. */
export class AvroDecimal {
  constructor(
    readonly unscaled: bigint,
    readonly scale: number,
  ) {}

  /** The number with all of its scale: 4935.000000000000000000. */
  toString(): string {
    const negative = this.unscaled < 0n;
    let digits = (negative ? -this.unscaled : this.unscaled).toString();
    if (this.scale > 0) {
      digits = digits.padStart(this.scale + 1, "0");
      digits = `${digits.slice(0, -this.scale)}.${digits.slice(-this.scale)}`;
    }
    return negative ? `-${digits}` : digits;
  }

  /** What a query compares and computes with: the nearest double. */
  toNumber(): number {
    return Number(this.toString());
  }
}

/** Two's complement, big-endian: Avro's decimal bytes. */
function unscaledOf(bytes: Uint8Array): bigint {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  if (bytes.length > 0 && (bytes[0]! & 0x80) !== 0) n -= 1n << BigInt(8 * bytes.length);
  return n;
}

function bytesOf(unscaled: bigint, size: number | undefined): Buffer {
  const out: number[] = [];
  let n = unscaled;
  do {
    out.unshift(Number(n & 0xffn));
    n >>= 8n;
  } while (!(n === 0n && (out[0]! & 0x80) === 0) && !(n === -1n && (out[0]! & 0x80) !== 0));
  while (size !== undefined && out.length < size) out.unshift(unscaled < 0n ? 0xff : 0);
  return Buffer.from(out);
}

/** The decimal logical type: bytes or fixed read as an AvroDecimal. */
class DecimalType extends avro.types.LogicalType {
  readonly scale: number;
  readonly size: number | undefined;
  constructor(schema: avro.Schema, opts?: avro.ForSchemaOptions) {
    super(schema, opts);
    const attrs = schema as { scale?: unknown; size?: unknown; type?: unknown };
    this.scale = typeof attrs.scale === "number" && Number.isInteger(attrs.scale) && attrs.scale > 0 ? attrs.scale : 0;
    this.size = typeof attrs.size === "number" ? attrs.size : undefined;
  }

  protected override _fromValue(value: Buffer): AvroDecimal {
    return new AvroDecimal(unscaledOf(value), this.scale);
  }

  protected override _toValue(value: unknown): Buffer | undefined {
    return value instanceof AvroDecimal ? bytesOf(value.unscaled, this.size) : undefined;
  }

  protected override _resolve(type: avro.Type): ((v: unknown) => unknown) | undefined {
    return type instanceof DecimalType && type.scale === this.scale ? (v: unknown) => v : undefined;
  }
}

const LOGICAL_TYPES = { decimal: DecimalType as unknown as new (schema: avro.Schema, opts?: unknown) => avro.types.LogicalType };

/**
 * Options for avro.Type.forSchema: unions unwrapped where they can be, decimals kept exact. A
 * fresh object each time: avsc keeps the named types it parsed in the options it is given, and a
 * second schema with the same names would then fail as a duplicate.
 */
export function avroTypeOptions(): Partial<avro.ForSchemaOptions> {
  return { wrapUnions: "auto", logicalTypes: LOGICAL_TYPES };
}

/** A double as Java writes it, without the exponent form: 0.0, 1.5, -2.0. */
export function javaDouble(x: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? '"NaN"' : x > 0 ? '"Infinity"' : '"-Infinity"';
  if (Number.isInteger(x) && Math.abs(x) < 1e21) return Object.is(x, -0) ? "-0.0" : `${x}.0`;
  return String(x);
}

/** A float (a double holding a float32) by the shortest decimal that reads back as it: 0.1. */
export function javaFloat(x: number): string {
  if (!Number.isFinite(x) || Number.isInteger(x)) return javaDouble(x);
  for (let p = 1; p <= 9; p++) {
    const shorter = Number(x.toPrecision(p));
    if (Math.fround(shorter) === x) return javaDouble(shorter);
  }
  return javaDouble(x);
}

/** Avro values as JSON values, for the query: bytes and fixed as base64, decimals as numbers. */
export function avroToJson(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (value instanceof AvroDecimal) return value.toNumber();
  if (Buffer.isBuffer(value)) return value.toString("base64");
  if (Array.isArray(value)) return value.map(avroToJson);
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [k, avroToJson(v)]));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = avroToJson(v);
  return out;
}

type Writer = (value: unknown) => string;

const untyped: Writer = (value) => JSON.stringify(avroToJson(value)) ?? "null";
const writers = new WeakMap<avro.Type, Writer>();

/** The typed JSON text of a value that `type` decoded. */
export function avroText(type: avro.Type, value: unknown): string {
  return writerOf(type)(value);
}

/**
 * The typed JSON text of the part of `value` (decoded by `type`) at a path of field names, the
 * way a query's path reads it from avroToJson()'s value: records by field, maps by key, unions
 * that are a value or null through the branch holding it. Undefined where the path leaves the
 * schema or meets a wrapped union; the caller writes the plain value then.
 */
export function avroTextAt(type: avro.Type, value: unknown, path: readonly string[]): string | undefined {
  let t = type;
  let v = value;
  for (const name of path) {
    if (t.typeName === "union:unwrapped") {
      if (v === null || v === undefined) return undefined;
      const others = (t as avro.types.UnwrappedUnionType).types.filter((b) => b.typeName !== "null");
      const branch = others.length === 1 ? others[0] : others.find((b) => b.isValid(v));
      if (branch === undefined) return undefined;
      t = branch;
    }
    if (v === null || typeof v !== "object") return undefined;
    if (t.typeName === "record" || t.typeName === "error") {
      const field = (t as avro.types.RecordType).field(name);
      if (field === undefined) return undefined;
      t = field.type;
    } else if (t.typeName === "map") t = (t as avro.types.MapType).valuesType;
    else return undefined;
    if (!Object.hasOwn(v, name)) return undefined;
    v = (v as Record<string, unknown>)[name];
  }
  return avroText(t, v);
}

/** Built once per type; a named type that contains itself refers to its writer through the cache. */
function writerOf(type: avro.Type): Writer {
  const known = writers.get(type);
  if (known !== undefined) return known;
  let built: Writer | undefined;
  // Set before the parts are built, so that a recursive type finds it.
  writers.set(type, (value) => built!(value));
  built = build(type);
  writers.set(type, built);
  return built;
}

function build(type: avro.Type): Writer {
  switch (type.typeName) {
    case "null":
      return () => "null";
    case "boolean":
      return (v) => (v ? "true" : "false");
    case "int":
    case "long":
      return (v) => String(v);
    case "double":
      return (v) => javaDouble(v as number);
    case "float":
      return (v) => javaFloat(v as number);
    case "string":
    case "enum":
      return (v) => JSON.stringify(v);
    case "logical:decimal":
      return (v) => (v instanceof AvroDecimal ? v.toString() : untyped(v));
    case "array": {
      const items = writerOf((type as avro.types.ArrayType).itemsType);
      return (v) => `[${(v as unknown[]).map(items).join(",")}]`;
    }
    case "map": {
      const values = writerOf((type as avro.types.MapType).valuesType);
      return (v) => {
        const parts: string[] = [];
        for (const [k, x] of Object.entries(v as Record<string, unknown>)) parts.push(`${JSON.stringify(k)}:${values(x)}`);
        return `{${parts.join(",")}}`;
      };
    }
    case "record":
    case "error": {
      const fields = (type as avro.types.RecordType).fields.map((f) => ({
        name: f.name,
        head: `${JSON.stringify(f.name)}:`,
        write: writerOf(f.type),
      }));
      return (v) => {
        const record = v as Record<string, unknown>;
        let out = "{";
        for (let i = 0; i < fields.length; i++) {
          const f = fields[i]!;
          out += (i === 0 ? "" : ",") + f.head + f.write(record[f.name]);
        }
        return `${out}}`;
      };
    }
    case "union:unwrapped": {
      const branches = (type as avro.types.UnwrappedUnionType).types;
      const others = branches.filter((t) => t.typeName !== "null");
      const only = others.length === 1 ? writerOf(others[0]!) : null;
      return (v) => {
        if (v === null || v === undefined) return "null";
        if (only !== null) return only(v);
        const branch = others.find((t) => t.isValid(v));
        return branch === undefined ? untyped(v) : writerOf(branch)(v);
      };
    }
    case "union:wrapped": {
      const branches = new Map((type as avro.types.WrappedUnionType).types.map((t) => [t.branchName ?? "", t]));
      return (v) => {
        if (v === null || v === undefined) return "null";
        const name = Object.keys(v as object)[0];
        const branch = name === undefined ? undefined : branches.get(name);
        if (branch === undefined) return untyped(v);
        return `{${JSON.stringify(name)}:${writerOf(branch)((v as Record<string, unknown>)[name!])}}`;
      };
    }
    default:
      // bytes, fixed and logical types Loupe does not register: as the query sees them.
      return untyped;
  }
}
