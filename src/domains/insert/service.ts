/**
 * Writing records with SQL (`INSERT INTO ... VALUES ...`) and with the JDBC driver's prepared
 * inserts. Every row is checked and encoded before the first one is sent, so a statement with
 * one bad value writes nothing; records are acknowledged by every in-sync replica (acks=all)
 * before the answer. Knows nothing of HTTP.
 *
 * The encoders of a topic, for each side (key, value), in order of precedence:
 *   1. `SET _ktype` / `SET _vtype` (or the JDBC driver's `kt` / `vt`);
 *   2. the types stored in the topic's metadata (`/api/metadata/topics`);
 *   3. AVRO (or PROTOBUF) when the registry holds the subject `<topic>-key` / `<topic>-value`
 *      with an Avro (or Protobuf) schema;
 *   4. STRING for the key, JSON for the value.
 * Types are never guessed from the topic's records here: an empty topic would give no answer,
 * and a guess could change between two inserts.
 */

import {
  type AvroSchema,
  descriptorMessage,
  EncodeError,
  encoderFor,
  ProtoSchemaError,
  type ProtoTarget,
  parseAvroSchema,
  registryProto,
  textEncoder,
} from "../../engine/index.ts";
import { AppError, badRequest } from "../../errors.ts";
import type { KafkaPool, ProducedRecord, ProduceRecord } from "../../kafka/index.ts";
import type { Logger } from "../../log/logger.ts";
import type { SchemaRegistryClient } from "../../registry/client.ts";
import { type LatestSchema, latestSchema, subjectOf } from "../../registry/subjects.ts";
import type { Catalog } from "../../sql/analyzer.ts";
import { type Span, SqlError, syntaxError } from "../../sql/errors.ts";
import type { InsertValueNode, TopicAllowed, ValidationResult } from "../../sql/index.ts";
import {
  columnName,
  compileInsert,
  INSERT_FORMATS,
  INSERT_LIMITS,
  type InsertFormat,
  type InsertOptions,
  type InsertPlan,
} from "../../sql/insert.ts";
import type { TopicFormat, TopicFormats } from "../sql/service.ts";

export type Side = "key" | "value";

/** How one side of a topic's records is written. */
export interface SideFormat {
  format: InsertFormat;
  /** AVRO only: the schema values are written in. */
  avro?: AvroSchema;
  /** PROTOBUF only: the message values are written as. */
  proto?: ProtoTarget;
  /** Where the format came from, for messages. */
  source: "statement" | "metadata" | "registry" | "default";
}

export interface TopicEncoding {
  key: SideFormat;
  value: SideFormat;
}

/** A record the JDBC driver sends to a prepared insert. */
export interface PreparedRecord {
  key: string | null;
  value: unknown;
}

/** A record as the produce dialog sends it: key and value as text in their formats. */
export interface TextRecord {
  key?: string | null;
  value?: string | null;
  headers: Array<{ key: string; value: string }>;
  partition?: number;
}

export interface InsertResult {
  topic: string;
  records: number;
  keyType: InsertFormat;
  valueType: InsertFormat;
  /** Where each record went, in statement order. */
  offsets: ProducedRecord[];
}

export interface InsertServiceOptions {
  pool: KafkaPool;
  formats: TopicFormats;
  registry: SchemaRegistryClient | null;
  log: Logger;
  /** Encoded bytes per Produce request; larger inserts are sent in several (default 512 KiB). */
  maxRequestBytes?: number;
}

const SCALAR_FORMATS: ReadonlySet<InsertFormat> = new Set(["STRING", "INT", "LONG", "FLOAT", "DOUBLE", "BYTES"]);

function insertFormat(name: string | null | undefined, what: string): InsertFormat | undefined {
  const upper = name?.trim().toUpperCase();
  if (!upper) return undefined;
  if ((INSERT_FORMATS as readonly string[]).includes(upper)) return upper as InsertFormat;
  throw new AppError("UNSUPPORTED", `${what} is ${upper}, which INSERT cannot write (it writes ${INSERT_FORMATS.join(", ")})`);
}

export class InsertService {
  constructor(private readonly opts: InsertServiceOptions) {}

  get registry(): SchemaRegistryClient | null {
    return this.opts.registry;
  }

