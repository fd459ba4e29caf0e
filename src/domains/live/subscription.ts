/**
 * One live subscription: a continuous query (followPlan) whose records go to the socket as
 * KAFKAMSG frames, `content` being an array of `{timestamp, partition, key, offset, topic, value}`.
 *
 * Backpressure: the query is pulled only while the socket keeps up. Once more than its high
 * water mark waits for the client, the subscription waits for the socket to drain before it
 * pulls again, and the executor fetches nothing meanwhile: memory stays bounded however slow
 * the client.
 */

import { followPlan, QueryError, type QueryProgress, type RecordFraming, RecordText } from "../../engine/index.ts";
import { AppError } from "../../errors.ts";
import type { Socket } from "../../http/websocket.ts";
import type { CompiledQuery, PreparedQuery, SqlService, Viewer } from "../sql/service.ts";
import { frame, textFrame } from "./frames.ts";

/** Each record an element of the frame's array, followed by a comma (the last one is cut). */
const ELEMENT: RecordFraming = { before: "", after: "," };
const decoder = new TextDecoder();

/**
 * The answer's records, with a value that is a string shown as that string: the Python client
 * evaluates the text of a published `{'value':1}` and the Go CLI decodes JSON text, so a STRING
 * topic's value is its raw text and an AVRO or JSON topic's value is its JSON text.
 */
class LiveRecords extends RecordText {
  override add(timestamp: number, partition: number, key: string | null, offset: number, valueJson: string): void {
    let value = valueJson;
    if (valueJson.charCodeAt(0) === 0x22) {
      try {
        value = JSON.parse(valueJson) as string;
      } catch {
        /* not a JSON string after all: as it is */
      }
    }
    super.add(timestamp, partition, key, offset, value);
  }
}

export interface SubscriptionOptions {
  sql: SqlService;
  compiled: CompiledQuery;
  cluster: string;
  /** Who subscribes: the records are masked for them (see SqlService.prepare). */
  viewer: Viewer;
  /** The SUBSCRIBE's correlationId (JSON text), echoed by every KAFKAMSG. */
  correlationId: string;
  socket: Socket;
  /** Told when the subscription ends by itself (not by stop()), with why. */
  onEnded(reason: string): void;
  /** Resolves once the SUBSCRIBE was answered: no record goes out before the answer. */
  answered: Promise<void>;
}

export class Subscription {
  readonly topic: string;
  readonly #abort = new AbortController();
  /** Resolves at stop(): a subscription waiting for a slow client lets go of its query at once. */
  readonly #stopping = new Promise<void>((resolve) => this.#abort.signal.addEventListener("abort", () => resolve(), { once: true }));
  #prepared: PreparedQuery | null = null;
  #stopped = false;
  /** Rejects start() (a no-op once it resolved). */
  #failStart: (err: unknown) => void = () => {};

  constructor(private readonly opts: SubscriptionOptions) {
    this.topic = opts.compiled.plan.topic;
  }

  /**
   * Takes a query slot and starts reading. Resolves once the end offsets are known (records
   * written from then on are delivered); rejects when the query cannot start.
   */
  async start(): Promise<void> {
    const { opts } = this;
    let reading!: () => void;
    let failed!: (err: unknown) => void;
    const started = new Promise<void>((resolve, reject) => {
      reading = resolve;
      failed = reject;
    });
    // The query ending before it read is a failure to start, told as soon as it ends: the run
    // itself settles only after the SUBSCRIBE is answered. The query's own error is the reason
    // (a cluster that does not answer names itself and how long it was waited for).
    this.#failStart = failed;
    const plan = followPlan(opts.compiled.plan);
    this.#prepared = await opts.sql.prepare({ ...opts.compiled, plan }, opts.cluster, opts.viewer);
    const run = this.#run(this.#prepared, reading);
    run.then(
      () => failed(new AppError("UNAVAILABLE", `The subscription to '${this.topic}' ended at once`)),
      (err: unknown) => failed(err),
    );
    await started;
  }

  /** Ends the subscription and its query; nothing more is sent for it. */
  stop(): void {
    this.#stopped = true;
    this.#abort.abort();
  }

  /** What the query has read and sent so far; null before it started. */
  get progress(): QueryProgress | null {
    return this.#prepared?.progress ?? null;
  }

  get correlationId(): string {
    return this.opts.correlationId;
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  /** `reading`: told once the query's read begins (its end offsets are known). */
  async #run(prepared: PreparedQuery, reading: () => void): Promise<void> {
    const { socket, correlationId } = this.opts;
    const records = new LiveRecords(JSON.stringify(this.topic), ELEMENT);
    let why: string | null = null;
    try {
      for await (const ev of prepared.events(this.#abort.signal, { sink: records, observer: { onReading: reading } })) {
        if (ev.type === "records") {
          if (ev.count === 0) continue;
          // The bytes live in the sink's buffer until the next pull: made text before waiting.
          const elements = decoder.decode(ev.bytes.subarray(0, ev.bytes.byteLength - 1));
          await this.opts.answered;
          if (this.#stopped) break;
          if (!socket.send(frame("KAFKAMSG", correlationId, `[${elements}]`))) break;
          while (socket.wouldBlock() && !this.#stopped) await Promise.race([socket.drained(), this.#stopping]);
          if (this.#stopped || socket.closed) break;
        } else if (ev.type === "error") {
          why = ev.error.message;
          this.#failStart(new AppError("BAD_REQUEST", why));
        } else if (!this.#stopped) why = `the subscription to '${this.topic}' ended (${ev.end.stopReason})`;
      }
    } catch (err) {
      // Kafka's and the query's errors say what went wrong; anything else is not the client's to read.
      if (!this.#stopped) why = err instanceof AppError || err instanceof QueryError ? err.message : `Reading topic '${this.topic}' failed`;
      this.#failStart(err instanceof AppError ? err : new AppError("UNAVAILABLE", why ?? `Reading topic '${this.topic}' failed`));
      throw err;
    } finally {
      prepared.release();
      // A subscription that failed to start is answered by the SUBSCRIBE's ERROR, which stops it.
      await this.opts.answered.catch(() => {});
      if (why !== null && !this.#stopped) {
        this.#stopped = true;
        socket.send(textFrame("ERROR", correlationId, why));
        this.opts.onEnded(why);
      }
    }
  }
}
