/**
 * The event-stream form of a query's answer (SPEC: Query data stream): the executor's events
 * become `data:` lines. Type 1 is a record, 2 the end record, 3 an error, 4 statistics, 0 the
 * heartbeat. Backpressure: while the response holds bytes the socket has not taken, the query is
 * not pulled, so nothing more is fetched; statistics and heartbeats go on meanwhile (bounded).
 */

import { isQueryLimitError, type QueryEnd, QueryError, type RecordFraming, RecordText, skippedWarning } from "../../engine/index.ts";
import { AppError } from "../../errors.ts";
import { sseResponse, sseStream } from "../../http/sse.ts";
import { SqlError } from "../../sql/index.ts";
import type { ClampedSettings, PreparedQuery } from "./service.ts";

/** `data:1{...}` and its blank line. */
export const RECORD_LINE: RecordFraming = { before: "data:1", after: "\n\n" };

/** Most bytes (statistics, heartbeats) that may wait for a stream reader before it is cut off; records wait for the reader instead. */
const STREAM_BUFFER_BYTES = 4 * 1024 * 1024;
const HEARTBEAT_MS = 5_000;
/** Above this RSS a query collects garbage as it goes (see MEMORY_GC_EVERY_BYTES). */
const MEMORY_SOFT_LIMIT = 160 * 1024 * 1024;
/** While the query waits for its reader, at most one collection per this many bytes of query data. */
const MEMORY_MIN_GC_BYTES = 16 * 1024 * 1024;
/** While it runs, one collection per this many bytes of query data (read and answered). */
const MEMORY_GC_EVERY_BYTES = 128 * 1024 * 1024;
/** What reading a record leaves to collect besides its bytes (its object, views of its key and value). */
const RECORD_GARBAGE_BYTES = 256;
/** How often a running query looks at its memory. */
const MEMORY_CHECK_MS = 50;
/** Statistics no more often than this. */
const MIN_STATS_MS = 100;

/**
 * `stats` as milliseconds. SPEC.md says milliseconds, but the Go client sends whole seconds of
 * any size (`--stats=2m` sends 120, `1h` 3600) and older clients seconds too. Rule: seconds when
 * the request is the Go client's (`seconds`, see sendsStatsInSeconds) or the value is below 100
 * (no one asks for statistics more often than every 100 ms); milliseconds otherwise.
 */
export function statsIntervalMs(stats: number | undefined, seconds = false): number | null {
  if (stats === undefined || stats === 0) return null;
  return Math.max(MIN_STATS_MS, seconds || stats < 100 ? stats * 1000 : stats);
}

/**
 * True for the Go client: it asks the data stream for the schema registry's media type beside
 * `text/event-stream` (a second Accept header), which nothing else asks of this route.
 */
export function sendsStatsInSeconds(accept: string | undefined): boolean {
  return accept?.toLowerCase().includes("application/vnd.schemaregistry") === true;
}

/**
 * The statistics message (type 4) with the meanings the older clients give its fields: records
 * and bytes read from Kafka so far, records read but not returned, and the bytes of the records
 * returned (`currentSize`) against the bound of max.size (`maxSize`).
 */
export function statsBody(prepared: Pick<PreparedQuery, "plan" | "progress">): Record<string, unknown> {
  const { plan, progress } = prepared;
  return {
    totalRecords: progress.readRecords,
    recordsSkipped: progress.readRecords - progress.totalRecords,
    recordsLimit: plan.limit,
    totalBytes: progress.totalSizeRead,
    maxSize: plan.settings.maxSizeBytes,
    currentSize: progress.size,
    // Partitions left out, and a broker the read is waiting for: what the UI warns of.
    ...(progress.skippedPartitions.length > 0
      ? { skippedPartitions: progress.skippedPartitions, warnings: progress.skippedPartitions.map(skippedWarning) }
      : {}),
    ...(progress.outage ? { retrying: progress.outage.toError().message } : {}),
    // Offsets the read covers, once it is planned: what the records read so far are a part of.
    ...(!plan.follow && progress.scans.length > 0 ? { offsetsToRead: progress.scans.reduce((n, s) => n + (s.to - s.from), 0) } : {}),
  };
}

/** The stream's error message (type 3) for anything a query throws or ends with. */
export function queryErrorPayload(err: unknown): { fromLine: number; toLine: number; fromColumn: number; toColumn: number; error: string } {
  // A limit of the language met while running may name where in the query it lies.
  const at = err instanceof QueryError && err.cause instanceof SqlError ? err.cause : err;
  if (at instanceof SqlError)
    return {
      fromLine: at.line,
      toLine: at.endLine,
      fromColumn: at.column,
      toColumn: at.endColumn,
      error: err instanceof Error ? err.message : at.message,
    };
  const message =
    err instanceof AppError || err instanceof QueryError || isQueryLimitError(err) ? err.message : "Internal error while running the query";
  return { fromLine: 0, toLine: 0, fromColumn: 0, toColumn: 0, error: message };
}

