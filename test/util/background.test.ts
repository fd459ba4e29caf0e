// @no-services
/**
 * Background work in one place (src/util/background.ts): jobs registered once, started in order,
 * stopped in the reverse order, each with its status.
 */
import { describe, expect, test } from "bun:test";
import { Background, type BackgroundJob, periodicJob } from "../../src/util/background.ts";
import { waitFor } from "../helpers/wait.ts";

function recorder() {
  const events: string[] = [];
  const job = (name: string, opts: { enabled?: boolean; failStart?: boolean } = {}): BackgroundJob => ({
    name,
    ...(opts.enabled === undefined ? {} : { enabled: opts.enabled }),
    start: async (runs) => {
      events.push(`start ${name}`);
      if (opts.failStart) throw new Error(`${name} cannot start`);
      runs.ran();
    },
    stop: async () => {
      events.push(`stop ${name}`);
    },
  });
  return { events, job };
}

describe("24.3: background work has one home", () => {
  test("24.3: jobs start in the order registered, stop in the reverse order, and say their status", async () => {
    let now = 1_000;
    const logged: string[] = [];
    const bg = new Background({
      now: () => now,
      log: {
        failed: (job, err) => logged.push(`failed ${job}: ${(err as Error).message}`),
        recovered: (job, n) => logged.push(`recovered ${job} after ${n}`),
        stopFailed: (job) => logged.push(`stop failed ${job}`),
      },
    });
    const { events, job } = recorder();
    let runs: Parameters<BackgroundJob["start"]>[0] | undefined;
    bg.register(job("a"));
    bg.register(job("off", { enabled: false }));
    bg.register({ name: "b", start: (r) => void (runs = r), stop: () => void events.push("stop b") });
    expect(() => bg.register(job("a"))).toThrow("background job 'a' is registered twice");
    expect(bg.status().map((s) => [s.name, s.running])).toEqual([
      ["a", false],
      ["off", false],
      ["b", false],
    ]);
    await bg.start();
    expect(events).toEqual(["start a"]);
    expect(bg.status()).toEqual([
      { name: "a", enabled: true, running: true, lastRunAt: 1_000, lastErrorAt: null, lastError: null, failedRuns: 0 },
      { name: "off", enabled: false, running: false, lastRunAt: null, lastErrorAt: null, lastError: null, failedRuns: 0 },
      { name: "b", enabled: true, running: true, lastRunAt: null, lastErrorAt: null, lastError: null, failedRuns: 0 },
    ]);
    // Failures: told once per run of failures, then once when it works again.
    now = 2_000;
    runs!.failed(new Error("broker down"));
    now = 3_000;
    runs!.failed(new Error("broker still down"));
    expect(bg.status()[2]).toMatchObject({ lastRunAt: null, lastErrorAt: 3_000, lastError: "broker still down", failedRuns: 2 });
    now = 4_000;
    runs!.ran();
    expect(bg.status()[2]).toMatchObject({ lastRunAt: 4_000, lastErrorAt: 3_000, failedRuns: 0 });
    expect(logged).toEqual(["failed b: broker down", "recovered b after 2"]);
    await bg.stop();
    expect(events).toEqual(["start a", "stop b", "stop a"]);
    expect(bg.status().every((s) => !s.running)).toBe(true);
    expect(() => bg.register(job("late"))).toThrow("registered after the start");
  });

  test("24.3: a job that fails to start stops those started before it, in reverse order", async () => {
    const bg = new Background();
    const { events, job } = recorder();
    bg.register(job("a"));
    bg.register(job("b"));
    bg.register(job("c", { failStart: true }));
    bg.register(job("d"));
    await expect(bg.start()).rejects.toThrow("c cannot start");
    expect(events).toEqual(["start a", "start b", "start c", "stop b", "stop a"]);
    expect(bg.status().find((s) => s.name === "c")).toMatchObject({ running: false, lastError: "c cannot start" });
  });

  test("24.3: a periodic job runs at the start (awaited), reports each run, and its stop waits for the run under way", async () => {
    const bg = new Background();
    let n = 0;
    let release: (() => void) | null = null;
    bg.register(
      periodicJob("tick", 5, async () => {
        n++;
        if (n === 2) throw new Error("second run failed");
        if (n === 3) await new Promise<void>((r) => (release = r));
      }),
    );
    await bg.start();
    expect(n).toBe(1);
    expect(bg.status()[0]!.lastRunAt).not.toBeNull();
    await waitFor(() => release !== null, { timeoutMs: 5_000 });
    expect(bg.status()[0]!.lastError).toBe("second run failed");
    let stopped = false;
    const stopping = bg.stop().then(() => (stopped = true));
    // The run under way holds the stop: a turn of the event loop later it is still stopping.
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    (release as unknown as () => void)();
    await stopping;
    expect(n).toBe(3);
  });
});
