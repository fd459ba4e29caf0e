/**
 * When a query stops, and why: its caps (LIMIT, max.size on what is read and on what is
 * answered, the memory budget), max.query.time, max.idle.time, a kill and a client gone. The
 * first reason wins; stopping aborts the planning and the read at once.
 */

import { FETCH_MAX_WAIT_MS } from "../kafka/types.ts";
import type { QueryPlan } from "../sql/index.ts";
import type { QueryProgress, StopLimit, StopReason } from "./query.ts";
import type { Resume } from "./resume.ts";

/** A batch of records is handed on once its records hold this many bytes, whatever their count. */
export const BATCH_MAX_BYTES = 1 << 20;
export const DEFAULT_MAX_QUERY_MEMORY = 64 * 1024 * 1024;

/** The bounds a query runs within, from its plan, a resume and the answer form. */
export interface Caps {
  /** Records to return (LIMIT, or what a resumed query has left of it). */
  limit: number;
  /** Records still to pass over before the first returned (OFFSET, or what a resumed query has left of it). */
  skip: number;
  /** max.size on the raw bytes read. */
  maxRead: number;
  /**
   * max.size on the bytes the answer produces, strictly: a record that would pass it is taken
   * back, so an answer never exceeds it (the answer form may bound it lower).
   */
  maxOutput: number;
  /** Most bytes held at once: the batch not yet handed on, the raw value at hand and its text. */
  maxMemory: number;
  /** Most records per `records` event. */
  batchSize: number;
  maxQueryTimeMs: number;
  maxIdleTimeMs: number;
  /** The highest max.size and max.query.time a query may SET, told with the bound that ended it. */
  bounds?: { "max.size": number; "max.query.time": number };
}

export function capsOf(
  plan: QueryPlan,
  opts: { resume?: Resume; maxOutputBytes?: number; maxMemoryBytes?: number; batchSize?: number; bounds?: Caps["bounds"] },
): Caps {
  const { settings } = plan;
  const resume = opts.resume;
  return {
    limit: resume?.limit !== undefined ? Math.min(plan.limit, resume.limit) : plan.limit,
    skip: resume ? Math.min(plan.skip, resume.skip) : plan.skip,
    maxRead: settings.maxReadBytes,
    maxOutput: Math.min(settings.maxSizeBytes, opts.maxOutputBytes ?? Number.POSITIVE_INFINITY),
    maxMemory: opts.maxMemoryBytes ?? DEFAULT_MAX_QUERY_MEMORY,
    batchSize: opts.batchSize ?? 512,
    maxQueryTimeMs: settings.maxQueryTimeMs,
    maxIdleTimeMs: settings.maxIdleTimeMs,
    ...(opts.bounds ? { bounds: opts.bounds } : {}),
  };
}

/** The bound that ended a query; `sizeReached` says which of max.size's two it was. */
export function stopLimitOf(why: StopReason, caps: Caps, sizeReached: "read" | "answer"): StopLimit | undefined {
  const bounds = caps.bounds;
  switch (why) {
    case "LIMIT":
      return { setting: "LIMIT", value: caps.limit };
    case "MAX_SIZE":
      return {
        setting: "max.size",
        value: sizeReached === "read" ? caps.maxRead : caps.maxOutput,
        of: sizeReached,
        ...(bounds ? { bound: bounds["max.size"] } : {}),
      };
    case "MAX_QUERY_TIME":
      return { setting: "max.query.time", value: caps.maxQueryTimeMs, ...(bounds ? { bound: bounds["max.query.time"] } : {}) };
    case "MAX_IDLE_TIME":
      return { setting: "max.idle.time", value: caps.maxIdleTimeMs };
    default:
      return undefined;
  }
}

/** How much longer than its max wait a round of fetches may take before its broker counts as slow, not idle. */
const SLOW_FETCH_GRACE_MS = 250;

interface StopRulesOptions {
  /** The client: CLIENT. */
  signal: AbortSignal;
  /** A kill: STOPPED. */
  stopSignal?: AbortSignal | undefined;
  caps: Caps;
  /** Clock of the deadline (the executor's slices read it too). */
  clock: () => number;
  /** Read by the idle rule: records read, and whether the read waits for a lost broker. */
  progress: QueryProgress;
  /** Told once the query has decided to stop. */
  onStop(): void;
}

