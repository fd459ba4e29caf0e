/**
 * Avro in the produce dialog, without an Avro library in the page: a JSON template of a schema
 * (every field with its default, or an example of its type), and a check of a JSON value against
 * the schema as the server's encoder reads it (src/domains/insert/encoders.ts toAvro: unions take
 * the value of a branch as it is, bytes and fixed are base64), so a value is refused while it is
 * typed rather than on Send. The server checks again; this only says it sooner.
 */

type Schema = unknown;
type Named = Map<string, Record<string, unknown>>;

const PRIMITIVES = new Set(["null", "boolean", "int", "long", "float", "double", "bytes", "string"]);
const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Named types (records, enums, fixed) by full and short name, so references resolve. */
function collectNames(schema: Schema, named: Named, namespace = ""): void {
  if (Array.isArray(schema)) {
    for (const s of schema) collectNames(s, named, namespace);
    return;
  }
  if (!isObject(schema)) return;
  const type = schema.type;
  if ((type === "record" || type === "error" || type === "enum" || type === "fixed") && typeof schema.name === "string") {
    const ns = typeof schema.namespace === "string" ? schema.namespace : namespace;
    const full = schema.name.includes(".") || !ns ? schema.name : `${ns}.${schema.name}`;
    named.set(full, schema);
    named.set(schema.name.split(".").pop()!, schema);
    if (Array.isArray(schema.fields)) for (const f of schema.fields) if (isObject(f)) collectNames(f.type, named, ns);
    return;
  }
  if (type === "array") collectNames(schema.items, named, namespace);
  else if (type === "map") collectNames(schema.values, named, namespace);
  else if (isObject(type) || Array.isArray(type)) collectNames(type, named, namespace);
}

const COMPLEX = new Set(["record", "error", "enum", "fixed", "array", "map"]);

/** A schema with references and wrappers taken away: a primitive name, a union, or a complex type. */
function resolve(schema: Schema, named: Named): Schema {
  let s = schema;
  for (let depth = 0; depth < 32; depth++) {
    if (typeof s === "string") {
      const target = PRIMITIVES.has(s) ? undefined : named.get(s);
      if (!target) return s;
      s = target;
    } else if (isObject(s) && typeof s.type === "string" && !COMPLEX.has(s.type)) {
      // {"type": "long", "logicalType": ...} or {"type": "SomeRecord"}: what it wraps.
      s = s.type;
    } else if (isObject(s) && (isObject(s.type) || Array.isArray(s.type))) s = s.type;
    else return s;
  }
  return s;
}

export function parseSchema(text: string): { schema: Schema; named: Named } | null {
  try {
    const schema: unknown = JSON.parse(text);
    const named: Named = new Map();
    collectNames(schema, named);
    return { schema, named };
  } catch {
    return null;
  }
}

