/**
 * Decoding answers as strictly as the real clients do (CLIENTS.md): the Go client fails on any
 * JSON type mismatch (an int64 field given `1.5`, a string field given an object), the JDBC
 * driver (Kotlin) requires its non-null strings, and the Python client wants exact status codes.
 * Each decoder checks the raw parsed JSON and names the path of the first mismatch.
 */

import { expect } from "bun:test";

export type Decoder<T> = (value: unknown, path: string) => T;

class Mismatch extends Error {}

const fail = (path: string, want: string, got: unknown): never => {
  throw new Mismatch(`${path}: expected ${want}, got ${JSON.stringify(got) ?? String(got)}`);
};

/**
 * A JSON integer a Go int64 (or a Kotlin Int/Long) decodes: no fraction, and within 2^53-1, so
 * that JSON.stringify wrote its exact digits (past it, 2^63-1 is written 9223372036854776000,
 * which overflows int64).
 */
export const int: Decoder<number> = (v, path) => (typeof v === "number" && Number.isSafeInteger(v) ? v : fail(path, "an integer", v));
export const str: Decoder<string> = (v, path) => (typeof v === "string" ? v : fail(path, "a string", v));
export const bool: Decoder<boolean> = (v, path) => (typeof v === "boolean" ? v : fail(path, "a boolean", v));

export const oneOf =
  <const T extends string>(...values: T[]): Decoder<T> =>
  (v, path) =>
    values.includes(v as T) ? (v as T) : fail(path, `one of ${values.join(", ")}`, v);

/** Null is allowed (the Go client leaves the zero value); absence is not. */
export const nullable =
  <T>(d: Decoder<T>): Decoder<T | null> =>
  (v, path) =>
    v === null ? null : v === undefined ? fail(path, "a value or null", v) : d(v, path);

/** Absence is allowed (an omitted field); when present, the value must decode. */
export const optional =
  <T>(d: Decoder<T>): Decoder<T | undefined> =>
  (v, path) =>
    v === undefined ? undefined : d(v, path);

export const array =
  <T>(d: Decoder<T>): Decoder<T[]> =>
  (v, path) =>
    Array.isArray(v) ? v.map((x, i) => d(x, `${path}[${i}]`)) : fail(path, "an array", v);

/** A map whose every value decodes with `d` (a Go `map[string]string`). */
export const record =
  <T>(d: Decoder<T>): Decoder<Record<string, T>> =>
  (v, path) => {
    if (!v || typeof v !== "object" || Array.isArray(v)) return fail(path, "an object", v);
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, d(x, `${path}.${k}`)]));
  };

type Fields = Record<string, Decoder<unknown>>;
type Decoded<F extends Fields> = { [K in keyof F]: ReturnType<F[K]> };

/** An object with these fields (each decoder says whether it may be absent); extra fields are ignored, as every client does. */
export const object =
  <F extends Fields>(fields: F): Decoder<Decoded<F>> =>
  (v, path) => {
    if (!v || typeof v !== "object" || Array.isArray(v)) return fail(path, "an object", v);
    const o = v as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const [k, d] of Object.entries(fields)) out[k] = d(o[k], `${path}.${k}`);
    return out as Decoded<F>;
  };

/** Decodes `value` or fails the test with the path of the first mismatch. */
export function decode<T>(d: Decoder<T>, value: unknown, what = "answer"): T {
  try {
    return d(value, what);
  } catch (e) {
    if (e instanceof Mismatch) throw new Error(`strict decoding failed at ${e.message}`);
    throw e;
  }
}

/** The exact status, a JSON content type, and the body decoded from its raw text. */
export async function jsonAnswer<T>(res: Response, status: number, d: Decoder<T>): Promise<T> {
  const text = await res.text();
  // The body goes into the comparison so that a wrong status shows what was answered.
  expect({ status: res.status, body: text.slice(0, 300) }).toMatchObject({ status });
  expect(res.headers.get("content-type") ?? "").toContain("json");
  return decode(d, JSON.parse(text));
}

/** The exact status and a text/plain body, returned whole (what the Python client's `response.text` sees). */
export async function textAnswer(res: Response, status: number): Promise<string> {
  const text = await res.text();
  expect({ status: res.status, body: text.slice(0, 300) }).toMatchObject({ status });
  expect(res.headers.get("content-type") ?? "").toContain("text/plain");
  return text;
}

