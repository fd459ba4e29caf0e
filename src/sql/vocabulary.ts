/**
 * The dialect's words as plain lists, for an editor's completion. They live apart from the parser
 * and the function registry so that the browser bundle can import them without the evaluator; a
 * test (test/sql/vocabulary.test.ts) holds them equal to what the parser and the registry accept.
 */
export { CAST_TYPES, META_FIELDS } from "./ast.ts";
export { RESERVED_WORDS } from "./reserved.ts";
export { DATA_FORMATS, SETTING_NAMES } from "./settings.ts";

/** Keywords of a query (INSERT is not run by the query routes: it is left out). */
export const KEYWORDS = [
  "SELECT",
  "FROM",
  "WHERE",
  "LIMIT",
  "AND",
  "OR",
  "NOT",
  "IN",
  "IS",
  "NULL",
  "LIKE",
  "BETWEEN",
  "AS",
  "TRUE",
  "FALSE",
  "SET",
  "CAST",
] as const;

/** The built-in functions, by name (CAST has its own syntax: it is a keyword). */
export const FUNCTION_NAMES = [
  "ABS",
  "CEIL",
  "COALESCE",
  "CONCAT",
  "FLOOR",
  "LAST_OFFSET",
  "LEN",
  "LOWERCASE",
  "NOW",
  "REPLACE",
  "ROUND",
  "SUBSTRING",
  "TRIM",
  "UPPERCASE",
] as const;

/** Names with a meaning of their own: the key, the whole value, the record's metadata, sampling. */
export const SPECIAL_NAMES = ["_key", "_value", "_meta", "_sample", "_sampleWindow"] as const;
