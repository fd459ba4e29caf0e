import { AppError } from "../../errors.ts";

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

export interface ThrottlePolicy {
  /** Failures one (account, address) pair may have in the window before it gets 429. */
  limit: number;
  windowMs: number;
  /** Longest delay before answering an account (or address) with many recent failures. */
  maxDelayMs?: number;
  /** The first delay past the free failures; each further failure doubles it, up to maxDelayMs. */
  stepMs?: number;
}

/** One reserved login attempt: settle it once the password check is done. */
export interface LoginAttempt {
  /** How long to wait before checking the password: the account or address is under attack. */
  readonly delayMs: number;
  succeeded(): void;
  failed(): void;
}

/** Requests of one pair that may wait for earlier attempts to settle; more get 429 at once. */
const MAX_WAITING_PER_PAIR = 64;

/**
 * The login throttle. Three counts over one window:
 *  - per (account, address) pair: past `limit` failures the pair gets 429 with Retry-After.
 *    An attempt is reserved (counted as a failure) before the password check and released
 *    when it succeeds, so concurrent guesses cannot all pass the check before any is counted;
 *    attempts beyond the limit that only pending ones fill wait for them to settle, so a burst
 *    of correct logins is never refused.
 *  - per account, over all addresses: past `limit` failures every attempt is slowed (a delay
 *    that doubles with each failure, capped), never refused, so nobody can lock anyone out.
 *  - per address, over all accounts: past `4 × limit` failures the same slowing applies, so one
 *    address behind which many users sit (a NAT) is never locked either.
 */
export class LoginThrottle {
  private readonly pairs: FailureWindow;
  private readonly accounts: FailureWindow;
  private readonly addresses: FailureWindow;
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
  }

  /** Reserves an attempt for `account` from `address`, or throws 429 TOO_MANY_REQUESTS. */
  async reserve(account: string, address: string): Promise<LoginAttempt> {
    const pair = `${account}\u0000${address}`;
    for (;;) {
      const now = this.now();
      const failures = this.pairs.recent(pair, now);
      if (failures.length >= this.policy.limit) {
        const oldest = failures[failures.length - this.policy.limit]!;
        throw tooMany(Math.max(1, Math.ceil((oldest + this.policy.windowMs - now) / 1000)));
      }
      const pending = this.pending.get(pair) ?? 0;
      if (failures.length + pending < this.policy.limit) {
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
      this.slowdown(this.accounts.recent(account, now).length, this.policy.limit),
      this.slowdown(this.addresses.recent(address, now).length, this.policy.limit * 4),
    );
    let settled = false;
    const settle = (ok: boolean) => {
      if (settled) return;
      settled = true;
      const left = (this.pending.get(pair) ?? 1) - 1;
      if (left > 0) this.pending.set(pair, left);
      else this.pending.delete(pair);
      const at = this.now();
      if (ok) this.pairs.reset(pair);
      else {
        this.pairs.add(pair, at);
        this.accounts.add(account, at);
        this.addresses.add(address, at);
      }
      const queue = this.waiting.get(pair);
      this.waiting.delete(pair);
      for (const wake of queue ?? []) wake();
    };
    return { delayMs, succeeded: () => settle(true), failed: () => settle(false) };
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