/** An example value of the schema: defaults where given, now for times, else the least value of each type. */
export function avroTemplate(text: string): unknown {
  const parsed = parseSchema(text);
  if (!parsed) return {};
  const seen = new Set<unknown>();
  const example = (raw: Schema): unknown => {
    // A time is more use as now than as 1970.
    if (isObject(raw) && typeof raw.logicalType === "string") {
      if (raw.logicalType === "timestamp-millis" || raw.logicalType === "local-timestamp-millis") return Date.now();
      if (raw.logicalType === "timestamp-micros" || raw.logicalType === "local-timestamp-micros") return Date.now() * 1000;
      if (raw.logicalType === "date") return Math.floor(Date.now() / 86_400_000);
    }
    const s = resolve(raw, parsed.named);
    if (Array.isArray(s)) {
      const first = s.find((b) => b !== "null") ?? "null";
      return s[0] === "null" ? null : example(first);
    }
    if (typeof s === "string") {
      switch (s) {
        case "null":
          return null;
        case "boolean":
          return false;
        case "int":
        case "long":
        case "float":
        case "double":
          return 0;
        default:
          return "";
      }
    }
    if (!isObject(s)) return null;
    switch (s.type) {
      case "record":
      case "error": {
        // A recursive record: its nested occurrence is left empty.
        if (seen.has(s)) return null;
        seen.add(s);
        const out: Record<string, unknown> = {};
        for (const f of Array.isArray(s.fields) ? s.fields : []) {
          if (!isObject(f) || typeof f.name !== "string") continue;
          out[f.name] = "default" in f ? f.default : example(f.type);
        }
        seen.delete(s);
        return out;
      }
      case "enum":
        return Array.isArray(s.symbols) ? (s.symbols[0] ?? "") : "";
      case "array":
        return [];
      case "map":
        return {};
      case "fixed":
        return btoa("\u0000".repeat(typeof s.size === "number" ? s.size : 0));
      default:
        return null;
    }
  };
  return example(parsed.schema);
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const describe = (v: unknown) =>
  v === null ? "null" : Array.isArray(v) ? "an array" : typeof v === "object" ? "an object" : JSON.stringify(v);

/** The first thing in `value` the schema does not take, as `field: why`; null when it fits. */
export function avroProblem(text: string, value: unknown): string | null {
  const parsed = parseSchema(text);
  if (!parsed) return null;
  const check = (raw: Schema, v: unknown, path: string): string | null => {
    const s = resolve(raw, parsed.named);
    const at = path || "value";
    if (Array.isArray(s)) {
      if (v === null) return s.includes("null") ? null : `${at}: null is not one of the union's types`;
      return s.some((b) => b !== "null" && check(b, v, path) === null) ? null : `${at}: ${describe(v)} fits none of the union's types`;
    }
    if (typeof s === "string") {
      switch (s) {
        case "null":
          return v === null ? null : `${at}: ${describe(v)} is not null`;
        case "boolean":
          return typeof v === "boolean" ? null : `${at}: ${describe(v)} is not a boolean`;
        case "int":
          return Number.isInteger(v) && (v as number) >= INT_MIN && (v as number) <= INT_MAX ? null : `${at}: ${describe(v)} is not an int`;
        case "long":
          return Number.isSafeInteger(v) ? null : `${at}: ${describe(v)} is not a long`;
        case "float":
        case "double":
          return typeof v === "number" ? null : `${at}: ${describe(v)} is not a ${s}`;
        case "string":
          return typeof v === "string" ? null : `${at}: ${describe(v)} is not a string`;
        case "bytes":
          return typeof v === "string" && v.length % 4 === 0 && BASE64.test(v)
            ? null
            : `${at}: ${describe(v)} is not base64 (bytes are written as base64)`;
        default:
          return null;
      }
    }
    if (!isObject(s)) return null;
    switch (s.type) {
      case "record":
      case "error": {
        if (!isObject(v)) return `${at}: ${describe(v)} is not a record`;
        const fields = (Array.isArray(s.fields) ? s.fields : []).filter(isObject);
        const names = new Set(fields.map((f) => f.name));
        const unknown = Object.keys(v).find((k) => !names.has(k));
        if (unknown !== undefined) return `${path ? `${path}.` : ""}${unknown}: the schema's ${String(s.name)} has no field '${unknown}'`;
        for (const f of fields) {
          const name = String(f.name);
          const fieldPath = path ? `${path}.${name}` : name;
          if (!(name in v)) {
            const t = resolve(f.type, parsed.named);
            const nullable = t === "null" || (Array.isArray(t) && t.includes("null"));
            if (!("default" in f) && !nullable) return `${fieldPath}: not set, and the schema gives it no default`;
            continue;
          }
          const problem = check(f.type, v[name], fieldPath);
          if (problem) return problem;
        }
        return null;
      }
      case "enum":
        return Array.isArray(s.symbols) && s.symbols.includes(v)
          ? null
          : `${at}: ${describe(v)} is not one of ${(s.symbols as string[]).join(", ")}`;
      case "array":
        if (!Array.isArray(v)) return `${at}: ${describe(v)} is not an array`;
        for (const [i, item] of v.entries()) {
          const problem = check(s.items, item, `${at}[${i}]`);
          if (problem) return problem;
        }
        return null;
      case "map":
        if (!isObject(v)) return `${at}: ${describe(v)} is not a map`;
        for (const [k, item] of Object.entries(v)) {
          const problem = check(s.values, item, `${at}.${k}`);
          if (problem) return problem;
        }
        return null;
      case "fixed":
        return typeof v === "string" && BASE64.test(v) && atob(v).length === s.size
          ? null
          : `${at}: ${describe(v)} is not ${String(s.size)} bytes as base64`;
      default:
        return null;
    }
  };
  return check(parsed.schema, value, "");
}
