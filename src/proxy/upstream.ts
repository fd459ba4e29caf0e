/**
 * The HTTP backends Loupe proxies (the workers of a Kafka Connect cluster, the hosts of a schema
 * registry): several URLs of one service, tried in order.
 *
 * - A URL that cannot be reached (refused, reset, no answer within the timeout) is skipped for
 *   the next one and marked bad for a grace period, during which it is not tried at all. When
 *   every URL is marked bad the answer is 503 at once: a down backend costs its callers one
 *   timeout per grace period, not one per request.
 * - An HTTP answer is final, whatever its status, unless the backend is one whose hosts share a
 *   store (the registry): then 5xx moves on as well. A 4xx is always the backend's word.
 * - A backend may name answers that only say "not now" (Connect's 409 and 500 while its workers
 *   rebalance): a read (GET, HEAD) answered so is asked again, of the next URL first, then of all
 *   of them with a growing pause, until its window ends; then that answer is passed on as it is.
 *   A write is never sent twice for it: a create sent again would meet its own first success.
 * - Every answer is read whole, within the timeout and up to a size cap (502 beyond), before a
 *   byte of it is sent on: a slow or huge backend answer never holds a Loupe request open.
 * - Only what the caller names goes upstream: the method, the path (already validated and
 *   encoded), the query, the headers given, the body; credentials come from the configuration.
 * - A configured URL's user info (`http://user:pass@host`) is taken out of it at once and sent
 *   as that URL's basic auth (unless `auth` is configured, which wins): every URL this class
 *   hands out or names in a message, an answer or a log line is the credential-free one.
 */

import { readFileSync } from "node:fs";
import type { HttpAuthConfig, HttpTlsConfig } from "../config/schema.ts";
import { AppError } from "../errors.ts";

export interface UpstreamOptions {
  /** Names the backend in errors and logs: `Kafka Connect cluster 'dev'`, `Schema registry`. */
  name: string;
  urls: string[];
  /** Sent as the Authorization header of every request (basic auth from the configuration). */
  authorization?: string;
  tls?: { ca?: string; cert?: string; key?: string; rejectUnauthorized: boolean };
  /** The whole of one URL's answer, headers and body. */
  timeoutMs: number;
  /** How long a URL that failed is left out. */
  graceMs: number;
  maxBytes: number;
  /** Hosts that share one store: a 5xx of one moves on to the next (the registry; not Connect). */
  failoverOn5xx: boolean;
  /** Reads answered with one of `statuses` are asked again (see the header comment) for up to `windowMs`. */
  retryReads?: { statuses: readonly number[]; windowMs: number };
  now?: () => number;
  fetch?: typeof fetch;
}

export interface UpstreamRequest {
  method: string;
  /** Starts with `/`; every segment already validated and encoded (see paths.ts). */
  path: string;
  query?: URLSearchParams;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** The caller's request: when it goes away, so does the upstream request. */
  signal?: AbortSignal;
}

export interface UpstreamAnswer {
  status: number;
  /** The answer's content type, the one header passed back. */
  contentType: string | null;
  body: Uint8Array;
  /** The URL that answered. */
  url: string;
}

export interface UrlState {
  /** Without user info. */
  url: string;
  /** Until when the URL is left out (epoch ms), 0 when it is not. */
  badUntil: number;
  /** Why it was marked bad last. */
  lastError?: string;
}

/** A failure of one URL that moves on to the next. */
class HostFailure extends Error {
  constructor(
    message: string,
    readonly timedOut: boolean,
  ) {
    super(message);
  }
}

/** One URL's state, with the basic auth its configured form carried as user info. */
interface HostState extends UrlState {
  authorization?: string;
}

export class Upstream {
  readonly name: string;
  readonly #opts: UpstreamOptions;
  readonly #now: () => number;
  readonly #fetch: typeof fetch;
  readonly #state: HostState[];

