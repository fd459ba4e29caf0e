// @no-services
/**
 * The editor's completion lists (src/sql/vocabulary.ts) against what the parser and the function
 * registry accept: a word added to the language and not to the lists would never be offered.
 */
import { describe, expect, test } from "bun:test";
import { FUNCTIONS } from "../../src/sql/functions.ts";
import { parse, validateSql } from "../../src/sql/index.ts";
import { RESERVED_WORDS } from "../../src/sql/reserved.ts";
import { FUNCTION_NAMES, KEYWORDS, META_FIELDS } from "../../src/sql/vocabulary.ts";

describe("the completion vocabulary", () => {
  test("names every built-in function", () => {
    expect<string[]>([...FUNCTION_NAMES].sort()).toEqual(Object.keys(FUNCTIONS).sort());
  });

  test("holds every reserved word, and CAST", () => {
    expect<string[]>([...KEYWORDS].sort()).toEqual([...RESERVED_WORDS, "CAST"].sort());
  });

  test.each([...META_FIELDS])("_meta.%s parses", (field) => {
    expect(() => parse(`SELECT _meta.${field} FROM t`)).not.toThrow();
  });

  test.each([...FUNCTION_NAMES])("%s is a function the analyzer knows", (name) => {
    const result = validateSql(`SELECT ${name}() FROM t`);
    // Called without arguments: either valid or refused for its arity, never as unknown.
    expect(result.message ?? "").not.toMatch(/unknown function/i);
  });
});
