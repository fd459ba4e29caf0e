/**
 * The JDBC driver's select over a websocket (`/api/ws/jdbc/data?sql=`, CLIENTS.md 5.6). A bounded
 * query, as `/api/sql/data` runs it, answered in text frames whose first character is their type:
 *
 *   2<Avro RECORD schema JSON>   once, before any row: its field names are the column labels
 *   0<flat JSON object>          one row, keys in the schema's field order
 *   1<text>                      an error; nothing follows it
 *   3                            the end
 *
 * The driver reads a row's values by position, each a number, boolean or string: a nested value
 * goes as its JSON text (a `string` column). The columns are the query's projection, or for `*`
 * the fields of the topic's Avro value schema, else the fields of the first rows; their types
 * come from that schema where it names the column, else from the values of the first rows.
 */

import { isQueryLimitError, QueryError, type RecordSink } from "../../engine/index.ts";
import { AppError } from "../../errors.ts";
import type { Socket } from "../../http/websocket.ts";
import type { Logger } from "../../log/logger.ts";
import { SqlError, type TopicAllowed } from "../../sql/index.ts";
import type { PreparedQuery, SqlService, TopicFormats, Viewer } from "../sql/service.ts";

export interface JdbcSelectDeps {
  sql: SqlService;
  formats: TopicFormats;
  log: Logger;
}

/** An Avro type of a column: a primitive name, or a union of null and one. */
export type ColumnType = string | ["null", string];

export interface Column {
  name: string;
  type: ColumnType;
}

const EMPTY = new Uint8Array(0);

/**
 * Keeps the selected values as parsed JSON; the bytes the executor asks for are none (each row
 * becomes its own frame once the columns are known).
 */
class Rows implements RecordSink {
  values: unknown[] = [];
  addJson(): boolean {
    // Not JSON text as it stands: the executor decodes the record and calls add().
    return false;
  }
  add(_timestamp: number, _partition: number, _key: string | null, _offset: number, valueJson: string): void {
    this.values.push(JSON.parse(valueJson));
  }
  dropLast(): void {
    this.values.pop();
  }
  get count(): number {
    return this.values.length;
  }
  get byteLength(): number {
    return 0;
  }
  take(): Uint8Array {
    return EMPTY;
  }
}

/** A name Avro accepts: `[A-Za-z_][A-Za-z0-9_]*`. */
export function avroName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_]/g, "_");
  return /^[A-Za-z_]/.test(cleaned) ? cleaned : `_${cleaned}`;
}

const PRIMITIVES = new Set(["boolean", "int", "long", "float", "double", "string"]);

/** The column type of an Avro field type: primitives as they are, anything else as text. */
function columnTypeOf(avro: unknown): ColumnType {
  if (typeof avro === "string") return PRIMITIVES.has(avro) ? avro : "string";
  if (Array.isArray(avro)) {
    const others = avro.filter((t) => t !== "null");
    const inner = others.length === 1 ? columnTypeOf(others[0]) : "string";
    const base = typeof inner === "string" ? inner : inner[1];
    return avro.includes("null") ? ["null", base] : base;
  }
  if (avro && typeof avro === "object") {
    const t = avro as { type?: unknown; logicalType?: unknown };
    if (t.logicalType === "decimal") return "double";
    if (typeof t.type === "string" && PRIMITIVES.has(t.type)) return t.type;
  }
  return "string";
}

/** The top-level fields of an Avro record schema text, in order; null when it is none. */
export function avroFields(schema: string | null | undefined): Map<string, ColumnType> | null {
  if (!schema) return null;
  try {
    const parsed = JSON.parse(schema) as { type?: unknown; fields?: Array<{ name?: unknown; type?: unknown }> };
    if (parsed.type !== "record" || !Array.isArray(parsed.fields)) return null;
    const out = new Map<string, ColumnType>();
    for (const f of parsed.fields) if (typeof f.name === "string") out.set(f.name, columnTypeOf(f.type));
    return out;
  } catch {
    return null;
  }
}

/** The type the values of a column show: long for integers, double for other numbers, and so on. */
function sampledType(values: unknown[]): ColumnType {
  let type: string | null = null;
  let nullable = false;
  for (const v of values) {
    if (v === null || v === undefined) {
      nullable = true;
      continue;
    }
    const t = typeof v === "number" ? (Number.isInteger(v) ? "long" : "double") : typeof v === "boolean" ? "boolean" : "string";
    if (type === null || type === t) type = t;
    else if ((type === "long" && t === "double") || (type === "double" && t === "long")) type = "double";
    else type = "string";
  }
  const base = type ?? "string";
  return nullable || type === null ? ["null", base] : base;
}