  constructor(opts: UpstreamOptions) {
    if (opts.urls.length === 0) throw new Error(`${opts.name} needs at least one URL`);
    this.name = opts.name;
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
    this.#fetch = opts.fetch ?? fetch;
    this.#state = opts.urls.map((u) => {
      const { url, authorization } = splitUserInfo(u);
      return { url, badUntil: 0, ...(authorization && !opts.authorization ? { authorization } : {}) };
    });
  }

  /** The URLs, without user info. */
  get urls(): string[] {
    return this.#state.map((s) => s.url);
  }

  /** Each URL and whether it is left out now. */
  states(): UrlState[] {
    return this.#state.map(({ url, badUntil, lastError }) => ({ url, badUntil, ...(lastError === undefined ? {} : { lastError }) }));
  }

  /**
   * Sends the request to the first URL not marked bad, moving on as the header comment says.
   * UNAVAILABLE (503) when no URL answered, naming each one's failure.
   */
  async send(req: UpstreamRequest): Promise<UpstreamAnswer> {
    const now = this.#now();
    const usable = this.#state.filter((s) => s.badUntil <= now);
    if (usable.length === 0) {
      const why = this.#state.map((s) => `${s.url}: ${s.lastError ?? "failed"}`).join("; ");
      throw new AppError("UNAVAILABLE", `${this.name} is unreachable (${why}); tried again after ${this.#opts.graceMs} ms`, {
        headers: { "retry-after": String(Math.max(1, Math.ceil((Math.min(...this.#state.map((s) => s.badUntil)) - now) / 1000))) },
      });
    }
    const retry = this.#opts.retryReads && (req.method === "GET" || req.method === "HEAD") ? this.#opts.retryReads : undefined;
    // Real time, not the injected clock (which times the grace periods): the window is waited out.
    const deadline = performance.now() + (retry?.windowMs ?? 0);
    const failures: string[] = [];
    /** The last "not now" answer of a read, passed on when its window ends. */
    let pending: UpstreamAnswer | undefined;
    for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(2 * pause, LAST_PAUSE_MS)) {
      for (const state of pending ? this.#state.filter((s) => s.badUntil <= this.#now()) : usable) {
        try {
          const answer = await this.#once(state, req);
          if (this.#opts.failoverOn5xx && answer.status >= 500) throw new HostFailure(`HTTP ${answer.status}`, false);
          state.badUntil = 0;
          if (!retry?.statuses.includes(answer.status)) return answer;
          pending = answer;
        } catch (e) {
          if (!(e instanceof HostFailure)) throw e;
          state.badUntil = this.#now() + this.#opts.graceMs;
          state.lastError = e.message;
          failures.push(`${state.url}: ${e.message}`);
        }
      }
      if (!pending) break;
      if (performance.now() + pause > deadline) return pending;
      await pauseFor(pause, req.signal);
    }
    throw new AppError("UNAVAILABLE", `${this.name} is unreachable (${failures.join("; ")})`);
  }

  /** One request to one of the URLs (as `urls` gives them), without moving on or marking it: a health probe. */
  async sendTo(url: string, req: UpstreamRequest): Promise<UpstreamAnswer> {
    const plain = splitUserInfo(url).url;
    const state = this.#state.find((s) => s.url === plain) ?? { url: plain, badUntil: 0 };
    try {
      return await this.#once(state, req);
    } catch (e) {
      if (e instanceof HostFailure) throw new AppError("UNAVAILABLE", `${this.name} at ${plain}: ${e.message}`);
      throw e;
    }
  }

  async #once(host: HostState, req: UpstreamRequest): Promise<UpstreamAnswer> {
    const { timeoutMs, maxBytes } = this.#opts;
    const base = host.url;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
    const query = req.query?.toString();
    const url = `${base}${req.path}${query ? `?${query}` : ""}`;
    const headers: Record<string, string> = { ...(req.headers ?? {}) };
    const authorization = this.#opts.authorization ?? host.authorization;
    if (authorization) headers.authorization = authorization;
    try {
      const res = await this.#fetch(url, {
        method: req.method,
        headers,
        redirect: "manual",
        signal,
        ...(req.body === undefined ? {} : { body: req.body }),
        ...(this.#opts.tls ? { tls: this.#opts.tls } : {}),
      } as RequestInit);
      const body = await readCapped(res, maxBytes, this.name);
      return { status: res.status, contentType: res.headers.get("content-type"), body, url: base };
    } catch (e) {
      if (req.signal?.aborted) throw new AppError("BAD_REQUEST", "The request was cancelled by the client", { cause: e });
      if (e instanceof AppError) throw e;
      if (timeout.aborted) throw new HostFailure(`no answer within ${timeoutMs} ms`, true);
      throw new HostFailure(describe(e), false);
    }
  }
}

/** The pauses between rounds of a read asked again: doubling from the first to the last. */
const FIRST_PAUSE_MS = 100;
const LAST_PAUSE_MS = 1_000;

/** Waits `ms`, or until the client goes away (BAD_REQUEST, as a request it cancels). */
function pauseFor(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const cancelled = () => {
      clearTimeout(timer);
      reject(new AppError("BAD_REQUEST", "The request was cancelled by the client"));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", cancelled);
      resolve();
    }, ms);
    if (signal?.aborted) cancelled();
    else signal?.addEventListener("abort", cancelled, { once: true });
  });
}

