/**
 * A websocket client for the tests of Loupe's websockets, on the WebSocket built into Bun: it
 * keeps every text frame received, in order, and waits for frames with a deadline instead of
 * sleeping.
 */

import { waitFor } from "../helpers/wait.ts";

export class WsClient {
  readonly frames: string[] = [];
  closed: { code: number; reason: string } | null = null;
  #read = 0;

  private constructor(readonly ws: WebSocket) {
    ws.addEventListener("message", (e) => this.frames.push(typeof e.data === "string" ? e.data : new TextDecoder().decode(e.data)));
    ws.addEventListener("close", (e) => {
      this.closed = { code: e.code, reason: e.reason };
    });
  }

  /** Opens a socket; rejects when the handshake fails. */
  static open(base: URL, path: string, headers: Record<string, string> = {}): Promise<WsClient> {
    const url = new URL(path, base);
    url.protocol = "ws:";
    // Bun's WebSocket takes handshake headers, as the Java and Go clients send them.
    const ws = new WebSocket(url.href, { headers });
    const client = new WsClient(ws);
    return new Promise((resolve, reject) => {
      ws.addEventListener("open", () => resolve(client), { once: true });
      ws.addEventListener("error", () => reject(new Error(`handshake of ${path} failed`)), { once: true });
    });
  }

  send(text: string): void {
    this.ws.send(text);
  }

  /** The next frame not read yet. */
  async next(timeoutMs = 10_000): Promise<string> {
    await waitFor(() => this.frames.length > this.#read || this.closed !== null, { timeoutMs, what: "a frame" });
    if (this.frames.length <= this.#read) throw new Error(`the socket closed (${JSON.stringify(this.closed)}) before another frame`);
    return this.frames[this.#read++]!;
  }

  /** Waits until the socket is closed. */
  async whenClosed(timeoutMs = 10_000): Promise<{ code: number; reason: string }> {
    return waitFor(() => this.closed, { timeoutMs, what: "the socket to close" });
  }

  close(): void {
    this.ws.close();
  }
}

/** A reply of the live websocket. */
export interface LiveFrame {
  type: string;
  correlationId: number;
  content: unknown;
}

export interface LiveRecord {
  timestamp: number;
  partition: number;
  key: string | null;
  offset: number;
  topic: string;
  value: string;
}

/** The live websocket as the Go and Python clients speak it. */
export class LiveClient {
  #records: LiveRecord[] = [];
  #replies: LiveFrame[] = [];
  #read = 0;

  private constructor(readonly ws: WsClient) {}

  static async open(base: URL, clientId: string, headers: Record<string, string> = {}): Promise<LiveClient> {
    return new LiveClient(await WsClient.open(base, `/api/kafka/ws/${encodeURIComponent(clientId)}`, headers));
  }

  /** Sends a request as the clients do: content as JSON text in a string. */
  request(type: string, correlationId: number, content: unknown, authToken = ""): void {
    this.ws.send(
      JSON.stringify({ type, correlationId, content: typeof content === "string" ? content : JSON.stringify(content), authToken }),
    );
  }

  #drain(): void {
    for (; this.#read < this.ws.frames.length; this.#read++) {
      const f = JSON.parse(this.ws.frames[this.#read]!) as LiveFrame;
      if (f.type === "KAFKAMSG") this.#records.push(...(f.content as LiveRecord[]));
      else this.#replies.push(f);
    }
  }

  /** The reply to `correlationId` (whatever else came meanwhile is kept). */
  async reply(correlationId: number, timeoutMs = 15_000): Promise<LiveFrame> {
    return waitFor(
      () => {
        this.#drain();
        const i = this.#replies.findIndex((r) => r.correlationId === correlationId);
        return i < 0 ? null : this.#replies.splice(i, 1)[0]!;
      },
      { timeoutMs, what: `the reply to request ${correlationId}` },
    );
  }

  /** Records received so far (KAFKAMSG contents, in order). */
  records(): LiveRecord[] {
    this.#drain();
    return this.#records;
  }

  /** Replies received so far that no reply() took. */
  replies(): LiveFrame[] {
    this.#drain();
    return this.#replies;
  }

  async waitForRecords(n: number, timeoutMs = 15_000): Promise<LiveRecord[]> {
    return waitFor(() => this.records().length >= n && this.records(), { timeoutMs, what: `${n} records` });
  }

  close(): void {
    this.ws.close();
  }
}
