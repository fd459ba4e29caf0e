/**
 * Stream programs: continuous statements that read a source topic and write every result to a
 * target topic, compiled into pure functions that the processor engine runs.
 *
 *   SET autocreate = true;
 *   INSERT INTO target SELECT STREAM <projection> FROM source
 *     [WHERE <condition>]
 *     [GROUP BY [TUMBLE(1, m) | HOP(5, m, 1, m),] <fields> | WINDOW BY TUMBLE 1m GROUP BY <fields>]
 *
 * Expressions, functions, `_key`/`_value`/`_meta.*` and the `_ktype`/`_vtype` decoder choices are
 * those of snapshot queries, and so are the filter and the naming of projected fields (the
 * query planner builds them). `<expr> AS _key` re-keys the output. With GROUP BY the projection
 * holds aggregates (COUNT, SUM, AVG, MIN, MAX) and GROUP BY expressions; without a window the
 * output is a table (the latest aggregate per key).
 *
 * Nothing here does I/O: the engine decodes records into RecordViews, keeps accumulators
 * (JSON) in its state stores and writes what `project`/`emit` return.
 *
 * filter, project, groupKey, accumulate and emit throw QueryLimitError when one record's
 * evaluation goes past a limit of QUERY_LIMITS (a huge computed string, a runaway LIKE): that
 * record fails, and the program's error.policy says whether it is skipped or the program stops.
 */

import type { Catalog, TopicAllowed } from "./analyzer.ts";
import { type ExpressionNode, type FieldPathNode, walkExpression } from "./ast.ts";
import { SqlError, type ValidationResult } from "./errors.ts";
import { compileExpression, compileExpressionPart, type EvaluationContext, type Evaluator } from "./evaluator.ts";
import { Lexer, TokenKind } from "./lexer.ts";
import { startRecord } from "./limits.ts";
import { type ParseOptions, parseStream } from "./parser.ts";
import { planQuery } from "./planner.ts";
import type { RecordView } from "./record.ts";
import { RESERVED_WORDS } from "./reserved.ts";
import type { DataFormat } from "./settings.ts";
import {
  type AggregateUse,
  type AnalyzedStream,
  analyzeStream,
  formatDuration,
  placeholderIndex,
  rebuild,
  sameExpression,
  type TargetLoop,
  type TopicCompacted,
} from "./stream-analyzer.ts";
import type { ProgramSettings } from "./stream-settings.ts";
import { compareValues, isNull } from "./values.ts";

export interface StreamSettings extends ProgramSettings {
  /** Source decoders (SET key.format/value.format, or `_ktype`/`_vtype` in WHERE). */
  keyFormat?: DataFormat;
  valueFormat?: DataFormat;
}

/** Tumble: advance = size. */
export interface StreamWindow {
  kind: "tumble" | "hop";
  sizeMs: number;
  advanceMs: number;
}

/** The output record: `key` undefined means "keep the input record's key bytes unchanged". */
export interface StreamOutput {
  key?: unknown;
  value: unknown;
}

export interface AggregateProgram {
  /** Null: a table (latest aggregate per key). */
  window: StreamWindow | null;
  /** The GROUP BY values of a record, in order (JSON-serialisable: strings, numbers, booleans, null, objects). */
  groupKey(view: RecordView): unknown[];
  /** True when GROUP BY is exactly the record key (`_key`), so records of one group already share a partition. */
  groupedByRecordKey: boolean;
  /** A fresh accumulator; must be JSON-serialisable (it is written to a changelog topic) and restorable by JSON.parse. */
  initial(): unknown[];
  /** Folds one record into the accumulator (mutates `acc`). */
  accumulate(acc: unknown[], view: RecordView): void;
  /**
   * The output of a group: key = the `AS _key` item if any, else the group key (one field: that
   * value; several: an array; none: null); value = an object of the projection items by name in
   * order, plus windowStart and windowEnd (epoch ms) for windows unless the projection already
   * names them.
   */
  emit(groupKey: unknown[], acc: unknown[], window: { start: number; end: number } | null): StreamOutput;
  /** The windows a record timestamp falls in (tumble: one; hop: size/advance of them), each [start, end); none for a table. */
  windowsOf(timestamp: number): Array<{ start: number; end: number }>;
}

