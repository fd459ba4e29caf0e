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

import type { ExpressionNode } from "../../sql/ast.ts";
import { conjuncts } from "../../sql/analyzer.ts";
import { compileExpression } from "../../sql/evaluator.ts";
import { FUNCTIONS } from "../../sql/functions.ts";
import type { RecordView } from "../../sql/index.ts";
import { walkExpression } from "../../sql/ast.ts";

/** Answers false only when the record surely does not match; true means "decode and test". */
export type Prefilter = (value: Uint8Array) => boolean;

const QUOTE = 0x22;
const COLON = 0x3a;
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
  const tests: Array<{ needle: string; field: string; evaluate: (r: RecordView) => unknown }> = [];
  for (const part of conjuncts(where)) {
    const field = soleField(part);
    if (field === null || field === "__proto__") continue;
    const quoted = JSON.stringify(field);
    if (quoted.includes("\\")) continue;
    const evaluate = compileExpression(part, { now });
    // A condition true without the field (`x IS NULL`) cannot rule out a record lacking it.
    const absent: RecordView = { key: null, value: {}, partition: 0, offset: 0, timestamp: 0, keySize: 0, valueSize: 0, lastOffset: () => 0 };
    if (evaluate(absent) === true) continue;
    tests.push({ needle: quoted, field, evaluate });
  }
  if (tests.length === 0) return null;

  const view: RecordView = { key: null, value: null, partition: 0, offset: 0, timestamp: 0, keySize: 0, valueSize: 0, lastOffset: () => 0 };
  const holder: Record<string, unknown> = {};

  /**
   * The scalar JSON token at `i` of `text` (the bytes as latin1: one char per byte, so ASCII
   * searches and byte offsets agree), or MAYBE. Numbers go through Number(), which reads every
   * JSON number as JSON.parse does.
   */
  const token = (text: string, buf: Buffer, i: number): unknown => {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = text.indexOf('"', i + 1);
      return end < 0 ? MAYBE : utf8.decode(buf.subarray(i + 1, end));
    }
    if (c === 0x74) return text.startsWith("true", i) ? true : MAYBE;
    if (c === 0x66) return text.startsWith("false", i) ? false : MAYBE;
    if (c === 0x6e) return text.startsWith("null", i) ? null : MAYBE;
    if (c !== 0x2d && (c < 0x30 || c > 0x39)) return MAYBE;
    let end = i + 1;
    for (; end < text.length; end++) {
      const d = text.charCodeAt(end);
      if (d === 0x2c || d === 0x7d || d === 0x5d || isSpace(d)) break;
    }
    const n = Number(text.slice(i, end));
    return Number.isNaN(n) ? MAYBE : n;
  };

  return (value) => {
    const buf = Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    const text = (buf as Buffer & { latin1Slice(start: number, end: number): string }).latin1Slice(0, buf.length);
    let start = 0;
    while (start < text.length && isSpace(text.charCodeAt(start))) start++;
    if (text.charCodeAt(start) !== BRACE || text.includes("\\")) return true;
    for (const t of tests) {
      let possible = false;
      for (let at = text.indexOf(t.needle, start); at >= 0; at = text.indexOf(t.needle, at + 1)) {
        let i = at + t.needle.length;
        while (i < text.length && isSpace(text.charCodeAt(i))) i++;
        if (text.charCodeAt(i) !== COLON) continue; // a string value that spells the name
        i++;
        while (i < text.length && isSpace(text.charCodeAt(i))) i++;
        const v = token(text, buf, i);
        if (v === MAYBE) return true;
        holder[t.field] = v;
        view.value = holder;
        if (t.evaluate(view) === true) {
          possible = true;
          break;
        }
      }
      // Absent, or present with no value that satisfies this conjunct: the AND cannot be true.
      if (!possible) return false;
    }
    return true;
  };
}

const MAYBE = Symbol("maybe");
