/**
 * A query's answer streamed from `/api/sql/data`, read by the UI's one stream reader (ui/sse.ts).
 * Lines are `data:<type><JSON>`: 1 a record, 2 the end, 3 an error, 4 statistics, 0 a
 * heartbeat. Aborting the fetch ends the query on the server.
 */
import type { RecordHeaderText } from "../src/engine/schemas.ts";
import { openEventStream } from "./sse.ts";

export interface StreamedRecord {
  key: unknown;
  partition: number;
  offset: number;
  timestamp: number;
  /** The value's JSON text (or plain text when it is not JSON). */
  value: string;
  /** The record's Kafka headers, in order (asked for with `headers`). */
  headers?: RecordHeaderText[];
}

export interface StreamHandlers {
  records(batch: StreamedRecord[]): void;
  stats(stats: Record<string, unknown>): void;
  end(end: Record<string, unknown>): void;
  error(message: string): void;
}

/** Work on one network chunk gives the page a turn after this long (ms): rendering keeps up. */
const SLICE_MS = 8;

const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

export interface RunOptions {
  /** false: the run is the page's own (a sample for completion), not kept in the user's history. */
  history?: boolean;
  /** Each record carries its headers. */
  headers?: boolean;
  /** The end record's `resume` of an earlier run of the same query: this run reads on from there. */
  resume?: string;
}

export function runQuery(sql: string, handlers: StreamHandlers, signal: AbortSignal, options: RunOptions = {}): Promise<void> {
  return (async () => {
    const params = new URLSearchParams({ sql, stats: "500" });
    if (options.headers) params.set("headers", "true");
    if (options.resume) params.set("resume", options.resume);
    const stream = await openEventStream(`/api/sql/data?${params}`, signal, options.history === false ? { "x-loupe-history": "skip" } : {});
    if (!stream.ok) {
      handlers.error(stream.message ?? `${stream.status} ${stream.statusText}`);
      return;
    }
    for await (const chunk of stream.chunks) {
      // A chunk can hold 10,000 records: parsed in slices of a few milliseconds, each handed
      // on before the page gets a turn, so no task holds the main thread long.
      let batch: StreamedRecord[] = [];
      let sliceStart = performance.now();
      for (let i = 0; i < chunk.length; i++) {
        const payload = chunk[i]!;
        if (payload.length < 2) continue;
        const type = payload[0];
        const body = payload.slice(1);
        if (type === "1") batch.push(JSON.parse(body) as StreamedRecord);
        else if (type === "4") handlers.stats(JSON.parse(body) as Record<string, unknown>);
        else if (type === "2") handlers.end(JSON.parse(body) as Record<string, unknown>);
        else if (type === "3") handlers.error(String((JSON.parse(body) as { error?: unknown }).error ?? body));
        if (i + 1 < chunk.length && (batch.length & 255) === 0 && batch.length > 0 && performance.now() - sliceStart > SLICE_MS) {
          handlers.records(batch);
          batch = [];
          await nextTurn();
          if (signal.aborted) return;
          sliceStart = performance.now();
        }
      }
      if (batch.length > 0) handlers.records(batch);
    }
  })();
}
