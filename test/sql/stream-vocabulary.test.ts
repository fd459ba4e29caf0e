// @no-services
/**
 * The completion lists of stream programs (src/sql/stream-vocabulary.ts) against what the parser
 * and the checks accept: a word added to the language and not to the lists would never be offered.
 */
import { describe, expect, test } from "bun:test";
import { validateStream } from "../../src/sql/index.ts";
import { TIME_UNITS } from "../../src/sql/parser.ts";
import { AGGREGATE_FUNCTIONS } from "../../src/sql/stream-analyzer.ts";
import { AGGREGATE_NAMES, STREAM_KEYWORDS, STREAM_SETTING_NAMES, TIME_UNIT_NAMES } from "../../src/sql/stream-vocabulary.ts";

describe("the stream completion vocabulary", () => {
  test("names every aggregate", () => {
    expect<string[]>([...AGGREGATE_NAMES].sort()).toEqual([...AGGREGATE_FUNCTIONS].sort());
  });

  test("every keyword is used by a valid program", () => {
    const sql = [
      "INSERT INTO t SELECT STREAM _key, COUNT(*) FROM s GROUP BY TUMBLE(1, m), _key",
      "INSERT INTO t SELECT STREAM _key, COUNT(*) FROM s WINDOW BY HOP 5m, 1m GROUP BY _key",
    ];
    for (const program of sql) expect(validateStream(program).isValid).toBe(true);
    const words = new Set(sql.join(" ").split(/[^A-Za-z_]+/));
    for (const keyword of STREAM_KEYWORDS) expect([keyword, words.has(keyword)]).toEqual([keyword, true]);
  });

  test.each([...TIME_UNIT_NAMES])("the unit %s is one the parser knows", (unit) => {
    expect(TIME_UNITS[unit]).toBeGreaterThan(0);
    expect(validateStream(`INSERT INTO t SELECT STREAM _key, COUNT(*) FROM s GROUP BY TUMBLE(1, ${unit}), _key`).isValid).toBe(true);
  });

  test.each([...STREAM_SETTING_NAMES])("SET %s is known", (name) => {
    expect(validateStream(`SET ${name} = x; INSERT INTO t SELECT * FROM s`).message ?? "").not.toMatch(/unknown setting/i);
  });
});
