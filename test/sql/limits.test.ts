// @no-services
/**
 * The bounds on the work and memory of one query (QUERY_LIMITS): what the text
 * may hold (validation errors with a position) and what evaluating one record
 * may build or scan (QueryLimitError).
 *
 * Times asserted here bound the complexity, with a wide margin for a shared
 * machine; they are not benchmarks.
 */
import { describe, expect, test } from "bun:test";
import { compileQuery, QUERY_LIMITS, QueryLimitError, type RecordView, SqlError, validateSql } from "../../src/sql/index.ts";
import { LikePattern } from "../../src/sql/values.ts";
import { record } from "./helpers.ts";

/** The error a plan's filter or projection throws on `rec`, or null. */
function limitError(run: () => unknown): QueryLimitError | null {
  try {
    run();
  } catch (error) {
    if (error instanceof QueryLimitError) return error;
    throw error;
  }
  return null;
}

function project(sql: string, rec: RecordView): unknown {
  return compileQuery(sql, null).project(rec);
}

/** The matcher LIKE had before, backtracking over code points: the reference for the semantics. */
function referenceLike(pattern: string, text: string): boolean {
  type Step = { any: "one" } | { any: "many" } | { char: string };
  const steps: Step[] = [];
  const p = Array.from(pattern);
  for (let i = 0; i < p.length; i++) {
    const c = p[i] as string;
    if (c === "\\" && i + 1 < p.length) steps.push({ char: p[++i] as string });
    else if (c === "%") steps.push({ any: "many" });
    else if (c === "_") steps.push({ any: "one" });
    else steps.push({ char: c });
  }
  const chars = Array.from(text);
  let t = 0;
  let s = 0;
  let star = -1;
  let starText = 0;
  while (t < chars.length) {
    const step = steps[s];
    if (step !== undefined && ("char" in step ? step.char === chars[t] : step.any === "one")) {
      t++;
      s++;
    } else if (step !== undefined && "any" in step && step.any === "many") {
      star = s++;
      starText = t;
    } else if (star >= 0) {
      s = star + 1;
      t = ++starText;
    } else {
      return false;
    }
  }
  while (s < steps.length && "any" in (steps[s] as Step) && (steps[s] as { any: string }).any === "many") s++;
  return s === steps.length;
}

