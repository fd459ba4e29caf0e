/**
 * Protobuf schemas as the decoders and encoders use them, and the Confluent wire format:
 *
 *   byte 0      magic 0
 *   bytes 1-4   schema id (int32, big-endian)
 *   indexes     which message of the schema's file: a count, then that many indexes, each a
 *               zig-zag varint; the index path walks the file's top-level messages, then the
 *               nested messages of the one chosen. A count of 0 (the single byte 0) means [0],
 *               the file's first message, the common case.
 *   message     the Protobuf binary of that message
 *
 * Schemas come from two places: the registry's `.proto` text with its references (each an
 * imported file, registered under its own subject and version, fetched through the registry
 * client, which caches them), or a FileDescriptorSet an admin stored in the topic's metadata
 * with the name of the message its records hold (topics without a registry).
 *
 * protobufjs reads both: it parses `.proto` text in JavaScript and loads descriptor sets
 * (protobufjs/ext/descriptor). @bufbuild/protobuf reads descriptors only, and a registry holds
 * text: it would need protoc, a binary Loupe does not ship. Imports of Google's well-known types
 * (google/protobuf/timestamp.proto ...) use protobufjs's own definitions of them, which its
 * ProtoJSON reader expects; other imports must be among the schema's references.
 *
 * Values are JSON as a query sees them (what JsonFormat with proto field names and default values
 * writes, as kafbat and AKHQ show Protobuf): fields by their .proto names, scalars with their
 * default when unset, unset messages, oneof members and optional fields left out; enums by name
 * (an unknown number as the number); 64-bit integers as numbers up to 2^53 and beyond that as
 * strings of their digits (the LONG format's rule); bytes as base64; NaN and the infinities as
 * strings; maps as objects; Timestamp, Duration, the wrappers, Struct, Value, ListValue, FieldMask,
 * Empty and Any as their canonical JSON.
 */

import { common, Enum, type Field, type IParserResult, type MapField, type Message, parse, Root, Type, tokenize, util } from "protobufjs";
import "protobufjs/ext/descriptor";
import { fromJson, toJson } from "protobufjs/ext/protojson";
import { AppError } from "../errors.ts";

/** Thrown for a schema that cannot be read (text that does not parse, an import not given). */
export class ProtoSchemaError extends Error {
  override readonly name = "ProtoSchemaError";
}

/** Files of a schema, by the name they are imported under; the first is the schema's own. */
export interface ProtoFile {
  name: string;
  text: string;
}

/** Deepest message nesting the JSON walk follows (protobufjs bounds its decoder the same way). */
const MAX_DEPTH = util.recursionLimit;

/** A parsed schema: its types, and its file's top-level messages in order (the message indexes). */
export class ProtoSchema {
  constructor(
    readonly root: Root,
    /** Full names of the top-level messages of the schema's own file, in declaration order. */
    readonly messages: readonly string[],
    /**
     * Per message of the schema's own file (full name), its nested types as protoc counts them:
     * nested messages and the entry type of each map field, in declaration order (a map entry as
     * null: no record is one). Empty for a descriptor set, whose messages are named, not indexed.
     */
    readonly nested: ReadonlyMap<string, readonly (string | null)[]> = new Map(),
  ) {}

  /** The message a path of message indexes names; undefined when there is none. */
  messageAt(indexes: readonly number[]): Type | undefined {
    const top = this.messages[indexes[0] ?? 0];
    const found = top === undefined ? null : this.root.lookup(top);
    let type = found instanceof Type ? found : undefined;
    for (let i = 1; type && i < indexes.length; i++) {
      const order = this.nested.get(type.fullName);
      const name = order ? order[indexes[i]!] : type.nestedArray.filter((n): n is Type => n instanceof Type)[indexes[i]!]?.name;
      const next = name ? type.nested?.[name] : null;
      type = next instanceof Type ? next : undefined;
    }
    return type;
  }

  /** The message named `name` (with or without its package, or a leading dot). */
  message(name: string): Type | undefined {
    const found = this.root.lookup(name.startsWith(".") ? name : `.${name}`);
    return found instanceof Type ? found : undefined;
  }

  /** The full names of every message of the schema, for messages that name one. */
  messageNames(): string[] {
    const out: string[] = [];
    const walk = (ns: { nestedArray: readonly unknown[] }) => {
      for (const n of ns.nestedArray) {
        if (n instanceof Type) out.push(n.fullName.slice(1));
        if (n && typeof n === "object" && "nestedArray" in n) walk(n as { nestedArray: readonly unknown[] });
      }
    };
    walk(this.root);
    return out.filter((n) => !n.startsWith("google.protobuf."));
  }
}