const errorLine = (err: unknown) => `data:3${JSON.stringify(queryErrorPayload(err))}`;

/** The end record (type 2): offsets only when asked for, and any setting the server lowered. */
export function endBody(end: QueryEnd, withOffsets: boolean, clamped?: ClampedSettings): Record<string, unknown> {
  const { offsets, ...rest } = end;
  return { ...rest, ...(withOffsets ? { offsets } : {}), ...(clamped ? { clampedSettings: clamped } : {}) };
}

/** A query that did not compile: one type 3 line. */
export function streamInvalid(err: unknown, requestSignal: AbortSignal): Response {
  return sseResponse(
    sseStream(
      { heartbeat: "data:0", heartbeatMs: HEARTBEAT_MS, maxBufferedBytes: 1 << 16, errorLine: () => "", requestSignal },
      async (w) => void w.send(errorLine(err)),
    ),
  );
}

export interface StreamAnswerOptions {
  /** Milliseconds between statistics messages; null: none. */
  statsMs: number | null;
  /** The end record carries the offsets read. */
  withOffsets: boolean;
  /** Each record carries its headers (see record-text.ts). */
  withHeaders: boolean;
  /** The response goes straight to Bun's server (see SseOptions.sinkCopies). */
  sinkCopies: boolean;
  requestSignal: AbortSignal;
  /** Called once the stream is closed, however it ended. */
  onClose(): void;
}

export function streamAnswer(prepared: PreparedQuery, opts: StreamAnswerOptions): Response {
  const { plan, progress, compiled } = prepared;
  const records = new RecordText(JSON.stringify(plan.topic), RECORD_LINE, opts.withHeaders);
  const body = sseStream(
    {
      heartbeat: "data:0",
      heartbeatMs: HEARTBEAT_MS,
      maxBufferedBytes: STREAM_BUFFER_BYTES,
      errorLine,
      // Lets the record lines be written from one reused buffer (see RecordText.take()).
      sinkCopies: opts.sinkCopies,
      requestSignal: opts.requestSignal,
      onClose: () => opts.onClose(),
    },
    async (w) => {
      let collectedAt = 0;
      /** Bytes of query data so far, with what each record read leaves to collect. */
      const churn = () => progress.totalSizeRead + progress.size + progress.readRecords * RECORD_GARBAGE_BYTES;
      // Set once the query stops (time, kill): it no longer waits for its reader to end.
      let stopped = false;
      let wakeOnStop: (() => void) | null = null;
      const onStop = () => {
        stopped = true;
        wakeOnStop?.();
      };
      const timer =
        opts.statsMs === null ? undefined : setInterval(() => w.send(`data:4${JSON.stringify(statsBody(prepared))}`), opts.statsMs);
      // JSC grows the heap well before it collects, and a long query makes garbage fast: the
      // fetched bytes outlive a young collection (they wait for the whole Fetch answer), so they
      // pile up until a full one. Past the soft limit, collect every so many bytes of query data
      // (some 10 ms each): a scan's peak stays some 100 MB lower. On a timer, as a query whose
      // filter matches little hands on few events (the query yields to timers between slices).
      const collector = setInterval(() => {
        if (churn() - collectedAt > MEMORY_GC_EVERY_BYTES && process.memoryUsage.rss() > MEMORY_SOFT_LIMIT) {
          collectedAt = churn();
          Bun.gc(true);
        }
      }, MEMORY_CHECK_MS);
      try {
        for await (const ev of prepared.events(w.signal, { sink: records, observer: { onStop } })) {
          if (w.signal.aborted) break;
          if (ev.type === "end") {
            w.send(`data:2${JSON.stringify(endBody(ev.end, opts.withOffsets, compiled.clamped))}`);
            break;
          }
          if (ev.type === "error") {
            w.send(errorLine(ev.error));
            break;
          }
          // Backpressure: while the response still holds bytes the socket would not take, wait
          // for the reader; the query is not pulled meanwhile, so nothing more is fetched.
          if (w.buffered > 0) {
            // Waiting for a slow reader is free time: collect then, more often.
            if (churn() - collectedAt > MEMORY_MIN_GC_BYTES && process.memoryUsage.rss() > MEMORY_SOFT_LIMIT) {
              collectedAt = churn();
              Bun.gc(false);
            }
            if (!stopped)
              await new Promise<void>((resolve) => {
                wakeOnStop = resolve;
                void w.drained().then(resolve);
              });
            wakeOnStop = null;
          }
          if (w.signal.aborted) break;
          w.sendBytes(ev.bytes);
        }
      } finally {
        if (timer) clearInterval(timer);
        clearInterval(collector);
      }
    },
  );
  return sseResponse(body);
}