/** The fields of a row: an object's own, or one `value` column for anything else. */
const rowOf = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };

/**
 * The columns of the answer: from the projection, the topic's Avro schema (for `*`), or the
 * first rows; typed from the schema where it names them, else from the first rows.
 */
export function deriveColumns(projection: string[] | null, schemaFields: Map<string, ColumnType> | null, firstRows: unknown[]): string[] {
  if (projection) return projection;
  if (schemaFields && schemaFields.size > 0) return [...schemaFields.keys()];
  const names = new Set<string>();
  for (const v of firstRows) for (const k of Object.keys(rowOf(v))) names.add(k);
  return [...names];
}

export function columnTypes(labels: string[], schemaFields: Map<string, ColumnType> | null, firstRows: unknown[]): Column[] {
  const used = new Set<string>();
  return labels.map((label) => {
    let name = avroName(label);
    for (let i = 2; used.has(name); i++) name = `${avroName(label)}_${i}`;
    used.add(name);
    const known = schemaFields?.get(label);
    return { name, type: known ?? sampledType(firstRows.map((v) => rowOf(v)[label])) };
  });
}

/** The result schema frame's JSON: an Avro RECORD named after the topic. */
export function schemaText(topic: string, columns: Column[]): string {
  return JSON.stringify({ type: "record", name: avroName(topic), namespace: "loupe.jdbc", fields: columns });
}

/** A row as the driver reads it: keys in column order; nested values as their JSON text. */
export function rowText(value: unknown, labels: string[], columns: Column[]): string {
  const fields = rowOf(value);
  const out: Record<string, unknown> = {};
  labels.forEach((label, i) => {
    const v = fields[label];
    Object.defineProperty(out, columns[i]!.name, {
      value: v === undefined ? null : v !== null && typeof v === "object" ? JSON.stringify(v) : v,
      enumerable: true,
    });
  });
  return JSON.stringify(out);
}

/** The message of a `1` frame: what the client may be told of an error. */
function errorText(err: unknown): string {
  if (err instanceof SqlError || err instanceof QueryError || isQueryLimitError(err)) return err.message;
  if (err instanceof AppError) return err.message;
  return "Internal error while running the query";
}

/**
 * Runs the select and sends its frames; the socket is closed after the last one. `signal`
 * fires when the client goes away, and stops the query.
 */
export async function runJdbcSelect(
  deps: JdbcSelectDeps,
  /** `allowed`: the topics the caller may read (see topic-check.ts); absent: all. */
  q: { sql: string; cluster: string; viewer: Viewer; allowed?: TopicAllowed },
  socket: Socket,
  signal: AbortSignal,
): Promise<void> {
  let prepared: PreparedQuery | null = null;
  const send = async (text: string) => {
    if (!socket.send(text)) return false;
    while (socket.wouldBlock()) await socket.drained();
    return !socket.closed;
  };
  try {
    const compiled = await deps.sql.compile(q.sql, q.cluster, q.allowed);
    const { plan } = compiled;
    const meta = await deps.formats.get(q.cluster, plan.topic);
    const valueFormat = plan.settings.valueFormat ?? meta?.valueType?.toUpperCase();
    const schemaFields = valueFormat === "AVRO" ? avroFields(meta?.valueSchema) : null;
    prepared = await deps.sql.prepare(compiled, q.cluster, q.viewer);
    const rows = new Rows();
    let labels: string[] | null = null;
    let columns: Column[] = [];
    const schemaOnce = async (first: unknown[]) => {
      if (labels !== null) return true;
      labels = deriveColumns(plan.columns, schemaFields, first);
      columns = columnTypes(labels, schemaFields, first);
      return send(`2${schemaText(plan.topic, columns)}`);
    };
    for await (const ev of prepared.events(signal, { sink: rows })) {
      if (ev.type === "records") {
        const batch = rows.values;
        rows.values = [];
        if (!(await schemaOnce(batch))) return;
        for (const v of batch) if (!(await send(`0${rowText(v, labels!, columns)}`))) return;
      } else if (ev.type === "error") {
        await send(`1${errorText(ev.error)}`);
        return;
      } else {
        if (!(await schemaOnce([]))) return;
        await send("3");
        return;
      }
    }
  } catch (err) {
    if (!(err instanceof SqlError) && !isQueryLimitError(err) && !(err instanceof AppError))
      deps.log.error("jdbc select failed", { user: q.viewer.name }, err);
    await send(`1${errorText(err)}`);
  } finally {
    prepared?.release();
    socket.close(1000, "done");
  }
}
