/**
 * A query's answer streamed from `/api/sql/data` (Accept: text/event-stream), read with fetch so
 * the token stays in a header. Lines are `data:<type><JSON>`: 1 a record, 2 the end, 3 an
 * error, 4 statistics, 0 a heartbeat. Aborting the fetch ends the query on the server.
 */
import { clusterOf } from "./cluster.ts";
import { authHeaders } from "./session.ts";

export interface StreamedRecord {
  key: unknown;
  partition: number;
  offset: number;
  timestamp: number;
  /** The value's JSON text (or plain text when it is not JSON). */
  value: string;
}

export interface StreamHandlers {
  records(batch: StreamedRecord[]): void;
  stats(stats: Record<string, unknown>): void;
  end(end: Record<string, unknown>): void;
  error(message: string): void;
}

export function runQuery(sql: string, handlers: StreamHandlers, signal: AbortSignal): Promise<void> {
  return (async () => {
    const headers = authHeaders(clusterOf(window.location.search));
    headers.set("accept", "text/event-stream");
    const res = await fetch(`/api/sql/data?${new URLSearchParams({ sql, stats: "500" })}`, { headers, signal });
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
      const batch: StreamedRecord[] = [];
      let nl = rest.indexOf("\n");
      while (nl >= 0) {
        const line = rest.slice(0, nl);
        rest = rest.slice(nl + 1);
        if (line.startsWith("data:") && line.length > 6) {
          const type = line[5];
          const body = line.slice(6);
          if (type === "1") batch.push(JSON.parse(body) as StreamedRecord);
          else if (type === "4") handlers.stats(JSON.parse(body) as Record<string, unknown>);
          else if (type === "2") handlers.end(JSON.parse(body) as Record<string, unknown>);
          else if (type === "3") handlers.error(String((JSON.parse(body) as { error?: unknown }).error ?? body));
        }
        nl = rest.indexOf("\n");
      }
      if (batch.length > 0) handlers.records(batch);
    }
  })();
}
