/**
 * A live feed of the API (`/api/sse/audit`): read with fetch, so the token goes in a header and
 * never in the URL (EventSource cannot send one). Lines are `data:<JSON>`; `:` lines are
 * heartbeats; the server's closing line is a bare `data:`.
 */
import { clusterOf } from "./cluster.ts";
import { authHeaders } from "./session.ts";

export interface Feed {
  close(): void;
}

export function openFeed<T>(
  path: string,
  onEvent: (event: T) => void,
  onState: (state: "open" | "closed" | "error", why?: string) => void,
): Feed {
  const abort = new AbortController();
  (async () => {
    const headers = authHeaders(clusterOf(window.location.search));
    headers.set("accept", "text/event-stream");
    const res = await fetch(path, { headers, signal: abort.signal });
    if (!res.ok || !res.body) {
      onState("error", `${res.status} ${res.statusText}`);
      return;
    }
    onState("open");
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let rest = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      rest += value;
      let nl = rest.indexOf("\n");
      while (nl >= 0) {
        const line = rest.slice(0, nl).replace(/\r$/, "");
        rest = rest.slice(nl + 1);
        if (line.startsWith("data:") && line.length > 5) onEvent(JSON.parse(line.slice(5)) as T);
        nl = rest.indexOf("\n");
      }
    }
    onState("closed");
  })().catch((err: unknown) => {
    if (!abort.signal.aborted) onState("error", err instanceof Error ? err.message : String(err));
  });
  return { close: () => abort.abort() };
}
