// @no-services
import { afterAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { type SseWriter, StreamRegistry, sseResponse, sseStream } from "../../src/http/sse.ts";

/** Real server sockets: the point is how the helper behaves against a real TCP peer. */
type Outcome = { reason?: string; sent: number; aborted: boolean };
const servers: { stop(force: boolean): unknown }[] = [];
afterAll(() => {
  for (const s of servers) s.stop(true);
});

function serveStream(producer: (w: SseWriter, out: Outcome) => Promise<void>, maxBufferedBytes = 256 * 1024) {
  const outcome: Outcome = { sent: 0, aborted: false };
  let closed!: () => void;
  const done = new Promise<void>((r) => (closed = r));
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      return sseResponse(
        sseStream(
          {
            heartbeat: "data:0",
            heartbeatMs: 50,
            maxBufferedBytes,
            errorLine: (e) => `data:3${JSON.stringify({ error: String(e) })}`,
            endLine: "data:2{}",
            requestSignal: req.signal,
            onClose: (why) => {
              outcome.reason = why;
              closed();
            },
          },
          (w) => producer(w, outcome),
        ),
      );
    },
  });
  servers.push(server);
  return { url: `http://127.0.0.1:${server.port}/`, port: server.port!, outcome, done };
}

describe("SSE helper", () => {
  test("cuts off a client that does not read, with bounded memory", async () => {
    const chunk = "data:1" + "x".repeat(16 * 1024);
    const { port, outcome, done } = serveStream(async (w, out) => {
      while (!w.signal.aborted) {
        if (!w.send(chunk)) break;
        out.sent += chunk.length;
        if (w.buffered > 128 * 1024) await Promise.race([w.drained(), Bun.sleep(20)]);
      }
      out.aborted = w.signal.aborted;
    });
    const sock = connect(port, "127.0.0.1");
    sock.on("error", () => {});
    sock.write(`GET / HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n`);
    sock.pause(); // never read: the kernel buffers fill, then ours
    await Promise.race([done, Bun.sleep(20_000)]);
    sock.destroy();
    expect(outcome.reason).toBe("overflow");
    expect(outcome.aborted).toBe(true);
    // Bounded: what was produced is what the socket buffers held plus our bound, not unbounded.
    expect(outcome.sent).toBeLessThan(64 * 1024 * 1024);
  });

  test("stops the producer within a second when the client aborts", async () => {
    let abortedAt = 0;
    const { url, outcome, done } = serveStream(
      (w) =>
        new Promise<void>((resolve) => {
          const t = setInterval(() => w.send(`data:1{"n":1}`), 10);
          w.signal.addEventListener("abort", () => {
            abortedAt = Date.now();
            clearInterval(t);
            resolve();
          });
        }),
    );
    const ac = new AbortController();
    const res = await fetch(url, { signal: ac.signal, headers: { accept: "text/event-stream" } });
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toStartWith("data:");
    const t0 = Date.now();
    ac.abort();
    await Promise.race([done, Bun.sleep(3000)]);
    expect(outcome.reason).toBe("client");
    expect(abortedAt - t0).toBeLessThan(1000);
  });

  test("sends heartbeats and a final line on success and on error", async () => {
    // The record goes out once the client has read two heartbeats (every 50 ms).
    let heartbeatsSeen!: () => void;
    const twoHeartbeats = new Promise<void>((resolve) => (heartbeatsSeen = resolve));
    const ok = serveStream(async (w) => {
      await twoHeartbeats;
      w.send(`data:1{"a":1}`);
    });
    const reader = (await fetch(ok.url)).body!.getReader();
    let text = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
      if (text.split("\n").filter((l) => l === "data:0").length >= 2) heartbeatsSeen();
    }
    const lines = text.split("\n").filter(Boolean);
    expect(lines.filter((l) => l === "data:0").length).toBeGreaterThanOrEqual(2);
    expect(lines.at(-2)).toBe(`data:1{"a":1}`);
    expect(lines.at(-1)).toBe("data:2{}");
    expect(lines.every((l) => l.startsWith("data:"))).toBe(true);

    const bad = serveStream(async () => {
      throw new Error("boom");
    });
    const errText = await (await fetch(bad.url)).text();
    expect(errText.trim().split("\n").filter(Boolean).at(-1)).toBe(`data:3{"error":"Error: boom"}`);
  });

  // Regression: a single message larger than the bound (a batch of large records) cut off a
  // client that had read everything, as if it were too slow.
  test("delivers one message larger than the bound to a client that keeps up", async () => {
    const big = "data:1" + "y".repeat(100 * 1024);
    const { url, outcome, done } = serveStream(async (w) => {
      for (let i = 0; i < 5; i++) {
        await w.drained();
        w.send(big);
      }
    }, 32 * 1024);
    const text = await (await fetch(url)).text();
    await done;
    expect(outcome.reason).toBe("end");
    expect(text.split("\n").filter((l) => l.startsWith("data:1")).length).toBe(5);
  });

  test("closeAll ends open streams with their error line, waits for them, and refuses new ones", async () => {
    const reg = new StreamRegistry(4);
    let closedWhy: string | undefined;
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch(req) {
        // The request context a route hands over: the registry reads the session and rule from it.
        const release = reg.acquire("u", { get: () => undefined, req: { raw: req } } as never);
        return sseResponse(
          sseStream(
            {
              heartbeat: "data:0",
              heartbeatMs: 50,
              maxBufferedBytes: 1 << 16,
              errorLine: (e) => `data:3${JSON.stringify({ error: (e as Error).message })}`,
              endLine: "data:2{}",
              requestSignal: req.signal,
              onClose: (why) => {
                closedWhy = why;
                release();
              },
            },
            (w) => new Promise<void>((resolve) => w.signal.addEventListener("abort", () => resolve())),
          ),
        );
      },
    });
    servers.push(server);
    const res = await fetch(`http://127.0.0.1:${server.port}/`);
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toStartWith("data:0");
    expect(reg.total).toBe(1);
    await reg.closeAll(new Error("server stopping"), 2_000);
    expect(closedWhy).toBe("error");
    expect(reg.total).toBe(0);
    let rest = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(rest.split("\n").filter(Boolean).at(-1)).toBe(`data:3{"error":"server stopping"}`);
    expect(() => reg.acquire("v")).toThrow("The server is stopping");
  });

  test("caps open streams per user", () => {
    const reg = new StreamRegistry(2);
    const a = reg.acquire("u");
    reg.acquire("u");
    expect(() => reg.acquire("u")).toThrow("At most 2 open streams per user");
    reg.acquire("v");
    a();
    a(); // releasing twice counts once
    expect(reg.total).toBe(2);
    reg.acquire("u");
  });
});
