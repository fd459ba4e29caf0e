import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { LogHub, RingBuffer } from "../../src/log/logger.ts";
import { MemorySink, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { waitFor } from "../helpers/wait.ts";

let rt: TestRuntime;
beforeAll(async () => {
  rt = await testRuntime({ log: { level: "info", metricsInterval: "100ms" } });
});
afterAll(() => rt.dispose());

const SHAPE = {
  timestamp: expect.any(Number),
  logger: expect.any(String),
  stacktrace: expect.any(String),
  thread: expect.any(String),
  message: expect.any(String),
  time: expect.any(String),
  level: expect.any(String),
  fields: expect.any(Object),
};

describe("logs", () => {
  test("GET /api/logs/INFO returns log lines in the SPEC shape", async () => {
    await rt.request("/api/health");
    const lines = (await (await rt.request("/api/logs/INFO", { role: "admin" })).json()) as any[];
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) expect(l).toEqual(SHAPE);
    expect(lines.some((l) => l.logger === "http" && l.message === "request")).toBe(true);
  });

  test("23: each line of GET /api/logs/INFO carries its structured fields, not the message alone ('request' with its method, path, status and user)", async () => {
    await rt.request("/api/topics", { role: "read" });
    const lines = (await (await rt.request("/api/logs/INFO", { role: "admin" })).json()) as any[];
    const request = lines.findLast((l) => l.logger === "http" && l.message === "request" && l.fields?.path === "/api/topics");
    expect(request?.fields).toEqual({
      requestId: expect.any(String),
      method: "GET",
      path: "/api/topics",
      status: 200,
      ms: expect.any(Number),
      user: "reed",
    });
  });

  test("23: kept fields are plain values: errors as their message, objects as JSON with secrets redacted at any depth, long texts cut", () => {
    const hub = new LogHub("info", new MemorySink());
    const big = "x".repeat(5_000);
    hub.logger("t").warn("processor runner failed", {
      processor: "p1",
      runner: 2,
      error: new Error("Compacted topic cannot accept message without key"),
      config: { url: "http://h", auth: { password: "pw-9" } },
      token: "tk",
      long: big,
      missing: undefined,
    });
    const [line] = hub.recent("INFO");
    expect(line!.fields).toEqual({
      processor: "p1",
      runner: 2,
      error: "Compacted topic cannot accept message without key",
      config: '{"url":"http://h","auth":{"password":"[redacted]"}}',
      token: "[redacted]",
      long: `${"x".repeat(2_000)}…`,
    });
  });

  test("GET /api/logs/METRICS returns the periodic summary lines", async () => {
    // Written every 100 ms: wait for two of them.
    const lines = await waitFor(
      async () => {
        const got = (await (await rt.request("/api/logs/METRICS", { role: "admin" })).json()) as any[];
        return got.length >= 2 && got;
      },
      { what: "two METRICS lines" },
    );
    for (const l of lines) expect(l).toEqual(SHAPE);
    expect(lines[0].level).toBe("METRICS");
    expect(lines[0].message).toMatch(/requests=\d+ .*openStreams=\d+ .*kafkaRttMs=/);
  });

  test("only admin reads logs", async () => {
    expect((await rt.request("/api/logs/INFO", { role: "write" })).status).toBe(403);
  });

  test("keeps the latest 512 lines and writes JSON lines with secrets redacted", () => {
    const sink = new MemorySink();
    const hub = new LogHub("info", sink);
    const log = hub.logger("t");
    for (let i = 0; i < 600; i++) log.info(`line ${i}`, { password: "pw-123", n: i });
    const kept = hub.info.toArray();
    expect(kept.length).toBe(512);
    expect(kept[0]!.message).toBe("line 88");
    expect(kept.at(-1)!.message).toBe("line 599");
    const rec = JSON.parse(sink.lines[0]!);
    expect(rec).toMatchObject({ level: "INFO", logger: "t", msg: "line 0", n: 0, password: "[redacted]" });
    expect(sink.text()).not.toContain("pw-123");
    hub.logger("t").debug("hidden");
    expect(sink.text()).not.toContain("hidden");
  });

  test("retention by count", () => {
    const hub = new LogHub("info", new MemorySink(), { maxLines: 3, maxAgeMs: 0 });
    for (let i = 0; i < 5; i++) hub.logger("t").info(`l${i}`);
    expect(hub.recent("INFO").map((l) => l.message)).toEqual(["l2", "l3", "l4"]);
  });

  test("retention by age, on the hub's clock", () => {
    let now = 1_700_000_000_000;
    const hub = new LogHub("info", new MemorySink(), { maxLines: 10, maxAgeMs: 1000, now: () => now });
    const log = hub.logger("t");
    log.info("old");
    log.metrics("old metrics");
    now += 600;
    log.info("newer");
    expect(hub.recent("INFO").map((l) => [l.message, l.timestamp])).toEqual([
      ["old", 1_700_000_000_000],
      ["newer", 1_700_000_000_600],
    ]);
    expect(hub.recent("INFO")[0]!.time).toBe(new Date(1_700_000_000_000).toISOString());
    now += 400; // "old" is exactly 1000 ms old: still kept
    expect(hub.recent("INFO").map((l) => l.message)).toEqual(["old", "newer"]);
    now += 1;
    expect(hub.recent("INFO").map((l) => l.message)).toEqual(["newer"]);
    expect(hub.recent("METRICS")).toEqual([]);
    now += 600;
    expect(hub.recent("INFO")).toEqual([]);
    // An explicit time overrides the clock.
    expect(hub.recent("INFO", 1_700_000_000_000).map((l) => l.message)).toEqual(["old", "newer"]);
  });

  test("ring buffer keeps order across wrap-around", () => {
    const rb = new RingBuffer<number>(3);
    for (const n of [1, 2, 3, 4, 5]) rb.push(n);
    expect(rb.toArray()).toEqual([3, 4, 5]);
  });
});