export interface StreamProgram {
  sql: string;
  source: string;
  target: string;
  settings: StreamSettings;
  /** The whole WHERE (without decoder predicates) is exactly true. */
  filter(view: RecordView): boolean;
  /** Stateless programs: the output of a record that passed the filter. Null for aggregates. */
  project: ((view: RecordView) => StreamOutput) | null;
  aggregate: AggregateProgram | null;
  /** For the UI's topology: e.g. ["FILTER", "PROJECT"], ["FILTER", "REPARTITION", "AGGREGATE TUMBLE 1m"]. */
  operations: string[];
  /** Output value field names in order, or null for `*` (and for a program that only re-keys). */
  columns: string[] | null;
  /**
   * The top-level fields of the value that the program reads (a decoder may read only these),
   * or null when it reads the value whole (`*`, `_value`, an index into it).
   */
  valueFields: readonly string[] | null;
}

export interface StreamOptions extends ParseOptions {
  /** Which topics the caller may use: the source needs "read", the target "write"; absent: all. */
  topicAllowed?: TopicAllowed;
  /** Other programs that read the target: whether they lead back to the source (a cycle). */
  targetLoop?: TargetLoop;
  /** Which topics are compacted: a program writing one must give every record a key. */
  topicCompacted?: TopicCompacted;
  /** Epoch milliseconds NOW() stands for (default: when the program is compiled). */
  now?: number;
}

/**
 * Whether the text, after its SETs, starts `INSERT INTO <topic> SELECT`: a program, as opposed to
 * the data INSERT `INSERT INTO t (cols) VALUES ...`. It may still be invalid.
 */
export function isStreamStatement(sql: string): boolean {
  try {
    const lexer = new Lexer(sql);
    const word = (): string => (lexer.token.kind === TokenKind.NAME ? lexer.token.value.toUpperCase() : "");
    while (word() === "SET") {
      while (lexer.token.kind !== TokenKind.SEMICOLON && lexer.token.kind !== TokenKind.EOF) lexer.advance();
      lexer.advance();
    }
    if (word() !== "INSERT") return false;
    lexer.advance();
    if (word() !== "INTO") return false;
    const topic = lexer.advance();
    const isTopic = topic.kind === TokenKind.QUOTED_NAME || (topic.kind === TokenKind.NAME && !RESERVED_WORDS.has(word()));
    if (!isTopic) return false;
    lexer.advance();
    return word() === "SELECT";
  } catch {
    return false;
  }
}

/** The target topic a program names, or null when it does not parse (for lookups before checking it). */
export function streamTarget(sql: string, options: ParseOptions = {}): string | null {
  try {
    return parseStream(sql, options).statement.target.name;
  } catch (error) {
    if (error instanceof SqlError) return null;
    throw error;
  }
}

/** Parses, checks and compiles a program; throws SqlError when it is not valid. */
export function compileStream(sql: string, catalog?: Catalog | null, options: StreamOptions = {}): StreamProgram {
  const analyzed = analyzeStream(
    sql,
    parseStream(sql, options),
    catalog ?? null,
    options.topicAllowed,
    options.targetLoop,
    options.topicCompacted,
  );
  return buildProgram(analyzed, { now: options.now ?? Date.now() });
}

/** The validation answer of the API, as validateSql gives for queries. */
export function validateStream(sql: string, catalog?: Catalog | null, options: StreamOptions = {}): ValidationResult {
  try {
    analyzeStream(sql, parseStream(sql, options), catalog ?? null, options.topicAllowed, options.targetLoop, options.topicCompacted);
    return { isValid: true, line: 0, column: 0, message: null };
  } catch (error) {
    if (!(error instanceof SqlError)) throw error;
    return { isValid: false, line: error.line, column: error.column, message: error.message };
  }
}