describe("LIKE runs in linear time", () => {
  const PATTERNS = [`%${"a".repeat(QUERY_LIMITS.likePattern - 3)} b`, `%${"a".repeat(QUERY_LIMITS.likePattern - 4)} b%`];
  test.each(PATTERNS)("regression: a long LIKE pattern on a 200 KB value blocked every request for seconds (%#)", (pattern) => {
    expect(Array.from(pattern).length).toBe(QUERY_LIMITS.likePattern);
    const plan = compileQuery(`SELECT * FROM t WHERE _value LIKE '${pattern}'`, null);
    const rec = record({ value: "a".repeat(200_000) });
    const started = performance.now();
    expect(plan.filter(rec)).toBe(false);
    // A bound on complexity (200 000 x 1 000 / 32 steps), not a benchmark: the old matcher took seconds.
    expect(performance.now() - started).toBeLessThan(200);
  });

  test("a long segment holding `_`, found by the bit-parallel scan, on a 200 KB value", () => {
    const pattern = `%${"a".repeat(500)}_${"a".repeat(495)} b%`;
    expect(Array.from(pattern).length).toBe(QUERY_LIMITS.likePattern);
    const started = performance.now();
    expect(new LikePattern(pattern).matches("a".repeat(200_000))).toBe(false);
    // 200 000 x 32 word steps: a bound on complexity, with room for a cold JIT on a loaded machine.
    expect(performance.now() - started).toBeLessThan(1000);
  });

  test("a pattern of many short segments on a long text", () => {
    const pattern = `${"%a_".repeat(300)}%b`;
    const started = performance.now();
    expect(new LikePattern(pattern).matches("a".repeat(200_000))).toBe(false);
    expect(new LikePattern(pattern).matches(`${"a".repeat(200_000)}b`)).toBe(true);
    expect(performance.now() - started).toBeLessThan(200);
  });

  // Patterns and texts over a small alphabet with astral characters and lone
  // surrogates, so that every branch of the segment search is reached.
  const ALPHABET = ["a", "b", "😀", "\ud800", "\udc00"];
  const PATTERN_ALPHABET = [...ALPHABET, "%", "_", "\\", "%", "_"];

  function random(seed: number): () => number {
    let state = seed;
    return () => {
      state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
      return state / 2_147_483_648;
    };
  }

  test("matches exactly as the backtracking matcher did, on 20 000 random cases", () => {
    const next = random(42);
    const pick = (from: string[], length: number) => Array.from({ length }, () => from[Math.floor(next() * from.length)]).join("");
    const mismatches: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      const pattern = pick(PATTERN_ALPHABET, Math.floor(next() * 8));
      const text = pick(ALPHABET, Math.floor(next() * 10));
      if (new LikePattern(pattern).matches(text) !== referenceLike(pattern, text)) mismatches.push(JSON.stringify([pattern, text]));
    }
    expect(mismatches).toEqual([]);
  });

  test("long segments (several words of the scan, long fallbacks) match as the backtracking matcher did", () => {
    const next = random(7);
    const run = (alphabet: string[], length: number) =>
      Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join("");
    const mismatches: string[] = [];
    for (let i = 0; i < 2_000; i++) {
      // Mostly "a" so that segments repeat themselves and partial matches are long.
      const segments = Array.from({ length: 1 + Math.floor(next() * 3) }, () =>
        run(["a", "a", "a", "b", ...(next() < 0.3 ? ["_"] : [])], Math.floor(next() * 80)),
      );
      const pattern = `${next() < 0.5 ? "%" : ""}${segments.join("%")}${next() < 0.5 ? "%" : ""}`;
      const text = run(["a", "a", "a", "a", "b"], Math.floor(next() * 300));
      if (new LikePattern(pattern).matches(text) !== referenceLike(pattern, text)) mismatches.push(JSON.stringify([pattern, text]));
    }
    expect(mismatches).toEqual([]);
  });

  test("segments longer than 32 characters span several words of the scan", () => {
    const segment = `${"ab".repeat(20)}_${"c".repeat(30)}`;
    const text = `xx${"ab".repeat(20)}Z${"c".repeat(30)}yy`;
    for (const [pattern, expected] of [
      [`%${segment}%`, true],
      [`x%${segment}%y`, true],
      [`%${segment}`, false],
      [`%${segment.replace("_", "Q")}%`, false],
      [`%${"ab".repeat(21)}%`, false],
    ] as const) {
      expect([pattern, new LikePattern(pattern).matches(text)]).toEqual([pattern, expected]);
      expect(referenceLike(pattern, text)).toBe(expected);
    }
  });

  test("a computed pattern over the limit fails the record with the limit's error", () => {
    const plan = compileQuery("SELECT * FROM t WHERE a LIKE p", null);
    const long = "x".repeat(QUERY_LIMITS.likePattern + 1);
    expect(plan.filter(record({ value: { a: "x", p: "x%" } }))).toBe(true);
    const error = limitError(() => plan.filter(record({ value: { a: "x", p: long } })));
    expect(error?.limit).toBe("likePattern");
    expect(error?.message).toBe("A LIKE pattern is longer than 1000 characters (found 1001)");
  });

  test("compiling computed patterns counts: many of them on one record end the query", () => {
    const likes = Array.from({ length: 300 }, (_, i) => `a LIKE CONCAT(p, '${i}')`).join(" OR ");
    const plan = compileQuery(`SELECT * FROM t WHERE ${likes}`, null);
    const p = `%${"_a".repeat(490)}%`;
    expect(limitError(() => plan.filter(record({ value: { a: "x", p } })))?.limit).toBe("recordWork");
  });

  test("a constant computed pattern over the limit fails the records, not the compilation", () => {
    const plan = compileQuery(`SELECT * FROM t WHERE a LIKE REPLACE('${"x".repeat(600)}', 'x', 'xx')`, null);
    expect(limitError(() => plan.filter(record({ value: { a: "x" } })))?.limit).toBe("likePattern");
  });

  test("a literal pattern of the limit's length in code points is valid, astral characters counting one", () => {
    const pattern = "😀".repeat(QUERY_LIMITS.likePattern);
    expect(validateSql(`SELECT * FROM t WHERE a LIKE '${pattern}'`).isValid).toBe(true);
    expect(validateSql(`SELECT * FROM t WHERE a LIKE '${pattern}x'`).message).toBe(
      "LIKE pattern too long at line 1, column 30. Expected at most 1000 characters, found 1001.",
    );
  });
});

