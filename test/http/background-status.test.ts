/**
 * Loupe's background jobs in GET /api/health: each job, in the order it starts, with whether it
 * runs and when it last ran or failed; the error's text stays in the log (the route is public).
 * The same status as gauges on /metrics.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { testStoreKind, testStoreSection } from "../helpers/store.ts";
import { waitFor } from "../helpers/wait.ts";

interface Job {
  name: string;
  enabled: boolean;
  running: boolean;
  lastRunAt: number | null;
  lastErrorAt: number | null;
}

const ORDER = [
  "audit-closing",
  "housekeeping",
  "metrics-log",
  "inventory",
  "offset-sampler",
  "lag-history",
  "lag-history-prune",
  "processor-engine",
  "processor-owners",
  "alert-delivery",
  "alert-evaluation",
  "alert-retention",
  // Only on a store other instances share (PostgreSQL): their audit entries and alerts, read.
  ...(testStoreKind() === "postgres" ? ["instance-events"] : []),
  "redrive-engine",
];

describe("24.3: the background jobs' status in GET /api/health", () => {
  test("24.3: every job, in start order, running, with its last run; all stopped at close", async () => {
    const rt = await testRuntime({ inventory: { refreshInterval: "5s" } });
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

  test("24: /metrics gives each job turned on as gauges: up, failed runs in a row, last success", async () => {
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
      const page = await waitFor(
        async () => {
          const text = await (await rt.request("/metrics")).text();
          return /^loupe_background_job_failed_runs\{job="offset-sampler"\} [1-9]/m.test(text) ? text : undefined;
        },
        { timeoutMs: 30_000, what: "the sampler's failed tick on /metrics" },
      );
      expect(page).toContain("# TYPE loupe_background_job_up gauge");
      expect(gauge(page, "loupe_background_job_up", "audit-closing")).toBe(1);
      expect(gauge(page, "loupe_background_job_up", "housekeeping")).toBe(1);
      expect(gauge(page, "loupe_background_job_up", "offset-sampler")).toBe(0);
      expect(gauge(page, "loupe_background_job_failed_runs", "audit-closing")).toBe(0);
      // 27: the notifications' retention, run at the start like the audit's.
      expect(gauge(page, "loupe_background_job_up", "alert-retention")).toBe(1);
      expect(gauge(page, "loupe_background_job_last_success_timestamp_seconds", "alert-retention")).toBeGreaterThan(0);
      const closedAt = rt.background.status().find((j) => j.name === "audit-closing")!.lastRunAt!;
      expect(gauge(page, "loupe_background_job_last_success_timestamp_seconds", "audit-closing")).toBe(closedAt / 1000);
      // A job turned off is not a job down: not on the page (GET /api/health lists it).
      expect(page).not.toContain('job="processor-engine"');
      // Not run yet: up, without a last success.
      expect(gauge(page, "loupe_background_job_up", "metrics-log")).toBe(1);
      expect(page).not.toContain('loupe_background_job_last_success_timestamp_seconds{job="metrics-log"}');
    } finally {
      await rt.dispose();
    }
  }, 60_000);

  test("24: audit closing that cannot close the entries a crash left open reports its failure (status, /metrics, log) and Loupe serves on", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "loupe-closing-"));
    // The store both starts open: the file in dataDir, or one PostgreSQL database.
    const store = await testStoreSection(dataDir);
    let second: TestRuntime | undefined;
    try {
      // A start that leaves an entry PENDING (as a crash does), and a store that refuses to change it.
      const first = await testRuntime({ dataDir, ...store.section });
      await first.audit.begin({ type: "TOPIC", change: "ADD", user: "wanda", content: {}, request: { topicName: "orders" } });
      if (first.store.kind === "postgres") {
        // A shared store's start closes only entries older than an hour: this one is made that old.
        await first.store.db
          .updateTable("audit")
          .set((eb) => ({ timestamp: eb("timestamp", "-", 2 * 3_600_000) }))
          .where("outcome", "=", "PENDING")
          .execute();
        await sql`CREATE FUNCTION audit_stuck() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit rows are stuck'; END $$`.execute(
          first.store.db,
        );
        await sql`CREATE TRIGGER audit_stuck BEFORE UPDATE ON audit FOR EACH ROW WHEN (OLD.outcome = 'PENDING') EXECUTE FUNCTION audit_stuck()`.execute(
          first.store.db,
        );
      } else
        await sql`CREATE TRIGGER audit_stuck BEFORE UPDATE ON audit WHEN OLD.outcome = 'PENDING' BEGIN SELECT RAISE(ABORT, 'audit rows are stuck'); END`.execute(
          first.store.db,
        );
      await first.dispose();
      second = await testRuntime({ dataDir, ...store.section });
      const closing = ((await (await second.request("/api/health")).json()) as { jobs: Job[] }).jobs.find(
        (j) => j.name === "audit-closing",
      );
      expect(closing).toMatchObject({ running: true, lastRunAt: null, lastErrorAt: expect.any(Number) });
      expect(second.background.status().find((j) => j.name === "audit-closing")!.lastError).toContain("audit rows are stuck");
      const page = await (await second.request("/metrics")).text();
      expect(gauge(page, "loupe_background_job_up", "audit-closing")).toBe(0);
      expect(gauge(page, "loupe_background_job_failed_runs", "audit-closing")).toBe(1);
      expect(second.sink.text()).toContain("audit entries left open could not be closed");
      expect(second.sink.lines.some((l) => l.includes("background job failed") && l.includes("audit-closing"))).toBe(true);
      // Serving: the entry is still there, still PENDING, for the next start to close.
      const entries = (await (await second.request("/api/audit?type=TOPIC", { role: "admin" })).json()) as {
        content: Record<string, string>;
      }[];
      expect(entries.find((e) => e.content.topicName === "orders")?.content.outcome).toBe("PENDING");
    } finally {
      await second?.dispose();
      await store.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});

/** The value of `name{job="<job>"}` on a /metrics page; undefined when absent. */
function gauge(page: string, name: string, job: string): number | undefined {
  const line = page.split("\n").find((l) => l.startsWith(`${name}{job="${job}"} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}
