/**
 * A cheap test on the raw bytes of a JSON value that rules records out before they are decoded.
 *
 * Parsing JSON costs more than reading the record from Kafka. For a WHERE that holds, at its top
 * level (joined by AND), a condition on one top-level field of the value (`sel = 7`,
 * `status IN ('a', 'b')`, `amount > 100`, `name LIKE 'x%'`), the field's raw token can be found
 * with a byte search for `"sel"` followed by `:`, and the condition evaluated on it alone, by the
 * language's own evaluator. A record none of whose tokens makes the condition true cannot match
 * the whole WHERE and is passed over without parsing.
 *
 * Never wrong, only sometimes useless: every doubt answers "maybe" and the record is decoded and
 * tested in full. Doubts are a value that is not a JSON object, any backslash in the record (an
 * escaped key could hide the field), and a token that is an object or array. A field found in a
 * nested object also answers "maybe". Records passed over this way are not decoded, so they
 * cannot be counted as decode failures.
 */

import { conjuncts } from "../sql/analyzer.ts";
import type { ExpressionNode } from "../sql/ast.ts";
import { walkExpression } from "../sql/ast.ts";
import { compileExpression } from "../sql/evaluator.ts";
import { FUNCTIONS } from "../sql/functions.ts";
import type { RecordView } from "../sql/index.ts";

/** Answers false only when the record surely does not match; true means "decode and test". */
export type Prefilter = (value: Uint8Array) => boolean;

const QUOTE = 0x22;
const COLON = 0x3a;
const BACKSLASH = 0x5c;
const BRACE = 0x7b;
const isSpace = (b: number) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;
const utf8 = new TextDecoder();

/** The single top-level value field a condition reads, or null when it reads anything else. */
function soleField(node: ExpressionNode): string | null {
  let field: string | null = null;
  let ok = true;
  walkExpression(node, (n) => {
    if (!ok) return;
    if (n.kind === "FieldPath") {
      const first = n.segments[0];
      if (n.source !== "value" || first?.kind !== "Field" || (field !== null && field !== first.name)) ok = false;
      else field = first.name;
    } else if (n.kind === "MetaField" || n.kind === "DecoderType") ok = false;
    else if (n.kind === "Call" && !FUNCTIONS[n.name]?.pure) ok = false;
  });
  return ok ? field : null;
}

