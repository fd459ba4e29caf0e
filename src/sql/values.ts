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
 * - Logic is three-valued: null and any non-boolean value are "unknown"; a
 *   record passes the filter only when the condition is exactly true.
 */

export type Logic = boolean | null;

export function isNull(value: unknown): value is null | undefined {
  return value === null || value === undefined;
}

const NUMERIC = /^\s*[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?\s*$/;

/** A number, or null when the value is not a number or a numeric string. */
export function toNumber(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "bigint") return Number(value);
  if (typeof value === "string" && NUMERIC.test(value)) {
    const n = Number(value);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

/** Text for string functions: numbers and booleans are spelled out, objects as JSON. */
export function toText(value: unknown): string | null {
  switch (typeof value) {
    case "string":
      return value;
    case "number":
    case "bigint":
    case "boolean":
      return String(value);
    case "object": {
      if (value === null) return null;
      try {
        return JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
      } catch {
        return null;
      }
    }
    default:
      return null;
  }
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
  if (typeof a === "string" && typeof b === "string") return a < b ? -1 : a > b ? 1 : 0;
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
    return a.every((item, i) => deepEqual(normalise(item), normalise(b[i])));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
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

type LikeStep = { any: "one" } | { any: "many" } | { char: string };

/**
 * A compiled LIKE pattern: `%` matches any run of characters, `_` exactly one
 * character (code point), `\` makes the next character literal. Matching does
 * not use regular expressions, so no pattern can inject one or make the match
 * backtrack exponentially: it is O(text x pattern) at worst.
 */
export class LikePattern {
  private readonly steps: LikeStep[];

  constructor(pattern: string) {
    const steps: LikeStep[] = [];
    const chars = Array.from(pattern);
    for (let i = 0; i < chars.length; i++) {
      const c = chars[i] as string;
      if (c === "\\" && i + 1 < chars.length) {
        steps.push({ char: chars[++i] as string });
      } else if (c === "%") {
        // Consecutive "%" mean the same as one.
        const last = steps[steps.length - 1];
        if (last === undefined || !("any" in last) || last.any !== "many") steps.push({ any: "many" });
      } else if (c === "_") {
        steps.push({ any: "one" });
      } else {
        steps.push({ char: c });
      }
    }
    this.steps = steps;
  }

  matches(text: string): boolean {
    const chars = Array.from(text);
    const steps = this.steps;
    let t = 0;
    let p = 0;
    let starStep = -1;
    let starText = 0;
    while (t < chars.length) {
      const step = steps[p];
      if (step !== undefined && ("char" in step ? step.char === chars[t] : step.any === "one")) {
        t++;
        p++;
      } else if (step !== undefined && "any" in step && step.any === "many") {
        starStep = p++;
        starText = t;
      } else if (starStep >= 0) {
        p = starStep + 1;
        t = ++starText;
      } else {
        return false;
      }
    }
    while (p < steps.length) {
      const step = steps[p];
      if (step === undefined || !("any" in step) || step.any !== "many") return false;
      p++;
    }
    return true;
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