function buildProgram(analyzed: AnalyzedStream, context: EvaluationContext): StreamProgram {
  const { query, keyItem } = analyzed;
  const settings: StreamSettings = { ...analyzed.program };
  if (query.settings.keyFormat !== undefined) settings.keyFormat = query.settings.keyFormat;
  if (query.settings.valueFormat !== undefined) settings.valueFormat = query.settings.valueFormat;

  // The query planner gives the filter, and the projection with the snapshot dialect's names.
  const projection = query.select.projection;
  const valueIsInput = projection.kind === "Star" || projection.items.length === 0;
  const plan = planQuery(valueIsInput ? { ...query, select: { ...query.select, projection: starOf(query) } } : query, context);
  const operations: string[] = query.where === null ? [] : ["FILTER"];
  const base = {
    sql: analyzed.sql,
    source: analyzed.source,
    target: analyzed.target,
    settings,
    filter: plan.filter,
    valueFields: valueIsInput ? null : valueFieldsOf(analyzed),
  };

  if (analyzed.groupBy === null) {
    const key = keyItem === null ? null : compileExpression(keyItem, context);
    const project = (view: RecordView): StreamOutput => {
      const value = valueIsInput ? view.value : plan.project(view);
      return key === null ? { value } : { key: jsonValue(key(view)), value };
    };
    if (!valueIsInput) operations.push("PROJECT");
    if (key !== null) operations.push("REKEY");
    return { ...base, project, aggregate: null, operations, columns: valueIsInput ? null : plan.columns };
  }

  const aggregate = buildAggregate(analyzed, plan.columns ?? [], context);
  if (!aggregate.groupedByRecordKey) operations.push("REPARTITION");
  const window = aggregate.window;
  operations.push(
    window === null
      ? "AGGREGATE"
      : window.kind === "tumble"
        ? `AGGREGATE TUMBLE ${formatDuration(window.sizeMs)}`
        : `AGGREGATE HOP ${formatDuration(window.sizeMs)} ADVANCE ${formatDuration(window.advanceMs)}`,
  );
  const columns = [...(plan.columns ?? [])];
  if (window !== null) for (const name of WINDOW_FIELDS) if (!columns.includes(name)) columns.push(name);
  return { ...base, project: null, aggregate, operations, columns };
}

/** See StreamProgram.valueFields. */
function valueFieldsOf(analyzed: AnalyzedStream): string[] | null {
  const { query } = analyzed;
  const roots: ExpressionNode[] = [];
  if (query.where !== null) roots.push(query.where);
  const projection = query.select.projection;
  if (projection.kind !== "Star") for (const item of projection.items) if (item.kind === "ExpressionItem") roots.push(item.expression);
  if (analyzed.keyItem !== null) roots.push(analyzed.keyItem);
  if (analyzed.groupBy !== null) roots.push(...analyzed.groupBy.fields);
  for (const use of analyzed.aggregates) if (use.arg !== null) roots.push(use.arg);
  const fields = new Set<string>();
  let whole = false;
  for (const root of roots) {
    walkExpression(root, (node) => {
      if (node.kind !== "FieldPath" || node.source !== "value") return;
      const first = node.segments[0];
      if (first?.kind === "Field") fields.add(first.name);
      else whole = true;
    });
  }
  return whole ? null : [...fields];
}

function starOf(query: AnalyzedStream["query"]): { kind: "Star"; loc: { start: number; end: number } } {
  return { kind: "Star", loc: query.select.projection.loc };
}

const WINDOW_FIELDS = ["windowStart", "windowEnd"] as const;

/**
 * Evaluated outputs become JSON values: undefined (a missing field) is null, a bigint (a LONG
 * decoder's) a number, so that keys and accumulators survive a changelog round trip.
 */
function jsonValue(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === "bigint") return Number(value);
  return value;
}

function buildAggregate(analyzed: AnalyzedStream, names: string[], context: EvaluationContext): AggregateProgram {
  const group = analyzed.groupBy!;
  const fields = group.fields;
  const groupEvaluators = fields.map((field) => compileExpressionPart(field, context));
  const uses = analyzed.aggregates;
  const argEvaluators: (Evaluator | null)[] = uses.map((use) => (use.arg === null ? null : compileExpressionPart(use.arg, context)));

  // Emitted items read the group key and the aggregate results from a view made of them.
  const emitted = (expression: ExpressionNode): Evaluator => compileExpressionPart(overResults(expression, fields), context);
  const projection = analyzed.query.select.projection;
  const items = projection.kind === "Star" ? [] : projection.items;
  const outputs = items.map((item, i) => ({
    name: names[i] ?? `column_${i + 1}`,
    evaluate: item.kind === "ExpressionItem" ? emitted(item.expression) : () => null,
  }));
  const key = analyzed.keyItem === null ? null : emitted(analyzed.keyItem);
  const window = group.window;
  const only = fields[0];
  const groupedByRecordKey = fields.length === 1 && only?.kind === "FieldPath" && only.source === "key" && only.segments.length === 0;

  return {
    window,
    groupedByRecordKey,
    groupKey(view) {
      startRecord();
      return groupEvaluators.map((evaluate) => jsonValue(evaluate(view)));
    },
    initial() {
      return uses.map(initialOf);
    },
    accumulate(acc, view) {
      startRecord();
      uses.forEach((use, i) => {
        const evaluate = argEvaluators[i];
        acc[i] = fold(use, acc[i], evaluate === null || evaluate === undefined ? null : jsonValue(evaluate(view)));
      });
    },
    emit(groupKey, acc, bounds) {
      startRecord();
      const view = resultsView(
        groupKey,
        uses.map((use, i) => resultOf(use, acc[i])),
      );
      const value: Record<string, unknown> = {};
      const put = (name: string, v: unknown) => {
        // defineProperty keeps a field named "__proto__" an ordinary field, as the planner does.
        Object.defineProperty(value, name, { value: v, enumerable: true, writable: true, configurable: true });
      };
      for (const output of outputs) put(output.name, jsonValue(output.evaluate(view)));
      if (window !== null && bounds !== null) {
        if (!Object.hasOwn(value, "windowStart")) put("windowStart", bounds.start);
        if (!Object.hasOwn(value, "windowEnd")) put("windowEnd", bounds.end);
      }
      const outputKey =
        key !== null ? jsonValue(key(view)) : groupKey.length === 0 ? null : groupKey.length === 1 ? groupKey[0] : [...groupKey];
      return { key: outputKey, value };
    },
    windowsOf(timestamp) {
      if (window === null) return [];
      const last = Math.floor(timestamp / window.advanceMs) * window.advanceMs;
      const out: Array<{ start: number; end: number }> = [];
      for (let start = last - window.sizeMs + window.advanceMs; start <= last; start += window.advanceMs) {
        out.push({ start, end: start + window.sizeMs });
      }
      return out;
    },
  };
}

