import { AppError } from "../../errors.ts";
import { nameKey } from "./names.ts";

/**
 * Failure times per key over a sliding window. Memory stays bounded: a key keeps at most
 * `keep` times, and past `maxKeys` keys the stale ones are swept, then the oldest dropped.
 */
class FailureWindow {
  private readonly failures = new Map<string, number[]>();
  constructor(
    private readonly windowMs: number,
    private readonly keep: number,
    private readonly maxKeys = 100_000,
  ) {}

  recent(key: string, now: number): number[] {
    const list = this.failures.get(key);
    if (!list) return [];
    const fresh = list.filter((t) => now - t < this.windowMs);
    if (fresh.length) this.failures.set(key, fresh);
    else this.failures.delete(key);
    return fresh;
  }

  add(key: string, now: number): void {
    const list = this.recent(key, now);
    list.push(now);
    if (list.length > this.keep) list.splice(0, list.length - this.keep);
    this.failures.set(key, list);
    if (this.failures.size > this.maxKeys) this.shrink(now);
  }

  reset(key: string): void {
    this.failures.delete(key);
  }

  private shrink(now: number): void {
    for (const key of [...this.failures.keys()]) this.recent(key, now);
    for (const key of this.failures.keys()) {
      if (this.failures.size <= this.maxKeys) break;
      this.failures.delete(key);
    }
  }
}

/**
 * Password checks an account may have fail, from all addresses together: a bucket of
 * `capacity` that refills one every `refillMs`. A check takes one before it runs and a success
 * gives it back, so only failures use it up. When it is empty the next check is at the next
 * refill: an attempt that would wait up to `maxWaitMs` for it waits (its check then runs at its
 * turn, so checks are serialized, never run side by side); one that would wait longer is
 * answered 429 with the wait as Retry-After, without a check and without counting.
 */
class AccountBudget {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    private readonly capacity: number,
    private readonly refillMs: number,
    private readonly maxWaitMs: number,
    private readonly maxKeys = 100_000,
  ) {}

  private level(key: string, now: number): number {
    const b = this.buckets.get(key);
    if (!b) return this.capacity;
    const tokens = Math.min(this.capacity, b.tokens + (now - b.at) / this.refillMs);
    if (tokens >= this.capacity) this.buckets.delete(key);
    else {
      b.tokens = tokens;
      b.at = now;
    }
    return tokens;
  }

  /** How long the next check of `key` must wait for its turn (0: none). */
  wait(key: string, now: number): number {
    const tokens = this.level(key, now);
    return tokens >= 1 ? 0 : Math.ceil((1 - tokens) * this.refillMs);
  }

  /** Whether a check that must wait `waitMs` may take its turn now, or is answered 429. */
  admits(waitMs: number): boolean {
    return waitMs <= this.maxWaitMs;
  }

  take(key: string, now: number): void {
    const tokens = this.level(key, now) - 1;
    this.buckets.set(key, { tokens, at: now });
    if (this.buckets.size > this.maxKeys) this.shrink(now);
  }

  giveBack(key: string, now: number): void {
    const tokens = this.level(key, now) + 1;
    if (tokens >= this.capacity) this.buckets.delete(key);
    else this.buckets.set(key, { tokens, at: now });
  }

  private shrink(now: number): void {
    for (const key of [...this.buckets.keys()]) this.level(key, now);
    for (const key of this.buckets.keys()) {
      if (this.buckets.size <= this.maxKeys) break;
      this.buckets.delete(key);
    }
  }
}

/** How long an address an account logged in from stays known to it. */
const KNOWN_FOR_MS = 30 * 24 * 3_600_000;
/** Addresses remembered per account (the latest). */
const KNOWN_PER_ACCOUNT = 16;

/** The addresses each account logged in from lately: its owner's usual machines. */
class KnownAddresses {
  private readonly byAccount = new Map<string, Map<string, number>>();
  constructor(private readonly maxAccounts = 100_000) {}

  has(key: string, address: string, now: number): boolean {
    const at = this.byAccount.get(key)?.get(address);
    return at !== undefined && now - at < KNOWN_FOR_MS;
  }

  remember(key: string, address: string, now: number): void {
    const known = this.byAccount.get(key) ?? new Map<string, number>();
    known.delete(address);
    known.set(address, now);
    for (const a of known.keys()) {
      if (known.size <= KNOWN_PER_ACCOUNT) break;
      known.delete(a);
    }
    // Re-inserted: the map's order is least recently used first.
    this.byAccount.delete(key);
    this.byAccount.set(key, known);
    for (const k of this.byAccount.keys()) {
      if (this.byAccount.size <= this.maxAccounts) break;
      this.byAccount.delete(k);
    }
  }
}

export interface ThrottlePolicy {
  /** Failures one (account, address) pair may have in the window before it gets 429. */
  limit: number;
  windowMs: number;
  /** Longest delay before answering an account (or address) with many recent failures. */
  maxDelayMs?: number;
  /** The first delay past the free failures; each further failure doubles it, up to maxDelayMs. */
  stepMs?: number;
  /** Failed checks of one account, from all addresses, before they are spaced (default 4 × limit). */
  accountBurst?: number;
  /** Then one check per this long (default windowMs / limit: the rate one address is held to). */
  accountRefillMs?: number;
}

/** One reserved login attempt: settle it once the password check is done. */
export interface LoginAttempt {
  /** How long to wait before checking the password: the account or address is under attack. */
  readonly delayMs: number;
  succeeded(): void;
  failed(): void;
  /** The check could not be made (the directory did not answer): counts neither way. */
  abandoned(): void;
}

