import type { Context } from "hono";
import { AppError } from "../errors.ts";
import { type AccessScope, type Level, levelAllows } from "./access.ts";
import type { AppEnv } from "./context.ts";

/**
 * The one helper behind every event stream. It owns what each stream would
 * otherwise get wrong on its own:
 *  - heartbeats on a timer, so neither Bun's idle timeout nor a proxy drops a quiet stream;
 *  - the producer is told to stop (AbortSignal) when the client goes away;
 *  - a bounded buffer per client: a client that stops reading is cut off, memory never grows;
 *  - a cap on open streams per user (429 before the stream starts);
 *  - a final line on every path: the producer's own, or the stream's error line.
 * It writes through Bun's "direct" stream: each write goes to the socket or is copied into the
 * response's buffer at once, so producers may build every message in one reused buffer.
 */

export interface SseWriter {
  /** Sends one message (`data:...`); false once the stream is closed. */
  send(line: string): boolean;
  /**
   * Sends messages already encoded as UTF-8, each followed by its blank line (`data:...\n\n`):
   * for producers that build many messages into one buffer. The bytes are written or copied
   * before this returns, so the caller may reuse its buffer at once. False once closed.
   */
  sendBytes(bytes: Uint8Array): boolean;
  /** Aborts when the client disconnects, is cut off, or the stream ends. */
  readonly signal: AbortSignal;
  /** Bytes sent that the response could not yet pass to the client's socket. */
  readonly buffered: number;
  /** Resolves once the response has passed everything sent to the socket (or is closed). */
  drained(): Promise<void>;
}

export interface SseOptions {
  /** The heartbeat message, e.g. `data:0` for the query stream, `:` for the audit stream. */
  heartbeat: string;
  heartbeatMs: number;
  /** Most bytes waiting for a client (behind what the response holds) before it is cut off. */
  maxBufferedBytes: number;
  /** Last line when the producer throws. */
  errorLine(err: unknown): string;
  /** Last line when the producer returns without writing one itself (null: none). */
  endLine?: string | null;
  /**
   * True when the response goes straight to Bun's HTTP server, whose stream writes send or copy
   * the bytes at once. Other consumers of a response (`.text()`, a test's app.request) may keep
   * the written bytes by reference, so sendBytes copies them first unless this is set.
   */
  sinkCopies?: boolean;
  /** Abort signal of the request: fires when the client disconnects. */
  requestSignal?: AbortSignal;
  onClose?(reason: "end" | "error" | "client" | "overflow"): void;
}

const encoder = new TextEncoder();

type DirectController = ReadableStreamDirectController;

const TOO_SLOW = new AppError("TOO_MANY_REQUESTS", "The stream was cut off: the client did not read it fast enough");

/**
 * What the registry asks about the token behind an open stream: its session (whose roles are
 * current), or why it no longer works; and news of revocations, so they close streams at once.
 */
export interface StreamAuth {
  checkToken(tokenHash: string): Promise<StreamSession | string>;
  onRevoke(listener: (tokenHash: string | null, reason: string) => void): void;
}

/** What a stream's check reads of a session: the rights of its identity, and their key to compare. */
export interface StreamSession {
  scope: Pick<AccessScope, "key" | "clusterRoles" | "unrestricted">;
}

/** A stream that can be ended from outside: its error line, then its socket closes. */
interface StreamHandle {
  close(err: unknown, timeoutMs: number): Promise<void>;
}

interface Lease {
  user: string;
  tokenHash: string | undefined;
  level: Level | undefined;
  /** The cluster it reads and the rights it was opened with: any change of them closes it. */
  cluster: string | undefined;
  scopeKey: string | undefined;
  handle?: StreamHandle;
  /** Set when the stream was closed before it started: it ends as soon as it does. */
  closing?: unknown;
}

/**
 * Links a stream to the lease its route acquired, through the request's abort signal (both get
 * the same one), so the route need not hand the stream to the registry itself.
 */
const leaseBySignal = new WeakMap<AbortSignal, Lease>();

export interface StreamRegistryOptions {
  /** Checks open streams' tokens and roles; without it, streams are only capped and closed at stop. */
  auth?: StreamAuth;
  /** How often open streams' tokens and roles are checked again. */
  sweepMs?: number;
  /** How long a closed stream may take to pass its final line to a slow client. */
  closeTimeoutMs?: number;
}

