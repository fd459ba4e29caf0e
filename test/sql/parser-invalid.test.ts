// @no-services
/**
 * Invalid queries and the exact answer of validation: message, line, column.
 * Every message follows "<what> at line L, column C.[ Expected <what>.]".
 */
import { describe, expect, test } from "bun:test";
import { compileQuery, SqlError, validateSql } from "../../src/sql/index.ts";
import { catalog } from "./helpers.ts";

type Case = [sql: string, line: number, column: number, message: string];

const FORMATS = "AVRO, BYTES, DOUBLE, FLOAT, INT, JSON, LONG, PROTOBUF, STRING";
const SETTINGS = "autocreate, key.format, max.idle.time, max.query.time, max.size, max.zero.polls, value.format";
const META = "__keysize, __valuesize, offset, partition, timestamp";

const longString = "x".repeat(65_536);
const tooManyTokens = `SELECT * FROM t WHERE ${"a = 1 OR ".repeat(2600)}a = 1`;
const tooDeep = `SELECT ${"(".repeat(300)}1${")".repeat(300)} FROM t`;
const manyColumns = `SELECT ${Array.from({ length: 150 }, () => "_value").join(", ")} FROM t`;
const manyColumnsWithMeta = `SELECT ${Array.from({ length: 60 }, () => "a").join(", ")}, _meta.* FROM t`;
const longInList = `SELECT * FROM t WHERE a IN (${Array.from({ length: 1001 }, () => "1").join(",")})`;
const hostileLike = `SELECT * FROM t WHERE _value LIKE '%${"a".repeat(14_997)} b'`;

