/**
 * Masking of decoded records: what a viewer's masking policies (src/domains/masking) hide is
 * replaced in the key and the value as they are decoded, before the query language sees them.
 *
 * Why here: every answer that shows a record's contents to a user of the query engine (SQL JSON
 * and event stream, live subscriptions, JDBC) decodes it through the key and value decoders
 * SqlService.prepare picks. A masked query gets decoders wrapped by `RecordMask.decoder`, so the
 * WHERE, the projection, functions, `_value` and `_key` only ever read the masked record: no
 * expression can reach the clear value, whatever it renames or wraps. The wrapped decoders are
 * not JSON-text decoders (decodesJsonText), so the raw-bytes fast path of `SELECT *` is off too,
 * and a masked query runs without the raw-bytes prefilter.
 */

import { createHmac } from "node:crypto";
import type { RawRecord } from "../kafka/types.ts";
import type { Decoded, Decoder } from "./decoders.ts";
import type { RecordSource } from "./record-source.ts";

/** How a matched field is shown. */
export type MaskHow =
  | { kind: "REDACT"; replacement: string }
  /** HMAC-SHA-256 of the value's text under the install's salt, hex: equal values stay equal, none can be read back. */
  | { kind: "HASH"; salt: string }
  /** The last `n` characters kept, the others `*`; a value no longer than `n` is starred whole. */
  | { kind: "KEEP_LAST_N"; n: number }
  /** The field is left out. */
  | { kind: "REMOVE" };

/**
 * What a masked query shows for a value that decodes to text or bytes: it has no fields to mask,
 * and may be a structured payload read without its schema (Avro binary shown as text holds its
 * strings as they are), so it is hidden whole.
 */
export const MASKED_WHOLE = "****";

/** Which is applied when several rules match one field: the one that shows least. */
const STRENGTH: Record<MaskHow["kind"], number> = { REMOVE: 0, REDACT: 1, HASH: 2, KEEP_LAST_N: 3 };

/** One field pattern of a policy, compiled. */
export interface MaskRule {
  /** The pattern as the policy writes it (`ssn`, `card.number`, `*.token`). */
  pattern: string;
  /**
   * One test per segment of a dotted path from the value's root; a pattern of one segment
   * matches a field of that name at any depth. Array indices are not segments: a rule on
   * `items.card` masks `card` in every element of `items`.
   */
  segments: ReadonlyArray<(name: string) => boolean>;
  how: MaskHow;
}

/** Text of a value for HASH and KEEP_LAST_N: a string as it is, anything else as JSON. */
function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  return JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? v.toString() : v)) ?? "null";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array) && !(value instanceof Date);
}

/** A pattern that masks the whole key, whatever it decodes to (a plain-text key has no fields). */
export const WHOLE_KEY = "_key";
/** The start of a pattern over record headers: `_headers.<name glob>` masks the values of those headers. */
export const HEADERS = "_headers";

export class RecordMask {
  /** The rules over fields of the key and the value, the one showing least first. */
  readonly rules: readonly MaskRule[];
  readonly #all: readonly MaskRule[];
  readonly #wholeKey: MaskRule | null;
  readonly #headers: readonly MaskRule[];

  constructor(rules: readonly MaskRule[]) {
    this.#all = [...rules].sort((a, b) => STRENGTH[a.how.kind] - STRENGTH[b.how.kind]);
    this.#wholeKey = this.#all.find((r) => r.pattern === WHOLE_KEY) ?? null;
    this.#headers = this.#all.filter((r) => r.pattern.startsWith(`${HEADERS}.`));
    this.rules = this.#all.filter((r) => r !== this.#wholeKey && r.pattern !== WHOLE_KEY && !this.#headers.includes(r));
  }

