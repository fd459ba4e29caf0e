/**
 * A tick run every `everyMs` once started, one at a time: a kick (after a change through the API)
 * while one runs asks for another right after it, so no change waits a whole period and no two
 * ticks overlap. Each tick is reported to the background job's RunObserver; a failed one is logged
 * and the next goes on. Used by the engines that tend leased work (processors, redrives).
 */
import type { RunObserver } from "./background.ts";

export interface TickerOptions {
  everyMs: number;
  tick: () => Promise<void>;
  /** Said when a tick fails: what failed, and the error. */
  failed: (err: unknown) => void;
}

export class Ticker {
  readonly #o: TickerOptions;
  #timer: ReturnType<typeof setInterval> | null = null;
  #ticking: Promise<void> | null = null;
  #again = false;
  #stopped = false;
  #runs: RunObserver | undefined;

  constructor(opts: TickerOptions) {
    this.#o = opts;
  }

  /** True once stopped: a tick under way checks it between its steps. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** Ticks now and every `everyMs`; `runs` hears of each tick. */
  start(runs?: RunObserver): void {
    if (this.#timer !== null || this.#stopped) return;
    this.#runs = runs;
    this.#timer = setInterval(() => void this.kick(), this.#o.everyMs);
    void this.kick();
  }

  /** A tick now, or right after the one running. Not started (or stopped): nothing. */
  kick(): Promise<void> {
    if (this.#stopped || this.#timer === null) return Promise.resolve();
    if (this.#ticking) {
      this.#again = true;
      return this.#ticking;
    }
    this.#ticking = (async () => {
      try {
        do {
          this.#again = false;
          await this.#o.tick();
          this.#runs?.ran();
        } while (this.#again && !this.#stopped);
      } catch (err) {
        this.#o.failed(err);
        this.#runs?.failed(err);
      } finally {
        this.#ticking = null;
      }
    })();
    return this.#ticking;
  }

  /** No tick after this; resolves once the one under way (if any) is over. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    await this.#ticking;
  }
}
