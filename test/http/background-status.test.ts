/**
 * Loupe's background jobs in GET /api/health: each job, in the order it starts, with whether it
 * runs and when it last ran or failed; the error's text stays in the log (the route is public).
 */
import { describe, expect, test } from "bun:test";
import { testRuntime } from "../helpers/runtime.ts";
import { waitFor } from "../helpers/wait.ts";

interface Job {
  name: string;
  enabled: boolean;
  running: boolean;
  lastRunAt: number | null;
  lastErrorAt: number | null;
}

const ORDER = ["audit-closing", "housekeeping", "metrics-log", "offset-sampler", "lag-history", "processor-engine", "processor-owners"];

describe("24.3: the background jobs' status in GET /api/health", () => {
  test("24.3: every job, in start order, running, with its last run; all stopped at close", async () => {
    const rt = await testRuntime();
    try {
      const jobsOf = async () => ((await (await rt.request("/api/health")).json()) as { jobs: Job[] }).jobs;
      const started = Date.now();
      const jobs = await waitFor(
        async () => {
          const all = await jobsOf();
          // The sampler's first tick, the lag history's point of it and the engine's first tick.
          const ran = (name: string) => all.find((j) => j.name === name)?.lastRunAt != null;
          return ran("offset-sampler") && ran("lag-history") && ran("processor-engine") ? all : undefined;
        },
        { timeoutMs: 30_000, what: "the first runs of the sampler, the lag history and the engine" },
      );
      expect(jobs.map((j) => j.name)).toEqual(ORDER);
      for (const j of jobs) {
        expect(j).toEqual({ name: j.name, enabled: true, running: true, lastRunAt: j.lastRunAt, lastErrorAt: null });
      }
      // Run before serving: audit closing and the first housekeeping pass.
      for (const name of ["audit-closing", "housekeeping"]) {
        expect(jobs.find((j) => j.name === name)!.lastRunAt).toBeLessThanOrEqual(started);
      }
    } finally {
      await rt.dispose();
    }
    expect(rt.background.status().filter((j) => j.running)).toEqual([]);
  }, 60_000);

  test("24.3: a job turned off is listed, not running; a failing job shows when it failed, and the log says why", async () => {
    const rt = await testRuntime({
      processors: { enabled: false },
      kafka: {
        clusters: [
          { name: "local", bootstrapServers: process.env.KAFKA_BOOTSTRAP, default: true },
          { name: "gone", bootstrapServers: "127.0.0.1:1" },
        ],
      },
    });
    try {
      const jobs = await waitFor(
        async () => {
          const all = ((await (await rt.request("/api/health")).json()) as { jobs: Job[] }).jobs;
          return all.find((j) => j.name === "offset-sampler")?.lastErrorAt != null ? all : undefined;
        },
        { timeoutMs: 30_000, what: "the sampler's failed tick" },
      );
      expect(jobs.find((j) => j.name === "processor-engine")).toEqual({
        name: "processor-engine",
        enabled: false,
        running: false,
        lastRunAt: null,
        lastErrorAt: null,
      });
      expect(jobs.find((j) => j.name === "offset-sampler")).not.toHaveProperty("lastError");
      expect(rt.background.status().find((j) => j.name === "offset-sampler")!.lastError).toStartWith("cluster 'gone': ");
      await waitFor(() => rt.sink.lines.find((l) => l.includes("background job failed") && l.includes("offset-sampler")));
    } finally {
      await rt.dispose();
    }
  }, 60_000);
});
