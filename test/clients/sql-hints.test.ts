// @no-services
/**
 * The hints and settings the older clients write (CLIENTS.md §5.4), checked without a broker:
 * what each plans to, and each mistake's message and position.
 */
import { describe, expect, test } from "bun:test";
import { compileQuery, DEFAULT_SETTINGS, type QuerySettings, validateSql } from "../../src/sql/index.ts";

/** As the service reads a query: backquoted setting names first. */
const plan = (sql: string) => compileQuery(sql);
const validate = (sql: string) => validateSql(sql);

describe("settings under the clients' names", () => {
  test.each<[string, Partial<QuerySettings>]>([
    ["SET `max.time`=5000; SELECT * FROM t", { maxQueryTimeMs: 5000 }],
    ["SET max.time = 30s; SELECT * FROM t", { maxQueryTimeMs: 30_000 }],
    ["SET `max.zero.polls` = 20; SELECT * FROM t", { maxIdleTimeMs: 20_000 }],
    ["SET max.bytes = '1m'; SELECT * FROM t", { maxSizeBytes: 1_048_576, maxReadBytes: 1_048_576 }],
    ["SET _ktype='STRING'; SET _vtype = AVRO; SELECT * FROM t", { keyFormat: "STRING", valueFormat: "AVRO" }],
    ["SET `_vtype`='json'; SELECT * FROM t", { valueFormat: "JSON" }],
    ["SET autocreate=true; SELECT * FROM t", { autoCreate: true }],
    ["SET `max.time`=5000;\nSET `max.zero.polls` = 20;\n  SELECT * FROM `t`  ", { maxQueryTimeMs: 5000, maxIdleTimeMs: 20_000 }],
    ["SET max.time = 1000; SET max.query.time = 2000; SELECT * FROM t", { maxQueryTimeMs: 2000 }],
  ])("%s", (sql, settings) => {
    expect(plan(sql).settings).toEqual({ ...DEFAULT_SETTINGS, ...settings });
  });

  test("a backquoted setting name is read whole; one that is no setting is an error at its position", () => {
    expect(plan("SET `max.time` = 5; SELECT `a`.`b` FROM `t` WHERE x = '`max.time`'").settings.maxQueryTimeMs).toBe(5);
    expect(validate("SET `max.nothing` = 5; SELECT * FROM t")).toMatchObject({ isValid: false, line: 1, column: 5 });
  });
});

describe("sampling hints", () => {
  test.each([
    ["SELECT * FROM t WHERE _sample=2 AND _sampleWindow=200", { records: 2, windowMs: 200 }, false],
    ["SELECT * FROM t WHERE _sampleWindow = 500 AND a > 1 AND _sample = '3'", { records: 3, windowMs: 500 }, true],
    ["SELECT * FROM t WHERE 2 = _SAMPLE", { records: 2, windowMs: 1000 }, false],
    ["SELECT * FROM t WHERE _value._sample = 2", null, true],
  ])("%s", (sql, sample, hasFilter) => {
    const p = plan(sql);
    expect(p.sample).toEqual(sample);
    expect(p.hasFilter).toBe(hasFilter);
  });

  test.each([
    [
      "SELECT * FROM t WHERE _sample=0",
      1,
      31,
      "Invalid value '0' for _sample at line 1, column 31. Expected a whole number of records from 1.",
    ],
    [
      "SELECT * FROM t\nWHERE _sample=2 AND _sampleWindow=1.5",
      2,
      35,
      "Invalid value '1.5' for _sampleWindow at line 2, column 35. Expected a whole number of milliseconds from 1.",
    ],
    [
      "SELECT * FROM t WHERE _sampleWindow=100",
      1,
      23,
      "_sampleWindow without _sample at line 1, column 23. Expected _sample = <records> AND _sampleWindow = <milliseconds>.",
    ],
    ["SELECT * FROM t WHERE _sample=1 AND _sample=2", 1, 37, "Duplicate _sample at line 1, column 37. Expected _sample at most once."],
    [
      "SELECT * FROM t WHERE a = 1 OR _sample = 2",
      1,
      32,
      "Misplaced _sample at line 1, column 32. Expected _sample = <number> only as a condition joined by AND at the top of WHERE.",
    ],
    [
      "SELECT * FROM t WHERE _sample > 2",
      1,
      23,
      "Misplaced _sample at line 1, column 23. Expected _sample = <number> only as a condition joined by AND at the top of WHERE.",
    ],
    [
      "SET `max.zero.polls` = 0; SELECT * FROM t",
      1,
      24,
      "Invalid value '0' for max.zero.polls at line 1, column 24. Expected a positive whole number of polls (1 s each), such as 20.",
    ],
    [
      "SET autocreate = maybe; SELECT * FROM t",
      1,
      18,
      "Invalid value 'maybe' for autocreate at line 1, column 18. Expected true or false.",
    ],
  ])("%s", (sql, line, column, message) => {
    expect(validate(sql)).toEqual({ isValid: false, line, column, message });
  });
});