const WELL_KNOWN = "google/protobuf/";

/**
 * Parses a schema's `.proto` files into one set of types. `files[0]` is the schema itself; the
 * others are what it imports (directly or not), by import name.
 */
export function parseProto(files: readonly ProtoFile[]): ProtoSchema {
  const root = new Root();
  const byName = new Map(files.map((f) => [f.name, f.text]));
  const done = new Set<string>();
  let messages: string[] = [];
  let order = new Map<string, (string | null)[]>();
  const load = (name: string, text: string, own: boolean) => {
    done.add(name);
    let parsed: IParserResult;
    try {
      parsed = parse(text, root, { keepCase: true });
    } catch (err) {
      throw new ProtoSchemaError(`${own ? "the schema" : `'${name}'`} is not valid Protobuf: ${(err as Error).message}`);
    }
    if (own) {
      const ns = parsed.package ? root.lookup(parsed.package) : root;
      const nested = ns && "nestedArray" in ns ? (ns as Root).nestedArray : [];
      messages = nested.filter((n): n is Type => n instanceof Type).map((t) => t.fullName);
      order = nestedOrder(text, parsed.package);
    }
    for (const imported of [...(parsed.imports ?? []), ...(parsed.weakImports ?? [])]) {
      if (done.has(imported)) continue;
      // The well-known types: protobufjs's definitions, which its ProtoJSON code is written for.
      const wellKnown = imported.startsWith(WELL_KNOWN) ? common.get(imported) : null;
      if (wellKnown) {
        done.add(imported);
        root.addJSON(wellKnown.nested ?? {});
        continue;
      }
      const importedText = byName.get(imported);
      if (importedText === undefined) throw new ProtoSchemaError(`it imports '${imported}', which is not among its references`);
      load(imported, importedText, false);
    }
  };
  load(files[0]!.name, files[0]!.text, true);
  resolve(root);
  return new ProtoSchema(root, messages, order);
}

/**
 * The nested types of each message of a file as protoc orders them (see ProtoSchema.nested),
 * read from its tokens: protobufjs keeps nested messages and fields apart, and so loses where a
 * map field's entry type falls among the nested messages.
 */
function nestedOrder(text: string, pkg: string | undefined): Map<string, (string | null)[]> {
  const out = new Map<string, (string | null)[]>();
  const tokens = tokenize(text, false);
  // Open blocks: a message's full name, or null for any other block (enum, oneof, service, option).
  const open: (string | null)[] = [];
  let pending: string | null = null;
  const identifier = /^[A-Za-z_]\w*$/;
  for (let t = tokens.next(); t !== null; t = tokens.next()) {
    const inMessage = open.length > 0 ? open[open.length - 1]! : null;
    if (t === "message" || t === "group") {
      // `message Name {`, or proto2's `group Name = n {`; anything else is a field named so.
      const name = tokens.peek();
      if (name === null || !identifier.test(name)) continue;
      tokens.next();
      if (tokens.peek() !== (t === "message" ? "{" : "=")) continue;
      pending = `${open.length > 0 ? (inMessage ?? "") : pkg ? `.${pkg}` : ""}.${name}`;
      if (inMessage) out.get(inMessage)?.push(name);
    } else if (t === "map" && tokens.peek() === "<" && inMessage) {
      for (let k = tokens.next(); k !== null && k !== ">"; k = tokens.next());
      tokens.next();
      out.get(inMessage)?.push(null);
    } else if (t === "{") {
      open.push(pending);
      if (pending) out.set(pending, []);
      pending = null;
    } else if (t === "}") open.pop();
  }
  return out;
}

function resolve(root: Root): void {
  try {
    root.resolveAll();
  } catch (err) {
    throw new ProtoSchemaError((err as Error).message);
  }
}

/** A FileDescriptorSet (binary) read into a schema; its messages are named, not indexed. */
export function protoFromDescriptorSet(bytes: Uint8Array): ProtoSchema {
  let root: Root;
  try {
    root = Root.fromDescriptor(bytes, { keepCase: true });
  } catch (err) {
    throw new ProtoSchemaError(`not a FileDescriptorSet: ${(err as Error).message}`);
  }
  return new ProtoSchema(root, []);
}

