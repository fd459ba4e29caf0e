/**
 * Reads only some top-level fields of a JSON object from its bytes. A stream processor whose
 * program reads `id`, `name` and `sel` of a 1 KB document otherwise turns every value into a
 * string and parses all of it: that was two fifths of a processor's time.
 *
 * The scan walks the object's members without making strings of them: a string is skipped by
 * finding its closing quote (native search), a nested object or array by matching brackets. A
 * wanted member's value is made as JSON.parse makes it (a string, a number, a literal, or
 * JSON.parse of its bytes for a nested or escaped value); a later duplicate wins, as there.
 *
 * What it checks: the document's structure (members, separators, brackets, string ends,
 * literals, the characters of numbers) and a wanted value exactly. What it does not check is
 * the inside of members it skips: a raw control character or a bad escape in an unread string
 * passes, where JSON.parse would refuse the whole document. No byte of a skipped member reaches
 * the program, so this only lets through a record whose read fields are sound.
 *
 * A value that is not an object is parsed whole.
 */

export class JsonFieldError extends Error {
  override name = "JsonFieldError";
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

const invalid = (): never => {
  throw new JsonFieldError("not valid JSON");
};

type Utf8Buffer = Buffer & { utf8Slice(start: number, end: number): string; latin1Slice(start: number, end: number): string };

const isWs = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipWs(b: Buffer, i: number): number {
  while (i < b.length && isWs(b[i]!)) i++;
  return i;
}

/** Bytes looked at one by one before a native search (a call costs about as much as 30 of them). */
const SHORT = 24;

/** The index of the closing quote of the string whose contents start at `i`. */
function stringEnd(b: Buffer, i: number): number {
  let q = -1;
  const near = Math.min(b.length, i + SHORT);
  for (let k = i; k < near; k++) {
    if (b[k] === QUOTE) {
      q = k;
      break;
    }
  }
  for (;;) {
    if (q < 0) q = b.indexOf(QUOTE, Math.max(i, near));
    if (q < 0) return invalid();
    let k = q - 1;
    while (k >= i && b[k] === BACKSLASH) k--;
    // An odd run of backslashes escapes this quote.
    if ((q - 1 - k) % 2 === 0) return q;
    q = b.indexOf(QUOTE, q + 1);
  }
}

function hasBackslash(b: Buffer, start: number, end: number): boolean {
  for (let k = start; k < end; k++) if (b[k] === BACKSLASH) return true;
  return false;
}

const NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

function isNumberByte(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;
}

function literalAt(b: Buffer, i: number, word: string): number {
  for (let k = 0; k < word.length; k++) if (b[i + k] !== word.charCodeAt(k)) return invalid();
  return i + word.length;
}

/** The index after the value starting at `i` (a nested value: brackets matched, strings skipped). */
function skipValue(b: Buffer, i: number): number {
  const c = b[i];
  if (c === QUOTE) return stringEnd(b, i + 1) + 1;
  if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
    const closers: number[] = [c === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY];
    let j = i + 1;
    while (closers.length > 0) {
      if (j >= b.length) return invalid();
      const d = b[j]!;
      if (d === QUOTE) j = stringEnd(b, j + 1) + 1;
      else if (d === OPEN_OBJECT) {
        closers.push(CLOSE_OBJECT);
        j++;
      } else if (d === OPEN_ARRAY) {
        closers.push(CLOSE_ARRAY);
        j++;
      } else if (d === CLOSE_OBJECT || d === CLOSE_ARRAY) {
        if (closers.pop() !== d) return invalid();
        j++;
      } else j++;
    }
    return j;
  }
  if (c === 0x74) return literalAt(b, i, "true");
  if (c === 0x66) return literalAt(b, i, "false");
  if (c === 0x6e) return literalAt(b, i, "null");
  let j = i;
  while (j < b.length && isNumberByte(b[j]!)) j++;
  if (j === i) return invalid();
  return j;
}

