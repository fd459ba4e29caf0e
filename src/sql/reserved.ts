/**
 * The dialect's reserved words, apart from the parser so that the browser bundle can take them
 * (a topic name that is one must be quoted in the SQL the UI writes) without the parser.
 */

/** Words that cannot be bare field, alias or topic names. */
export const RESERVED_WORDS: ReadonlySet<string> = new Set([
  "AND",
  "AS",
  "BETWEEN",
  "FALSE",
  "FROM",
  "IN",
  "IS",
  "LIKE",
  "LIMIT",
  "NOT",
  "NULL",
  "OR",
  "SELECT",
  "SET",
  "TRUE",
  "WHERE",
]);
