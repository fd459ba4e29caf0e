/**
 * The SQL data stream read as the older clients read it, and requests sent as they send them
 * (CLIENTS.md §5.4):
 *   - lenses-python reads it with sseclient-py 1.7: an event ends only at a blank line, its
 *     `data:` lines are joined with "\n", one space after `data:` is dropped, comment lines and
 *     events without data are skipped; then `json.loads` of everything after the type digit.
 *   - lenses-go reads lines ending in "\n": lines under 6 bytes are skipped, a line of 6 bytes or
 *     more that is not `data:` aborts, byte 5 is the type (0-4, anything else aborts).
 * Both decode strictly: the integer fields of records, end and statistics must be JSON integers
 * that fit an int64.
 */

import { expect } from "bun:test";
import { connect } from "node:net";

export interface Event {
  type: number;
  /** The JSON text after the type digit ("" for a heartbeat). */
  json: string;
}

/** Events as sseclient-py delivers them, each decoded on its own as lenses-python does. */
export function pythonEvents(text: string): Event[] {
  const events: Event[] = [];
  // sseclient-py splits the stream at blank lines (\r\n\r\n, \n\n, \r\r).
  for (const block of text.split(/\r\n\r\n|\n\n|\r\r/)) {
    const data: string[] = [];
    for (const line of block.split(/\r\n|\n|\r/)) {
      if (line === "" || line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "data") data.push(value);
    }
    if (data.length === 0) continue;
    const joined = data.join("\n");
    const type = Number(joined[0]);
    const json = joined.slice(1);
    // lenses-python: json.loads of a record, raw text of statistics; two lines in one event fail here.
    if (json !== "") JSON.parse(json);
    events.push({ type, json });
  }
  return events;
}

/** Lines as lenses-go reads them; throws where it would abort the query. */
export function goLines(text: string): Event[] {
  const out: Event[] = [];
  for (const line of text.split("\n")) {
    if (Buffer.byteLength(line) < 6) {
      if (line !== "" && line !== "data:0") throw new Error(`a short line the Go client skips silently: ${JSON.stringify(line)}`);
      if (line === "data:0") out.push({ type: 0, json: "" });
      continue;
    }
    if (!line.startsWith("data:")) throw new Error(`the Go client aborts on this line: ${JSON.stringify(line.slice(0, 80))}`);
    const type = line.charCodeAt(5) - 0x30;
    if (type < 0 || type > 4) throw new Error(`the Go client aborts on type ${line[5]}`);
    out.push({ type, json: line.slice(6) });
  }
  return out;
}

const INT64_MAX = 2n ** 63n - 1n;

/**
 * Each field must be written as a JSON integer within int64, as Go's json decoder into an int64
 * needs it (`1e3`, `1.0` and `9223372036854776000` all fail there). Answers the parsed object.
 */
export function strictIntegers(json: string, fields: readonly string[]): Record<string, unknown> {
  const body = JSON.parse(json) as Record<string, unknown>;
  for (const field of fields) {
    const match = new RegExp(`"${field}":(-?[0-9][0-9.eE+-]*)[,}]`).exec(json);
    expect(match, `${field} in ${json}`).not.toBeNull();
    const digits = match![1]!;
    expect(digits, `${field} is an integer`).toMatch(/^-?(0|[1-9][0-9]*)$/);
    expect(BigInt(digits) <= INT64_MAX && BigInt(digits) >= -INT64_MAX - 1n, `${field} fits an int64`).toBe(true);
  }
  return body;
}

export const RECORD_INTEGERS = ["timestamp", "partition", "offset"] as const;
export const END_INTEGERS = ["totalRecords", "skippedRecords", "recordsLimit", "totalSizeRead", "size"] as const;
export const STATS_INTEGERS = ["totalRecords", "recordsSkipped", "recordsLimit", "totalBytes", "maxSize", "currentSize"] as const;

export interface RawResponse {
  status: number;
  headers: Map<string, string>;
  body: string;
}

/**
 * A GET written byte for byte, so that repeated headers stay separate lines (the Go client sends
 * two Accept headers). Decodes a chunked or gzipped body.
 */
export function rawGet(url: string, headers: Array<[string, string]>): Promise<RawResponse> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: u.hostname, port: Number(u.port) });
    const chunks: Buffer[] = [];
    socket.on("error", reject);
    socket.on("data", (b: Buffer) => chunks.push(b));
    socket.on("end", () => {
      try {
        resolve(parseResponse(Buffer.concat(chunks)));
      } catch (err) {
        reject(err);
      }
    });
    socket.on("connect", () => {
      const lines = [
        `GET ${u.pathname}${u.search} HTTP/1.1`,
        `Host: ${u.host}`,
        ...headers.map(([k, v]) => `${k}: ${v}`),
        "Connection: close",
      ];
      socket.write(`${lines.join("\r\n")}\r\n\r\n`);
    });
  });
}

function parseResponse(bytes: Buffer): RawResponse {
  const split = bytes.indexOf("\r\n\r\n");
  const head = bytes.subarray(0, split).toString("latin1").split("\r\n");
  const status = Number(head[0]!.split(" ")[1]);
  const headers = new Map<string, string>();
  for (const line of head.slice(1)) {
    const colon = line.indexOf(":");
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  let body = bytes.subarray(split + 4);
  if (headers.get("transfer-encoding")?.toLowerCase() === "chunked") {
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const eol = body.indexOf("\r\n", at);
      const size = Number.parseInt(body.subarray(at, eol).toString("latin1"), 16);
      if (!(size > 0)) break;
      parts.push(body.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
    body = Buffer.concat(parts);
  }
  // The Go client decompresses only when Content-Encoding is exactly gzip.
  if (headers.get("content-encoding") === "gzip") body = Buffer.from(Bun.gunzipSync(new Uint8Array(body)));
  return { status, headers, body: body.toString("utf8") };
}
