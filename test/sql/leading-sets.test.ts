// @no-services
/**
 * The editor's reader of leading SET statements (src/sql/leading-sets.ts, over the lexer alone)
 * against the parser: the same settings, keys and value spans, for every kind of statement; and
 * the "Run again with" rewrite of the workbench built on what it reads.
 */
import { describe, expect, test } from "bun:test";
import { leadingSettings } from "../../src/sql/leading-sets.ts";
import { parse, parseInsert, parseStream } from "../../src/sql/parser.ts";
import { withSetting } from "../../ui/sql/raise.ts";

const parsed = (settings: { key: string; value: { loc: { start: number; end: number } } }[]) =>
  settings.map((s) => ({ key: s.key, value: { start: s.value.loc.start, end: s.value.loc.end } }));

describe("leading SET statements", () => {
  test.each([
    "SELECT * FROM t",
    "SET max.size = 1m; SELECT * FROM t",
    "set MAX.SIZE=1048576 ; select * from t",
    "SET `max.time` = 5000;\nSET value.format = 'JSON'; SELECT * FROM t LIMIT 5",
    "-- a comment\nSET max.bytes = 500kb; /* between */ SET _vtype = JSON; SELECT _key FROM t",
    'SET key.format = "STRING"; SET max.query.time = 30s; SELECT * FROM `odd;name`',
    "SET a.b.c = x; SET max.size = 2g; SELECT * FROM t WHERE s = 'SET x = 1;'",
  ])("as the parser reads them: %p", (sql) => {
    expect(leadingSettings(sql)).toEqual(parsed(parse(sql).settings));
  });

  test.each(["SET _ktype = 'STRING'; SET _vtype = JSON; INSERT INTO t (_key, a) VALUES ('k', 1)", "INSERT INTO t (a) VALUES (1)"])(
    "as the parser reads them before an INSERT: %p",
    (sql) => {
      expect(leadingSettings(sql)).toEqual(parsed(parseInsert(sql).settings));
    },
  );

  test("as the parser reads them before a stream program", () => {
    const sql = "SET commit.interval.ms = 500; INSERT INTO out SELECT STREAM * FROM t";
    expect(leadingSettings(sql)).toEqual(parsed(parseStream(sql).settings));
  });

  test.each([
    ["SET max.size = ; SELECT * FROM t", []],
    ["SET max.size = 1m SELECT * FROM t", []],
    ["SET max.size = 1m; SET = 2; SELECT * FROM t", [{ key: "max.size", value: { start: 15, end: 17 } }]],
    ["SET max.size = 'open", []],
  ])("stop at the first one that is not well formed: %p", (sql, want) => {
    expect(leadingSettings(sql)).toEqual(want);
  });
});

describe("Run again with a setting", () => {
  test.each([
    ["SELECT * FROM t", "max.size", "256m", "SET max.size = 256m;\nSELECT * FROM t"],
    ["SET max.size = 1m; SELECT * FROM t", "max.size", "256m", "SET max.size = 256m; SELECT * FROM t"],
    [
      "SET max.bytes = 1m; SET max.bytes = '2m'; SELECT * FROM t",
      "max.size",
      "256m",
      "SET max.bytes = 1m; SET max.bytes = 256m; SELECT * FROM t",
    ],
    ["SET `max.time` = 5000; SELECT * FROM t", "max.query.time", "60000", "SET `max.time` = 60000; SELECT * FROM t"],
  ])("%p with %s = %s", (sql, setting, value, want) => {
    expect(withSetting(sql, leadingSettings(sql), setting, value)).toBe(want);
  });
});