/**
 * An item of an aggregate projection, rewritten to read a results view: each aggregate as
 * `_value[i]` (its result), each GROUP BY expression as `_key[j]` (the group's value).
 */
function overResults(expression: ExpressionNode, fields: ExpressionNode[]): ExpressionNode {
  const index = placeholderIndex(expression);
  if (index !== null) return indexPath("value", index, expression);
  const field = fields.findIndex((f) => sameExpression(f, expression));
  if (field >= 0) return indexPath("key", field, expression);
  return rebuild(expression, (child) => overResults(child, fields));
}

function indexPath(source: "key" | "value", index: number, at: ExpressionNode): FieldPathNode {
  return { kind: "FieldPath", source, rooted: true, segments: [{ kind: "Index", index, loc: at.loc }], loc: at.loc };
}

function resultsView(groupKey: unknown[], results: unknown[]): RecordView {
  return {
    key: groupKey,
    value: results,
    partition: -1,
    offset: -1,
    timestamp: 0,
    keySize: 0,
    valueSize: 0,
    lastOffset: () => -1,
  };
}

// ---------------------------------------------------------------- aggregates
//
// SQL's rule: nulls are ignored, and SUM and AVG ignore what is not a number. Accumulators:
//   COUNT  n
//   SUM    null until a number is added, then the sum
//   AVG    [sum, count]
//   MIN    null, then the least value seen (numbers, strings or booleans; compareValues' order)
//   MAX    null, then the greatest

function initialOf(use: AggregateUse): unknown {
  switch (use.fn) {
    case "COUNT":
      return 0;
    case "AVG":
      return [0, 0];
    default:
      return null;
  }
}

function isOrderable(value: unknown): boolean {
  return typeof value === "number" || typeof value === "string" || typeof value === "boolean";
}

function fold(use: AggregateUse, acc: unknown, value: unknown): unknown {
  switch (use.fn) {
    case "COUNT":
      return (acc as number) + (use.star || !isNull(value) ? 1 : 0);
    case "SUM":
      if (typeof value !== "number" || !Number.isFinite(value)) return acc;
      return ((acc as number | null) ?? 0) + value;
    case "AVG": {
      if (typeof value !== "number" || !Number.isFinite(value)) return acc;
      const [sum, count] = acc as [number, number];
      return [sum + value, count + 1];
    }
    case "MIN":
    case "MAX": {
      if (!isOrderable(value) || (typeof value === "number" && !Number.isFinite(value))) return acc;
      if (isNull(acc)) return value;
      const order = compareValues(value, acc);
      if (order === null) return acc;
      return (use.fn === "MIN" ? order < 0 : order > 0) ? value : acc;
    }
  }
}

function resultOf(use: AggregateUse, acc: unknown): unknown {
  if (use.fn === "AVG") {
    const [sum, count] = acc as [number, number];
    return count === 0 ? null : sum / count;
  }
  return acc ?? null;
}
