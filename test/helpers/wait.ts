/**
 * Waiting for a condition instead of sleeping a fixed time: a fixed sleep is either too short
 * on a loaded machine (the test flakes) or too long everywhere else (the suite crawls). These
 * poll until the condition holds and give up at a deadline, saying what they waited for.
 */

export interface WaitOptions {
  /** Give up after this long; generous, since it only costs time when the test fails anyway. */
  timeoutMs?: number;
  /** Pause between two checks. */
  intervalMs?: number;
  /** What is awaited, for the error thrown at the deadline. */
  what?: string;
}

const DEFAULTS = { timeoutMs: 10_000, intervalMs: 25 };

/**
 * Calls `check` until it returns a value other than `false`, `null` or `undefined` without
 * throwing, and resolves with that value. A check may assert (`expect(...)` throws until it
 * holds). At the deadline it rejects with the check's last error, or names the last value.
 */
export async function waitFor<T>(check: () => T | Promise<T>, opts: WaitOptions = {}): Promise<Exclude<T, false | null | undefined>> {
  const { timeoutMs, intervalMs } = { ...DEFAULTS, ...opts };
  const deadline = performance.now() + timeoutMs;
  let attempts = 0;
  for (;;) {
    attempts++;
    let last: unknown;
    let failure: unknown;
    try {
      last = await check();
      if (last !== false && last !== null && last !== undefined) return last as Exclude<T, false | null | undefined>;
    } catch (err) {
      failure = err;
    }
    if (performance.now() >= deadline) {
      const what = opts.what ?? "the condition";
      if (failure instanceof Error) {
        failure.message = `${what} did not hold within ${timeoutMs} ms (${attempts} checks): ${failure.message}`;
        throw failure;
      }
      const got = failure === undefined ? `last answer ${JSON.stringify(last)}` : `last error ${String(failure)}`;
      throw new Error(`${what} did not hold within ${timeoutMs} ms (${attempts} checks); ${got}`);
    }
    await Bun.sleep(Math.max(0, Math.min(intervalMs, deadline - performance.now())));
  }
}

/**
 * As waitFor, but answers false at the deadline instead of throwing, for
 * `expect(await eventually(...)).toBe(true)`. A check that throws counts as not yet.
 */
export async function eventually(check: () => boolean | Promise<boolean>, opts: WaitOptions = {}): Promise<boolean> {
  try {
    await waitFor(async () => (await check()) === true, opts);
    return true;
  } catch {
    return false;
  }
}

/**
 * waitFor for checks that answer undefined until they hold, described first:
 * `await pollFor("x RUNNING", async () => (running ? status : undefined), 30_000)`.
 */
export function pollFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<Exclude<T, false | null | undefined>> {
  return waitFor(check, { what, timeoutMs, intervalMs: 200 });
}
