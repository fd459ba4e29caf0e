/**
 * The UI's one reader of the API's event streams (`/api/sql/data`, `/api/sse/audit`): fetch, so
 * the token goes in a header and never in the URL (EventSource cannot send one), with Accept:
 * text/event-stream. It answers the refusal (status and the COMPAT body's message), or the
 * stream as the `data:` payloads of each network chunk; `:` lines (heartbeats) and empty `data:`
 * lines (a closing line) are left out. Aborting `signal` ends the stream on the server.
 * Pages do not read streams themselves: the SQL workbench goes through ui/stream.ts (its
 * framing of records, statistics and the end), live lists through `openFeed`.
 */
import { clusterOf } from "./cluster.ts";
import { authHeaders } from "./session.ts";

export type EventStream =
  | { ok: true; chunks: AsyncIterable<string[]> }
  | { ok: false; status: number; statusText: string; message: string | null };

export async function openEventStream(path: string, signal: AbortSignal, extra: Record<string, string> = {}): Promise<EventStream> {
  const headers = authHeaders(clusterOf(window.location.search));
  headers.set("accept", "text/event-stream");
  for (const [name, value] of Object.entries(extra)) headers.set(name, value);
  const res = await fetch(path, { headers, signal });
  if (!res.ok || !res.body) {
    let message: string | null = null;
    try {
      message = ((await res.json()) as { message?: string }).message ?? null;
    } catch {
      /* not JSON */
    }
    return { ok: false, status: res.status, statusText: res.statusText, message };
  }
  return { ok: true, chunks: payloads(res.body) };
}

/** The `data:` payloads of each chunk, in order; a line cut by a chunk's end waits for the next. */
async function* payloads(body: NonNullable<Response["body"]>): AsyncGenerator<string[]> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let rest = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    rest += value;
    const out: string[] = [];
    let from = 0;
    let nl = rest.indexOf("\n", from);
    while (nl >= 0) {
      const end = rest.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      if (end - from > 5 && rest.startsWith("data:", from)) out.push(rest.slice(from + 5, end));
      from = nl + 1;
      nl = rest.indexOf("\n", from);
    }
    rest = rest.slice(from);
    if (out.length > 0) yield out;
  }
}

export interface Feed {
  close(): void;
}

/** A live list's feed (`/api/sse/audit`): each `data:<JSON>` line is one event. */
export function openFeed<T>(
  path: string,
  onEvent: (event: T) => void,
  onState: (state: "open" | "closed" | "error", why?: string) => void,
): Feed {
  const abort = new AbortController();
  (async () => {
    const stream = await openEventStream(path, abort.signal);
    if (!stream.ok) {
      onState("error", `${stream.status} ${stream.statusText}`);
      return;
    }
    onState("open");
    for await (const chunk of stream.chunks) for (const payload of chunk) onEvent(JSON.parse(payload) as T);
    onState("closed");
  })().catch((err: unknown) => {
    if (!abort.signal.aborted) onState("error", err instanceof Error ? err.message : String(err));
  });
  return { close: () => abort.abort() };
}
