/**
 * Public API of the query language: validate a query, or compile it into a
 * plan the consumer runs. Pure functions over strings; no I/O, no dependencies.
 *
 *   validateSql(sql, catalog?, options?) -> { isValid, line, column, message }
 *   compileQuery(sql, catalog?, options?) -> QueryPlan, or throws SqlError
 *
 * The plan's filter and projection throw QueryLimitError when a record's
 * evaluation goes past a limit of QUERY_LIMITS; that ends the query.
 */
import { analyze, type Catalog, type TopicAllowed } from "./analyzer.ts";
import { SqlError, type ValidationResult } from "./errors.ts";
import { type ParseOptions, parse } from "./parser.ts";
import { type PlanOptions, planQuery, type QueryPlan } from "./planner.ts";

export type QueryOptions = ParseOptions &
  PlanOptions & {
    /** Which topics the caller may read (see TopicAllowed); absent: all. */
    topicAllowed?: TopicAllowed;
  };

/** Parses, analyzes and plans a query; throws SqlError when it is not valid. */
export function compileQuery(sql: string, catalog?: Catalog | null, options: QueryOptions = {}): QueryPlan {
  const document = parse(sql, options);
  return planQuery(analyze(sql, document, catalog, options.topicAllowed), options);
}

/**
 * The validation answer of the API. Without a catalog, topics and fields are
 * not checked. Only SqlError is turned into an answer: anything else is a bug
 * and is rethrown.
 */
export function validateSql(sql: string, catalog?: Catalog | null, options: QueryOptions = {}): ValidationResult {
  try {
    analyze(sql, parse(sql, options), catalog, options.topicAllowed);
    return { isValid: true, line: 0, column: 0, message: null };
  } catch (error) {
    if (!(error instanceof SqlError)) throw error;
    return { isValid: false, line: error.line, column: error.column, message: error.message };
  }
}

export type { Catalog, TopicAccess, TopicAllowed } from "./analyzer.ts";
export type * from "./ast.ts";
export type { ValidationResult } from "./errors.ts";
export { SqlError } from "./errors.ts";
export { QUERY_LIMITS, QueryLimitError } from "./limits.ts";
export { parse } from "./parser.ts";
export type { QueryPlan } from "./planner.ts";
export { resolveOffsetRange } from "./planner.ts";
export type { RecordView } from "./record.ts";
export type { DataFormat, QuerySettings } from "./settings.ts";
export { DATA_FORMATS, DEFAULT_SETTINGS } from "./settings.ts";
export type { AggregateProgram, StreamOptions, StreamOutput, StreamProgram, StreamSettings } from "./stream.ts";
export { compileStream, isStreamStatement, streamTarget, validateStream } from "./stream.ts";
export type { TopicCompacted } from "./stream-analyzer.ts";