/** An integer of at most 15 digits (exact), without a leading zero, else null. */
function smallInteger(b: Buffer, start: number, end: number): number | null {
  let k = start;
  const negative = b[k] === 0x2d;
  if (negative) k++;
  const digits = end - k;
  if (digits < 1 || digits > 15 || (b[k] === 0x30 && digits > 1)) return null;
  let n = 0;
  for (; k < end; k++) {
    const d = b[k]! - 0x30;
    if (d < 0 || d > 9) return null;
    n = n * 10 + d;
  }
  return negative ? -n : n;
}

/** A wanted member's value, as JSON.parse makes it. */
function valueAt(b: Utf8Buffer, start: number, end: number): unknown {
  const c = b[start]!;
  if (c === QUOTE) {
    let plain = true;
    let ascii = true;
    for (let k = start + 1; k < end - 1 && plain; k++) {
      const d = b[k]!;
      if (d < 0x20) return invalid();
      if (d === BACKSLASH) plain = false;
      else if (d >= 0x80) ascii = false;
    }
    if (plain) {
      if (!ascii || end - start > SHORT) return b.utf8Slice(start + 1, end - 1);
      // A native call costs more than building a short ASCII string here.
      let text = "";
      for (let k = start + 1; k < end - 1; k++) text += String.fromCharCode(b[k]!);
      return text;
    }
  } else if (c === 0x74) return true;
  else if (c === 0x66) return false;
  else if (c === 0x6e) return null;
  else if (c !== OPEN_OBJECT && c !== OPEN_ARRAY) {
    const n = smallInteger(b, start, end);
    if (n !== null) return n;
    const text = b.latin1Slice(start, end);
    if (!NUMBER.test(text)) return invalid();
    return Number(text);
  }
  try {
    return JSON.parse(b.utf8Slice(start, end));
  } catch {
    return invalid();
  }
}

/** Reads the wanted top-level fields of JSON objects. */
export class JsonFields {
  readonly #names: readonly string[];
  readonly #encoded: readonly Buffer[];

  constructor(names: readonly string[]) {
    this.#names = [...new Set(names)];
    this.#encoded = this.#names.map((n) => Buffer.from(n, "utf8"));
  }

  /** The wanted name these key bytes spell, or null. */
  #match(b: Utf8Buffer, start: number, end: number): string | null {
    if (hasBackslash(b, start, end)) {
      const key = JSON.parse(b.utf8Slice(start - 1, end + 1)) as string;
      return this.#names.includes(key) ? key : null;
    }
    const length = end - start;
    const encoded = this.#encoded;
    for (let n = 0; n < encoded.length; n++) {
      const name = encoded[n]!;
      if (name.length !== length) continue;
      let k = 0;
      while (k < length && name[k] === b[start + k]) k++;
      if (k === length) return this.#names[n]!;
    }
    return null;
  }

  /**
   * The object with only the wanted fields that the document has, or (not an object) the
   * whole value; throws JsonFieldError for what JSON.parse refuses (see the header).
   */
  read(bytes: Uint8Array): unknown {
    const b = (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)) as Utf8Buffer;
    let i = skipWs(b, 0);
    if (b[i] !== OPEN_OBJECT) {
      try {
        return JSON.parse(b.utf8Slice(0, b.length));
      } catch {
        return invalid();
      }
    }
    const out: Record<string, unknown> = {};
    i = skipWs(b, i + 1);
    if (b[i] === CLOSE_OBJECT) i++;
    else {
      for (;;) {
        if (b[i] !== QUOTE) return invalid();
        const keyEnd = stringEnd(b, i + 1);
        const name = this.#match(b, i + 1, keyEnd);
        i = skipWs(b, keyEnd + 1);
        if (b[i] !== COLON) return invalid();
        i = skipWs(b, i + 1);
        const start = i;
        i = skipValue(b, i);
        if (name !== null) {
          const value = valueAt(b, start, i);
          // defineProperty keeps a field named "__proto__" an ordinary field, as JSON.parse does.
          if (name === "__proto__") Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
          else out[name] = value;
        }
        i = skipWs(b, i);
        const sep = b[i];
        if (sep === COMMA) {
          i = skipWs(b, i + 1);
          continue;
        }
        if (sep === CLOSE_OBJECT) {
          i++;
          break;
        }
        return invalid();
      }
    }
    if (skipWs(b, i) !== b.length) return invalid();
    return out;
  }
}
