/**
 * The INSERT statement: checks what the parser cannot (settings, topic, columns, rows) and
 * turns the syntax tree into a plan the write path encodes. Pure: no I/O; whether a value fits
 * the topic's schema is the encoder's to say (it needs the schema).
 *
 *   SET _ktype = 'STRING';           key encoder (also `key.format`)
 *   SET _vtype = JSON;               value encoder (also `value.format`)
 *   INSERT INTO topic (_key, a, b.c, `d`.`e`) VALUES ('k1', 1, 'x', true), ('k2', 2, NULL, false)
 *
 * Errors are SqlErrors at the position of what is wrong, like those of a query.
 */
import { type Catalog, type TopicAllowed, topicRefusal } from "./analyzer.ts";
import type { InsertColumnNode, InsertDocumentNode, InsertValueNode } from "./ast.ts";
import { describeChoices, quote, type Span, SqlError, syntaxError } from "./errors.ts";
import { type ParseOptions, parseInsert } from "./parser.ts";

export { insertKeyword, isInsertStatement } from "./leading-sets.ts";

export const INSERT_LIMITS = Object.freeze({
  /** Most rows one statement writes: every row is encoded in memory before any is sent. */
  rows: 1_000,
  /**
   * Longest statement (1 MiB, the request body bound) and most tokens: rows of literals are
   * long, and a query's 64 KiB and 10,000 tokens would stop an insert far below 1,000 rows.
   */
  textLength: 1_048_576,
  tokens: 100_000,
});

/** The encoders an INSERT may choose. */
export const INSERT_FORMATS = ["AVRO", "BYTES", "DOUBLE", "FLOAT", "INT", "JSON", "LONG", "PROTOBUF", "STRING"] as const;
export type InsertFormat = (typeof INSERT_FORMATS)[number];

/** Setting names (lower case) and the side each chooses the encoder of. */
const FORMAT_SETTINGS: Readonly<Record<string, "key" | "value">> = {
  _ktype: "key",
  _vtype: "value",
  "key.format": "key",
  "value.format": "value",
};
const SETTING_CHOICES = Object.keys(FORMAT_SETTINGS);

export interface InsertColumn {
  target: "key" | "value";
  /** Field names below the key or value; empty for the whole key or value. */
  path: string[];
  loc: Span;
}

export interface InsertPlan {
  sql: string;
  topic: string;
  topicLoc: Span;
  /** Chosen by SET; absent: the topic's own types decide. */
  keyFormat?: InsertFormat;
  valueFormat?: InsertFormat;
  columns: InsertColumn[];
  /** One value per column in each row. */
  rows: InsertValueNode[][];
}

export interface InsertOptions extends ParseOptions {
  /** A prepared statement: one row of `?` only. Otherwise a `?` is an error. */
  prepared?: boolean;
  /** Which topics the caller may write (see TopicAllowed); absent: all. */
  topicAllowed?: TopicAllowed;
}

/** The name of a column as written in messages: `_key`, `a.b`. */
export function columnName(column: { target: "key" | "value"; path: string[] }): string {
  if (column.path.length === 0) return column.target === "key" ? "_key" : "_value";
  return (column.target === "key" ? ["_key", ...column.path] : column.path).join(".");
}

/** Parses and checks an INSERT; throws SqlError when it is not valid. */
export function compileInsert(sql: string, catalog?: Catalog | null, options: InsertOptions = {}): InsertPlan {
  const limits = { maxQueryLength: INSERT_LIMITS.textLength, maxTokens: INSERT_LIMITS.tokens, ...options };
  return analyzeInsert(sql, parseInsert(sql, limits), catalog ?? null, options.prepared === true, options.topicAllowed);
}