/** The COMPAT error body the clients read: `error_code` and `message` at the top level, with the exact status. */
export const errorBody = object({ error_code: int, message: str, code: str });

export async function errorAnswer(res: Response, status: number): Promise<{ error_code: number; message: string; code: string }> {
  const body = await jsonAnswer(res, status, errorBody);
  expect(body.error_code).toBe(status);
  return body;
}

/**
 * A struct of the Go client: it requires no field (absent or null leaves the zero value) but
 * fails on a value of the wrong JSON type.
 */
export const goStruct = <F extends Fields>(fields: F) =>
  object(Object.fromEntries(Object.entries(fields).map(([k, d]) => [k, optional(nullable(d))])) as F);

/** GO c `ConsumersGroup`: `consumers` holds member id STRINGS (member objects fail the whole topic list). */
export const goConsumerGroup = goStruct({
  id: str,
  coordinator: goStruct({ id: int, host: str, port: int, rack: str }),
  active: bool,
  state: oneOf("Unknown", "Stable", "Rebalancing", "Dead", "NoActiveMembers", "ExistsNot", "CoordinatorNotFound"),
  consumers: array(str),
  consumersCount: int,
  topicPartitionsCount: int,
  minLag: int,
  maxLag: int,
});

/** GO c `Topic`; config entries are its `KV` maps. */
export const goTopic = goStruct({
  topicName: str,
  keyType: str,
  valueType: str,
  partitions: int,
  replication: int,
  isControlTopic: bool,
  keySchema: str,
  valueSchema: str,
  messagesPerSecond: int,
  totalMessages: int,
  timestamp: int,
  config: array(record(nullable(str))),
  consumers: array(goConsumerGroup),
  messagesPerPartition: array(goStruct({ partition: int, messages: int, begin: int, end: int })),
  isMarkedForDeletion: bool,
});

/** What Loupe's topic list holds, all present and non-null (the Python client indexes topicName). */
export const topicListItem = object({
  topicName: str,
  keyType: str,
  valueType: str,
  partitions: int,
  replication: int,
  isControlTopic: bool,
  isMarkedForDeletion: bool,
  messagesPerSecond: int,
  totalMessages: int,
});

/** The JDBC driver's Topic: Kotlin non-null fields, so nothing may be null or absent. */
export const jdbcTopic = object({
  topicName: str,
  keyType: str,
  valueType: str,
  messagesPerSecond: int,
  timestamp: int,
  totalMessages: int,
  replication: int,
  isMarkedForDeletion: bool,
  isControlTopic: bool,
});

// ---------------------------------------------------------------------------------------------
// Requests exactly as the clients send them. fetch() adds headers of its own (`Accept: */*`, its
// own Accept-Encoding) and encodes the request target; the clients send neither and the Go
// client writes schema text unencoded into the query. So requests go over a plain socket with
// exactly the given request line and headers.

export interface RawAnswer {
  status: number;
  headers: Headers;
  /** The body as received (still compressed when Content-Encoding says so). */
  bytes: Uint8Array;
  /** The body as text, after undoing a `gzip` Content-Encoding. */
  text: string;
}

const HEAD_END = new TextEncoder().encode("\r\n\r\n");

