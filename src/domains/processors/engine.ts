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
import type { RunObserver } from "../../util/background.ts";
import { Ticker } from "../../util/ticker.ts";
import { StateBudget } from "./aggregate.ts";
import type { ProcessorRepo } from "./repo.ts";
import { Runner } from "./runner.ts";
import type { ProcessorRow, RunnerFigures, RunnerRow, RunnerSetup } from "./types.ts";

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
  /**
   * Why the processor may not run now (a cycle of processors, its owner's rights), or null; asked before
   * any of its runners starts here (at start-up, after a resume, when a slot moves). Throws when
   * it cannot be known now: the runner is not started this tick.
   */
  admit?(p: ProcessorRow): Promise<string | null>;
  /** Pauses it with the reason (stored, shown, audited). */
  pause?(p: ProcessorRow, reason: string): Promise<unknown>;
  /** The state one processor may hold on this instance (approximate bytes); unbounded when absent. */
  maxStateBytes?: number;
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
  /** Each processor's state budget on this instance, shared by its runners here. */
  readonly #budgets = new Map<string, StateBudget>();
  readonly #ticker: Ticker;

  constructor(opts: EngineOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
    // Not started (processors.enabled = false), its kicks do nothing: this instance runs no runner.
    this.#ticker = new Ticker({
      everyMs: opts.tickMs ?? 1_000,
      tick: () => this.#tick(),
      failed: (err) => opts.log.warn("processor engine tick failed", {}, err),
    });
  }

  get instance(): string {
    return this.#opts.instance;
  }

  get prefix(): string {
    return this.#opts.prefix;
  }

  /** Ticks now and every tickMs; `runs` hears of each tick. */
  start(runs?: RunObserver): void {
    this.#ticker.start(runs);
  }

  /** Runs a tick now (after a change through the API), or right after the one running. */
  kick(): Promise<void> {
    return this.#ticker.kick();
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
    await this.#ticker.stop();
    await Promise.all([...this.#local.entries()].map(([key, l]) => this.#stopLocal(key, l)));
  }

  async #stopLocal(key: string, l: LocalRunner): Promise<void> {
    this.#local.delete(key);
    await l.runner.stop();
    if (![...this.#local.values()].some((o) => o.processorId === l.processorId)) this.#budgets.delete(l.processorId);
    await this.#opts.repo.release(l.processorId, l.index, this.#opts.instance, "STOPPED", this.#now()).catch(() => {});
  }

  async #tick(): Promise<void> {
    const { repo, instance } = this.#opts;
    const leaseMs = this.#opts.leaseMs ?? 10_000;
    // The instances running processors share each one's runners: each takes at most its share
    // of the slots, and lets go of those beyond it (one that joined takes them at its next tick).
    const instances = await repo.present(instance, leaseMs);
    const processors = new Map((await repo.list()).map((p) => [p.id, p]));
    const slots = await repo.runners();
    /** Slots of each processor kept here this tick. */
    const kept = new Map<string, number>();
    // Leases expire on the store's clock, which every instance sharing the store reads alike.
    const leaseNow = await repo.leaseNow();
    const wanted = new Set<string>();
    /** Admission checks of this tick, one per processor. */
    const admitted = new Map<string, Promise<string | null | undefined>>();
    for (const slot of slots) {
      const p = processors.get(slot.processorId);
      if (p?.desired !== "RUNNING" || slot.runner >= p.runners) continue;
      const key = `${slot.processorId}/${slot.runner}`;
      const local = this.#local.get(key);
      if (!local && slot.instance !== null && slot.instance !== instance && slot.leaseUntil >= leaseNow) continue;
      // Beyond this instance's share: not taken, or let go (stopped below) for another to take.
      if ((kept.get(p.id) ?? 0) >= Math.ceil(p.runners / instances)) continue;
      if (!local) {
        const refused = await this.#refusal(p, slot, admitted);
        if (refused === undefined) continue;
        if (refused !== null) {
          // Its other slots are not started either; its runners here stop below.
          processors.delete(p.id);
          await this.#opts.pause?.(p, refused);
          continue;
        }
      }
      if (!(await repo.lease(slot.processorId, slot.runner, instance, leaseMs))) continue;
      kept.set(p.id, (kept.get(p.id) ?? 0) + 1);
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

  /**
   * Why a runner of `p` must not start: its slot was left marked in a risky phase by a holder
   * that never released it (an instance that died, likely of memory: running it again blindly
   * would take this one down the same way), or it may not run (see `admit`). Undefined: not
   * known now (try at the next tick).
   */
  async #refusal(
    p: ProcessorRow,
    slot: RunnerRow,
    admitted: Map<string, Promise<string | null | undefined>>,
  ): Promise<string | null | undefined> {
    if (slot.risk !== null && slot.instance !== null) {
      return (
        `runner ${slot.runner} was ${slot.risk} when instance '${slot.instance}' stopped without releasing it ` +
        "(out of memory, or killed); resume it once its state budget (processors.maxStateBytes) or the instance's memory allows"
      );
    }
    const admit = this.#opts.admit;
    if (!admit) return null;
    let check = admitted.get(p.id);
    if (!check) {
      check = admit(p).catch((err: unknown) => {
        this.#opts.log.warn("processor admission not known: not started now", { processor: p.id, owner: p.owner }, err);
        return undefined;
      });
      admitted.set(p.id, check);
    }
    return check;
  }

  #budgetOf(processorId: string): StateBudget | undefined {
    const limit = this.#opts.maxStateBytes;
    if (limit === undefined) return undefined;
    let b = this.#budgets.get(processorId);
    if (!b) {
      b = new StateBudget(limit);
      this.#budgets.set(processorId, b);
    }
    return b;
  }

  #startLocal(key: string, p: ProcessorRow, index: number): void {
    const { prefix, log, repo, instance } = this.#opts;
    const budget = this.#budgetOf(p.id);
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
      observer: {
        // A state change is in the store at the next tick; one now makes it visible at once.
        state: () => void this.kick(),
        risk: (risk) => repo.setRisk(p.id, index, instance, risk),
      },
      ...(budget ? { budget } : {}),
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