/** Reads one zig-zag varint (int32) at `at`; answers [value, next offset], or null when cut or too long. */
function zigzag(bytes: Uint8Array, at: number): [number, number] | null {
  let n = 0;
  for (let shift = 0, i = at; shift < 35; shift += 7, i++) {
    if (i >= bytes.length) return null;
    const b = bytes[i]!;
    n += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) {
      if (n > 0xffffffff) return null;
      return [n % 2 === 0 ? n / 2 : -(n + 1) / 2, i + 1];
    }
  }
  return null;
}

/** Nesting of message indexes beyond which a payload is taken as not in the wire format. */
const MAX_INDEXES = 64;

/** The message indexes after the 5-byte header, and where the message starts; null when malformed. */
export function messageIndexes(bytes: Uint8Array): { indexes: number[]; start: number } | null {
  const head = zigzag(bytes, 5);
  if (!head) return null;
  const [count, first] = head;
  if (count === 0) return { indexes: [0], start: first };
  if (count < 0 || count > MAX_INDEXES) return null;
  const indexes: number[] = [];
  let at = first;
  for (let i = 0; i < count; i++) {
    const next = zigzag(bytes, at);
    if (!next || next[0] < 0) return null;
    indexes.push(next[0]);
    at = next[1];
  }
  return { indexes, start: at };
}

/** The wire format's header of a message: magic 0, the id, then its indexes ([0] as the single byte 0). */
export function wireHeader(id: number, indexes: readonly number[]): Buffer {
  const varint = (n: number): number[] => {
    let z = n >= 0 ? n * 2 : -n * 2 - 1;
    const out: number[] = [];
    while (z >= 0x80) {
      out.push((z & 0x7f) | 0x80);
      z = Math.floor(z / 128);
    }
    out.push(z);
    return out;
  };
  const head = Buffer.alloc(5);
  head.writeInt32BE(id, 1);
  const tail = indexes.length === 1 && indexes[0] === 0 ? [0] : [...varint(indexes.length), ...indexes.flatMap(varint)];
  return Buffer.concat([head, Buffer.from(tail)]);
}

// --- binary to JSON ---

const LONGS = new Set(["int64", "uint64", "sint64", "fixed64", "sfixed64"]);

/** A 64-bit integer (a Long, or a number) by the LONG format's rule: a number up to 2^53, else its digits. */
function long(v: unknown): number | string {
  if (typeof v === "number") return v;
  const text = String(v);
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : text;
}

const base64 = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64");

function scalar(type: string, v: unknown): unknown {
  if (LONGS.has(type)) return long(v ?? 0);
  if (type === "bytes") return v instanceof Uint8Array ? base64(v) : "";
  if ((type === "double" || type === "float") && typeof v === "number" && !Number.isFinite(v)) return String(v);
  return v;
}

type Fields = Record<string, unknown>;

function single(field: Field, v: unknown, depth: number): unknown {
  const t = field.resolvedType;
  if (t instanceof Type) return messageJson(t, v as Message, depth + 1);
  if (t instanceof Enum) {
    if (t.fullName === ".google.protobuf.NullValue") return null;
    return t.valuesById[v as number] ?? v;
  }
  return scalar(field.type, v);
}

/** Nanoseconds as canonical JSON writes a fraction: 0, 3, 6 or 9 digits. */
function fraction(nanos: number): string {
  if (nanos === 0) return "";
  let digits = String(Math.abs(nanos)).padStart(9, "0");
  while (digits.endsWith("000")) digits = digits.slice(0, -3);
  return `.${digits}`;
}

/** The fields of a well-known message by number, whatever their names in the definition used. */
function byNumber(type: Type, m: Message): Map<number, unknown> {
  const out = new Map<number, unknown>();
  for (const f of type.fieldsArray) {
    const v = (m as unknown as Fields)[f.name];
    if (v !== undefined && v !== null) out.set(f.id, v);
  }
  return out;
}

function timestamp(type: Type, m: Message): string {
  const f = byNumber(type, m);
  const seconds = Number(long(f.get(1) ?? 0));
  const nanos = Number(f.get(2) ?? 0);
  const date = new Date(seconds * 1000);
  if (Number.isNaN(date.getTime()) || nanos < 0 || nanos > 999_999_999) throw new Error("google.protobuf.Timestamp out of range");
  return `${date.toISOString().slice(0, 19)}${fraction(nanos)}Z`;
}

function duration(type: Type, m: Message): string {
  const f = byNumber(type, m);
  const seconds = BigInt(String(f.get(1) ?? 0));
  const nanos = Number(f.get(2) ?? 0);
  const negative = seconds < 0n || nanos < 0;
  return `${negative ? "-" : ""}${(seconds < 0n ? -seconds : seconds).toString()}${fraction(nanos)}s`;
}

