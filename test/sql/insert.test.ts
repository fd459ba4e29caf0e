// @no-services
/**
 * The INSERT statement of the dialect: what it parses into, and the exact answer of validation
 * (message, line, column) for each way it can be wrong.
 */
import { describe, expect, test } from "bun:test";
import { compileInsert, INSERT_LIMITS, isInsertStatement, validateInsert } from "../../src/sql/insert.ts";
import { catalog } from "./helpers.ts";

describe("INSERT: what it means", () => {
  test("columns, nested and backquoted paths, several rows, signed numbers and literals", () => {
    const plan = compileInsert(
      "INSERT INTO orders (_key, id, address.postcode, `imdb`.`url`, _value.`x y`) VALUES ('k1', -12, 'N1', 'http://a', true), ('k2', +3.5e2, NULL, '', false)",
    );
    expect(plan.topic).toBe("orders");
    expect(plan.columns.map((c) => [c.target, c.path])).toEqual([
      ["key", []],
      ["value", ["id"]],
      ["value", ["address", "postcode"]],
      ["value", ["imdb", "url"]],
      ["value", ["x y"]],
    ]);
    expect(plan.rows.map((r) => r.map((v) => [v.type, v.text]))).toEqual([
      [
        ["string", "k1"],
        ["number", "-12"],
        ["string", "N1"],
        ["string", "http://a"],
        ["boolean", "true"],
      ],
      [
        ["string", "k2"],
        ["number", "3.5e2"],
        ["null", "null"],
        ["string", ""],
        ["boolean", "false"],
      ],
    ]);
    expect(plan.keyFormat).toBeUndefined();
  });

  test.each([
    ["SET _ktype='STRING'; INSERT INTO t (a) VALUES (1)", "STRING", undefined],
    ["SET _ktype=STRING; SET _vtype=avro;INSERT INTO t (a) VALUES (1)", "STRING", "AVRO"],
    ["  SET _ktype='STRING';\n SET `key.format`='INT'; INSERT INTO t (a) VALUES (1);  ", "INT", undefined],
    ["SET key.format = 'LONG'; SET value.format = 'JSON'; INSERT INTO t (a) VALUES (1)", "LONG", "JSON"],
    ["SET _ktype='STRING'; SET _ktype='BYTES'; INSERT INTO t (a) VALUES (1)", "BYTES", undefined],
  ])("%p chooses key %p and value %p", (sql, key, value) => {
    const plan = compileInsert(sql);
    expect(plan.keyFormat).toBe(key as never);
    expect(plan.valueFormat).toBe(value as never);
  });

  test("a large LONG keeps every digit", () => {
    const plan = compileInsert("INSERT INTO t (_key) VALUES (9223372036854775807)");
    expect(plan.rows[0]![0]!.text).toBe("9223372036854775807");
  });

  test("reserved words are column names, `_key` in backquotes is a value field", () => {
    const plan = compileInsert("INSERT INTO t (`_key`, select, `year`) VALUES (1, 2, 3)");
    expect(plan.columns.map((c) => [c.target, c.path])).toEqual([
      ["value", ["_key"]],
      ["value", ["select"]],
      ["value", ["year"]],
    ]);
  });

  test("a prepared statement takes '?' for each value", () => {
    const plan = compileInsert("SET _ktype='STRING';INSERT INTO cc (a, `imdb`.`url`) values (?,?)", null, { prepared: true });
    expect(plan.rows[0]!.map((v) => v.type)).toEqual(["placeholder", "placeholder"]);
  });

  test.each([
    ["SET _ktype='STRING'; INSERT INTO t (a) VALUES (1)", true],
    ["  insert into t (a) values (1)", true],
    ["SET a=1; SET b='x;y'; INSERT", true],
    ["SELECT * FROM t", false],
    ["SET _ktype='STRING'; SELECT * FROM t", false],
    ["'unterminated", false],
  ])("isInsertStatement(%p) is %p", (sql, want) => {
    expect(isInsertStatement(sql)).toBe(want);
  });
});

type Case = [sql: string, line: number, column: number, message: string];

const manyRows = `INSERT INTO t (a) VALUES ${Array.from({ length: INSERT_LIMITS.rows + 1 }, (_, i) => `(${i})`).join(", ")}`;