const revoked = (reason: string) => new AppError("UNAUTHORIZED", reason);

/**
 * Tracks open streams: caps them per user, and closes them (each with its final line) when
 * their token is revoked, expires or its user's roles no longer allow the route, and at stop.
 */
export class StreamRegistry {
  private open = new Map<string, number>();
  private readonly leases = new Set<Lease>();
  private stopping = false;
  private sweeping = false;
  private readonly timer: ReturnType<typeof setInterval> | undefined;
  private readonly closeTimeoutMs: number;

  constructor(
    readonly maxPerUser: number,
    private readonly opts: StreamRegistryOptions = {},
  ) {
    this.closeTimeoutMs = opts.closeTimeoutMs ?? 5_000;
    if (opts.auth) {
      opts.auth.onRevoke((hash, reason) => {
        if (hash) this.closeToken(hash, reason);
        else void this.sweep();
      });
      this.timer = setInterval(() => void this.sweep(), opts.sweepMs ?? 1_000);
      this.timer.unref?.();
    }
  }

  /**
   * Counts a stream of `user` against the cap. Given the request context, the stream is also
   * tied to the request's token and route, so it closes when they no longer allow it: an event
   * stream by itself (see sseStream), anything else through `onClose`.
   */
  acquire(user: string, c?: Context<AppEnv>, onClose?: (err: unknown) => void): () => void {
    if (this.stopping) throw new AppError("UNAVAILABLE", "The server is stopping");
    const n = this.open.get(user) ?? 0;
    if (n >= this.maxPerUser)
      throw new AppError("TOO_MANY_REQUESTS", `At most ${this.maxPerUser} open streams per user`, {
        headers: { "Retry-After": "5" },
      });
    this.open.set(user, n + 1);
    const session = c?.get("session");
    const lease: Lease = {
      user,
      tokenHash: session?.tokenHash,
      level: c?.get("rule")?.level,
      cluster: c?.get("cluster"),
      scopeKey: session?.scope.key,
      // A stream that is no event stream (a websocket) says how it is ended from outside.
      ...(onClose ? { handle: { close: async (err: unknown) => onClose(err) } } : {}),
    };
    this.leases.add(lease);
    if (c) leaseBySignal.set(c.req.raw.signal, lease);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.leases.delete(lease);
      const left = (this.open.get(user) ?? 1) - 1;
      if (left <= 0) this.open.delete(user);
      else this.open.set(user, left);
    };
  }

  get total(): number {
    let t = 0;
    for (const n of this.open.values()) t += n;
    return t;
  }

  private close(lease: Lease, err: unknown, timeoutMs = this.closeTimeoutMs): Promise<void> {
    if (lease.handle) return lease.handle.close(err, timeoutMs);
    lease.closing ??= err;
    return Promise.resolve();
  }

  /** Closes the streams of one token at once. */
  closeToken(tokenHash: string, reason: string): number {
    let n = 0;
    for (const lease of this.leases)
      if (lease.tokenHash === tokenHash) {
        n++;
        void this.close(lease, revoked(reason));
      }
    return n;
  }

  /** Checks every open stream's token and roles again; closes those no longer allowed. */
  async sweep(): Promise<number> {
    const auth = this.opts.auth;
    if (!auth || this.sweeping || this.leases.size === 0) return 0;
    this.sweeping = true;
    let n = 0;
    try {
      const checks = new Map<string, Promise<StreamSession | string>>();
      for (const lease of [...this.leases]) {
        if (!lease.tokenHash) continue;
        let check = checks.get(lease.tokenHash);
        if (!check) {
          check = auth.checkToken(lease.tokenHash);
          checks.set(lease.tokenHash, check);
        }
        const session = await check.catch(() => undefined);
        if (session === undefined || !this.leases.has(lease)) continue;
        if (typeof session === "string") {
          n++;
          void this.close(lease, revoked(session));
        } else {
          const why = streamDenied(lease, session);
          if (why) {
            n++;
            void this.close(lease, new AppError("FORBIDDEN", why));
          }
        }
      }
    } finally {
      this.sweeping = false;
    }
    return n;
  }

  /**
   * At stop: refuses new streams, ends every open one with its final line (`err` as its error
   * line), and waits until they have passed it to their clients, at most `timeoutMs`.
   */
  async closeAll(err: unknown, timeoutMs = this.closeTimeoutMs): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    const closing = [...this.leases].map((lease) => this.close(lease, err, timeoutMs));
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([Promise.all(closing), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
  }

  /** Stops the periodic check. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}

/**
 * Why an open stream may no longer run: its identity's rights changed (a group's roles or
 * scope, or its memberships: closed rather than re-judged, the client reconnects under the new
 * rights), or its roles no longer reach the route's level.
 */
function streamDenied(lease: Lease, session: StreamSession): string | undefined {
  if (lease.scopeKey !== undefined && session.scope.key !== lease.scopeKey) return "Your access changed: reconnect";
  if (!lease.level) return undefined;
  return levelAllows(lease.level, session.scope, lease.cluster ?? "") ? undefined : "Your role no longer allows this stream";
}

export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  connection: "keep-alive",
  "x-accel-buffering": "no",
} as const;