const INVALID: Case[] = [
  // Statements and clauses
  ["", 1, 1, "Unexpected end of input at line 1, column 1. Expected one of: SELECT, SET."],
  ["SELEC * FROM t", 1, 1, "Unexpected 'SELEC' at line 1, column 1. Expected one of: SELECT, SET."],
  ["SELECT * FROM t\n\n\nLIIT 10", 4, 1, "Unexpected 'LIIT' at line 4, column 1. Expected one of: LIMIT, WHERE, ';', end of input."],
  ["SELECT * FROM ", 1, 15, "Unexpected end of input at line 1, column 15. Expected a topic name."],
  ["SELECT * FROM t WHERE", 1, 22, "Unexpected end of input at line 1, column 22. Expected an expression."],
  ["SELECT FROM t", 1, 8, "Unexpected 'FROM' at line 1, column 8. Expected one of: '*', an expression."],
  ["SELECT a b FROM t", 1, 10, "Unexpected 'b' at line 1, column 10. Expected one of: AS, FROM, ',', an operator."],
  ["SELECT *, a FROM t", 1, 9, "Unexpected ',' at line 1, column 9. Expected FROM."],
  ["SELECT a AS FROM t", 1, 13, "Unexpected 'FROM' at line 1, column 13. Expected an alias."],
  ["SELECT a.5 FROM t", 1, 10, "Unexpected '5' at line 1, column 10. Expected a field name."],
  // Any name may follow a dot, keywords included, so FROM here is a field.
  ["SELECT a. FROM t", 1, 16, "Unexpected 't' at line 1, column 16. Expected one of: AS, FROM, ',', an operator."],
  ["SELECT * FROM t; SELECT * FROM u", 1, 18, "Unexpected 'SELECT' at line 1, column 18. Expected end of input."],
  ["SELECT * FROM t;;", 1, 17, "Unexpected ';' at line 1, column 17. Expected end of input."],

  // Topics
  ["SELECT * FROM my-topic", 1, 17, "Unexpected '-' at line 1, column 17. Expected one of: LIMIT, WHERE, ';', end of input."],
  ["SELECT * FROM logs.v1", 1, 19, "Unexpected '.' at line 1, column 19. Expected one of: LIMIT, WHERE, ';', end of input."],
  ["SELECT * FROM select", 1, 15, "Unexpected 'select' at line 1, column 15. Expected a topic name."],
  ["SELECT * FROM 'orders'", 1, 15, "Unexpected string 'orders' at line 1, column 15. Expected a topic name."],
  ["SELECT * FROM `my-topic", 1, 15, "Unterminated quoted name at line 1, column 15. Expected a closing ` on the same line."],
  ["SELECT `` FROM t", 1, 8, "Empty quoted name at line 1, column 8. Expected a name between the backticks."],
  ["SELECT * FROM nope", 1, 15, "Unknown topic 'nope' at line 1, column 15."],
  ["SELECT *\nFROM `no-such`\nLIMIT 1", 2, 6, "Unknown topic 'no-such' at line 2, column 6."],

  // Lexical problems, comments, line breaks
  ["SELECT * FROM t WHERE name = 'abc", 1, 30, "Unterminated string at line 1, column 30. Expected a closing ' on the same line."],
  ["SELECT *\nFROM t\nWHERE a = 'x\ny'", 3, 11, "Unterminated string at line 3, column 11. Expected a closing ' on the same line."],
  ['SELECT * FROM t WHERE a = "x', 1, 27, 'Unterminated string at line 1, column 27. Expected a closing " on the same line.'],
  ["SELECT * /* comment FROM t", 1, 10, "Unterminated comment at line 1, column 10. Expected '*/' before the end of input."],
  ["-- only a comment", 1, 18, "Unexpected end of input at line 1, column 18. Expected one of: SELECT, SET."],
  ["SELECT * FROM t -- c\nWHERE a = = 1", 2, 11, "Unexpected '=' at line 2, column 11. Expected an expression."],
  ["/* a\n   b */ SELECT *\n  FROM t\n  WHERE a ! 1", 4, 11, "Unexpected character '!' at line 4, column 11."],
  ["SELECT * FROM t WHERE a = 1 # x", 1, 29, "Unexpected character '#' at line 1, column 29."],
  ["SELECT * FROM t WHERE a = \u0007", 1, 27, "Unexpected character U+0007 at line 1, column 27."],
  ["SELECT *\r\nFROM t\r\nWHERE a = \r\n", 4, 1, "Unexpected end of input at line 4, column 1. Expected an expression."],
  ["SELECT *\r\nFROM t\r\n  LIMT 3", 3, 3, "Unexpected 'LIMT' at line 3, column 3. Expected one of: LIMIT, WHERE, ';', end of input."],

  // Expressions
  ["SELECT * FROM t WHERE a = 1 AND", 1, 32, "Unexpected end of input at line 1, column 32. Expected an expression."],
  [
    "SELECT * FROM t WHERE a = 1 LIIT",
    1,
    29,
    "Unexpected 'LIIT' at line 1, column 29. Expected one of: LIMIT, ';', an operator, end of input.",
  ],
  ["SELECT * FROM t WHERE a IS 5", 1, 28, "Unexpected '5' at line 1, column 28. Expected one of: NOT, NULL."],
  ["SELECT * FROM t WHERE a NOT 5", 1, 29, "Unexpected '5' at line 1, column 29. Expected one of: BETWEEN, IN, LIKE."],
  ["SELECT * FROM t WHERE a IN 1, 2", 1, 28, "Unexpected '1' at line 1, column 28. Expected '('."],
  ["SELECT * FROM t WHERE a IN ()", 1, 29, "Unexpected ')' at line 1, column 29. Expected an expression."],
  ["SELECT * FROM t WHERE a IN (1, 2", 1, 33, "Unexpected end of input at line 1, column 33. Expected one of: ')', ',', an operator."],
  ["SELECT * FROM t WHERE a BETWEEN 1 OR 2", 1, 35, "Unexpected 'OR' at line 1, column 35. Expected one of: AND, an operator."],
  ["SELECT * FROM t WHERE (a = 1", 1, 29, "Unexpected end of input at line 1, column 29. Expected one of: ')', an operator."],
  [
    "SELECT * FROM t WHERE a = 1 = 2",
    1,
    29,
    "Unexpected '=' at line 1, column 29. Expected one of: LIMIT, ';', an operator, end of input.",
  ],
  ["SELECT * FROM t WHERE a[1.5] = 1", 1, 25, "Unexpected '1.5' at line 1, column 25. Expected a non-negative integer."],
  ["SELECT LEN(a FROM t", 1, 14, "Unexpected 'FROM' at line 1, column 14. Expected one of: ')', ',', an operator."],
  [
    "SELECT CAST(a AS TEXT) FROM t",
    1,
    18,
    "Unexpected 'TEXT' at line 1, column 18. Expected one of: BOOLEAN, DOUBLE, FLOAT, INT, LONG, STRING.",
  ],
  ["SELECT CAST(a, INT) FROM t", 1, 14, "Unexpected ',' at line 1, column 14. Expected one of: AS, an operator."],
  ["SELECT _meta.foo FROM t", 1, 14, `Unexpected 'foo' at line 1, column 14. Expected one of: ${META}.`],
  ["SELECT * FROM t WHERE _meta.* = 1", 1, 29, `Unexpected '*' at line 1, column 29. Expected one of: ${META}.`],
  ["SELECT _meta FROM t", 1, 14, "Unexpected 'FROM' at line 1, column 14. Expected '.'."],

  // LIMIT
  ["SELECT * FROM t LIMIT", 1, 22, "Unexpected end of input at line 1, column 22. Expected a non-negative integer."],
  ["SELECT * FROM t LIMIT 1.5", 1, 23, "Unexpected '1.5' at line 1, column 23. Expected a non-negative integer."],
  ["SELECT * FROM t LIMIT -1", 1, 23, "Unexpected '-' at line 1, column 23. Expected a non-negative integer."],
  ["SELECT * FROM t LIMIT 10 WHERE a = 1", 1, 26, "Unexpected 'WHERE' at line 1, column 26. Expected one of: ',', ';', end of input."],
  [
    "SELECT * FROM t LIMIT 99999999999999999999",
    1,
    23,
    "Unexpected '99999999999999999999' at line 1, column 23. Expected a non-negative integer.",
  ],

  // SET statements
  ["SET max.size = 1m SELECT * FROM t", 1, 19, "Unexpected 'SELECT' at line 1, column 19. Expected ';'."],
  ["SET max.size = 1 m; SELECT * FROM t", 1, 18, "Unexpected 'm' at line 1, column 18. Expected ';'."],
  ["SET = 1; SELECT * FROM t", 1, 5, "Unexpected '=' at line 1, column 5. Expected a setting name."],
  ["SET max.size 1m; SELECT * FROM t", 1, 14, "Unexpected '1' at line 1, column 14. Expected one of: '.', '='."],
  ["SET max.size = ; SELECT * FROM t", 1, 16, "Unexpected ';' at line 1, column 16. Expected a setting value."],
  ["SET max.size = 1m;", 1, 19, "Unexpected end of input at line 1, column 19. Expected one of: SELECT, SET."],
  ["SET max.foo = 1; SELECT * FROM t", 1, 5, `Unknown setting 'max.foo' at line 1, column 5. Expected one of: ${SETTINGS}.`],
  [
    "SET max.size = lots; SELECT * FROM t",
    1,
    16,
    "Invalid value 'lots' for max.size at line 1, column 16. Expected a size such as 1048576, 500k, 1m or 2g.",
  ],
  [
    "SET max.size = 10x; SELECT * FROM t",
    1,
    16,
    "Invalid value '10x' for max.size at line 1, column 16. Expected a size such as 1048576, 500k, 1m or 2g.",
  ],
  [
    "SET max.size = '1m';\nSET max.size = 0;\nSELECT * FROM t",
    2,
    16,
    "Invalid value '0' for max.size at line 2, column 16. Expected a size such as 1048576, 500k, 1m or 2g.",
  ],
  [
    "SET max.query.time = '10 years'; SELECT * FROM t",
    1,
    22,
    "Invalid value '10 years' for max.query.time at line 1, column 22. Expected a duration such as 60000, 60000ms, 30s, 5m or 1h.",
  ],
  [
    "SET max.idle.time = 5d; SELECT * FROM t",
    1,
    21,
    "Invalid value '5d' for max.idle.time at line 1, column 21. Expected a duration such as 60000, 60000ms, 30s, 5m or 1h.",
  ],
  [
    "SET value.format = XML; SELECT * FROM t",
    1,
    20,
    `Invalid value 'XML' for value.format at line 1, column 20. Expected one of: ${FORMATS}.`,
  ],
  [
    "SET key.format = 'str'; SELECT * FROM t",
    1,
    18,
    `Invalid value 'str' for key.format at line 1, column 18. Expected one of: ${FORMATS}.`,
  ],

  // Functions
  ["SELECT FOO(a) FROM t", 1, 8, "Unknown function 'FOO' at line 1, column 8."],
  ["SELECT *\nFROM t\nWHERE  lower(a) = 'x'", 3, 8, "Unknown function 'LOWER' at line 3, column 8."],
  ["SELECT LEN() FROM t", 1, 8, "Wrong number of arguments to LEN at line 1, column 8. Expected 1 argument, found 0."],
  ["SELECT SUBSTRING(a) FROM t", 1, 8, "Wrong number of arguments to SUBSTRING at line 1, column 8. Expected 2 or 3 arguments, found 1."],
  ["SELECT REPLACE(a, b) FROM t", 1, 8, "Wrong number of arguments to REPLACE at line 1, column 8. Expected 3 arguments, found 2."],
  ["SELECT NOW(1) FROM t", 1, 8, "Wrong number of arguments to NOW at line 1, column 8. Expected no arguments, found 1."],
  ["SELECT CONCAT() FROM t", 1, 8, "Wrong number of arguments to CONCAT at line 1, column 8. Expected at least 1 argument, found 0."],
  [
    "SELECT * FROM t WHERE _meta.offset > LAST_OFFSET(0) - 10",
    1,
    38,
    "Wrong number of arguments to LAST_OFFSET at line 1, column 38. Expected no arguments, found 1.",
  ],

  // Fields against a known schema
  [
    "SELECT customer.nam FROM orders",
    1,
    17,
    "Unknown field 'customer.nam' in the value of topic 'orders' at line 1, column 17. Expected one of: customer.address, customer.name.",
  ],
  ["SELECT * FROM orders WHERE _key.foo = 1", 1, 33, "Unknown field 'foo' in the key of topic 'orders' at line 1, column 33. Expected id."],
  [
    "SELECT items[0].skux FROM orders",
    1,
    17,
    "Unknown field 'items[0].skux' in the value of topic 'orders' at line 1, column 17. Expected one of: items.qty, items.sku.",
  ],
  [
    "SELECT id,\n  `totl` AS total\nFROM orders",
    2,
    3,
    "Unknown field 'totl' in the value of topic 'orders' at line 2, column 3. Expected one of: customer, id, items, payload, status, total.",
  ],
  [
    "SELECT customer.address.country FROM orders",
    1,
    25,
    "Unknown field 'customer.address.country' in the value of topic 'orders' at line 1, column 25. Expected one of: customer.address.city, customer.address.zip.",
  ],
  ["SELECT amount FROM payments", 1, 8, "Unknown field 'amount' in the value of topic 'payments' at line 1, column 8."],

  // Decoder choices the old way, timestamps
  ["SELECT * FROM t WHERE _ktype = 'XML'", 1, 32, `Invalid value 'XML' for _ktype at line 1, column 32. Expected one of: ${FORMATS}.`],
  [
    "SELECT * FROM t WHERE a = 1 OR _vtype = 'JSON'",
    1,
    32,
    "Misplaced _vtype at line 1, column 32. Expected _vtype = '<format>' only as a condition joined by AND at the top of WHERE.",
  ],
  [
    "SELECT _ktype FROM t",
    1,
    8,
    "Misplaced _ktype at line 1, column 8. Expected _ktype = '<format>' only as a condition joined by AND at the top of WHERE.",
  ],
  [
    "SELECT * FROM t WHERE _meta.timestamp > 'yesterday'",
    1,
    41,
    "Invalid timestamp 'yesterday' at line 1, column 41. Expected epoch milliseconds or an ISO-8601 date such as 2024-01-31 or 2024-01-31T12:00:00Z.",
  ],
  [
    "SELECT * FROM t WHERE _ts BETWEEN '2024-02-30' AND '2024-03-01'",
    1,
    35,
    "Invalid timestamp '2024-02-30' at line 1, column 35. Expected epoch milliseconds or an ISO-8601 date such as 2024-01-31 or 2024-01-31T12:00:00Z.",
  ],

  // Regression: names looked up in tables found inherited Object properties
  // ("constructor" was read as a legacy metadata field and a setting).
  ["SET constructor = 1; SELECT * FROM t", 1, 5, `Unknown setting 'constructor' at line 1, column 5. Expected one of: ${SETTINGS}.`],
  ["SET __proto__ = 1; SELECT * FROM t", 1, 5, `Unknown setting '__proto__' at line 1, column 5. Expected one of: ${SETTINGS}.`],
  [
    "SET max.size = 1constructor; SELECT * FROM t",
    1,
    16,
    "Invalid value '1constructor' for max.size at line 1, column 16. Expected a size such as 1048576, 500k, 1m or 2g.",
  ],
  ["SELECT hasOwnProperty(a) FROM t", 1, 8, "Unknown function 'HASOWNPROPERTY' at line 1, column 8."],

  // The first problem in the text is the one reported
  ["SELECT FOO(a) FROM nope", 1, 8, "Unknown function 'FOO' at line 1, column 8."],
  ["SELECT a FROM nope WHERE BAR() = 1", 1, 15, "Unknown topic 'nope' at line 1, column 15."],
  ["SET nope = 1; SELECT FOO() FROM nope", 1, 5, `Unknown setting 'nope' at line 1, column 5. Expected one of: ${SETTINGS}.`],
  ["SELEC * FROM t WHERE a = 'unterminated", 1, 1, "Unexpected 'SELEC' at line 1, column 1. Expected one of: SELECT, SET."],

  // Caps
  [
    `SELECT * FROM t WHERE a = '${longString}'`,
    1,
    65_537,
    "Query too long at line 1, column 65537. Expected at most 65536 characters, found 65564.",
  ],
  [tooManyTokens, 1, 22_511, "Too many tokens at line 1, column 22511. Expected at most 10000 tokens."],
  [tooDeep, 1, 72, "Expression nested too deeply at line 1, column 72. Expected at most 64 levels of nesting."],
  // Regression: 150 projections of _value made a 280 MiB answer.
  [manyColumns, 1, 520, "Too many columns at line 1, column 520. Expected at most 64 columns (_meta.* counts as 5)."],
  [manyColumnsWithMeta, 1, 188, "Too many columns at line 1, column 188. Expected at most 64 columns (_meta.* counts as 5)."],
  [longInList, 1, 2029, "Too many items in the IN list at line 1, column 2029. Expected at most 1000 items."],
  // Regression: a 15,000-character LIKE pattern on a 200 KB value blocked every request for 9.6 s.
  [hostileLike, 1, 35, "LIKE pattern too long at line 1, column 35. Expected at most 1000 characters, found 15000."],
];

