/**
 * Runs the store's RUNNING redrive jobs in this instance: every tick it takes the lease of each
 * such job that is free (or renews its own), runs the jobs it holds, and stops those paused,
 * cancelled or whose lease another instance took. A job's lease is its row (repo.ts); its
 * position is in Kafka, so a job taken over (a crash, a restart) goes on where its last
 * transaction left it.
 */
import type { Logger } from "../../log/logger.ts";
import type { RunObserver } from "../../util/background.ts";
import { Ticker } from "../../util/ticker.ts";
import type { RedriveRepo, RedriveRow } from "./repo.ts";
import type { RedriveRunner, RunEnd } from "./runner.ts";

export interface RedriveEngineOptions {
  repo: RedriveRepo;
  /** This instance's name in the leases. */
  instance: string;
  log: Logger;
  /** A runner for the job, started. */
  runner(job: RedriveRow): RedriveRunner;
  /** What the store and the audit log keep of how a run ended (not called for STOPPED). */
  ended(job: RedriveRow, end: Exclude<RunEnd, { end: "STOPPED" }>): Promise<void>;
  /** Checks the owner's rights of a job running here (now and then): a reason when they no longer hold. */
  recheck?(job: RedriveRow, runner: RedriveRunner): Promise<void>;
  tickMs?: number;
  leaseMs?: number;
  /** How often the owners of the jobs running here are checked again. */
  recheckMs?: number;
}

interface Local {
  job: RedriveRow;
  runner: RedriveRunner;
  checkedAt: number;
}

export class RedriveEngine {
  readonly #o: RedriveEngineOptions;
  readonly #local = new Map<string, Local>();
  /** Jobs whose runner ended here and whose end is being stored: not started again meanwhile. */
  readonly #ending = new Set<string>();
  readonly #ticker: Ticker;

  constructor(opts: RedriveEngineOptions) {
    this.#o = opts;
    this.#ticker = new Ticker({
      everyMs: opts.tickMs ?? 1_000,
      tick: () => this.#tick(),
      failed: (err) => opts.log.warn("redrive engine tick failed", {}, err),
    });
  }

  /** Ticks now and every tickMs; `runs` hears of each tick. */
  start(runs?: RunObserver): void {
    this.#ticker.start(runs);
  }

  /** Runs a tick now (after a change through the API), or right after the one running. */
  kick(): Promise<void> {
    return this.#ticker.kick();
  }

  /** Access changed (a group, a user): the owners of the jobs running here are checked at the next tick, which starts now. */
  recheckOwners(): void {
    for (const local of this.#local.values()) local.checkedAt = 0;
    void this.kick();
  }

  async stop(): Promise<void> {
    await this.#ticker.stop();
    await Promise.all([...this.#local.keys()].map((id) => this.#stopLocal(id)));
  }

  async #tick(): Promise<void> {
    const o = this.#o;
    const jobs = await o.repo.running();
    const running = new Set(jobs.map((j) => j.id));
    for (const id of [...this.#local.keys()]) if (!running.has(id)) await this.#stopLocal(id);
    for (const job of jobs) {
      if (this.#ticker.stopped) return;
      if (this.#ending.has(job.id)) continue;
      // One job that cannot start (its cluster gone from the config) does not hold the others up.
      await this.#tend(job).catch((err: unknown) => o.log.warn("redrive not started", { redrive: job.id }, err));
    }
  }

  /** Takes or renews the job's lease and runs it here; stops it when another instance holds it. */
  async #tend(job: RedriveRow): Promise<void> {
    const o = this.#o;
    const held = await o.repo.leases.acquire([job.id], o.instance, o.leaseMs ?? 10_000);
    const local = this.#local.get(job.id);
    if (held === null) {
      // Another instance runs it (or took it over): this one stops.
      if (local) await this.#stopLocal(job.id, false);
      return;
    }
    if (local) {
      if (o.recheck && (local.checkedAt === 0 || Date.now() - local.checkedAt >= (o.recheckMs ?? 60_000))) {
        local.checkedAt = Date.now();
        await o.recheck(job, local.runner).catch((err: unknown) => o.log.warn("redrive owner not checked", { redrive: job.id }, err));
      }
      return;
    }
    const runner = o.runner(job);
    this.#local.set(job.id, { job, runner, checkedAt: Date.now() });
    o.log.info("redrive running", { redrive: job.id, name: job.name, instance: o.instance });
    void runner.done.then((end) => this.#finished(job, runner, end));
  }

  async #finished(job: RedriveRow, runner: RedriveRunner, end: RunEnd): Promise<void> {
    const o = this.#o;
    if (this.#local.get(job.id)?.runner === runner) this.#local.delete(job.id);
    this.#ending.add(job.id);
    try {
      if (end.end !== "STOPPED") await o.ended(job, end);
    } catch (err) {
      o.log.warn("redrive end not stored", { redrive: job.id, end: end.end }, err);
    } finally {
      await o.repo.leases.release([job.id], o.instance).catch(() => {});
      this.#ending.delete(job.id);
    }
  }

  async #stopLocal(id: string, release = true): Promise<void> {
    const local = this.#local.get(id);
    if (!local) return;
    this.#local.delete(id);
    await local.runner.stop();
    if (release) await this.#o.repo.leases.release([id], this.#o.instance).catch(() => {});
  }
}
