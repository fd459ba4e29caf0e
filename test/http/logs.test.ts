import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { LogHub, RingBuffer } from "../../src/log/logger.ts";
import { MemorySink, type TestRuntime, testRuntime } from "../helpers/runtime.ts";

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
};

describe("logs", () => {
  test("GET /api/logs/INFO returns log lines in the SPEC shape", async () => {
    await rt.request("/api/health");
    const lines = (await (await rt.request("/api/logs/INFO", { role: "admin" })).json()) as any[];
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) expect(l).toEqual(SHAPE);
    expect(lines.some((l) => l.logger === "http" && l.message === "request")).toBe(true);
  });

  test("GET /api/logs/METRICS returns the periodic summary lines", async () => {
    await Bun.sleep(350);
    const lines = (await (await rt.request("/api/logs/METRICS", { role: "admin" })).json()) as any[];
    expect(lines.length).toBeGreaterThanOrEqual(2);
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

  test("retention by count and by age", () => {
    const hub = new LogHub("info", new MemorySink(), { maxLines: 3, maxAgeMs: 1000 });
    for (let i = 0; i < 5; i++) hub.logger("t").info(`l${i}`);
    expect(hub.recent("INFO").map((l) => l.message)).toEqual(["l2", "l3", "l4"]);
    expect(hub.recent("INFO", Date.now() + 1500)).toEqual([]);
  });

  test("ring buffer keeps order across wrap-around", () => {
    const rb = new RingBuffer<number>(3);
    for (const n of [1, 2, 3, 4, 5]) rb.push(n);
    expect(rb.toArray()).toEqual([3, 4, 5]);
  });
});