  /** The cluster's topic names as a catalog (unknown topics are errors at their position). */
  async catalog(cluster: string): Promise<Catalog> {
    const topics = new Set((await this.opts.pool.get(cluster).topics.list({ includeInternal: true })).map((t) => t.name));
    return { topicExists: (name) => topics.has(name) };
  }

  /** Parses and checks a statement against the cluster's topics; throws SqlError. */
  async compile(sql: string, cluster: string, options: InsertOptions = {}): Promise<InsertPlan> {
    return compileInsert(sql, await this.catalog(cluster), options);
  }

  /**
   * The encoders of a topic (see the file comment). `chosen` are the formats the statement or
   * the driver named.
   */
  async encoding(cluster: string, topic: string, chosen: { key?: InsertFormat; value?: InsertFormat } = {}): Promise<TopicEncoding> {
    const meta = await this.opts.formats.get(cluster, topic);
    const [key, value] = await Promise.all([this.#side(meta, topic, "key", chosen.key), this.#side(meta, topic, "value", chosen.value)]);
    return { key, value };
  }

  /**
   * As encoding(), each side on its own: a side that cannot be written (an Avro type without a
   * schema, a stored type INSERT does not write) is its error instead of failing both. What the
   * produce dialog shows before anything is typed.
   */
  async encodingBySide(
    cluster: string,
    topic: string,
    chosen: { key?: InsertFormat; value?: InsertFormat } = {},
  ): Promise<Record<Side, SideFormat | AppError>> {
    const meta = await this.opts.formats.get(cluster, topic);
    const settle = (s: Side) =>
      this.#side(meta, topic, s, chosen[s]).catch((err: unknown) => {
        if (err instanceof AppError && err.status < 500) return err;
        throw err;
      });
    const [key, value] = await Promise.all([settle("key"), settle("value")]);
    return { key, value };
  }

  async #side(meta: TopicFormat | null, topic: string, s: Side, chosen: InsertFormat | undefined): Promise<SideFormat> {
    // A stored type the statement overrides is not looked at (it may be one INSERT cannot write).
    const stored = chosen
      ? undefined
      : insertFormat(s === "key" ? meta?.keyType : meta?.valueType, `The ${s} type in the metadata of topic '${topic}'`);
    const storedSchema = (s === "key" ? meta?.keySchema : meta?.valueSchema) ?? undefined;
    const explicit = chosen ?? stored;
    // The registry is asked only when its answer matters: AVRO, PROTOBUF, or no type named anywhere.
    const registered =
      this.opts.registry && (explicit === undefined || explicit === "AVRO" || explicit === "PROTOBUF")
        ? await latestSchema(this.opts.registry, subjectOf(topic, s))
        : null;
    const registeredType = registered?.schemaType.toUpperCase();
    let format: InsertFormat;
    let source: SideFormat["source"];
    if (chosen) [format, source] = [chosen, "statement"];
    else if (stored) [format, source] = [stored, "metadata"];
    else if (registeredType === "AVRO" || registeredType === "PROTOBUF") [format, source] = [registeredType, "registry"];
    else [format, source] = [s === "key" ? "STRING" : "JSON", "default"];
    if (format === "PROTOBUF") return { format, source, proto: await this.#protoTarget(topic, s, registered, storedSchema) };
    if (format !== "AVRO") return { format, source };
    if (registered) {
      if (registered.schemaType.toUpperCase() !== "AVRO")
        throw new AppError(
          "UNSUPPORTED",
          `Subject '${subjectOf(topic, s)}' holds a ${registered.schemaType} schema: AVRO cannot be written with it`,
        );
      return {
        format,
        source,
        avro: { type: avroType(registered.schema, `subject '${subjectOf(topic, s)}'`), id: registered.id, text: registered.schema },
      };
    }
    // Without a registry the decoders read bare Avro binary of the metadata's schema; with one,
    // values are written under a registered schema only.
    if (storedSchema && !this.opts.registry)
      return { format, source, avro: { type: avroType(storedSchema, `the ${s} schema of the metadata`), id: null, text: storedSchema } };
    throw badRequest(
      `Topic '${topic}' has no Avro schema for its ${s}: ${this.opts.registry ? `the schema registry has no subject '${subjectOf(topic, s)}'` : "no schema registry is configured and its metadata holds no schema"}`,
    );
  }

