/**
 * The records of an answer as UTF-8 JSON objects, written into one reused buffer a batch at a
 * time: no string per record, no joined text to encode again. Each record is
 *
 *   <before>{"timestamp":..,"partition":..,"key":..,"offset":..,"topic":..,"value":"<value JSON text as a JSON string>"}<after>
 *
 * where the framing (`before`, `after`) belongs to the answer form: the event stream's `data:1`
 * line and its blank line, or an element of the JSON answer's array and its comma. Asked for
 * (`withHeaders`), a record also carries its Kafka headers, in their order, after its value:
 *
 *   ...,"value":"...","headers":[{"key":"trace","value":"abc"},{"key":"raw","value":"AAE=","encoding":"base64"}]}
 *
 * a header value as its text when it is UTF-8, else as base64 (said by `encoding`), null when it
 * has none. Only on request: the older clients' decoders never see the field.
 *
 * A value that is plain JSON text is checked and escaped straight from the record's bytes
 * (addJson), as JSON.stringify would escape the decoded text; anything else comes as text (add).
 */

import type { RecordHeader } from "../kafka/types.ts";
import { escapeJsonText } from "./decoders.ts";
import type { QueryRecord, RecordSink } from "./executor.ts";

type Utf8Buffer = Buffer & { utf8Write(text: string, offset: number): number };

/** What surrounds each record of an answer form. */
export interface RecordFraming {
  before: string;
  after: string;
}

/** Value text from this many characters on is escaped from its bytes (see add()). */
const ESCAPE_BYTES_FROM = 4096;
const PARTITION = Buffer.from(',"partition":');
const KEY = Buffer.from(',"key":');
const NULL = Buffer.from("null");
const OFFSET = Buffer.from(',"offset":');
const QUOTE = Buffer.from('"');
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** `,"headers":[...]`: each header's value as text when it is UTF-8, else as base64. */
export function headersJson(headers: readonly RecordHeader[] | undefined): string {
  if (!headers || headers.length === 0) return ',"headers":[]';
  const items = headers.map((h) => {
    if (h.value === null) return `{"key":${JSON.stringify(h.key)},"value":null}`;
    let text: string;
    try {
      text = strictUtf8.decode(h.value);
    } catch {
      return `{"key":${JSON.stringify(h.key)},"value":"${Buffer.from(h.value.buffer, h.value.byteOffset, h.value.byteLength).toString("base64")}","encoding":"base64"}`;
    }
    return `{"key":${JSON.stringify(h.key)},"value":${JSON.stringify(text)}}`;
  });
  return `,"headers":[${items.join(",")}]`;
}

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

export class RecordText implements RecordSink {
  #buf: Utf8Buffer;
  /** Long value text as UTF-8, before it is escaped into #buf. */
  #scratch = Buffer.allocUnsafe(0) as Utf8Buffer;
  #at = 0;
  #count = 0;
  /** Where the record added last starts, for dropLast(); -1 when there is none to drop. */
  #last = -1;

  /** `<before>{"timestamp":` */
  readonly #head: Uint8Array;
  /** `,"topic":<topic>,"value":"` */
  readonly #tail: Uint8Array;
  /** `"}<after>`: the end of a record written from bytes. */
  readonly #end: Uint8Array;
  /** `}<after>`: the end of a record written from bytes, after its headers. */
  readonly #close: Uint8Array;
  readonly #headText: string;
  readonly #afterText: string;

  constructor(
    private readonly topicJson: string,
    framing: RecordFraming,
    /** Each record carries its headers (see above). */
    private readonly withHeaders = false,
  ) {
    this.#buf = Buffer.allocUnsafe(64 * 1024) as Utf8Buffer;
    this.#headText = `${framing.before}{"timestamp":`;
    this.#afterText = framing.after;
    this.#head = Buffer.from(this.#headText);
    this.#tail = Buffer.from(`,"topic":${topicJson},"value":"`);
    this.#end = Buffer.from(`"}${framing.after}`);
    this.#close = Buffer.from(`}${framing.after}`);
  }

  /** Records written since the last take(). */
  get count(): number {
    return this.#count;
  }

  get byteLength(): number {
    return this.#at;
  }

