/**
 * Runs the processors of the store in this Loupe instance (IN_PROC mode): every tick it reads
 * what each processor should be doing, takes the leases of runner slots that are free, starts
 * their runners, renews its leases with each runner's state and figures, and stops runners
 * whose processor was paused, scaled down or deleted (or whose lease another instance took).
 * Desired state lives in the store, so a restarted Loupe brings every running processor back,
 * each runner where its last transaction left off.
 */
import type { KafkaPool } from "../../kafka/index.ts";
import type { Logger } from "../../log/logger.ts";
import type { ProcessorRepo } from "./repo.ts";
import { Runner } from "./runner.ts";
import type { ProcessorRow, RunnerFigures, RunnerSetup } from "./types.ts";

export interface EngineOptions {
  repo: ProcessorRepo;
  pool: KafkaPool;
  /** This instance's name in the leases (runners' `worker`). */
  instance: string;
  /** Prefix of the processors' consumer groups, transactional ids and internal topics. */
  prefix: string;
  log: Logger;
  /** Builds a runner's program and decoders from its processor. */
  setup(p: ProcessorRow): Promise<RunnerSetup>;
  tickMs?: number;
  leaseMs?: number;
  failAfterMs?: number;
  now?: () => number;
}

interface LocalRunner {
  processorId: string;
  index: number;
  runner: Runner;
  /** Figures at the last report, for the rates. */
  reported: { at: number; recordsIn: number; recordsOut: number };
  rates: { inPerSec: number; outPerSec: number };
}

export const groupIdOf = (prefix: string, id: string) => `${prefix}-${id}`;
export const changelogOf = (prefix: string, id: string) => `${prefix}-${id}-changelog`;
export const repartitionOf = (prefix: string, id: string) => `${prefix}-${id}-repartition`;

export class ProcessorEngine {
  readonly #opts: EngineOptions;
  readonly #now: () => number;
  readonly #local = new Map<string, LocalRunner>();
  #timer: ReturnType<typeof setInterval> | null = null;
  #ticking: Promise<void> | null = null;
  #again = false;
  #stopped = false;

  constructor(opts: EngineOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
  }

  get instance(): string {
    return this.#opts.instance;
  }

  get prefix(): string {
    return this.#opts.prefix;
  }

  start(): void {
    if (this.#timer !== null || this.#stopped) return;
    this.#timer = setInterval(() => void this.kick(), this.#opts.tickMs ?? 1_000);
    void this.kick();
  }

  /** Runs a tick now (after a change through the API), or right after the one running. */
  kick(): Promise<void> {
    // Not started (processors.enabled = false): this instance runs no runner, API changes included.
    if (this.#stopped || this.#timer === null) return Promise.resolve();
    if (this.#ticking) {
      this.#again = true;
      return this.#ticking;
    }
    this.#ticking = (async () => {
      try {
        do {
          this.#again = false;
          await this.#tick();
        } while (this.#again && !this.#stopped);
      } catch (err) {
        this.#opts.log.warn("processor engine tick failed", {}, err);
      } finally {
        this.#ticking = null;
      }
    })();
    return this.#ticking;
  }

  /** The runner of this instance for a slot, when it runs here (tests and figures). */
  localRunner(processorId: string, index: number): Runner | undefined {
    return this.#local.get(`${processorId}/${index}`)?.runner;
  }

  /** Stops this instance's runners of a processor and gives their slots up (before a delete). */
  async stopProcessor(processorId: string): Promise<void> {
    await this.kick();
    const mine = [...this.#local.entries()].filter(([, l]) => l.processorId === processorId);
    await Promise.all(mine.map(([key, l]) => this.#stopLocal(key, l)));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    await this.#ticking;
    await Promise.all([...this.#local.entries()].map(([key, l]) => this.#stopLocal(key, l)));
  }

  async #stopLocal(key: string, l: LocalRunner): Promise<void> {
    this.#local.delete(key);
    await l.runner.stop();
    await this.#opts.repo.release(l.processorId, l.index, this.#opts.instance, "STOPPED", this.#now()).catch(() => {});
  }

  async #tick(): Promise<void> {
    const { repo, instance } = this.#opts;
    const leaseMs = this.#opts.leaseMs ?? 10_000;
    const processors = new Map((await repo.list()).map((p) => [p.id, p]));
    const slots = await repo.runners();
    const wanted = new Set<string>();
    for (const slot of slots) {
      const p = processors.get(slot.processorId);
      if (p?.desired !== "RUNNING" || slot.runner >= p.runners) continue;
      const key = `${slot.processorId}/${slot.runner}`;
      const now = this.#now();
      const local = this.#local.get(key);
      if (!local && slot.instance !== null && slot.instance !== instance && slot.leaseUntil >= now) continue;
      if (!(await repo.lease(slot.processorId, slot.runner, instance, now, leaseMs))) continue;
      wanted.add(key);
      if (!local) this.#startLocal(key, p, slot.runner);
    }
    for (const [key, l] of this.#local) {
      if (!wanted.has(key)) await this.#stopLocal(key, l);
    }
    const now = this.#now();
    for (const l of this.#local.values()) {
      const f = l.runner.figures;
      const seconds = (now - l.reported.at) / 1000;
      if (seconds >= 0.5) {
        l.rates = {
          inPerSec: Math.round((f.recordsIn - l.reported.recordsIn) / seconds),
          outPerSec: Math.round((f.recordsOut - l.reported.recordsOut) / seconds),
        };
        l.reported = { at: now, recordsIn: f.recordsIn, recordsOut: f.recordsOut };
      }
      const figures: RunnerFigures = { ...f, ...l.rates };
      await repo.report(l.processorId, l.index, instance, l.runner.state, l.runner.error, figures, now);
    }
  }

  #startLocal(key: string, p: ProcessorRow, index: number): void {
    const { prefix, log } = this.#opts;
    const kafka = this.#opts.pool.get(p.cluster);
    const runner = new Runner({
      kafka,
      processorId: p.id,
      index,
      groupId: groupIdOf(prefix, p.id),
      transactionalId: `${groupIdOf(prefix, p.id)}-${index}`,
      setup: () => this.#opts.setup(p),
      log,
      failAfterMs: this.#opts.failAfterMs,
      now: this.#now,
      // A state change is in the store at the next tick; one now makes it visible at once.
      onState: () => void this.kick(),
    });
    this.#local.set(key, {
      processorId: p.id,
      index,
      runner,
      reported: { at: this.#now(), recordsIn: 0, recordsOut: 0 },
      rates: { inPerSec: 0, outPerSec: 0 },
    });
    log.info("processor runner starting", { processor: p.id, name: p.name, runner: index });
    runner.start();
  }
}