  /**
   * The message a PROTOBUF side is written as: the first message of the subject's latest schema
   * (its references fetched), framed with its id; without such a subject, the bare binary of the
   * message the topic metadata's descriptor set names.
   */
  async #protoTarget(topic: string, s: Side, registered: LatestSchema | null, storedSchema: string | undefined): Promise<ProtoTarget> {
    const subject = subjectOf(topic, s);
    const registry = this.opts.registry;
    if (registered && registry) {
      if (registered.schemaType.toUpperCase() !== "PROTOBUF")
        throw new AppError(
          "UNSUPPORTED",
          `Subject '${subject}' holds a ${registered.schemaType} schema: PROTOBUF cannot be written with it`,
        );
      let message: ProtoTarget["message"] | undefined;
      try {
        const schema = await registryProto(registered, (name, version) => registry.schemaByVersion(name, version));
        message = schema.messageAt([0]);
      } catch (err) {
        if (!(err instanceof ProtoSchemaError)) throw err;
        throw new AppError("BAD_GATEWAY", `The Protobuf schema of subject '${subject}' cannot be read: ${err.message}`);
      }
      if (!message) throw badRequest(`The Protobuf schema of subject '${subject}' declares no message`);
      return { message, id: registered.id, indexes: [0], text: registered.schema };
    }
    if (storedSchema) {
      try {
        return { message: descriptorMessage(storedSchema), id: null, indexes: [0] };
      } catch (err) {
        if (!(err instanceof ProtoSchemaError)) throw err;
        throw badRequest(`The ${s} descriptor set in the metadata of topic '${topic}' cannot be read: ${err.message}`);
      }
    }
    throw badRequest(
      `Topic '${topic}' has no Protobuf schema for its ${s}: ${registry ? `the schema registry has no subject '${subject}'` : "no schema registry is configured"} and its metadata holds no descriptor set`,
    );
  }

  /**
   * Checks every row of a compiled statement against the topic's encoders and encodes it;
   * throws SqlError at the value (or column) that does not fit. Nothing is written.
   */
  async encodeStatement(plan: InsertPlan, cluster: string): Promise<{ encoding: TopicEncoding; records: ProduceRecord[] }> {
    const encoding = await this.encoding(cluster, plan.topic, { key: plan.keyFormat, value: plan.valueFormat });
    for (const column of plan.columns) {
      const side = encoding[column.target];
      if (column.path.length > 0 && SCALAR_FORMATS.has(side.format)) {
        throw syntaxError(
          plan.sql,
          column.loc,
          `Column ${quoted(columnName(column))} sets a field, but the ${column.target} of topic '${plan.topic}' is written as ${side.format}`,
          `${column.target === "key" ? "_key" : "_value"} for the whole ${column.target}`,
        );
      }
    }
    const keyEncoder = encoderFor(encoding.key.format, encoding.key.avro, encoding.key.proto);
    const valueEncoder = encoderFor(encoding.value.format, encoding.value.avro, encoding.value.proto);
    const records = plan.rows.map((row, i) => {
      const key = buildTree(plan, row, "key");
      const value = buildTree(plan, row, "value");
      const at = (err: EncodeError): SqlError => {
        const index = plan.columns.findIndex(
          (c) => c.target === (err.field === "_key" || err.field.startsWith("_key.") ? "key" : "value") && fieldCovers(c, err.field),
        );
        const span: Span = index >= 0 ? row[index]!.loc : rowSpan(row);
        return syntaxError(plan.sql, span, `Row ${i + 1}: ${err.message}`);
      };
      try {
        return { key: keyEncoder(key, "_key"), value: valueEncoder(value, "_value") } satisfies ProduceRecord;
      } catch (err) {
        if (err instanceof EncodeError) throw at(err);
        throw err;
      }
    });
    return { encoding, records };
  }

  /**
   * Runs an INSERT statement: compiles, encodes every row, then writes them all. `allowed`: the
   * topics the caller may write (see InsertOptions.topicAllowed); absent: all.
   */
  async execute(sql: string, cluster: string, allowed?: TopicAllowed): Promise<InsertResult> {
    const plan = await this.compile(sql, cluster, allowed ? { topicAllowed: allowed } : {});
    const { encoding, records } = await this.encodeStatement(plan, cluster);
    const offsets = await this.produce(cluster, plan.topic, records);
    return { topic: plan.topic, records: records.length, keyType: encoding.key.format, valueType: encoding.value.format, offsets };
  }

  /**
   * The validation answer of a statement: everything execute() checks before writing, values
   * against the topic's schema included. A topic whose encoders cannot be found (no Avro schema)
   * is invalid at the topic's name.
   */
  async validate(sql: string, cluster: string, allowed?: TopicAllowed): Promise<ValidationResult> {
    let plan: InsertPlan | undefined;
    // As for a query: a cluster that cannot be asked leaves topics unchecked, not the answer failed.
    const catalog = await this.catalog(cluster).catch((err: unknown) => {
      this.opts.log.warn("topics unavailable for INSERT validation", { cluster }, err);
      return null;
    });
    try {
      plan = compileInsert(sql, catalog, allowed ? { topicAllowed: allowed } : {});
      await this.encodeStatement(plan, cluster);
      return { isValid: true, line: 0, column: 0, message: null };
    } catch (err) {
      let error = err;
      if (plan && err instanceof AppError && err.status < 500) error = syntaxError(sql, plan.topicLoc, err.message);
      if (!(error instanceof SqlError)) throw err;
      return { isValid: false, line: error.line, column: error.column, message: error.message };
    }
  }

  /**
   * Writes the records of a JDBC prepared insert: the key as text, the value as the nested
   * object the driver built from the statement's fields.
   */
  async executePrepared(
    cluster: string,
    topic: string,
    types: { key?: string; value?: string },
    input: PreparedRecord[],
  ): Promise<InsertResult> {
    if (input.length > INSERT_LIMITS.rows) throw badRequest(`At most ${INSERT_LIMITS.rows} records per request, found ${input.length}`);
    const catalog = await this.catalog(cluster);
    if (!catalog.topicExists(topic)) throw new AppError("NOT_FOUND", `Topic '${topic}' does not exist`);
    const encoding = await this.encoding(cluster, topic, {
      key: insertFormat(types.key, "kt"),
      value: insertFormat(types.value, "vt"),
    });
    const keyEncoder = encoderFor(encoding.key.format, encoding.key.avro, encoding.key.proto);
    const valueEncoder = encoderFor(encoding.value.format, encoding.value.avro, encoding.value.proto);
    const records = input.map((r, i) => {
      try {
        return { key: keyEncoder(r.key, "_key"), value: valueEncoder(wholeValue(r.value), "_value") } satisfies ProduceRecord;
      } catch (err) {
        if (!(err instanceof EncodeError)) throw err;
        throw badRequest(`Record ${i + 1}: ${err.message}`, { record: i, field: err.field });
      }
    });
    const offsets = await this.produce(cluster, topic, records);
    return { topic, records: records.length, keyType: encoding.key.format, valueType: encoding.value.format, offsets };
  }

  /**
   * Writes records given as text in their formats (the produce dialog, POST
   * /api/topics/{t}/records): JSON text is written as typed once it parses, Avro text is the
   * value as JSON, BYTES base64, numbers their digits. Every record is encoded first: one that
   * does not fit is a 400 naming it and its field, and nothing is written.
   */
  async executeRecords(
    cluster: string,
    topic: string,
    chosen: { key?: InsertFormat; value?: InsertFormat },
    input: TextRecord[],
    maxBytes: number,
  ): Promise<InsertResult> {
    if (input.length > INSERT_LIMITS.rows) throw badRequest(`At most ${INSERT_LIMITS.rows} records per request, found ${input.length}`);
    const catalog = await this.catalog(cluster);
    if (!catalog.topicExists(topic)) throw new AppError("NOT_FOUND", `Topic '${topic}' does not exist`);
    const encoding = await this.encoding(cluster, topic, chosen);
    const keyEncoder = textEncoder(encoding.key);
    const valueEncoder = textEncoder(encoding.value);
    let bytes = 0;
    const records = input.map((r, i) => {
      try {
        const record: ProduceRecord = {
          key: r.key == null ? null : keyEncoder(r.key, "_key"),
          value: r.value == null ? null : valueEncoder(r.value, "_value"),
          ...(r.headers.length > 0 ? { headers: r.headers.map((h): [string, string] => [h.key, h.value]) } : {}),
          ...(r.partition !== undefined ? { partition: r.partition } : {}),
        };
        bytes += sizeOf(record) + r.headers.reduce((n, h) => n + h.key.length + Buffer.byteLength(h.value), 0);
        if (bytes > maxBytes) throw badRequest(`The records encode to more than ${maxBytes} bytes: send them in several requests`);
        return record;
      } catch (err) {
        if (!(err instanceof EncodeError)) throw err;
        throw badRequest(`Record ${i + 1}: ${err.message}`, { record: i, field: err.field });
      }
    });
    const offsets = await this.produce(cluster, topic, records);
    return { topic, records: records.length, keyType: encoding.key.format, valueType: encoding.value.format, offsets };
  }

  /**
   * Sends the encoded records in statement order, in requests of at most maxRequestBytes (a
   * broker refuses a batch beyond its message.max.bytes). Only a failure between two requests
   * can leave part of an insert written; the error then says how much.
   */
  private async produce(cluster: string, topic: string, records: ProduceRecord[]): Promise<ProducedRecord[]> {
    const limit = this.opts.maxRequestBytes ?? 512 * 1024;
    const kafka = this.opts.pool.get(cluster);
    const out: ProducedRecord[] = [];
    let start = 0;
    while (start < records.length) {
      let end = start;
      let bytes = 0;
      while (end < records.length && (end === start || bytes + sizeOf(records[end]!) <= limit)) bytes += sizeOf(records[end++]!);
      try {
        out.push(...(await kafka.writes.produce(topic, records.slice(start, end))));
      } catch (err) {
        if (start > 0 && err instanceof AppError) {
          throw new AppError(err.code, `${err.message} (${start} of ${records.length} records were written before the failure)`, {
            cause: err,
            details: { written: start, records: records.length },
          });
        }
        throw err;
      }
      start = end;
    }
    this.opts.log.debug("records inserted", { cluster, topic, records: records.length });
    return out;
  }
}