/** Requests of one pair that may wait for earlier attempts to settle; more get 429 at once. */
const MAX_WAITING_PER_PAIR = 64;

/**
 * The login throttle, for logins and every other check of a password (a password change). An
 * account is named without case (see nameKey: `Carol` and `carol` are one account). Over one
 * window:
 *  - per (account, address) pair: past `limit` failures the pair gets 429 with Retry-After.
 *    An attempt is reserved (counted as a failure) before the password check and released
 *    when it succeeds, so concurrent guesses cannot all pass the check before any is counted;
 *    attempts beyond the limit that only pending ones fill wait for them to settle, so a burst
 *    of correct logins is never refused.
 *  - per account, over all addresses: past `limit` failures every attempt is slowed (a delay
 *    that doubles with each failure, capped); past `accountBurst` failed checks the account's
 *    checks are spaced to one per `accountRefillMs` (AccountBudget): an attempt waits for its
 *    turn when it is near, else gets 429 with Retry-After. So the passwords that can be tried
 *    on one account are bounded however many addresses try them.
 *  - per address, over all accounts: past `4 × limit` failures the same slowing applies, so one
 *    address behind which many users sit (a NAT) is never locked either.
 * An address the account logged in from in the last 30 days (the latest 16 per account, kept
 * in memory) is exempt from the account's slowing and spacing: an attack on an account from
 * elsewhere never keeps its owner out from their usual machines. Its own pair limit still holds.
 */
export class LoginThrottle {
  private readonly pairs: FailureWindow;
  private readonly accounts: FailureWindow;
  private readonly addresses: FailureWindow;
  private readonly budget: AccountBudget;
  private readonly known = new KnownAddresses();
  private readonly pending = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();
  private readonly maxDelayMs: number;
  private readonly stepMs: number;

  constructor(
    private readonly policy: ThrottlePolicy,
    private readonly now: () => number = Date.now,
  ) {
    this.pairs = new FailureWindow(policy.windowMs, policy.limit);
    // Enough history to reach the longest delay, and no more.
    this.accounts = new FailureWindow(policy.windowMs, policy.limit + 32);
    this.addresses = new FailureWindow(policy.windowMs, policy.limit * 4 + 32);
    this.maxDelayMs = policy.maxDelayMs ?? 2_000;
    this.stepMs = policy.stepMs ?? 100;
    this.budget = new AccountBudget(
      policy.accountBurst ?? policy.limit * 4,
      policy.accountRefillMs ?? policy.windowMs / policy.limit,
      this.maxDelayMs,
    );
  }

  /** Reserves an attempt for `account` from `address`, or throws 429 TOO_MANY_REQUESTS. */
  async reserve(account: string, address: string): Promise<LoginAttempt> {
    const key = nameKey(account);
    const pair = `${key}\u0000${address}`;
    let turnMs = 0;
    let known = false;
    for (;;) {
      const now = this.now();
      const failures = this.pairs.recent(pair, now);
      if (failures.length >= this.policy.limit) {
        const oldest = failures[failures.length - this.policy.limit]!;
        throw tooMany(Math.max(1, Math.ceil((oldest + this.policy.windowMs - now) / 1000)));
      }
      const pending = this.pending.get(pair) ?? 0;
      if (failures.length + pending < this.policy.limit) {
        known = this.known.has(key, address, now);
        if (!known) {
          turnMs = this.budget.wait(key, now);
          if (!this.budget.admits(turnMs)) throw tooMany(Math.max(1, Math.ceil(turnMs / 1000)));
          this.budget.take(key, now);
        }
        this.pending.set(pair, pending + 1);
        break;
      }
      const queue = this.waiting.get(pair) ?? [];
      if (queue.length >= MAX_WAITING_PER_PAIR) throw tooMany(1);
      this.waiting.set(pair, queue);
      await new Promise<void>((resolve) => queue.push(resolve));
    }
    const now = this.now();
    const delayMs = Math.max(
      known ? 0 : this.slowdown(this.accounts.recent(key, now).length, this.policy.limit),
      this.slowdown(this.addresses.recent(address, now).length, this.policy.limit * 4),
      turnMs,
    );
    let settled = false;
    const settle = (outcome: "ok" | "failed" | "abandoned") => {
      if (settled) return;
      settled = true;
      const left = (this.pending.get(pair) ?? 1) - 1;
      if (left > 0) this.pending.set(pair, left);
      else this.pending.delete(pair);
      const at = this.now();
      if (outcome !== "failed" && !known) this.budget.giveBack(key, at);
      if (outcome === "ok") {
        this.pairs.reset(pair);
        this.known.remember(key, address, at);
      } else if (outcome === "failed") {
        this.pairs.add(pair, at);
        this.accounts.add(key, at);
        this.addresses.add(address, at);
      }
      const queue = this.waiting.get(pair);
      this.waiting.delete(pair);
      for (const wake of queue ?? []) wake();
    };
    return { delayMs, succeeded: () => settle("ok"), failed: () => settle("failed"), abandoned: () => settle("abandoned") };
  }

  private slowdown(failures: number, free: number): number {
    if (failures <= free) return 0;
    return Math.min(this.maxDelayMs, this.stepMs * 2 ** Math.min(30, failures - free - 1));
  }
}

function tooMany(seconds: number): AppError {
  return new AppError("TOO_MANY_REQUESTS", "Too many failed logins; try again later", {
    headers: { "Retry-After": String(seconds) },
    details: { retryAfterSeconds: seconds },
  });
}