export function sseStream(opts: SseOptions, producer: (w: SseWriter) => Promise<void>): ReadableStream<Uint8Array> {
  const abort = new AbortController();
  let closed = false;
  /** The final line is queued (closed from outside): the producer may write no more. */
  let ending = false;
  /** The producer has settled: its own last line is written or on its way. */
  let producerDone = false;
  /** Bounds how long a stream closed from outside may wait for a client that does not read. */
  let closeTimer: ReturnType<typeof setTimeout> | undefined;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let sink: DirectController | undefined;
  /** A write the response has taken but not yet passed to the socket; our queue waits behind it. */
  let inFlight = 0;
  const queue: Uint8Array[] = [];
  let queued = 0;
  let drainWaiters: (() => void)[] = [];
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));

  const wakeDrain = () => {
    const w = drainWaiters;
    drainWaiters = [];
    for (const f of w) f();
  };

  const finish = (why: "end" | "error" | "client" | "overflow") => {
    if (closed) return;
    closed = true;
    if (heartbeat) clearInterval(heartbeat);
    if (closeTimer) clearTimeout(closeTimer);
    abort.abort(new Error(`stream closed: ${why}`));
    wakeDrain();
    queue.length = 0;
    try {
      // A client cut off for reading too slowly finds why after what it had not read yet.
      // (Closing with an error would abort the connection, but Bun prints every such error.)
      if (why === "overflow") sink?.write(encoder.encode(`${opts.errorLine(TOO_SLOW)}\n\n`));
      if (why !== "client") sink?.close();
    } catch {
      /* already closed */
    }
    finished();
    opts.onClose?.(why);
  };

  /** Hands bytes to the response: written, or copied into its buffer, before this returns. */
  const write = (bytes: Uint8Array): void => {
    let r: number | Promise<number>;
    try {
      r = sink!.write(bytes);
    } catch {
      finish("client");
      return;
    }
    if (!(r instanceof Promise)) return;
    inFlight = bytes.byteLength;
    r.then(
      () => {
        inFlight = 0;
        // What waited behind it goes out in order, until the response is full again.
        while (!closed && inFlight === 0 && queue.length > 0) {
          const next = queue.shift()!;
          queued -= next.byteLength;
          write(next);
        }
        if (!closed && inFlight === 0) wakeDrain();
      },
      () => finish("client"),
    );
  };

  /** `owned`: bytes nobody else holds (encoded here), which need no copy whatever the sink. */
  const sendBytes = (bytes: Uint8Array, owned = false): boolean => {
    if (closed || ending || !sink) return false;
    if (inFlight === 0 && queue.length === 0) {
      write(owned || opts.sinkCopies ? bytes : bytes.slice());
      return !closed;
    }
    // The response still holds earlier bytes the client has not taken. A client is too slow
    // when what waits behind them is past the bound; one message larger than the bound still
    // goes to a client that keeps up, so memory stays within the bound plus one message.
    if (queued > 0 && queued + bytes.byteLength > opts.maxBufferedBytes) {
      finish("overflow");
      return false;
    }
    queue.push(owned ? bytes : bytes.slice());
    queued += bytes.byteLength;
    return true;
  };

  const send = (line: string): boolean => sendBytes(encoder.encode(line + "\n\n"), true);

  const writer: SseWriter = {
    send,
    sendBytes: (bytes) => sendBytes(bytes),
    signal: abort.signal,
    get buffered() {
      return inFlight + queued;
    },
    drained: () =>
      closed || (inFlight === 0 && queue.length === 0) ? Promise.resolve() : new Promise<void>((resolve) => drainWaiters.push(resolve)),
  };

  /**
   * Ends the stream from outside (a revoked token, a stop): the error line goes after what the
   * client has not read yet, the producer is stopped, and the socket closes once the line is
   * passed on, or after `timeoutMs` for a client that does not read.
   */
  const closeWith = (err: unknown, timeoutMs: number): Promise<void> => {
    if (closed || !sink) return done;
    closeTimer ??= setTimeout(() => finish("error"), timeoutMs);
    // A producer that has settled wrote its own last line: the stream ends after it (no second one).
    if (ending || producerDone) return done;
    ending = true;
    const line = encoder.encode(`${opts.errorLine(err)}\n\n`);
    if (inFlight === 0 && queue.length === 0) write(line);
    else {
      queue.push(line);
      queued += line.byteLength;
    }
    abort.abort(new Error(`stream closed: ${err instanceof Error ? err.message : String(err)}`));
    void writer.drained().then(() => finish("error"));
    return done;
  };

  opts.requestSignal?.addEventListener("abort", () => finish("client"), { once: true });

  return new ReadableStream<Uint8Array>({
    type: "direct",
    pull(controller: DirectController) {
      // A reader (rather than a response) calls again once the first call has settled: at the end.
      if (sink) return;
      sink = controller;
      // A first heartbeat at once: the response headers go with the first bytes, and a client
      // should not wait a heartbeat interval to learn the stream is open.
      send(opts.heartbeat);
      heartbeat = setInterval(() => {
        // A stream that is busy writing needs no heartbeat.
        if (inFlight === 0 && queue.length === 0) send(opts.heartbeat);
      }, opts.heartbeatMs);
      // Closed from outside, the stream ends on its own schedule (see closeWith).
      producer(writer).then(
        () => {
          producerDone = true;
          if (ending) return;
          if (!closed && opts.endLine) send(opts.endLine);
          return writer.drained().then(() => finish("end"));
        },
        (err) => {
          producerDone = true;
          if (ending) return;
          if (!closed) send(opts.errorLine(err));
          return writer.drained().then(() => finish("error"));
        },
      );
      const lease = opts.requestSignal && leaseBySignal.get(opts.requestSignal);
      if (lease) {
        lease.handle = { close: closeWith };
        if (lease.closing !== undefined) void closeWith(lease.closing, 5_000);
      }
      return done;
    },
    cancel() {
      finish("client");
    },
  });
}

