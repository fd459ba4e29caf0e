/**
 * The built-in functions: arity (checked by the analyzer) and behaviour (used by
 * the evaluator). Every function returns null for a null argument unless said
 * otherwise; string positions and lengths count code points.
 *
 * CAST has its own syntax (`CAST(x AS type)`) and lives in the evaluator.
 */
import type { RecordView } from "./record.ts";
import { isNull, toNumber, toText } from "./values.ts";

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

function text(args: unknown[], i: number): string | null {
  return toText(args[i]);
}

function num(args: unknown[], i: number): number | null {
  return toNumber(args[i]);
}

function finite(n: number): number | null {
  return Number.isFinite(n) ? n : null;
}

function stringFn(f: (s: string) => unknown): FunctionDefinition["call"] {
  return (args) => {
    const s = text(args, 0);
    return s === null ? null : f(s);
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

/** SQL SUBSTRING: 1-based start; positions before the text shorten the length. */
function substring(s: string, start: number, length: number | null): string | null {
  const chars = Array.from(s);
  const from = Math.trunc(start);
  if (length !== null && length < 0) return null;
  const to = length === null ? chars.length + 1 : from + Math.trunc(length);
  const first = Math.max(from, 1);
  const last = Math.min(to, chars.length + 1);
  return last <= first ? "" : chars.slice(first - 1, last - 1).join("");
}

export const FUNCTIONS: Readonly<Record<string, FunctionDefinition>> = {
  LOWERCASE: fn(
    1,
    1,
    stringFn((s) => s.toLowerCase()),
  ),
  UPPERCASE: fn(
    1,
    1,
    stringFn((s) => s.toUpperCase()),
  ),
  /** Null arguments are skipped; the result is null only when all are null. */
  CONCAT: fn(1, Infinity, (args) => {
    const parts = args.map(toText).filter((p): p is string => p !== null);
    return parts.length === 0 ? null : parts.join("");
  }),
  /** Length of a string (code points) or of an array. */
  LEN: fn(1, 1, (args) => {
    const v = args[0];
    if (Array.isArray(v)) return v.length;
    const s = toText(v);
    return s === null ? null : Array.from(s).length;
  }),
  SUBSTRING: fn(2, 3, (args) => {
    const s = text(args, 0);
    const start = num(args, 1);
    const length = args.length > 2 ? num(args, 2) : null;
    if (s === null || start === null || (args.length > 2 && length === null)) return null;
    return substring(s, start, length);
  }),
  TRIM: fn(
    1,
    1,
    stringFn((s) => s.trim()),
  ),
  /** Replaces every occurrence, literally. */
  REPLACE: fn(3, 3, (args) => {
    const s = text(args, 0);
    const from = text(args, 1);
    const to = text(args, 2);
    if (s === null || from === null || to === null) return null;
    return from === "" ? s : s.split(from).join(to);
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