export function analyzeInsert(
  source: string,
  document: InsertDocumentNode,
  catalog: Catalog | null,
  prepared = false,
  allowed?: TopicAllowed,
): InsertPlan {
  const fail = (at: Span, what: string, expected?: string): never => {
    throw syntaxError(source, at, what, expected);
  };
  const formats: { key?: InsertFormat; value?: InsertFormat } = {};
  for (const statement of document.settings) {
    const side = FORMAT_SETTINGS[statement.key.toLowerCase()];
    if (side === undefined) fail(statement.keyLoc, `Unknown setting ${quote(statement.key)} for INSERT`, describeChoices(SETTING_CHOICES));
    const format = statement.value.text.trim().toUpperCase();
    if (!(INSERT_FORMATS as readonly string[]).includes(format)) {
      fail(statement.value.loc, `Invalid value ${quote(statement.value.text)} for ${statement.key}`, describeChoices(INSERT_FORMATS));
    }
    formats[side!] = format as InsertFormat;
  }

  const { insert } = document;
  const topic = insert.topic.name;
  // Before the catalog: a topic out of scope gets the same answer whether it exists or not.
  const refused = topicRefusal(allowed, topic, "write");
  if (refused) fail(insert.topic.loc, refused);
  if (catalog && !catalog.topicExists(topic)) fail(insert.topic.loc, `Unknown topic ${quote(topic)}`);

  const columns = insert.columns.map(toColumn);
  checkColumns(columns, fail);

  if (insert.rows.length > INSERT_LIMITS.rows) {
    fail(insert.rows[INSERT_LIMITS.rows]!.loc, "Too many rows", `at most ${INSERT_LIMITS.rows} rows in one INSERT`);
  }
  if (prepared && insert.rows.length > 1) fail(insert.rows[1]!.loc, "A prepared INSERT takes one row", "one row of '?'");
  insert.rows.forEach((row, i) => {
    if (row.values.length !== columns.length) {
      const n = columns.length;
      fail(
        row.loc,
        `Row ${i + 1} has ${row.values.length} value${row.values.length === 1 ? "" : "s"} for ${n} column${n === 1 ? "" : "s"}`,
        `${n} value${n === 1 ? "" : "s"}, one per column`,
      );
    }
    for (const value of row.values) checkValue(value, prepared, fail);
  });

  return {
    sql: source,
    topic,
    topicLoc: insert.topic.loc,
    ...(formats.key ? { keyFormat: formats.key } : {}),
    ...(formats.value ? { valueFormat: formats.value } : {}),
    columns,
    rows: insert.rows.map((r) => r.values),
  };
}

function toColumn(node: InsertColumnNode): InsertColumn {
  return { target: node.target, path: node.segments.map((s) => s.name), loc: node.loc };
}

type Fail = (at: Span, what: string, expected?: string) => never;

/** No column twice, and none inside another (`a` and `a.b` would both set `a`). */
function checkColumns(columns: InsertColumn[], fail: Fail): void {
  const seen: InsertColumn[] = [];
  for (const column of columns) {
    for (const earlier of seen) {
      if (earlier.target !== column.target) continue;
      const shorter = earlier.path.length <= column.path.length ? earlier : column;
      const longer = shorter === earlier ? column : earlier;
      if (shorter.path.every((name, i) => longer.path[i] === name)) {
        if (shorter.path.length === longer.path.length) fail(column.loc, `Duplicate column ${quote(columnName(column))}`);
        fail(column.loc, `Column ${quote(columnName(longer))} lies inside column ${quote(columnName(shorter))}`, "each field set once");
      }
    }
    seen.push(column);
  }
}

function checkValue(value: InsertValueNode, prepared: boolean, fail: Fail): void {
  if (prepared && value.type !== "placeholder") fail(value.loc, "A prepared INSERT takes '?' for every value", "'?'");
  if (!prepared && value.type === "placeholder") fail(value.loc, "Unexpected '?'", "a literal value ('?' is for prepared statements)");
  if (value.type === "number" && !Number.isFinite(Number(value.text))) fail(value.loc, `Number ${quote(value.text)} is out of range`);
}

/** The validation answer for an INSERT, as `validateSql` gives it for a query. */
export function validateInsert(
  sql: string,
  catalog?: Catalog | null,
  options: InsertOptions = {},
): { isValid: boolean; line: number; column: number; message: string | null } {
  try {
    compileInsert(sql, catalog, options);
    return { isValid: true, line: 0, column: 0, message: null };
  } catch (error) {
    if (!(error instanceof SqlError)) throw error;
    return { isValid: false, line: error.line, column: error.column, message: error.message };
  }
}