describe("invalid queries give their exact error", () => {
  test("the table has at least 40 cases", () => {
    expect(INVALID.length).toBeGreaterThanOrEqual(40);
  });

  const labelled = INVALID.map((c) => [c[0].length > 100 ? `${c[0].slice(0, 60)}... (${c[0].length} chars)` : c[0], ...c] as const);
  test.each(labelled)("%#: %p", (...[, sql, line, column, message]: readonly [string, ...Case]) => {
    expect(validateSql(sql, catalog)).toEqual({ isValid: false, line, column, message });
    let thrown: unknown;
    try {
      compileQuery(sql, catalog);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(SqlError);
    const error = thrown as SqlError;
    expect({ message: error.message, line: error.line, column: error.column }).toEqual({ message, line, column });
  });
});

describe("error details", () => {
  test("the error spans the offending token", () => {
    const error = catchError("SELECT * FROM t\nWHERE abc LIIKE 1");
    expect([error.line, error.column, error.endLine, error.endColumn]).toEqual([2, 11, 2, 16]);
  });

  test("an unterminated comment spans its opening", () => {
    const error = catchError("SELECT * FROM t /* x");
    expect([error.line, error.column, error.endLine, error.endColumn]).toEqual([1, 17, 1, 19]);
  });

  test("without a catalog, topics and fields are not checked", () => {
    expect(validateSql("SELECT anything FROM nope").isValid).toBe(true);
    expect(validateSql("SELECT anything FROM nope", null).isValid).toBe(true);
  });

  test("caps can be set per call", () => {
    expect(validateSql("SELECT * FROM t WHERE a = 1", null, { maxQueryLength: 20 })).toEqual({
      isValid: false,
      line: 1,
      column: 21,
      message: "Query too long at line 1, column 21. Expected at most 20 characters, found 27.",
    });
    expect(validateSql("SELECT * FROM t WHERE a = 1", null, { maxTokens: 5 }).message).toBe(
      "Too many tokens at line 1, column 23. Expected at most 5 tokens.",
    );
  });

  test("validation rethrows what is not a query error", () => {
    const broken = {
      topicExists: (): boolean => {
        throw new TypeError("catalog down");
      },
    };
    expect(() => validateSql("SELECT * FROM t", broken)).toThrow("catalog down");
  });
});

function catchError(sql: string): SqlError {
  try {
    compileQuery(sql, null);
  } catch (error) {
    if (error instanceof SqlError) return error;
    throw error;
  }
  throw new Error("no error");
}
