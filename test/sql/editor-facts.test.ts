// @no-services
/**
 * What the workbench's editor is told of a statement beside its validation (src/sql/editor-facts.ts):
 * whether Run writes it, its leading SETs, and how much of the text a problem covers, read by the
 * dialect's lexer on the server so that the browser carries none.
 */
import { describe, expect, test } from "bun:test";
import { editorFacts, tokenLengthAt } from "../../src/sql/editor-facts.ts";
import { validateSql } from "../../src/sql/index.ts";

describe("the length of the token a problem starts", () => {
  test.each([
    ["SELECT *\nFROM t LIIT 5", 2, 8, 4],
    ["SELECT * FROM `odd name` LIMIT x", 1, 15, 10],
    ["SELECT * FROM t WHERE a = 'open", 1, 27, 1],
    ["SELECT * FROM t WHERE a = 'closed' AND", 1, 27, 8],
    ["SELECT * FROM t WHERE a # 1", 1, 25, 1],
    ["SELECT * FROM t WHERE a <= 1", 1, 25, 2],
    ["SELECT * FROM t WHERE", 1, 22, 0],
    // Past the text's last line, or before its first: as an editor clamps them.
    ["SELECT\nFROM", 9, 1, 4],
    ["SELECT\r\nFROM x", 2, 6, 1],
    ["SELECT\rFROM x", 2, 1, 4],
  ])("%p at %i:%i is %i", (sql, line, column, want) => {
    expect(tokenLengthAt(sql, line, column)).toBe(want);
  });

  test("the token validation reports is underlined whole", () => {
    const sql = "SELECT * FROM t\nWHERE a = 1 LIIT 5";
    const result = validateSql(sql);
    expect(result).toMatchObject({ isValid: false, line: 2, column: 13 });
    expect(editorFacts(sql, result).problemLength).toBe(4);
  });
});

describe("what the editor reads of a statement", () => {
  test.each([
    ["SELECT * FROM t", { insert: false, settings: [] }],
    ["SET max.size = 1m; SELECT * FROM t", { insert: false, settings: [{ key: "max.size", value: { start: 15, end: 17 } }] }],
    [
      "set _ktype = STRING;\ninsert into t (_key) VALUES ('k')",
      { insert: true, settings: [{ key: "_ktype", value: { start: 13, end: 19 } }] },
    ],
    ["INSERT INTO out SELECT STREAM * FROM t", { insert: true, settings: [] }],
    ["SELECT 'INSERT' FROM t", { insert: false, settings: [] }],
    ["'open", { insert: false, settings: [] }],
  ])("%p", (sql, want) => {
    expect(editorFacts(sql, null)).toEqual(want);
  });
});
