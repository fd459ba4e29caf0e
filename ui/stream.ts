/**
 * A query's answer streamed from `/api/sql/data` (Accept: text/event-stream), read with fetch so
 * the token stays in a header. Lines are `data:<type><JSON>`: 1 a record, 2 the end, 3 an
 * error, 4 statistics, 0 a heartbeat. Aborting the fetch ends the query on the server.
 */
import type { RecordHeaderText } from "../src/engine/schemas.ts";
import { clusterOf } from "./cluster.ts";
import { authHeaders } from "./session.ts";

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
    const headers = authHeaders(clusterOf(window.location.search));
    headers.set("accept", "text/event-stream");
    if (options.history === false) headers.set("x-loupe-history", "skip");
    const params = new URLSearchParams({ sql, stats: "500" });
    if (options.headers) params.set("headers", "true");
    if (options.resume) params.set("resume", options.resume);
    const res = await fetch(`/api/sql/data?${params}`, { headers, signal });
    if (!res.ok || !res.body) {
      let message = `${res.status} ${res.statusText}`;
      try {
        const body = (await res.json()) as { message?: string };
        if (body.message) message = body.message;
      } catch {
        /* not JSON */
      }
      handlers.error(message);
      return;
    }
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let rest = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      rest += value;
      // A chunk can hold 10,000 records: parsed in slices of a few milliseconds, each handed
      // on before the page gets a turn, so no task holds the main thread long.
      let batch: StreamedRecord[] = [];
      let from = 0;
      let sliceStart = performance.now();
      let nl = rest.indexOf("\n", from);
      while (nl >= 0) {
        if (rest.startsWith("data:", from) && nl - from > 6) {
          const type = rest[from + 5];
          const body = rest.slice(from + 6, nl);
          if (type === "1") batch.push(JSON.parse(body) as StreamedRecord);
          else if (type === "4") handlers.stats(JSON.parse(body) as Record<string, unknown>);
          else if (type === "2") handlers.end(JSON.parse(body) as Record<string, unknown>);
          else if (type === "3") handlers.error(String((JSON.parse(body) as { error?: unknown }).error ?? body));
        }
        from = nl + 1;
        nl = rest.indexOf("\n", from);
        if (nl >= 0 && (batch.length & 255) === 0 && batch.length > 0 && performance.now() - sliceStart > SLICE_MS) {
          handlers.records(batch);
          batch = [];
          await nextTurn();
          if (signal.aborted) return;
          sliceStart = performance.now();
        }
      }
      rest = rest.slice(from);
      if (batch.length > 0) handlers.records(batch);
    }
  })();
}