describe("computed values are capped", () => {
  test("regression: eight nested REPLACE calls grew the process by gigabytes", () => {
    const nested = (depth: number): string => (depth === 0 ? "_value" : `REPLACE(${nested(depth - 1)}, 'aaaa', 'aaaaaaaa')`);
    const plan = compileQuery(`SELECT ${nested(8)} AS r FROM t`, null);
    const rec = record({ value: "a".repeat(200_000) });
    Bun.gc(true);
    const before = process.memoryUsage().rss;
    const started = performance.now();
    const error = limitError(() => plan.project(rec));
    expect(error).toBeInstanceOf(QueryLimitError);
    expect(error?.limit).toBe("computedValue");
    expect(error?.message).toBe("A computed value is larger than 1 MiB (REPLACE)");
    // Two doublings are built before the third is refused.
    expect(performance.now() - started).toBeLessThan(1000);
    expect(process.memoryUsage().rss - before).toBeLessThan(100 * 1024 * 1024);
  });

  const big = "a".repeat(QUERY_LIMITS.computedValue / 2 + 1);
  const huge = "b".repeat(QUERY_LIMITS.computedValue + 1);
  const CAPPED: [expression: string, value: Record<string, unknown>, operation: string][] = [
    ["REPLACE(s, 'a', 'aaa')", { s: big }, "REPLACE"],
    ["CONCAT(s, s)", { s: big }, "CONCAT"],
    ["CONCAT(s, o)", { s: "x", o: { list: [huge] } }, "CONCAT"],
    ["UPPERCASE(s)", { s: huge }, "UPPERCASE"],
    ["LOWERCASE(s)", { s: huge }, "LOWERCASE"],
    ["TRIM(s)", { s: ` ${huge} ` }, "TRIM"],
    ["SUBSTRING(s, 1)", { s: huge }, "SUBSTRING"],
    ["CAST(o AS STRING)", { o: { list: [huge] } }, "CAST"],
    ["CAST(o AS STRING)", { o: Array.from({ length: 200_000 }, (_, i) => ({ i })) }, "CAST"],
    ["LEN(o)", { o: { text: huge } }, "LEN"],
  ];

  test.each(CAPPED)("%s over the limit is refused", (...[expression, value, operation]: (typeof CAPPED)[number]) => {
    const error = limitError(() => project(`SELECT ${expression} AS r FROM t`, record({ value })));
    expect(error?.limit).toBe("computedValue");
    expect(error?.message).toBe(`A computed value is larger than 1 MiB (${operation})`);
  });

  test("values under the limit are built as before", () => {
    const rec = record({ value: { s: big, o: { list: ["x"] } } });
    expect(project("SELECT LEN(CONCAT(s, 'x')) AS a, LEN(SUBSTRING(s, 2)) AS b, CAST(o AS STRING) AS c FROM t", rec)).toEqual({
      a: big.length + 1,
      b: big.length - 1,
      c: '{"list":["x"]}',
    });
  });

  test("the JSON of a long array under the limit is built (array indexes are not in the text)", () => {
    const zeros = new Array(300_000).fill(0);
    const rec = record({ value: { zeros, gaps: { a: undefined, b: 1 }, big: { n: 5n, m: new Map() } } });
    const sql = "SELECT LEN(zeros) AS n, LEN(CAST(zeros AS STRING)) AS l, CAST(gaps AS STRING) AS g, CAST(big AS STRING) AS b FROM t";
    expect(project(sql, rec)).toEqual({ n: 300_000, l: 600_001, g: '{"b":1}', b: '{"n":"5","m":{}}' });
  });

  test("the work of one record is bounded even when each value is under the limit", () => {
    const term = "LEN(REPLACE(s, 'a', 'aa'))";
    const plan = compileQuery(`SELECT * FROM t WHERE ${Array.from({ length: 20 }, () => term).join(" + ")} > 0`, null);
    const error = limitError(() => plan.filter(record({ value: { s: "a".repeat(100_000) } })));
    expect(error?.limit).toBe("recordWork");
    expect(error?.message).toMatch(/^One record needs more than 8 Mi units of string work \((LEN|REPLACE)\)$/);
  });

  test("long comparisons count: an IN list of long strings cannot scan gigabytes", () => {
    const items = Array.from({ length: QUERY_LIMITS.inListItems }, () => "b").join(", ");
    const plan = compileQuery(`SELECT * FROM t WHERE a IN (${items})`, null);
    const a = "x".repeat(1_000_000);
    const b = `${"x".repeat(999_999)}y`;
    expect(compileQuery("SELECT * FROM t WHERE a = b", null).filter(record({ value: { a, b } }))).toBe(false);
    const error = limitError(() => plan.filter(record({ value: { a, b } })));
    expect(error?.message).toBe("One record needs more than 8 Mi units of string work (a comparison)");
  });

  test("the columns of a projection share the record's allowance", () => {
    const columns = Array.from({ length: 20 }, (_, i) => `REPLACE(s, 'a', 'aa') AS c${i}`).join(", ");
    const plan = compileQuery(`SELECT ${columns} FROM t`, null);
    expect(limitError(() => plan.project(record({ value: { s: "a".repeat(100_000) } })))?.limit).toBe("recordWork");
  });

  test("the allowance starts again with each record", () => {
    const plan = compileQuery("SELECT * FROM t WHERE LEN(REPLACE(s, 'a', 'aa')) > 0", null);
    // Each record spends more than half of the allowance.
    const rec = record({ value: { s: "a".repeat(200_000) } });
    for (let i = 0; i < 4; i++) expect(plan.filter(rec)).toBe(true);
  });

  test("a constant over a limit is not pushed down and fails the records", () => {
    const plan = compileQuery(`SELECT * FROM t WHERE _meta.offset = LEN(REPLACE('${"x".repeat(1000)}', 'x', '${"y".repeat(2000)}'))`, null);
    expect(plan.offsetRange).toEqual({});
    expect(limitError(() => plan.filter(record()))?.limit).toBe("computedValue");
  });
});