/** Reads an answer's body, refusing (502) one larger than `maxBytes`. */
async function readCapped(res: Response, maxBytes: number, name: string): Promise<Uint8Array> {
  const declared = Number(res.headers.get("content-length") ?? Number.NaN);
  const tooLarge = () => new AppError("BAD_GATEWAY", `${name} answered more than ${maxBytes} bytes; the answer was dropped`);
  if (declared > maxBytes) {
    await res.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (!res.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

function describe(e: unknown): string {
  const err = e as { code?: string; message?: string };
  if (err.code === "ConnectionRefused" || err.code === "ECONNREFUSED") return "connection refused";
  if (err.code === "ECONNRESET" || err.code === "ConnectionClosed") return "connection closed before an answer";
  return withoutUserInfo(err.message ?? String(e));
}

/**
 * A configured URL without its user info and trailing slashes, and the basic auth the user
 * info stood for (percent-decoded, as fetch would have sent it). A text that is no URL is only
 * trimmed of slashes (the config schema has checked it).
 */
export function splitUserInfo(raw: string): { url: string; authorization?: string } {
  const trimmed = raw.replace(/\/+$/, "");
  let u: URL;
  try {
    u = new URL(trimmed);
  } catch {
    return { url: withoutUserInfo(trimmed) };
  }
  if (!u.username && !u.password) return { url: trimmed };
  const user = decodeURIComponent(u.username);
  const password = decodeURIComponent(u.password);
  u.username = "";
  u.password = "";
  const url = u.toString().replace(/\/+$/, "");
  return { url, authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` };
}

/** A text with the user info of every URL in it taken out (`http://u:p@h` -> `http://h`). */
export function withoutUserInfo(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*@/gi, "$1");
}

/** The `authorization` header of basic auth from the configuration, reading a password file once. */
export function basicAuthorization(auth: HttpAuthConfig | undefined): string | undefined {
  if (!auth) return undefined;
  const password = auth.password ?? readFileSync(auth.passwordFile!, "utf8").replace(/\r?\n$/, "");
  return `Basic ${Buffer.from(`${auth.username}:${password}`).toString("base64")}`;
}

/** Bun's fetch `tls` option from the configuration's PEM file names. */
export function tlsOptions(tls: HttpTlsConfig | undefined): UpstreamOptions["tls"] {
  if (!tls) return undefined;
  const read = (file: string | undefined) => (file === undefined ? undefined : readFileSync(file, "utf8"));
  return {
    rejectUnauthorized: tls.rejectUnauthorized,
    ...(tls.ca ? { ca: read(tls.ca) } : {}),
    ...(tls.cert ? { cert: read(tls.cert), key: read(tls.key) } : {}),
  };
}

/**
 * The headers of the client's request that may go upstream: only those named (lower case), so
 * Loupe's token, the client's Authorization, Cookie, Host and X-Forwarded-* never leave.
 */
export function pickHeaders(from: Headers, allowed: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of allowed) {
    const v = from.get(name);
    if (v !== null) out[name] = v;
  }
  return out;
}