  /** The patterns applied, for the answer to name (the workbench marks those columns). */
  get patterns(): string[] {
    return [...new Set(this.#all.map((r) => r.pattern))];
  }

  /** Whether some headers' values are masked. */
  get masksHeaders(): boolean {
    return this.#headers.length > 0;
  }

  /**
   * The headers with the values of those a `_headers.<glob>` pattern names masked (REMOVE
   * leaves the header out); the same array when none is.
   */
  maskHeaders<H extends { key: string; value: Uint8Array | null }>(headers: readonly H[]): readonly H[] {
    if (this.#headers.length === 0 || headers.length === 0) return headers;
    let out: H[] | null = null;
    for (let i = 0; i < headers.length; i++) {
      const h = headers[i]!;
      const names = h.key.split(".");
      const rule = this.#headers.find((r) => r.segments.length === names.length + 1 && names.every((n, j) => r.segments[j + 1]!(n)));
      if (!rule) {
        out?.push(h);
        continue;
      }
      out ??= headers.slice(0, i);
      if (rule.how.kind === "REMOVE" || h.value === null) {
        if (rule.how.kind !== "REMOVE") out.push(h);
        continue;
      }
      const shown = masked(new TextDecoder().decode(h.value), rule.how);
      out.push({ ...h, value: new TextEncoder().encode(String(shown)) });
    }
    return out ?? headers;
  }

  /** `inner` with every record's headers masked (maskHeaders); `inner` itself when no header is. */
  source(inner: RecordSource): RecordSource {
    if (this.#headers.length === 0) return inner;
    const mask = (r: RawRecord): RawRecord => {
      const headers = this.maskHeaders(r.headers);
      return headers === r.headers ? r : { ...r, headers: [...headers] };
    };
    return {
      name: inner.name,
      get lastRoundTripMs() {
        return inner.lastRoundTripMs;
      },
      offsets: (topic, signal) => inner.offsets(topic, signal),
      async *read(req, observer) {
        for await (const batch of inner.read(req, observer)) yield batch.map(mask);
      },
    };
  }

  /** The rule that masks the field at `path` (field names from the root), or null. */
  ruleAt(path: readonly string[]): MaskRule | null {
    const n = path.length;
    if (n === 0) return null;
    for (const r of this.rules) {
      const s = r.segments;
      if (s.length === 1) {
        if (s[0]!(path[n - 1]!)) return r;
      } else if (s.length === n && s.every((test, i) => test(path[i]!))) return r;
    }
    return null;
  }

  /**
   * The pattern a filter on the field at `path` would test through: the field, one of its
   * parents, or (for a path of several segments) a field inside it is masked. Null for the
   * whole key or value (`_key`, `_value`), which a filter reads masked like any projection.
   */
  named(path: readonly string[]): string | null {
    for (let i = 1; i <= path.length; i++) {
      const r = this.ruleAt(path.slice(0, i));
      if (r) return r.pattern;
    }
    if (path.length === 0) return null;
    for (const r of this.rules) {
      const s = r.segments;
      if (s.length > path.length && path.every((name, i) => s[i]!(name))) return r.pattern;
    }
    return null;
  }

  /** The value with every masked field replaced or left out; what is not masked is shared, not copied. */
  apply(value: unknown): unknown {
    return this.#walk(value, []);
  }

  #walk(value: unknown, path: string[]): unknown {
    if (Array.isArray(value)) {
      let out: unknown[] | null = null;
      for (let i = 0; i < value.length; i++) {
        const v = this.#walk(value[i], path);
        if (v !== value[i]) (out ??= value.slice())[i] = v;
      }
      return out ?? value;
    }
    if (!isRecord(value)) return value;
    const out: Record<string, unknown> = {};
    let changed = false;
    for (const key of Object.keys(value)) {
      path.push(key);
      const v = value[key];
      const rule = this.ruleAt(path);
      if (rule === null) {
        const w = this.#walk(v, path);
        if (w !== v) changed = true;
        out[key] = w;
      } else {
        changed = true;
        if (rule.how.kind !== "REMOVE") out[key] = masked(v, rule.how);
      }
      path.pop();
    }
    return changed ? out : value;
  }

  /**
   * `inner`'s answer, masked: the value only (its JSON text and typed text would be the clear
   * ones). A value (not a key: keys are mostly plain text) that decodes to text or bytes is
   * hidden whole (MASKED_WHOLE). A key under a `_key` pattern is masked whole by its method,
   * whatever it decodes to.
   */
  decoder(inner: Decoder, side: "key" | "value"): Decoder {
    const whole = side === "value";
    const wholeKey = side === "key" ? this.#wholeKey : null;
    const mask = (d: Decoded): Decoded => {
      const v = d.value;
      let value: unknown;
      if (wholeKey !== null) value = v === null || wholeKey.how.kind === "REMOVE" ? null : masked(v, wholeKey.how);
      else value = whole && (typeof v === "string" || v instanceof Uint8Array) ? MASKED_WHOLE : this.apply(v);
      return { value, ...(d.format ? { format: d.format } : {}) };
    };
    return (bytes) => {
      const d = inner(bytes);
      return d instanceof Promise ? d.then(mask) : mask(d);
    };
  }
}

function masked(value: unknown, how: MaskHow): unknown {
  switch (how.kind) {
    case "REDACT":
      return how.replacement;
    case "HASH":
      return createHmac("sha256", how.salt).update(textOf(value)).digest("hex");
    case "KEEP_LAST_N": {
      const text = textOf(value);
      const chars = [...text];
      if (chars.length <= how.n) return "*".repeat(chars.length);
      return "*".repeat(chars.length - how.n) + chars.slice(chars.length - how.n).join("");
    }
    case "REMOVE":
      return undefined;
  }
}