describe("the query text is bounded", () => {
  test("regression: 100 000 nested parentheses answer an SqlError at once, without a stack overflow", () => {
    const deep = `SELECT * FROM t WHERE ${"(".repeat(100_000)}a${")".repeat(100_000)} = 1`;
    const started = performance.now();
    expect(validateSql(deep)).toEqual({
      isValid: false,
      line: 1,
      column: 65_537,
      message: "Query too long at line 1, column 65537. Expected at most 65536 characters, found 200027.",
    });
    // Past the length cap, the nesting cap answers first.
    expect(validateSql(deep, null, { maxQueryLength: 1_000_000 }).message).toBe(
      "Expression nested too deeply at line 1, column 87. Expected at most 64 levels of nesting.",
    );
    expect(performance.now() - started).toBeLessThan(1000);
  });

  const NESTINGS: [name: string, open: string, close: string][] = [
    ["NOT", "NOT ", ""],
    ["unary minus", "- ", ""],
    ["calls", "LEN(", ")"],
    ["casts", "CAST(", " AS INT)"],
  ];

  test.each(NESTINGS)("deep nesting of %s is refused cleanly", (...[, open, close]: (typeof NESTINGS)[number]) => {
    const sql = `SELECT * FROM t WHERE ${open.repeat(10_000)}a${close.repeat(10_000)}`;
    let thrown: unknown;
    try {
      compileQuery(sql, null, { maxQueryLength: 10_000_000, maxTokens: 1_000_000 });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(SqlError);
    expect((thrown as SqlError).message).toContain("Expression nested too deeply");
    expect((thrown as SqlError).message).toContain(`Expected at most ${QUERY_LIMITS.depth} levels of nesting.`);
  });

  test("a long chain of operators within the token cap compiles and runs without a stack overflow", () => {
    const operands = (QUERY_LIMITS.tokens - 10) / 2;
    const sql = `SELECT * FROM t WHERE ${Array.from({ length: operands }, () => "a").join(" OR ")}`;
    expect(compileQuery(sql, null).filter(record({ value: { a: true } }))).toBe(true);
  });

  test("exactly the limits are accepted", () => {
    const columns = Array.from({ length: QUERY_LIMITS.projections - 5 }, () => "a").join(", ");
    expect(validateSql(`SELECT ${columns}, _meta.* FROM t`).isValid).toBe(true);
    const items = Array.from({ length: QUERY_LIMITS.inListItems }, () => "1").join(",");
    expect(validateSql(`SELECT * FROM t WHERE a IN (${items})`).isValid).toBe(true);
    const filler = "x".repeat(QUERY_LIMITS.queryLength - "SELECT * FROM t WHERE a = ''".length);
    expect(validateSql(`SELECT * FROM t WHERE a = '${filler}'`).isValid).toBe(true);
  });
});

describe("projected records", () => {
  test("regression: 64 projections of one 200 kB value made a 12.8 MB record; its text is refused before it is built", () => {
    const plan = compileQuery(`SELECT ${Array.from({ length: 64 }, (_, i) => `_value AS c${i}`).join(", ")} FROM t`, null);
    const rec = record({ value: "a".repeat(200_000) });
    const t0 = performance.now();
    const error = limitError(() => plan.projectText(rec));
    expect(error?.limit).toBe("projectedRecord");
    expect(error?.message).toContain("4 MiB");
    // The refusal reads string lengths only: no text is built (a bound, not a benchmark).
    expect(performance.now() - t0).toBeLessThan(100);
  });

  test("a projected record within the bound is the JSON text of its columns", () => {
    const plan = compileQuery("SELECT _value AS v, _meta.offset AS o FROM t", null);
    expect(plan.projectText(record({ value: { a: [1, "x"] }, offset: 7 }))).toBe('{"v":{"a":[1,"x"]},"o":7}');
    expect(QUERY_LIMITS.projectedRecord as number).toBe(4 * 1024 * 1024);
  });
});
