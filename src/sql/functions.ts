/**
 * The built-in functions: arity (checked by the analyzer) and behaviour (used by
 * the evaluator). Every function returns null for a null argument unless said
 * otherwise; string positions and lengths count code points.
 *
 * A function that builds a string checks its size against
 * QUERY_LIMITS.computedValue before building it where it can (REPLACE,
 * CONCAT), and counts the code units it builds or scans against the work of
 * the record (see limits.ts).
 *
 * CAST has its own syntax (`CAST(x AS type)`) and lives in the evaluator.
 */
import { checkComputedLength, spend, WORK_COST } from "./limits.ts";
import type { RecordView } from "./record.ts";
import { codePointLength, isNull, toNumber, toText } from "./values.ts";

export interface CallContext {
  record: RecordView;
  /** Epoch milliseconds, fixed when the query is compiled. */
  now: number;
}

export interface FunctionDefinition {
  minArgs: number;
  /** Infinity for variadic functions. */
  maxArgs: number;
  /** False when the result depends on the record (LAST_OFFSET). */
  pure: boolean;
  call(args: unknown[], context: CallContext): unknown;
}

function fn(minArgs: number, maxArgs: number, call: FunctionDefinition["call"], pure = true): FunctionDefinition {
  return { minArgs, maxArgs, pure, call };
}

function text(args: unknown[], i: number, what: string): string | null {
  return toText(args[i], what);
}

function num(args: unknown[], i: number): number | null {
  return toNumber(args[i]);
}

function finite(n: number): number | null {
  return Number.isFinite(n) ? n : null;
}

/** A function from a string to a string no shorter than `bound(input)`; refused before building when that is too large. */
function stringFn(name: string, f: (s: string) => string, bound: (s: string) => number, cost: number): FunctionDefinition["call"] {
  return (args) => {
    const s = text(args, 0, name);
    if (s === null) return null;
    checkComputedLength(bound(s), name);
    const result = f(s);
    checkComputedLength(result.length, name);
    spend(result.length * cost, name);
    return result;
  };
}

function numberFn(f: (n: number) => number): FunctionDefinition["call"] {
  return (args) => {
    const n = num(args, 0);
    return n === null ? null : finite(f(n));
  };
}

/** Rounds half away from zero at `digits` decimal places, avoiding binary-fraction drift (1.005 -> 1.01). */
export function roundHalfAwayFromZero(value: number, digits: number): number {
  const magnitude = Math.abs(value);
  let result: number;
  if (String(magnitude).includes("e")) {
    const factor = 10 ** digits;
    result = Math.round(magnitude * factor) / factor;
  } else {
    result = Number(`${Math.round(Number(`${magnitude}e${digits}`))}e${-digits}`);
  }
  if (!Number.isFinite(result)) result = magnitude;
  // No negative zero: -0.4 rounds to 0.
  return result === 0 ? 0 : Math.sign(value) * result;
}

/** The offset of the code point `count` code points after `from` (or the end of the text). */
function advanceCodePoints(s: string, from: number, count: number): number {
  let i = from;
  for (let n = 0; n < count && i < s.length; n++) {
    const code = s.charCodeAt(i);
    i += code >= 0xd800 && code <= 0xdbff && i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff ? 2 : 1;
  }
  return i;
}

/** SQL SUBSTRING: 1-based start; positions before the text shorten the length. Counts code points without splitting the text. */
function substring(s: string, start: number, length: number | null): string | null {
  const from = Math.trunc(start);
  if (length !== null && length < 0) return null;
  const first = Math.max(from, 1);
  spend(s.length * WORK_COST.codePoints, "SUBSTRING");
  const begin = advanceCodePoints(s, 0, first - 1);
  let end = s.length;
  if (length !== null) {
    const to = from + Math.trunc(length);
    if (to <= first) return "";
    end = advanceCodePoints(s, begin, to - first);
  }
  if (end <= begin) return "";
  checkComputedLength(end - begin, "SUBSTRING");
  return s.slice(begin, end);
}

/**
 * REPLACE: every occurrence, left to right, literally. The occurrences are
 * counted first, so that a result over the limit is never built.
 */