const INVALID: Case[] = [
  ["INSERT t (a) VALUES (1)", 1, 8, "Unexpected 't' at line 1, column 8. Expected INTO."],
  ["INSERT INTO (a) VALUES (1)", 1, 13, "Unexpected '(' at line 1, column 13. Expected a topic name."],
  ["INSERT INTO t VALUES (1)", 1, 15, "Unexpected 'VALUES' at line 1, column 15. Expected '('."],
  ["INSERT INTO t () VALUES (1)", 1, 16, "Unexpected ')' at line 1, column 16. Expected a column name."],
  ["INSERT INTO t (a.) VALUES (1)", 1, 18, "Unexpected ')' at line 1, column 18. Expected a field name."],
  ["INSERT INTO t (a) VALUE (1)", 1, 19, "Unexpected 'VALUE' at line 1, column 19. Expected VALUES."],
  ["INSERT INTO t (a)", 1, 18, "Unexpected end of input at line 1, column 18. Expected VALUES."],
  ["INSERT INTO t (a) VALUES", 1, 25, "Unexpected end of input at line 1, column 25. Expected '('."],
  // Bad literals.
  ["INSERT INTO t (a) VALUES (b)", 1, 27, "Unexpected 'b' at line 1, column 27. Expected one of: '?', a literal value."],
  ["INSERT INTO t (a) VALUES (1 + 2)", 1, 29, "Unexpected '+' at line 1, column 29. Expected one of: ')', ','."],
  ["INSERT INTO t (a) VALUES (-'x')", 1, 28, "Unexpected string 'x' at line 1, column 28. Expected a number."],
  ["INSERT INTO t (a) VALUES (1e999)", 1, 27, "Number '1e999' is out of range at line 1, column 27."],
  ["INSERT INTO t (a) VALUES ('x)", 1, 27, "Unterminated string at line 1, column 27. Expected a closing ' on the same line."],
  [
    "INSERT INTO t (a) VALUES (?)",
    1,
    27,
    "Unexpected '?' at line 1, column 27. Expected a literal value ('?' is for prepared statements).",
  ],
  // Value counts.
  [
    "INSERT INTO t (a, b) VALUES (1, 2), (3)",
    1,
    37,
    "Row 2 has 1 value for 2 columns at line 1, column 37. Expected 2 values, one per column.",
  ],
  ["INSERT INTO t (a)\nVALUES\n  (1, 2)", 3, 3, "Row 1 has 2 values for 1 column at line 3, column 3. Expected 1 value, one per column."],
  [
    manyRows,
    1,
    26 + 5 * 10 + 6 * 90 + 7 * 900,
    `Too many rows at line 1, column ${26 + 5 * 10 + 6 * 90 + 7 * 900}. Expected at most 1000 rows in one INSERT.`,
  ],
  // Columns.
  ["INSERT INTO t (a, b, a) VALUES (1, 2, 3)", 1, 22, "Duplicate column 'a' at line 1, column 22."],
  ["INSERT INTO t (`x`.y, x.`y`) VALUES (1, 2)", 1, 23, "Duplicate column 'x.y' at line 1, column 23."],
  ["INSERT INTO t (_KEY, _key) VALUES (1, 2)", 1, 22, "Duplicate column '_key' at line 1, column 22."],
  [
    "INSERT INTO t (a.b, a) VALUES (1, 2)",
    1,
    21,
    "Column 'a.b' lies inside column 'a' at line 1, column 21. Expected each field set once.",
  ],
  [
    "INSERT INTO t (_value, a) VALUES (1, 2)",
    1,
    24,
    "Column 'a' lies inside column '_value' at line 1, column 24. Expected each field set once.",
  ],
  // Topics and settings.
  ["INSERT INTO nope (a) VALUES (1)", 1, 13, "Unknown topic 'nope' at line 1, column 13."],
  [
    "SET _ktype='STRING';\nSET max.size = 1m; INSERT INTO t (a) VALUES (1)",
    2,
    5,
    "Unknown setting 'max.size' for INSERT at line 2, column 5. Expected one of: _ktype, _vtype, key.format, value.format.",
  ],
  [
    "SET _vtype='XML'; INSERT INTO t (a) VALUES (1)",
    1,
    12,
    "Invalid value 'XML' for _vtype at line 1, column 12. Expected one of: AVRO, BYTES, DOUBLE, FLOAT, INT, JSON, LONG, PROTOBUF, STRING.",
  ],
  ["SET _ktype='STRING' INSERT INTO t (a) VALUES (1)", 1, 21, "Unexpected 'INSERT' at line 1, column 21. Expected ';'."],
  ["SET _ktype='STRING'; SELECT * FROM t", 1, 22, "Unexpected 'SELECT' at line 1, column 22. Expected one of: INSERT, SET."],
  ["INSERT INTO t (a) VALUES (1); INSERT INTO t (a) VALUES (2)", 1, 31, "Unexpected 'INSERT' at line 1, column 31. Expected end of input."],
];

describe("INSERT: validation errors at their positions", () => {
  test.each(INVALID)("%p -> %p:%p %p", (sql, line, column, message) => {
    const result = validateInsert(sql, catalog);
    expect(result).toEqual({ isValid: false, line, column, message });
  });

  test("a valid statement answers isValid with no position", () => {
    expect(validateInsert("SET _ktype='STRING'; INSERT INTO t (_key, a) VALUES ('k', 1)", catalog)).toEqual({
      isValid: true,
      line: 0,
      column: 0,
      message: null,
    });
  });

  test.each([
    ["INSERT INTO t (a, b) values (?)", 1, 29, "Row 1 has 1 value for 2 columns at line 1, column 29. Expected 2 values, one per column."],
    ["INSERT INTO t (a) values (?), (?)", 1, 31, "A prepared INSERT takes one row at line 1, column 31. Expected one row of '?'."],
    ["INSERT INTO t (a, b) values (?, 2)", 1, 33, "A prepared INSERT takes '?' for every value at line 1, column 33. Expected '?'."],
  ])("prepared: %p -> %p:%p %p", (sql, line, column, message) => {
    expect(validateInsert(sql, catalog, { prepared: true })).toEqual({ isValid: false, line, column, message });
  });
});