function indexOf(bytes: Uint8Array, needle: Uint8Array, from = 0): number {
  outer: for (let i = from; i <= bytes.length - needle.length; i++) {
    for (let j = 0; j < needle.length; j++) if (bytes[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

function dechunk(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const out: number[] = [];
  let at = 0;
  const crlf = new TextEncoder().encode("\r\n");
  for (;;) {
    const end = indexOf(bytes, crlf, at);
    const size = Number.parseInt(new TextDecoder().decode(bytes.subarray(at, end)), 16);
    if (!size) return Uint8Array.from(out);
    out.push(...bytes.subarray(end + 2, end + 2 + size));
    at = end + 2 + size + 2;
  }
}

/**
 * Sends one request on a new connection, with exactly these headers (plus Host, the body's
 * Content-Length, and `Connection: close` so that the answer ends with the connection).
 */
export async function send(
  base: string | URL,
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<RawAnswer> {
  const url = new URL(base);
  const payload = body === undefined ? new Uint8Array() : new TextEncoder().encode(body);
  const lines = [`${method} ${target} HTTP/1.1`, `Host: ${url.host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  if (body !== undefined || method === "POST" || method === "PUT") lines.push(`Content-Length: ${payload.byteLength}`);
  lines.push("Connection: close", "", "");
  const request = new Uint8Array([...new TextEncoder().encode(lines.join("\r\n")), ...payload]);
  const chunks: Uint8Array[] = [];
  await new Promise<void>((resolve, reject) => {
    void Bun.connect({
      hostname: url.hostname,
      port: Number(url.port),
      socket: {
        open: (s) => void s.write(request),
        data: (_s, d) => void chunks.push(Uint8Array.from(d)),
        close: () => resolve(),
        error: (_s, e) => reject(e),
        connectError: (_s, e) => reject(e),
      },
    }).catch(reject);
  });
  const all = Uint8Array.from(chunks.flatMap((c) => [...c]));
  const split = indexOf(all, HEAD_END);
  if (split < 0) throw new Error(`no complete answer: ${new TextDecoder().decode(all).slice(0, 200)}`);
  const [statusLine, ...headerLines] = new TextDecoder().decode(all.subarray(0, split)).split("\r\n");
  const answerHeaders = new Headers();
  for (const l of headerLines) answerHeaders.append(l.slice(0, l.indexOf(":")).trim(), l.slice(l.indexOf(":") + 1).trim());
  let bytes: Uint8Array<ArrayBuffer> = Uint8Array.from(all.subarray(split + 4));
  if (/chunked/i.test(answerHeaders.get("transfer-encoding") ?? "")) bytes = dechunk(bytes);
  const plain = answerHeaders.get("content-encoding") === "gzip" ? Bun.gunzipSync(bytes) : bytes;
  return { status: Number(statusLine!.split(" ")[1]), headers: answerHeaders, bytes, text: new TextDecoder().decode(plain) };
}

/** A RawAnswer as a Response, for the answer checks above. */
export const asResponse = (a: RawAnswer): Response => new Response(a.text, { status: a.status, headers: a.headers });

/** Serves the runtime's app on a port of its own, as src/main.ts does, for `send`. */
export function serve(app: {
  fetch: (req: Request, env: { server: Bun.Server<unknown> }) => Response | Promise<Response>;
}): Bun.Server<unknown> {
  return Bun.serve({ hostname: "127.0.0.1", port: 0, idleTimeout: 30, fetch: (req, server) => app.fetch(req, { server }) });
}

/** What the Go client sends on every call (GO c `Do`). */
export const GO_HEADERS = { "User-Agent": "Go-http-client/1.1", "Accept-Encoding": "gzip" } as const;

/**
 * The JSON payloads of an alert or audit stream as the Go client reads it (GO c `GetAlertsLive`):
 * lines split on `\n`; a line under 6 bytes (its newline counted) is skipped; a longer line that
 * does not start with `data` aborts the stream (thrown here); a payload under 2 bytes is skipped.
 */
export function goStreamPayloads(text: string): unknown[] {
  const out: unknown[] = [];
  const lines = text.split("\n");
  lines.pop(); // the part after the last newline is not a line yet
  for (const line of lines) {
    if (Buffer.byteLength(line) + 1 < 6) continue;
    if (!line.startsWith("data")) throw new Error(`the Go client aborts the stream on the line ${JSON.stringify(line)}`);
    const payload = line.slice(5);
    if (Buffer.byteLength(payload) < 2) continue;
    out.push(JSON.parse(payload));
  }
  return out;
}

/**
 * The Python client's SSE library ends an event only at a blank line: every event must be one
 * line followed by a blank line. Heartbeats are exactly `:`.
 */
export function assertOneLineEvents(text: string): void {
  const complete = text.slice(0, text.lastIndexOf("\n\n") + 2);
  for (const event of complete.split("\n\n").slice(0, -1)) {
    expect(event).not.toContain("\n");
    expect(event === ":" || event.startsWith("data:")).toBe(true);
  }
}