/**
 * The stop reason of a running query and the timers that set it. max.query.time: a timer ends
 * a query that waits (for Kafka, for its reader); the executor's slices check `deadline` too,
 * as no timer fires while a slice runs.
 *
 * Idle: no record arrived from Kafka for max.idle.time. A timer per record would cost more
 * than the rest of the loop, so a ticker compares the count of records read between ticks.
 * Only waiting on a broker for records is idle time, and only within a round of fetches (idle
 * time starts when a round is sent). Planning the read, finding the leaders and connecting are
 * not; any record, a wait for the reader of the events (backpressure), a round out past its
 * max wait (a slow or frozen broker) or a lost broker retried (max.query.time bounds those)
 * starts the idle clock over. Regressions: a loaded broker that took seconds to answer the
 * first fetch, and a broker just thawed that was slow to name the leaders, ended the query as
 * idle with no record read.
 */
export class StopRules {
  /** Why the query stops; null while it runs. */
  reason: StopReason | null = null;
  /** clock() time at which max.query.time is up. */
  readonly deadline: number;
  /** True while records wait for the reader of the events: backpressure, not idle time. */
  waitingForReader = false;
  readonly #internal = new AbortController();
  readonly #opts: StopRulesOptions;
  readonly #onClient = () => this.stop("CLIENT");
  readonly #onKill = () => this.stop("STOPPED");
  readonly #queryTimer: ReturnType<typeof setTimeout>;
  readonly #idleTicker: ReturnType<typeof setInterval>;
  #fetchingSince: number | null = null;
  /** Since when the query has waited for records, or null while it does something else. */
  #quietFrom: number | null = null;
  #seenAtTick = -1;

  constructor(opts: StopRulesOptions) {
    this.#opts = opts;
    opts.signal.addEventListener("abort", this.#onClient, { once: true });
    opts.stopSignal?.addEventListener("abort", this.#onKill, { once: true });
    if (opts.signal.aborted) this.#onClient();
    if (opts.stopSignal?.aborted) this.#onKill();
    const { maxQueryTimeMs, maxIdleTimeMs } = opts.caps;
    this.deadline = opts.clock() + maxQueryTimeMs;
    // setTimeout fires at once beyond 2^31-1 ms (~24.8 days): clamp a longer max.query.time.
    this.#queryTimer = setTimeout(() => this.stop("MAX_QUERY_TIME"), Math.min(maxQueryTimeMs, 2_147_483_647));
    this.#idleTicker = setInterval(() => this.#idleTick(), Math.max(1, Math.min(250, Math.floor(maxIdleTimeMs / 4))));
  }

  /** Aborted once the query stops: ends its planning and its read. */
  get signal(): AbortSignal {
    return this.#internal.signal;
  }

  /** Stops the query for `why`, unless it has stopped already. */
  stop(why: StopReason): void {
    if (this.reason !== null) return;
    this.reason = why;
    this.#internal.abort();
    this.#opts.onStop();
  }

  /** Told Date.now() when a round of fetches is sent, null once it is answered (ReadObserver.fetching). */
  fetching(since: number | null): void {
    if (since !== null) this.#quietFrom ??= since;
    else if (this.#slowRound(Date.now())) this.#quietFrom = null;
    this.#fetchingSince = since;
  }

  /** Ends the timers and listeners, and aborts what is still out. */
  dispose(): void {
    clearTimeout(this.#queryTimer);
    clearInterval(this.#idleTicker);
    this.#opts.signal.removeEventListener("abort", this.#onClient);
    this.#opts.stopSignal?.removeEventListener("abort", this.#onKill);
    this.#internal.abort();
  }

  #slowRound(now: number): boolean {
    return this.#fetchingSince !== null && now - this.#fetchingSince > FETCH_MAX_WAIT_MS + SLOW_FETCH_GRACE_MS;
  }

  #idleTick(): void {
    const now = Date.now();
    const { progress } = this.#opts;
    if (this.waitingForReader || this.#slowRound(now) || progress.outage !== null) {
      this.#seenAtTick = progress.readRecords;
      this.#quietFrom = null;
    } else if (progress.readRecords !== this.#seenAtTick) {
      // Records are read between rounds, never during one: a round out now began after them.
      this.#seenAtTick = progress.readRecords;
      this.#quietFrom = this.#fetchingSince;
    } else if (this.#quietFrom !== null && now - this.#quietFrom >= this.#opts.caps.maxIdleTimeMs) this.stop("MAX_IDLE_TIME");
  }
}