  /**
   * The records written so far, each with its framing. The bytes live in the one buffer this
   * object writes into: they are valid until the next record is added, so the caller sends (or
   * copies) them first. Reusing the buffer spares the page faults of a fresh one per batch.
   */
  take(): Uint8Array {
    // A plain Uint8Array, not a Buffer: its slice() copies (a Buffer's is a view of the same bytes).
    const records = new Uint8Array(this.#buf.buffer, this.#buf.byteOffset, this.#at);
    this.#at = 0;
    this.#count = 0;
    this.#last = -1;
    return records;
  }

  /** The records of `records` (see take()). */
  build(records: readonly QueryRecord[]): Uint8Array {
    for (const r of records) this.add(r.timestamp, r.partition, r.key, r.offset, r.value);
    return this.take();
  }

  /** Takes back the record added last: it went past a cap of the answer. */
  dropLast(): void {
    if (this.#last < 0) return;
    this.#at = this.#last;
    this.#last = -1;
    this.#count--;
  }

  /**
   * A record whose value is given as JSON text. Long ASCII text is escaped from its bytes (as
   * addJson does): JSON.stringify of a long string costs several times more.
   */
  add(
    timestamp: number,
    partition: number,
    key: string | null,
    offset: number,
    valueJson: string,
    headers?: readonly RecordHeader[],
  ): void {
    if (valueJson.length >= ESCAPE_BYTES_FROM) {
      const n = valueJson.length;
      if (this.#scratch.length < n + 16) this.#scratch = Buffer.allocUnsafe(n + 16) as Utf8Buffer;
      // Fewer bytes than characters room for: a text that is not ASCII is cut short, and goes the other way.
      // As many bytes as characters: every character is ASCII (a longer text would not fit, and
      // stop at least 13 bytes further). addJson checks the text as it escapes it.
      if (
        this.#scratch.utf8Write(valueJson, 0) === n &&
        this.addJson(timestamp, partition, key, offset, this.#scratch.subarray(0, n), headers)
      )
        return;
    }
    const start = this.#at;
    this.#write(
      `${this.#headText}${timestamp},"partition":${partition},"key":${key === null ? "null" : JSON.stringify(key)},"offset":${offset},"topic":${this.topicJson},"value":${JSON.stringify(valueJson)}${this.withHeaders ? headersJson(headers) : ""}}${this.#afterText}`,
    );
    this.#last = start;
    this.#count++;
  }

  /** `<before>{"timestamp":..,"partition":..,"key":..,"offset":..,"topic":..,"value":"` */
  #putHead(out: Utf8Buffer, start: number, timestamp: number, partition: number, key: string | Uint8Array | null, offset: number): number {
    let o = put(out, start, this.#head);
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
    return put(out, o, this.#tail);
  }

  /**
   * A record whose value is the JSON text in `bytes` (ASCII, as isJsonText() checks). False, and
   * nothing written, when the bytes are not such text: the caller decodes the record then.
   * The key is its text, or bytes that are that text and need no escaping (isPlainText()).
   */
  addJson(
    timestamp: number,
    partition: number,
    key: string | Uint8Array | null,
    offset: number,
    bytes: Uint8Array,
    headers?: readonly RecordHeader[],
  ): boolean {
    const start = this.#at;
    const headerText = this.withHeaders ? headersJson(headers) : "";
    // The head, then at most twice the value's bytes, the headers and the end.
    this.#ensure(
      this.#head.length +
        this.#tail.length +
        96 +
        (key === null ? 0 : key.length * 6) +
        bytes.byteLength * 2 +
        headerText.length * 3 +
        this.#end.length,
    );
    const out = this.#buf;
    const o = this.#putHead(out, start, timestamp, partition, key, offset);
    const end = escapeJsonText(bytes, out, o);
    if (end < 0) {
      this.#at = start;
      return false;
    }
    if (headerText === "") this.#at = put(out, end, this.#end);
    else {
      const h = put(out, end, QUOTE);
      this.#at = put(out, h + out.utf8Write(headerText, h), this.#close);
    }
    this.#last = start;
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

  #ensure(more: number): void {
    if (this.#at + more <= this.#buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.#buf.length * 2, this.#at + more)) as Utf8Buffer;
    this.#buf.copy(grown, 0, 0, this.#at);
    this.#buf = grown;
  }

  /**
   * Writes the text as UTF-8. Room for one byte per character (plus slack) is made first: most
   * answers are ASCII, and room for three bytes per character would triple the buffer a large
   * value needs. A write that may have been cut short (it filled the room to the last 3 bytes,
   * where a character may not fit) is done again with room for the worst case.
   */
  #write(text: string): void {
    this.#ensure(text.length + 16);
    const written = this.#buf.utf8Write(text, this.#at);
    if (this.#at + written <= this.#buf.length - 4) {
      this.#at += written;
      return;
    }
    this.#ensure(text.length * 3);
    this.#at += this.#buf.utf8Write(text, this.#at);
  }
}
