/**
 * The `data:1` lines of the query stream, written as UTF-8 bytes into one reused buffer, a batch
 * of records at a time: no string per line, no joined text to encode again.
 *
 *   data:1{"timestamp":..,"partition":..,"key":..,"offset":..,"topic":..,"value":"<value JSON text as a JSON string>"}
 *
 * A value that is plain JSON text is checked and escaped straight from the record's bytes
 * (addJson), as JSON.stringify would escape the decoded text; anything else comes as text (add).
 */

import { escapeJsonText } from "./decoders.ts";
import type { QueryRecord } from "./executor.ts";

type Utf8Buffer = Buffer & { utf8Write(text: string, offset: number): number };

const SUFFIX_BYTES = 4; // "}\n\n after the value
const TIMESTAMP = Buffer.from('data:1{"timestamp":');
const PARTITION = Buffer.from(',"partition":');
const KEY = Buffer.from(',"key":');
const NULL = Buffer.from("null");
const OFFSET = Buffer.from(',"offset":');

/** Copies the short `bytes` to `o`; the offset after them. */
function put(out: Uint8Array, o: number, bytes: Uint8Array): number {
  const n = bytes.length;
  for (let i = 0; i < n; i++) out[o + i] = bytes[i]!;
  return o + n;
}

const digits = new Uint8Array(24);

/** An integer as JSON writes it (what `${n}` gives for a safe integer); other numbers as text. */
function putInteger(out: Uint8Array, o: number, n: number): number {
  if (!Number.isSafeInteger(n)) return put(out, o, Buffer.from(String(n)));
  if (n < 0) {
    out[o++] = 0x2d;
    n = -n;
  }
  let d = 0;
  do {
    const q = Math.floor(n / 10);
    digits[d++] = 0x30 + (n - q * 10);
    n = q;
  } while (n > 0);
  while (d > 0) out[o++] = digits[--d]!;
  return o;
}

export class RecordLines {
  #buf: Utf8Buffer;
  #at = 0;
  #count = 0;

  /** `,"topic":<topic>,"value":"` */
  readonly #tail: Uint8Array;

  constructor(private readonly topicJson: string) {
    this.#buf = Buffer.allocUnsafe(64 * 1024) as Utf8Buffer;
    this.#tail = Buffer.from(`,"topic":${topicJson},"value":"`);
  }

  /** Lines written since the last take(). */
  get count(): number {
    return this.#count;
  }

  get byteLength(): number {
    return this.#at;
  }

  /**
   * The lines written so far, each followed by its blank line. The bytes live in the one buffer
   * this object writes into: they are valid until the next line is added, so the caller sends
   * (or copies) them first. Reusing the buffer spares the page faults of a fresh one per batch.
   */
  take(): Uint8Array {
    const lines = this.#buf.subarray(0, this.#at);
    this.#at = 0;
    this.#count = 0;
    return lines;
  }

  /** The lines of `records` (see take()). */
  build(records: readonly QueryRecord[]): Uint8Array {
    for (const r of records) this.add(r.timestamp, r.partition, r.key, r.offset, r.value);
    return this.take();
  }

  /** A record whose value is given as JSON text. */
  add(timestamp: number, partition: number, key: string | null, offset: number, valueJson: string): void {
    this.#write(`${this.#head(timestamp, partition, key, offset)}${JSON.stringify(valueJson)}}\n\n`);
    this.#count++;
  }

  /**
   * A record whose value is the JSON text in `bytes` (ASCII, as isJsonText() checks). False, and
   * nothing written, when the bytes are not such text: the caller decodes the record then.
   * The key is its text, or bytes that are that text and need no escaping (isPlainText()).
   */
  addJson(timestamp: number, partition: number, key: string | Uint8Array | null, offset: number, bytes: Uint8Array): boolean {
    const start = this.#at;
    // The head, then at most twice the value's bytes, and the end.
    this.#ensure(this.#tail.length + 96 + (key === null ? 0 : key.length * 6) + bytes.byteLength * 2 + SUFFIX_BYTES);
    const out = this.#buf;
    let o = put(out, start, TIMESTAMP);
    o = putInteger(out, o, timestamp);
    o = put(out, o, PARTITION);
    o = putInteger(out, o, partition);
    o = put(out, o, KEY);
    if (key === null) o = put(out, o, NULL);
    else if (typeof key === "string") o = this.#putKey(out, o, key);
    else {
      out[o] = 0x22;
      o = put(out, o + 1, key);
      out[o++] = 0x22;
    }
    o = put(out, o, OFFSET);
    o = putInteger(out, o, offset);
    o = put(out, o, this.#tail);
    const end = escapeJsonText(bytes, out, o);
    if (end < 0) {
      this.#at = start;
      return false;
    }
    out[end] = 0x22;
    out[end + 1] = 0x7d;
    out[end + 2] = 0x0a;
    out[end + 3] = 0x0a;
    this.#at = end + SUFFIX_BYTES;
    this.#count++;
    return true;
  }

  /** The key as a JSON string: plain ASCII directly, anything else through JSON.stringify. */
  #putKey(out: Utf8Buffer, o: number, key: string): number {
    const n = key.length;
    out[o] = 0x22;
    for (let i = 0; i < n; i++) {
      const c = key.charCodeAt(i);
      if (c < 0x20 || c >= 0x7f || c === 0x22 || c === 0x5c) return o + out.utf8Write(JSON.stringify(key), o);
      out[o + 1 + i] = c;
    }
    out[o + 1 + n] = 0x22;
    return o + n + 2;
  }

  #head(timestamp: number, partition: number, key: string | null, offset: number): string {
    return `data:1{"timestamp":${timestamp},"partition":${partition},"key":${key === null ? "null" : JSON.stringify(key)},"offset":${offset},"topic":${this.topicJson},"value":`;
  }

  #ensure(more: number): void {
    if (this.#at + more <= this.#buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.#buf.length * 2, this.#at + more)) as Utf8Buffer;
    this.#buf.copy(grown, 0, 0, this.#at);
    this.#buf = grown;
  }

  #write(text: string): void {
    this.#ensure(text.length * 3);
    this.#at += this.#buf.utf8Write(text, this.#at);
  }
}