function replace(s: string, from: string, to: string): string {
  if (from === "") return s;
  let count = 0;
  for (let at = s.indexOf(from); at >= 0; at = s.indexOf(from, at + from.length)) count++;
  spend(s.length + count * WORK_COST.build, "REPLACE");
  if (count === 0) return s;
  const length = s.length + count * (to.length - from.length);
  checkComputedLength(length, "REPLACE");
  spend(length + count * WORK_COST.replacePiece, "REPLACE");
  return s.split(from).join(to);
}

/** CONCAT: null arguments are skipped; the total is checked before the parts are joined. */
function concat(args: unknown[]): string | null {
  let result: string | null = null;
  let length = 0;
  for (const arg of args) {
    const part = toText(arg, "CONCAT");
    if (part === null) continue;
    length += part.length;
    checkComputedLength(length, "CONCAT");
    result = result === null ? part : result + part;
  }
  spend(length, "CONCAT");
  return result;
}

export const FUNCTIONS: Readonly<Record<string, FunctionDefinition>> = {
  LOWERCASE: fn(
    1,
    1,
    stringFn(
      "LOWERCASE",
      (s) => s.toLowerCase(),
      (s) => s.length,
      WORK_COST.caseMapping,
    ),
  ),
  UPPERCASE: fn(
    1,
    1,
    stringFn(
      "UPPERCASE",
      (s) => s.toUpperCase(),
      (s) => s.length,
      WORK_COST.caseMapping,
    ),
  ),
  /** Null arguments are skipped; the result is null only when all are null. */
  CONCAT: fn(1, Infinity, concat),
  /** Length of a string (code points) or of an array. */
  LEN: fn(1, 1, (args) => {
    const v = args[0];
    if (Array.isArray(v)) return v.length;
    const s = toText(v, "LEN");
    if (s === null) return null;
    spend(s.length * WORK_COST.codePoints, "LEN");
    return codePointLength(s);
  }),
  SUBSTRING: fn(2, 3, (args) => {
    const s = text(args, 0, "SUBSTRING");
    const start = num(args, 1);
    const length = args.length > 2 ? num(args, 2) : null;
    if (s === null || start === null || (args.length > 2 && length === null)) return null;
    return substring(s, start, length);
  }),
  TRIM: fn(
    1,
    1,
    stringFn(
      "TRIM",
      (s) => s.trim(),
      () => 0,
      WORK_COST.build,
    ),
  ),
  /** Replaces every occurrence, literally. */
  REPLACE: fn(3, 3, (args) => {
    const s = text(args, 0, "REPLACE");
    const from = text(args, 1, "REPLACE");
    const to = text(args, 2, "REPLACE");
    if (s === null || from === null || to === null) return null;
    return replace(s, from, to);
  }),
  ABS: fn(1, 1, numberFn(Math.abs)),
  CEIL: fn(1, 1, numberFn(Math.ceil)),
  FLOOR: fn(1, 1, numberFn(Math.floor)),
  /** Half away from zero; the optional second argument is the number of decimals (may be negative). */
  ROUND: fn(1, 2, (args) => {
    const n = num(args, 0);
    const digits = args.length > 1 ? num(args, 1) : 0;
    if (n === null || digits === null) return null;
    return finite(roundHalfAwayFromZero(n, Math.trunc(digits)));
  }),
  /** The first argument that is not null. */
  COALESCE: fn(1, Infinity, (args) => {
    for (const a of args) if (!isNull(a)) return a;
    return null;
  }),
  /** Epoch milliseconds when the query was compiled: the same for every record. */
  NOW: fn(0, 0, (_args, context) => context.now),
  /** The end offset of the record's partition: the offset the next record will get. */
  LAST_OFFSET: fn(0, 0, (_args, { record }) => record.lastOffset(record.partition), false),
};

/** Describes an arity for "Expected ..." in messages. */
export function describeArity(def: FunctionDefinition): string {
  const plural = (n: number): string => `${n} argument${n === 1 ? "" : "s"}`;
  if (def.maxArgs === 0) return "no arguments";
  if (def.minArgs === def.maxArgs) return plural(def.minArgs);
  if (def.maxArgs === Infinity) return `at least ${plural(def.minArgs)}`;
  if (def.maxArgs === def.minArgs + 1) return `${def.minArgs} or ${plural(def.maxArgs)}`;
  return `${def.minArgs} to ${plural(def.maxArgs)}`;
}