function structValue(type: Type, m: Message, depth: number): unknown {
  const valueType = type.fieldsArray[0]?.resolvedType;
  if (type.fullName === ".google.protobuf.Struct") {
    const fields = (byNumber(type, m).get(1) ?? {}) as Record<string, Message>;
    const out: Fields = {};
    for (const [k, v] of Object.entries(fields)) out[k] = messageJson(valueType as Type, v, depth + 1);
    return out;
  }
  if (type.fullName === ".google.protobuf.ListValue") {
    const values = (byNumber(type, m).get(1) ?? []) as Message[];
    return values.map((v) => messageJson(valueType as Type, v, depth + 1));
  }
  // Value: the one member of its oneof that is set.
  for (const f of type.fieldsArray) {
    const v = (m as unknown as Fields)[f.name];
    if (!Object.hasOwn(m, f.name) || v === undefined || v === null) continue;
    if (f.id === 1) return null;
    return f.resolvedType instanceof Type ? messageJson(f.resolvedType, v as Message, depth + 1) : v;
  }
  return null;
}

/** Canonical JSON of a well-known type; undefined for any other message. */
function wellKnown(type: Type, m: Message, depth: number): unknown {
  const name = type.fullName;
  if (!name.startsWith(".google.protobuf.")) return undefined;
  switch (name.slice(17)) {
    case "Timestamp":
      return timestamp(type, m);
    case "Duration":
      return duration(type, m);
    case "Struct":
    case "ListValue":
    case "Value":
      return structValue(type, m, depth);
    case "Empty":
      return {};
    case "DoubleValue":
    case "FloatValue":
    case "Int64Value":
    case "UInt64Value":
    case "Int32Value":
    case "UInt32Value":
    case "BoolValue":
    case "StringValue":
    case "BytesValue": {
      const field = type.fieldsArray[0]!;
      return single(field, (m as unknown as Fields)[field.name] ?? field.typeDefault, depth);
    }
    case "FieldMask":
    case "Any":
      return toJson(type, m);
    default:
      return undefined;
  }
}

/** A decoded message as the JSON a query sees (see the file comment). */
export function messageJson(type: Type, m: Message, depth = 0): unknown {
  if (depth > MAX_DEPTH) throw new Error("messages nested too deeply");
  const known = wellKnown(type, m, depth);
  if (known !== undefined) return known;
  const out: Fields = {};
  const own = m as unknown as Fields;
  for (const field of type.fieldsArray) {
    const v = own[field.name];
    const name = field.protoName || field.name;
    if (field.map) {
      const keyType = (field as unknown as MapField).keyType;
      const unsigned = keyType === "uint64" || keyType === "fixed64";
      const entries: Fields = {};
      for (const [k, item] of Object.entries((v ?? {}) as Fields)) {
        const key = LONGS.has(keyType) ? String(util.longFromKey(k, unsigned)) : k;
        entries[key] = single(field, item, depth);
      }
      out[name] = entries;
    } else if (field.repeated) {
      out[name] = ((v ?? []) as unknown[]).map((item) => single(field, item, depth));
    } else if (field.hasPresence || field.resolvedType instanceof Type) {
      // Unset: left out, as JSON leaves out a message, a oneof member or an optional field not set.
      if (Object.hasOwn(m, field.name) && v !== undefined && v !== null) out[name] = single(field, v, depth);
    } else out[name] = single(field, v ?? field.typeDefault, depth);
  }
  return out;
}

/** How deep a template fills nested messages in (deeper ones are `{}`): enough to show a schema's shape. */
const TEMPLATE_DEPTH = 4;

/**
 * A value to start writing `type` from (the produce dialog's template): every field by its .proto
 * name with its default as JSON shows it, nested messages filled in down to TEMPLATE_DEPTH, a
 * oneof by its first member, repeated fields and maps empty, an enum by its first name, a
 * well-known type in its canonical JSON (a Timestamp as the epoch).
 */
