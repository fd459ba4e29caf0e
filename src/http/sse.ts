import { AppError } from "./errors.ts";

/**
 * The one helper behind every event stream. It owns what each stream would
 * otherwise get wrong on its own:
 *  - heartbeats on a timer, so neither Bun's idle timeout nor a proxy drops a quiet stream;
 *  - the producer is told to stop (AbortSignal) when the client goes away;
 *  - a bounded buffer per client: a client that stops reading is cut off, memory never grows;
 *  - a cap on open streams per user (429 before the stream starts);
 *  - a final line on every path: the producer's own, or the stream's error line.
 */

export interface SseWriter {
  /** Queues one message (`data:...`); false once the stream is closed. */
  send(line: string): boolean;
  /**
   * Queues messages already encoded as UTF-8, each followed by its blank line (`data:...\n\n`):
   * for producers that build many messages into one buffer. The buffer is taken as it is (not
   * copied): it must not be changed afterwards. False once the stream is closed.
   */
  sendBytes(bytes: Uint8Array): boolean;
  /** Aborts when the client disconnects, is cut off, or the stream ends. */
  readonly signal: AbortSignal;
  /** Bytes queued and not yet taken by the client. */
  readonly buffered: number;
  /** Resolves once the client has taken enough that the buffer is below half its bound. */
  drained(): Promise<void>;
}

export interface SseOptions {
  /** The heartbeat message, e.g. `data:0` for the query stream, `:` for the audit stream. */
  heartbeat: string;
  heartbeatMs: number;
  /** Most bytes queued for a client before it is cut off. */
  maxBufferedBytes: number;
  /** Last line when the producer throws. */
  errorLine(err: unknown): string;
  /** Last line when the producer returns without writing one itself (null: none). */
  endLine?: string | null;
  /** Abort signal of the request: fires when the client disconnects. */
  requestSignal?: AbortSignal;
  onClose?(reason: "end" | "error" | "client" | "overflow"): void;
}

const encoder = new TextEncoder();

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
  let buffered = 0;
  let closed = false;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let controllerRef: ReadableStreamDefaultController<Uint8Array> | undefined;
  let drainWaiters: (() => void)[] = [];
  let reason: "end" | "error" | "client" | "overflow" = "end";

  const wakeDrain = () => {
    const w = drainWaiters;
    drainWaiters = [];
    for (const f of w) f();
  };

  const finish = (why: typeof reason) => {
    if (closed) return;
    closed = true;
    reason = why;
    if (heartbeat) clearInterval(heartbeat);
    abort.abort(new Error(`stream closed: ${why}`));
    wakeDrain();
    try {
      if (why === "overflow") controllerRef?.error(new Error("client too slow"));
      else if (why !== "client") controllerRef?.close();
    } catch {
      /* already closed */
    }
    opts.onClose?.(why);
  };

  const enqueue = (line: string): boolean => enqueueBytes(encoder.encode(line + "\n\n"));

  const enqueueBytes = (bytes: Uint8Array): boolean => {
    if (closed || !controllerRef) return false;
    // desiredSize tracks what the client has not taken yet (the queue counts bytes).
    buffered = opts.maxBufferedBytes - (controllerRef.desiredSize ?? 0);
    // A client is too slow when what it has not taken is already past the bound. A message
    // larger than the bound still goes to a client that keeps up: memory stays bounded by the
    // bound plus one message.
    if (buffered > opts.maxBufferedBytes) {
      finish("overflow");
      return false;
    }
    controllerRef.enqueue(bytes);
    buffered += bytes.byteLength;
    return true;
  };

  const writer: SseWriter = {
    send: (line) => {
      return enqueue(line);
    },
    sendBytes: (bytes) => enqueueBytes(bytes),
    signal: abort.signal,
    get buffered() {
      return controllerRef ? Math.max(0, opts.maxBufferedBytes - (controllerRef.desiredSize ?? 0)) : 0;
    },
    drained: () =>
      closed || writer.buffered < opts.maxBufferedBytes / 2
        ? Promise.resolve()
        : new Promise<void>((resolve) => drainWaiters.push(resolve)),
  };

  opts.requestSignal?.addEventListener("abort", () => finish("client"), { once: true });

  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        controllerRef = controller;
        // A first heartbeat at once: Bun sends the response headers with the first chunk,
        // and a client should not wait a heartbeat interval to learn the stream is open.
        enqueue(opts.heartbeat);
        heartbeat = setInterval(() => enqueue(opts.heartbeat), opts.heartbeatMs);
        // Let the response headers go out before the producer starts.
        queueMicrotask(() => {
          producer(writer)
            .then(() => {
              if (!closed && opts.endLine) enqueue(opts.endLine);
              finish("end");
            })
            .catch((err) => {
              if (!closed) enqueue(opts.errorLine(err));
              finish("error");
            });
        });
      },
      pull() {
        if (writer.buffered < opts.maxBufferedBytes / 2) wakeDrain();
      },
      cancel() {
        finish("client");
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: opts.maxBufferedBytes }),
  );
}

/** Builds the Response for a stream, with the stream headers. */
export function sseResponse(stream: ReadableStream<Uint8Array>, headers: Record<string, string> = {}): Response {
  return new Response(stream, { status: 200, headers: { ...SSE_HEADERS, ...headers } });
}