/** A prefilter for the analyzed WHERE, or null when no condition lends itself to one. */
export function buildPrefilter(where: ExpressionNode | null, now: number): Prefilter | null {
  if (where === null) return null;
  const tests: Array<{ bytes: Buffer; field: string; equals?: number | string; evaluate: (r: RecordView) => unknown }> = [];
  for (const part of conjuncts(where)) {
    const field = soleField(part);
    if (field === null || field === "__proto__") continue;
    const quoted = JSON.stringify(field);
    if (quoted.includes("\\")) continue;
    const evaluate = compileExpression(part, { now });
    // A condition true without the field (`x IS NULL`) cannot rule out a record lacking it.
    const absent: RecordView = {
      key: null,
      value: {},
      partition: 0,
      offset: 0,
      timestamp: 0,
      keySize: 0,
      valueSize: 0,
      lastOffset: () => 0,
    };
    if (evaluate(absent) === true) continue;
    // `field = 7` / `field = 'x'`: a token of the literal's type is compared directly (same answer
    // as the evaluator: numbers by value, strings exactly); other tokens go through the evaluator.
    let equals: number | string | undefined;
    if (part.kind === "Binary" && part.operator === "=") {
      const [f, lit] = part.left.kind === "FieldPath" ? [part.left, part.right] : [part.right, part.left];
      if (f.kind === "FieldPath" && f.segments.length === 1 && (lit.kind === "NumberLiteral" || lit.kind === "StringLiteral"))
        equals = lit.value;
    }
    tests.push({ bytes: Buffer.from(quoted), field, evaluate, ...(equals !== undefined ? { equals } : {}) });
  }
  if (tests.length === 0) return null;

  const view: RecordView = { key: null, value: null, partition: 0, offset: 0, timestamp: 0, keySize: 0, valueSize: 0, lastOffset: () => 0 };
  const holder: Record<string, unknown> = {};

  /**
   * The scalar JSON token at `i` of the bytes, or MAYBE. Small integers are read in place;
   * other numbers go through Number(), which reads every JSON number as JSON.parse does.
   */
  const byteToken = (buf: Buffer, i: number): unknown => {
    const c = buf[i];
    if (c === QUOTE) {
      const end = buf.indexOf(QUOTE, i + 1);
      return end < 0 ? MAYBE : utf8.decode(buf.subarray(i + 1, end));
    }
    if (c === 0x74) return buf[i + 1] === 0x72 && buf[i + 2] === 0x75 && buf[i + 3] === 0x65 ? true : MAYBE;
    if (c === 0x66) return buf[i + 1] === 0x61 && buf[i + 2] === 0x6c && buf[i + 3] === 0x73 && buf[i + 4] === 0x65 ? false : MAYBE;
    if (c === 0x6e) return buf[i + 1] === 0x75 && buf[i + 2] === 0x6c && buf[i + 3] === 0x6c ? null : MAYBE;
    if (c === undefined || (c !== 0x2d && (c < 0x30 || c > 0x39))) return MAYBE;
    let digitsEnd = i + (c === 0x2d ? 1 : 0);
    let int = 0;
    for (; digitsEnd < buf.length && digitsEnd - i < 15; digitsEnd++) {
      const d = buf[digitsEnd]!;
      if (d < 0x30 || d > 0x39) break;
      int = int * 10 + (d - 0x30);
    }
    const next = buf[digitsEnd];
    if (
      digitsEnd > i + (c === 0x2d ? 1 : 0) &&
      (next === 0x2c || next === 0x7d || next === 0x5d || (next !== undefined && isSpace(next))) &&
      !(buf[i + (c === 0x2d ? 1 : 0)] === 0x30 && digitsEnd > i + (c === 0x2d ? 2 : 1))
    ) {
      return c === 0x2d ? -int : int;
    }
    let end = i + 1;
    for (; end < buf.length; end++) {
      const d = buf[end]!;
      if (d === 0x2c || d === 0x7d || d === 0x5d || isSpace(d)) break;
    }
    const n = Number(utf8.decode(buf.subarray(i, end)));
    return Number.isNaN(n) ? MAYBE : n;
  };

  /** True when `v` makes the test's condition true. */
  const satisfies = (t: (typeof tests)[number], v: unknown): boolean => {
    if (t.equals !== undefined && typeof v === typeof t.equals) return v === t.equals;
    holder[t.field] = v;
    view.value = holder;
    return t.evaluate(view) === true;
  };

  const checkBytes = (buf: Buffer): boolean => {
    let start = 0;
    while (start < buf.length && isSpace(buf[start]!)) start++;
    if (buf[start] !== BRACE || buf.indexOf(BACKSLASH) >= 0) return true;
    for (const t of tests) {
      let possible = false;
      for (let at = buf.indexOf(t.bytes, start); at >= 0; at = buf.indexOf(t.bytes, at + 1)) {
        let i = at + t.bytes.length;
        while (i < buf.length && isSpace(buf[i]!)) i++;
        if (buf[i] !== COLON) continue;
        i++;
        while (i < buf.length && isSpace(buf[i]!)) i++;
        const v = byteToken(buf, i);
        if (v === MAYBE) return true;
        if (satisfies(t, v)) {
          possible = true;
          break;
        }
      }
      if (!possible) return false;
    }
    return true;
  };

  return (value) => {
    const buf = Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    return checkBytes(buf);
  };
}

const MAYBE = Symbol("maybe");
