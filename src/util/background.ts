/**
 * Background work, in one place: each job (the end-offset sampler, the lag history, the
 * processor engine, audit closing, housekeeping) is registered once, with how it starts and
 * stops. The composition root starts them in the order registered and stops them in the
 * reverse order; each reports its runs, so its status (running, last run, last error) is one
 * answer for operators (GET /api/health) instead of a log search.
 */

/** What a job tells of its runs (one tick, one pass): it worked, or it failed with this error. */
export interface RunObserver {
  ran(): void;
  failed(error: unknown): void;
}

export interface BackgroundJob {
  /** Unique, kebab-case: `offset-sampler`, `processor-engine`. */
  name: string;
  /** False when the configuration turns it off: it is listed, not started. */
  enabled?: boolean;
  /** Starts it (a first pass may be awaited: Loupe serves after every job started). */
  start(runs: RunObserver): void | Promise<void>;
  /** Stops it; awaited before the next job (in reverse order) stops. */
  stop(): void | Promise<void>;
}

export interface JobStatus {
  name: string;
  enabled: boolean;
  /** Started and not stopped. */
  running: boolean;
  /** Epoch ms of the last run that worked; null before the first. */
  lastRunAt: number | null;
  /** Epoch ms of the last run that failed; null when none did. */
  lastErrorAt: number | null;
  /** What the last failed run said; null when none failed. */
  lastError: string | null;
  /** Runs that failed since the last that worked (0: the last run worked, or none ran yet). */
  failedRuns: number;
}

/** Where a job's failures are told (the log): once when a run fails after one that worked (or the first), and at a stop that fails. */
export interface BackgroundLog {
  failed(job: string, error: unknown): void;
  recovered(job: string, failedRuns: number): void;
  stopFailed(job: string, error: unknown): void;
}

interface Entry {
  job: BackgroundJob;
  status: JobStatus;
}

export class Background {
  readonly #entries: Entry[] = [];
  readonly #now: () => number;
  readonly #log: BackgroundLog | undefined;
  #started = false;

  constructor(opts: { now?: () => number; log?: BackgroundLog } = {}) {
    this.#now = opts.now ?? Date.now;
    this.#log = opts.log;
  }

  /** Registers a job, once: a second job of the same name is a wiring error. */
  register(job: BackgroundJob): void {
    if (this.#entries.some((e) => e.job.name === job.name)) throw new Error(`background job '${job.name}' is registered twice`);
    if (this.#started) throw new Error(`background job '${job.name}' is registered after the start`);
    this.#entries.push({
      job,
      status: {
        name: job.name,
        enabled: job.enabled !== false,
        running: false,
        lastRunAt: null,
        lastErrorAt: null,
        lastError: null,
        failedRuns: 0,
      },
    });
  }

  /**
   * Starts the enabled jobs one after another, in the order registered. A job that fails to
   * start stops those started before it (in reverse order), and the error is thrown.
   */
  async start(): Promise<void> {
    this.#started = true;
    for (const entry of this.#entries) {
      if (!entry.status.enabled || entry.status.running) continue;
      try {
        entry.status.running = true;
        await entry.job.start(this.#observer(entry));
      } catch (err) {
        entry.status.running = false;
        this.#observer(entry).failed(err);
        await this.stop();
        throw err;
      }
    }
  }

  /** Stops the running jobs in the reverse order; a stop that fails is told, and the others still stop. */
  async stop(): Promise<void> {
    for (const entry of [...this.#entries].reverse()) {
      if (!entry.status.running) continue;
      entry.status.running = false;
      try {
        await entry.job.stop();
      } catch (err) {
        this.#log?.stopFailed(entry.job.name, err);
      }
    }
  }

  /** Every registered job's status, in the order registered. */
  status(): JobStatus[] {
    return this.#entries.map((e) => ({ ...e.status }));
  }

  #observer(entry: Entry): RunObserver {
    const status = entry.status;
    return {
      ran: () => {
        status.lastRunAt = this.#now();
        if (status.failedRuns > 0) this.#log?.recovered(status.name, status.failedRuns);
        status.failedRuns = 0;
      },
      failed: (error) => {
        status.lastErrorAt = this.#now();
        status.lastError = error instanceof Error ? error.message : String(error);
        if (status.failedRuns++ === 0) this.#log?.failed(status.name, error);
      },
    };
  }
}

export interface PeriodicOptions {
  enabled?: boolean;
  /** Runs once at the start, awaited (default); false: first after `everyMs`. */
  runAtStart?: boolean;
  /**
   * Whether this instance is the one to run it now, asked before each run: of instances sharing
   * the store, one runs the job (the holder of a lease, src/db/lease.ts, taken and renewed here).
   * A run skipped for it is neither a run nor a failure.
   */
  elected?: () => Promise<boolean>;
}

/**
 * A job that runs `run` now (awaited at the start) and then every `everyMs`, one run at a time;
 * a run that throws is reported and the next one still comes.
 */
export function periodicJob(name: string, everyMs: number, run: () => Promise<void> | void, opts: PeriodicOptions = {}): BackgroundJob {
  let timer: ReturnType<typeof setInterval> | null = null;
  let running: Promise<void> | null = null;
  return {
    name,
    ...(opts.enabled === undefined ? {} : { enabled: opts.enabled }),
    async start(runs) {
      const once = async () => {
        if (running) return running;
        running = (async () => {
          try {
            if (opts.elected && !(await opts.elected())) return;
            await run();
            runs.ran();
          } catch (err) {
            runs.failed(err);
          } finally {
            running = null;
          }
        })();
        return running;
      };
      if (opts.runAtStart !== false) await once();
      timer = setInterval(() => void once(), everyMs);
      timer.unref?.();
    },
    async stop() {
      if (timer !== null) clearInterval(timer);
      timer = null;
      await running;
    },
  };
}
