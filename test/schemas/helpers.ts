/** What the registry proxy tests share: schemas, the media types, and local stand-in hosts. */
import type { Server, Socket, TCPSocketListener } from "bun";
import { uniqueTopic } from "../cluster/cluster.ts";

export const VND = "application/vnd.schemaregistry.v1+json";
export const REGISTRY_TYPES = [VND, "application/vnd.schemaregistry+json", "application/json"];

/** The headers of the Go client (GO c): Accept vnd on every call, and as Content-Type on writes, bodiless DELETE included. */
export const GO = { read: { accept: VND }, write: { accept: VND, "content-type": VND } };
/** The Python client (PY SchemasHandler): application/json both ways. */
export const PY = {
  read: { accept: "application/json", "content-type": "application/json" },
  write: { accept: "application/json", "content-type": "application/json" },
};

export const subjectName = (prefix = "sr") => `${uniqueTopic(prefix)}-value`;

/** An Avro record schema as the clients send it: `{"schema": "<avro text>"}`. */
export function avro(fields: Array<{ name: string; type: string; default?: unknown }>, name = "Rec"): string {
  return JSON.stringify({ schema: JSON.stringify({ type: "record", name, namespace: "loupe.test", fields }) });
}
export const V1 = avro([{ name: "a", type: "int" }]);
/** Backward compatible with V1 (a new field with a default). */
export const V2 = avro([
  { name: "a", type: "int" },
  { name: "b", type: "string", default: "x" },
]);
/** Incompatible with V1 under BACKWARD (a's type changes). */
export const BAD = avro([{ name: "a", type: "string" }]);

export interface Recorded {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: string;
}

/** A stand-in host that records what reaches it and answers `answer` (read at each request, so a test may change it). */
export function recorder(answer: { status?: number; body?: string; type?: string } = {}): {
  url: string;
  seen: Recorded[];
  stop(): void;
} {
  const seen: Recorded[] = [];
  const server: Server<undefined> = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (req) => {
      seen.push({ method: req.method, url: new URL(req.url), headers: Object.fromEntries(req.headers), body: await req.text() });
      return new Response(answer.body ?? "[]", { status: answer.status ?? 200, headers: { "content-type": answer.type ?? VND } });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, seen, stop: () => server.stop(true) };
}

/** A host that accepts connections and never answers: what a hung registry looks like. */
export function silentHost(): { url: string; stop(): void } {
  const sockets: Socket<undefined>[] = [];
  const listener: TCPSocketListener<undefined> = Bun.listen<undefined>({
    hostname: "127.0.0.1",
    port: 0,
    socket: { open: (s) => void sockets.push(s), data: () => {} },
  });
  return {
    url: `http://127.0.0.1:${listener.port}`,
    stop: () => {
      for (const s of sockets) s.end();
      listener.stop(true);
    },
  };
}

/** A URL nothing listens on: connection refused at once. */
export const REFUSED = "http://127.0.0.1:1";
