import { AppError } from "../errors.ts";

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

/** Tracks open streams per user. */
export class StreamRegistry {
  private open = new Map<string, number>();
  constructor(readonly maxPerUser: number) {}

  acquire(user: string): () => void {
    const n = this.open.get(user) ?? 0;
    if (n >= this.maxPerUser)
      throw new AppError("TOO_MANY_REQUESTS", `At most ${this.maxPerUser} open streams per user`, {
        headers: { "Retry-After": "5" },
      });
    this.open.set(user, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
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
    if (closed || !sink) return false;
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
      producer(writer)
        .then(() => {
          if (!closed && opts.endLine) send(opts.endLine);
          return writer.drained();
        })
        .then(
          () => finish("end"),
          (err) => {
            if (!closed) send(opts.errorLine(err));
            return writer.drained().then(() => finish("error"));
          },
        );
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