/** Builds the Response for a stream, with the stream headers. */
export function sseResponse(stream: ReadableStream<Uint8Array>, headers: Record<string, string> = {}): Response {
  return new Response(stream, { status: 200, headers: { ...SSE_HEADERS, ...headers } });
}

/**
 * The answer of a live feed (`/api/sse/audit`, `/api/sse/alerts`): one `data:<JSON>` line per
 * event the feed emits while the client stays, framed as the Go client reads these streams
 * (CLIENTS.md 3): heartbeats are a bare `:` (a line of 6 bytes or more that is not data would
 * end its reading), and the stream's last line is `data:` when it is closed from this side.
 * Counts against the user's open streams like every stream.
 */
export function feedResponse<T>(
  c: Context<AppEnv>,
  streams: StreamRegistry,
  subscribe: (listener: (event: T) => void) => () => void,
  heartbeatMs: number,
): Response {
  const release = streams.acquire(c.get("session")!.user.name, c);
  c.env?.server?.timeout(c.req.raw, 0);
  const stream = sseStream(
    {
      heartbeat: ":",
      heartbeatMs,
      maxBufferedBytes: 1 << 20,
      errorLine: () => "data:",
      endLine: "data:",
      requestSignal: c.req.raw.signal,
      onClose: release,
    },
    (w) =>
      new Promise<void>((resolve) => {
        const unsubscribe = subscribe((event) => w.send(`data:${JSON.stringify(event)}`));
        w.signal.addEventListener("abort", () => {
          unsubscribe();
          resolve();
        });
      }),
  );
  return sseResponse(stream);
}