function avroType(text: string, what: string) {
  try {
    return parseAvroSchema(text);
  } catch (err) {
    throw new AppError("BAD_GATEWAY", `The Avro schema of ${what} cannot be read: ${(err as Error).message}`);
  }
}

const quoted = (s: string) => `'${s}'`;

/**
 * The driver puts a statement's `_value` column (the whole value) into its value object as the
 * field `_value`: such an object of that one field stands for its content.
 */
function wholeValue(v: unknown): unknown {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
  const keys = Object.keys(v);
  return keys.length === 1 && keys[0] === "_value" ? (v as { _value: unknown })._value : v;
}

function sizeOf(r: ProduceRecord): number {
  const len = (v: string | Uint8Array | null | undefined) => (v == null ? 0 : typeof v === "string" ? v.length * 3 : v.byteLength);
  return len(r.key) + len(r.value) + 64;
}

function rowSpan(row: InsertValueNode[]): Span {
  return { start: row[0]!.loc.start, end: row[row.length - 1]!.loc.end };
}

/** Whether an encoder's field name (`a.b.c`, `_key.a`) lies in what the column sets. */
function fieldCovers(column: { target: Side; path: string[] }, field: string): boolean {
  const name = columnName(column);
  if (column.path.length === 0) return true;
  return field === name || field.startsWith(`${name}.`) || field.startsWith(`${name}[`);
}

