/**
 * How query values behave: coercions, comparison, three-valued logic and LIKE.
 *
 * Values are what decoders produce: strings, numbers (bigints are read as
 * numbers), booleans, null, arrays and plain objects. A missing field is
 * `undefined` and behaves exactly like null.
 *
 * Choices:
 * - A string that spells a number compares with a number numerically
 *   (`'42' = 42` is true); two strings always compare as strings, by UTF-16
 *   code units, case-sensitively.
 * - Arithmetic and numeric functions accept numbers and numeric strings; any
 *   other operand gives null, and so do division or remainder by zero and
 *   results that are not finite. `+` never concatenates: use CONCAT.
 * - `=` between values that cannot be compared (a string that is not a number
 *   and a number, a boolean and a string, an object and a number) is false and
 *   `!=` is true; ordering them (`<` ...) is unknown. Arrays and objects are
 *   equal when their contents are.
 * - Building and scanning strings counts against the work allowed per record
 *   (see limits.ts); going past a limit throws QueryLimitError.
 * - Logic is three-valued: null and any non-boolean value are "unknown"; a
 *   record passes the filter only when the condition is exactly true.
 */

import { checkComputedLength, QUERY_LIMITS, QueryLimitError, spend, WORK_COST } from "./limits.ts";

export type Logic = boolean | null;

export function isNull(value: unknown): value is null | undefined {
  return value === null || value === undefined;
}

/** Strings up to this length cost too little to count when they are compared or read as numbers. */
const LONG_STRING = 256;