export function protoTemplate(type: Type, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const oneofs = new Set<string>();
  for (const field of type.fieldsArray) {
    field.resolve();
    const oneof = field.partOf?.name;
    if (oneof && !field.partOf?.name.startsWith("_")) {
      if (oneofs.has(oneof)) continue;
      oneofs.add(oneof);
    }
    const name = field.protoName || field.name;
    if (field.map) out[name] = {};
    else if (field.repeated) out[name] = [];
    else if (field.resolvedType instanceof Enum) out[name] = Object.keys(field.resolvedType.values)[0] ?? 0;
    else if (field.resolvedType instanceof Type) {
      const nested = field.resolvedType;
      const known = nested.fullName.startsWith(".google.protobuf.") ? messageJson(nested, nested.create()) : undefined;
      out[name] = known !== undefined ? known : depth + 1 < TEMPLATE_DEPTH ? protoTemplate(nested, depth + 1) : {};
    } else out[name] = single(field, field.typeDefault, depth);
  }
  return out;
}

/** Decodes `bytes` from `start` as `type`; throws what protobufjs throws for bytes that do not fit. */
export function decodeMessage(type: Type, bytes: Uint8Array, start: number): unknown {
  return messageJson(type, type.decode(start === 0 ? bytes : bytes.subarray(start)));
}

// --- JSON to binary ---

/** A value with integers beyond 2^53 (bigints) as their digits, which ProtoJSON reads for 64-bit fields. */
function withoutBigInts(v: unknown): unknown {
  if (typeof v === "bigint") return v.toString();
  if (Array.isArray(v)) return v.map(withoutBigInts);
  if (v !== null && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, withoutBigInts(x)]));
  return v;
}

/**
 * The binary of `value` (JSON: fields by their .proto or JSON names, enums by name or number,
 * 64-bit integers as numbers or digits, well-known types in their canonical JSON). Throws an Error
 * whose message names the field that does not fit.
 */
export function encodeMessage(type: Type, value: unknown): Uint8Array {
  const message = fromJson(type, withoutBigInts(value ?? {}));
  return type.encode(message).finish();
}

/** A registry's schema with its references, fetched through `fetchVersion`, parsed. */
export async function registryProto(
  schema: { schema: string; references: readonly { name: string; subject: string; version: number }[] },
  fetchVersion: (
    subject: string,
    version: number,
  ) => Promise<{ schema: string; references: readonly { name: string; subject: string; version: number }[] }>,
): Promise<ProtoSchema> {
  const files: ProtoFile[] = [{ name: "", text: schema.schema }];
  const seen = new Set<string>();
  let pending = [...schema.references];
  while (pending.length > 0) {
    const next: typeof pending = [];
    for (const ref of pending) {
      if (seen.has(ref.name) || ref.name.startsWith(WELL_KNOWN)) continue;
      seen.add(ref.name);
      if (seen.size > 256) throw new AppError("BAD_GATEWAY", "The schema has more than 256 references");
      const found = await fetchVersion(ref.subject, ref.version);
      files.push({ name: ref.name, text: found.schema });
      next.push(...found.references);
    }
    pending = next;
  }
  return parseProto(files);
}

// --- descriptor sets in topic metadata ---

/** The recently read metadata schemas: a query, a browser page, a live tail each ask again. */
const described = new Map<string, Type>();
const DESCRIBED_KEPT = 32;

/**
 * The message type of a topic metadata's PROTOBUF schema, the JSON text
 * `{"messageType": "shop.Order", "descriptorSet": "<base64 FileDescriptorSet>"}`. Throws
 * ProtoSchemaError saying what is wrong with it.
 */
export function descriptorMessage(text: string): Type {
  const known = described.get(text);
  if (known) return known;
  let spec: { messageType?: unknown; descriptorSet?: unknown };
  try {
    spec = JSON.parse(text) as typeof spec;
  } catch {
    throw new ProtoSchemaError('expected {"messageType", "descriptorSet"} as JSON');
  }
  if (typeof spec?.messageType !== "string" || typeof spec.descriptorSet !== "string")
    throw new ProtoSchemaError('expected {"messageType", "descriptorSet"} as JSON');
  const schema = protoFromDescriptorSet(Buffer.from(spec.descriptorSet, "base64"));
  const type = schema.message(spec.messageType);
  if (!type) {
    const names = schema.messageNames();
    throw new ProtoSchemaError(
      `the descriptor set has no message '${spec.messageType}' (${names.length > 0 ? `its messages: ${names.slice(0, 20).join(", ")}` : "it holds no message"})`,
    );
  }
  described.set(text, type);
  if (described.size > DESCRIBED_KEPT) described.delete(described.keys().next().value!);
  return type;
}

/** The metadata schema text of a descriptor set and the message its records hold. */
export function descriptorSchemaText(messageType: string, descriptorSet: Uint8Array): string {
  return JSON.stringify({ messageType, descriptorSet: base64(descriptorSet) });
}