/** A literal's value: text, a number (a bigint when an integer beyond 2^53), a boolean or null. */
export function literalValue(v: InsertValueNode): unknown {
  switch (v.type) {
    case "string":
      return v.text;
    case "boolean":
      return v.text === "true";
    case "null":
    case "placeholder":
      return null;
    case "number": {
      const n = Number(v.text);
      if (/^[-+]?\d+$/.test(v.text) && !Number.isSafeInteger(n)) return BigInt(v.text);
      return n;
    }
  }
}

/**
 * What one row sets on one side: the whole key/value when `_key`/`_value` is a column, an
 * object built from the field paths otherwise, null when no column names that side.
 */
function buildTree(plan: InsertPlan, row: InsertValueNode[], side: Side): unknown {
  let root: Record<string, unknown> | undefined;
  for (let i = 0; i < plan.columns.length; i++) {
    const column = plan.columns[i]!;
    if (column.target !== side) continue;
    const value = literalValue(row[i]!);
    if (column.path.length === 0) return value;
    root ??= {};
    let node = root;
    for (const name of column.path.slice(0, -1)) {
      const next = node[name];
      node = (next ?? (node[name] = {})) as Record<string, unknown>;
    }
    node[column.path[column.path.length - 1]!] = value;
  }
  return root ?? null;
}