const NUMERIC = /^\s*[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?\s*$/;

/** A number, or null when the value is not a number or a numeric string. */
export function toNumber(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "bigint") return Number(value);
  if (typeof value === "string") {
    // Reading a long string as a number scans it: count that, short ones are free.
    if (value.length > LONG_STRING) spend(value.length * WORK_COST.numberText, "a number read from a string");
    if (!NUMERIC.test(value)) return null;
    const n = Number(value);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

/**
 * Text for string functions: numbers and booleans are spelled out, objects as
 * JSON. The JSON of an object is refused (QueryLimitError) as soon as it is
 * sure to be larger than QUERY_LIMITS.computedValue; `what` names the
 * operation in that message.
 */
export function toText(value: unknown, what = "text of an object"): string | null {
  switch (typeof value) {
    case "string":
      return value;
    case "number":
    case "bigint":
    case "boolean":
      return String(value);
    case "object":
      return value === null ? null : jsonText(value, what);
    default:
      return null;
  }
}

/**
 * The JSON text of an object, refused before it is built when it cannot fit
 * QUERY_LIMITS.computedValue. A walk first bounds the text's length from
 * below (it stops as soon as the bound passes the limit) and looks for
 * bigints, which only JSON.stringify with a replacer can write: that is
 * several times slower, so it is used only when needed.
 */
function jsonText(value: object, what: string): string | null {
  const least = jsonLengthAtLeast(value, QUERY_LIMITS.computedValue, what);
  checkComputedLength(least.length, what);
  const text = stringify(value, least.bigint);
  if (text === undefined) return null;
  checkComputedLength(text.length, what);
  spend(text.length * (least.bigint ? WORK_COST.jsonTextWithBigints : WORK_COST.jsonText), what);
  return text;
}

/**
 * The JSON text of a projected record, refused before it is built when it cannot fit
 * QUERY_LIMITS.projectedRecord (see there). Values that JSON cannot write give "null".
 */
export function recordText(value: unknown): string {
  if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? "null";
  const least = jsonLengthAtLeast(value, QUERY_LIMITS.projectedRecord, "projected record");
  if (least.length > QUERY_LIMITS.projectedRecord) throw projectedRecordTooLarge();
  const text = stringify(value, least.bigint);
  if (text === undefined) return "null";
  if (text.length > QUERY_LIMITS.projectedRecord) throw projectedRecordTooLarge();
  return text;
}

/** JSON text, with bigints as digits when there are any; undefined for a cycle or a throwing toJSON. */
function stringify(value: object, bigints: boolean): string | undefined {
  try {
    return bigints
      ? JSON.stringify(value, (_key: string, v: unknown) => (typeof v === "bigint" ? v.toString() : v))
      : JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/**
 * The JSON text of a projected record whose columns may be written from their source's types:
 * `typed(i)` is column i's text when the decoder knows its type (an Avro double as `0.0`, a
 * decimal with its scale), else undefined and the value is written as recordText() would.
 * Bounded like recordText().
 */
export function typedRecordText(
  columns: readonly string[],
  values: Record<string, unknown>,
  typed: (column: number) => string | undefined,
): string {
  let text = "{";
  for (let i = 0; i < columns.length; i++) {
    const name = columns[i]!;
    const value = values[name];
    const piece = typed(i) ?? (typeof value === "bigint" ? value.toString() : recordText(value));
    text += `${i === 0 ? "" : ","}${JSON.stringify(name)}:${piece}`;
    if (text.length > QUERY_LIMITS.projectedRecord) throw projectedRecordTooLarge();
  }
  return `${text}}`;
}

function projectedRecordTooLarge(): QueryLimitError {
  return new QueryLimitError(
    "projectedRecord",
    `A projected record is larger than ${QUERY_LIMITS.projectedRecord / 1_048_576} MiB of JSON text: select fewer or smaller columns`,
  );
}

/**
 * A lower bound of the length of `root`'s JSON text (its strings, the keys of
 * its objects, one character per other value), found without recursion; the
 * walk stops once the bound passes `limit`. Counts its steps as work.
 */
function jsonLengthAtLeast(root: object, limit: number, what: string): { length: number; bigint: boolean } {
  let length = 0;
  let bigint = false;
  let steps = 0;
  const stack: object[] = [root];
  const count = (v: unknown): void => {
    switch (typeof v) {
      case "string":
        length += v.length + 2;
        break;
      case "bigint":
        bigint = true;
        length += 1;
        break;
      case "object":
        if (v === null) length += 4;
        else stack.push(v);
        break;
      case "undefined":
      case "function":
      case "symbol":
        break;
      default:
        length += 1;
    }
  };
  while (stack.length > 0 && length <= limit) {
    const node = stack.pop() as object;
    length += 2;
    if (ArrayBuffer.isView(node)) {
      // Typed arrays and buffers: at least one digit per element.
      length += (node as unknown as { length?: number }).length ?? node.byteLength;
      steps++;
    } else if (Array.isArray(node)) {
      for (let i = 0; i < node.length && length <= limit; i++) count(node[i]);
      steps += node.length * WORK_COST.jsonElement;
    } else if (!(node instanceof Map)) {
      const record = node as Record<string, unknown>;
      for (const key in record) {
        if (!Object.hasOwn(record, key)) continue;
        length += key.length + 3;
        count(record[key]);
        steps += WORK_COST.jsonKey;
        if (length > limit) break;
      }
    }
  }
  spend(steps, what);
  return { length, bigint };
}

/** The number of code points of a string (a lone surrogate counts as one), without building anything. */
export function codePointLength(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count--;
        i++;
      }
    }
  }
  return count;
}

export function toLogic(value: unknown): Logic {
  return typeof value === "boolean" ? value : null;
}

function normalise(value: unknown): unknown {
  return typeof value === "bigint" ? Number(value) : value;
}

/**
 * Orders two values: negative, zero or positive, or null when they cannot be
 * ordered (either is null, or their types do not match and no coercion applies).
 */
export function compareValues(left: unknown, right: unknown): number | null {
  const a = normalise(left);
  const b = normalise(right);
  if (isNull(a) || isNull(b)) return null;
  if (typeof a === "number" && typeof b === "number") return a < b ? -1 : a > b ? 1 : a === b ? 0 : null;
  if (typeof a === "string" && typeof b === "string") {
    if (a.length > LONG_STRING && b.length > LONG_STRING) {
      spend(Math.min(a.length, b.length) / WORK_COST.comparedPerUnit, "a comparison");
    }
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (typeof a === "boolean" && typeof b === "boolean") return Number(a) - Number(b);
  if (typeof a === "number" && typeof b === "string") {
    const n = toNumber(b);
    return n === null ? null : compareValues(a, n);
  }
  if (typeof a === "string" && typeof b === "number") {
    const n = toNumber(a);
    return n === null ? null : compareValues(n, b);
  }
  return null;
}

/** `=`: null when either side is null, else whether the values are equal. */
export function equalValues(left: unknown, right: unknown): Logic {
  if (isNull(left) || isNull(right)) return null;
  const order = compareValues(left, right);
  if (order !== null) return order === 0;
  return deepEqual(normalise(left), normalise(right));
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    spend(a.length * WORK_COST.deepEqual, "=");
    return a.every((item, i) => deepEqual(normalise(item), normalise(b[i])));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  spend(ka.length * WORK_COST.deepEqual, "=");
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  return ka.every((k) => Object.hasOwn(rb, k) && deepEqual(normalise(ra[k]), normalise(rb[k])));
}

export function and(a: Logic, b: Logic): Logic {
  if (a === false || b === false) return false;
  if (a === true && b === true) return true;
  return null;
}

export function or(a: Logic, b: Logic): Logic {
  if (a === true || b === true) return true;
  if (a === false && b === false) return false;
  return null;
}

export function not(a: Logic): Logic {
  return a === null ? null : !a;
}

/** Follows one step of a path; own properties only, so `__proto__` is just a name. */
export function getField(container: unknown, name: string): unknown {
  if (container instanceof Map) return container.get(name);
  if (typeof container !== "object" || container === null || Array.isArray(container)) return undefined;
  return Object.hasOwn(container, name) ? (container as Record<string, unknown>)[name] : undefined;
}

export function getIndex(container: unknown, index: number): unknown {
  return Array.isArray(container) ? container[index] : undefined;
}

// ---------------------------------------------------------------------- LIKE

/** A pattern element that matches any one code point (`_`). */
const ANY_ONE = -1;

/**
 * A compiled LIKE pattern: `%` matches any run of characters, `_` exactly one
 * character (code point), `\` makes the next character literal. Matching uses
 * no regular expression, so no pattern can inject one, and it never
 * backtracks: the pattern is cut at each `%` into fixed-length segments; the
 * first must match at the start, the last at the end, and each one between is
 * found at its leftmost place after the one before (which is optimal, since a
 * segment's length is fixed). A middle segment is found with Knuth-Morris-Pratt
 * (O(text)), or when it holds `_` with a bit-parallel scan (shift-and,
 * O(text x segment length / 32)).
 */
export class LikePattern {
  /** Length of the pattern in code points, as written (escapes and wildcards included). */
  readonly length: number;
  /** Steps per code unit of the text to find the middle segments (0 when there are none). */
  readonly cost: number;
  /** No `%`: the whole text must match `first`. */
  private readonly exact: boolean;
  private readonly first: number[];
  private readonly last: number[];
  private readonly middle: SegmentSearch[];

  constructor(pattern: string) {
    const parts: number[][] = [[]];
    let current = parts[0] as number[];
    let length = 0;
    let i = 0;
    while (i < pattern.length) {
      let cp = pattern.codePointAt(i) as number;
      i += cp > 0xffff ? 2 : 1;
      length++;
      if (cp === 92 && i < pattern.length) {
        cp = pattern.codePointAt(i) as number;
        i += cp > 0xffff ? 2 : 1;
        length++;
        current.push(cp);
      } else if (cp === 37) {
        current = [];
        parts.push(current);
      } else {
        current.push(cp === 95 ? ANY_ONE : cp);
      }
    }
    this.length = length;
    this.exact = parts.length === 1;
    this.first = parts[0] as number[];
    this.last = parts[parts.length - 1] as number[];
    // Empty segments between two "%" match anywhere: "%%" means "%".
    this.middle = parts
      .slice(1, -1)
      .filter((p) => p.length > 0)
      .map((p): SegmentSearch => (p.includes(ANY_ONE) ? new ShiftAndSearch(p) : new KmpSearch(p)));
    this.cost = this.middle.reduce((most, m) => Math.max(most, m.cost), 0);
  }

  matches(text: string): boolean {
    const end = text.length;
    const afterFirst = matchForward(text, 0, end, this.first);
    if (afterFirst < 0) return false;
    if (this.exact) return afterFirst === end;
    const beforeLast = matchBackward(text, afterFirst, end, this.last);
    if (beforeLast < 0) return false;
    let position = afterFirst;
    for (const segment of this.middle) {
      position = segment.find(text, position, beforeLast);
      if (position < 0) return false;
    }
    return true;
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** String.codePointAt without its checks, for the scanning loops (a pair is a high surrogate, then a low one). */
function codePointAt(text: string, i: number): number {
  const code = text.charCodeAt(i);
  if (code < 0xd800 || code > 0xdbff) return code;
  const next = text.charCodeAt(i + 1);
  return next >= 0xdc00 && next <= 0xdfff ? ((code - 0xd800) << 10) + (next - 0xdc00) + 0x10000 : code;
}

/** Matches `elements` at `start`; the offset after the match, or -1. */
function matchForward(text: string, start: number, end: number, elements: readonly number[]): number {
  let i = start;
  for (const element of elements) {
    if (i >= end) return -1;
    const cp = text.codePointAt(i) as number;
    if (element !== ANY_ONE && element !== cp) return -1;
    i += cp > 0xffff ? 2 : 1;
  }
  return i;
}

/**
 * Matches `elements` so that they end at `end`, not before `start` (a code
 * point boundary); the offset where the match starts, or -1. Code points are
 * read backwards the way they pair forwards: a low surrogate after a high one.
 */
function matchBackward(text: string, start: number, end: number, elements: readonly number[]): number {
  let j = end;
  for (let k = elements.length - 1; k >= 0; k--) {
    if (j <= start) return -1;
    let cp = text.charCodeAt(j - 1);
    j--;
    if (isLowSurrogate(cp) && j > start && isHighSurrogate(text.charCodeAt(j - 1))) {
      j--;
      cp = text.codePointAt(j) as number;
    }
    const element = elements[k] as number;
    if (element !== ANY_ONE && element !== cp) return -1;
  }
  return j;
}

/** Finds a middle segment of a LIKE pattern in a text. */
interface SegmentSearch {
  /** Steps per code point of the text, at worst. */
  readonly cost: number;
  /** The offset just after the leftmost match within [from, to), or -1. */
  find(text: string, from: number, to: number): number;
}

/**
 * Finds a segment without `_` with the Knuth-Morris-Pratt algorithm: after a
 * mismatch the scan goes on from the longest prefix of the segment that is
 * also a suffix of what matched, so no code point of the text is read twice.
 */
class KmpSearch implements SegmentSearch {
  /** Each code point is read once, and each fallback undoes an earlier step: two steps per code point at most. */
  readonly cost = 2;
  private readonly elements: Int32Array;
  /** For each prefix length i + 1, the length of its longest proper prefix that is also its suffix. */
  private readonly fallback: Int32Array;

  constructor(elements: readonly number[]) {
    this.elements = Int32Array.from(elements);
    const fallback = new Int32Array(elements.length);
    let k = 0;
    for (let i = 1; i < elements.length; i++) {
      while (k > 0 && elements[i] !== elements[k]) k = fallback[k - 1] as number;
      if (elements[i] === elements[k]) k++;
      fallback[i] = k;
    }
    this.fallback = fallback;
  }

  find(text: string, from: number, to: number): number {
    const { elements, fallback } = this;
    const size = elements.length;
    let matched = 0;
    let i = from;
    while (i < to) {
      const cp = codePointAt(text, i);
      i += cp > 0xffff ? 2 : 1;
      while (matched > 0 && elements[matched] !== cp) matched = fallback[matched - 1] as number;
      if (elements[matched] === cp) matched++;
      if (matched === size) return i;
    }
    return -1;
  }
}

/**
 * Finds a fixed-length segment (code points and `_`) in a text with the
 * shift-and algorithm: bit i of the state says that the segment's first i + 1
 * elements end at the current code point. The state takes ceil(length / 32)
 * 32-bit words; each code point of the text costs one step per word.
 */
class ShiftAndSearch implements SegmentSearch {
  readonly cost: number;
  private readonly size: number;
  /** Per code point below 128, the offset of its mask in `masks`. */
  private readonly ascii = new Int32Array(128);
  /** Other code points of the segment -> offset of their mask. */
  private readonly others = new Map<number, number>();
  /** The masks, `words` words each; the first is that of code points not in the segment (only `_` matches them). */
  private readonly masks: Int32Array;
  private readonly state: Int32Array;

  constructor(elements: readonly number[]) {
    const words = Math.ceil(elements.length / 32);
    this.cost = words;
    this.size = elements.length;
    this.state = new Int32Array(words);
    const offsets = new Map<number, number>();
    for (const element of elements) {
      if (element !== ANY_ONE && !offsets.has(element)) offsets.set(element, (offsets.size + 1) * words);
    }
    // The first mask holds the bits of `_`, which matches every code point; it
    // is then copied into every other mask (O(distinct code points x words)).
    const masks = new Int32Array((offsets.size + 1) * words);
    elements.forEach((element, i) => {
      const at = (element === ANY_ONE ? 0 : (offsets.get(element) as number)) + Math.floor(i / 32);
      masks[at] = (masks[at] as number) | (1 << (i % 32));
    });
    for (let at = words; at < masks.length; at++) masks[at] = (masks[at] as number) | (masks[at % words] as number);
    this.masks = masks;
    for (const [cp, offset] of offsets) {
      if (cp < 128) this.ascii[cp] = offset;
      else this.others.set(cp, offset);
    }
  }

  find(text: string, from: number, to: number): number {
    const { cost: words, masks, ascii, others } = this;
    const lastWord = words - 1;
    const lastBit = 1 << ((this.size - 1) % 32);
    if (words === 1) {
      let state = 0;
      let i = from;
      while (i < to) {
        const cp = codePointAt(text, i);
        i += cp > 0xffff ? 2 : 1;
        const offset = cp < 128 ? (ascii[cp] as number) : (others.get(cp) ?? 0);
        state = ((state << 1) | 1) & (masks[offset] as number);
        if ((state & lastBit) !== 0) return i;
      }
      return -1;
    }
    const state = this.state;
    state.fill(0);
    let i = from;
    while (i < to) {
      const cp = codePointAt(text, i);
      i += cp > 0xffff ? 2 : 1;
      const offset = cp < 128 ? (ascii[cp] as number) : (others.get(cp) ?? 0);
      let carry = 1;
      for (let w = 0; w < words; w++) {
        const value = state[w] as number;
        state[w] = ((value << 1) | carry) & (masks[offset + w] as number);
        carry = value >>> 31;
      }
      if (((state[lastWord] as number) & lastBit) !== 0) return i;
    }
    return -1;
  }
}

/** The text LIKE applies to: strings, and numbers and booleans spelled out. */
export function likeText(value: unknown): string | null {
  if (typeof value === "object" || value === undefined) return null;
  return toText(value);
}

// ---------------------------------------------------------------- timestamps

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/**
 * Epoch milliseconds from a string: a number of milliseconds, or an ISO-8601
 * date or date-time. A date-time without a zone is read as UTC, so the result
 * does not depend on the server's time zone. Null when the text is neither.
 */
export function parseTimestamp(text: string): number | null {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const m = ISO_DATE.exec(trimmed);
  if (m === null) return null;
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const millis = Number((m[7] ?? "").padEnd(3, "0").slice(0, 3));
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  // setUTCFullYear, unlike Date.UTC, does not move years 0-99 to the 1900s.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCDate() !== day) return null;
  date.setUTCHours(hour, minute, second, millis);
  const utc = date.getTime();
  let offsetMinutes = 0;
  const zone = m[8];
  if (zone !== undefined && zone.toUpperCase() !== "Z") {
    const digits = zone.slice(1).replace(":", "");
    const hours = Number(digits.slice(0, 2));
    const minutes = Number(digits.slice(2) || "0");
    if (hours > 23 || minutes > 59) return null;
    offsetMinutes = (zone.startsWith("-") ? -1 : 1) * (hours * 60 + minutes);
  }
  return utc - offsetMinutes * 60_000;
}
