/**
 * How late the machine itself runs a timer, measured in a separate process: the reference a
 * responsiveness test compares the server against. On a quiet machine the probe's timer is a
 * few milliseconds late at most, so a server that blocks for a second still fails; on a machine
 * loaded by other work, the probe is late too, and a test may allow the server what the machine
 * took from both.
 */
import { startReporter } from "./reporter.ts";

const PROBE = `
const TICK = 10;
let due = performance.timeOrigin + performance.now() + TICK;
const tick = () => {
  const now = performance.timeOrigin + performance.now();
  const late = now - due;
  if (late >= 20) process.stdout.write(now.toFixed(1) + " " + late.toFixed(1) + "\\n");
  due = now + TICK;
  setTimeout(tick, TICK);
};
setTimeout(tick, TICK);
process.stdout.write("ready\\n");
`;

export interface MachineLag {
  /**
   * How late the latest probe tick came among those due before `to` that ran after `from`, 0 when
   * none was late. Times are epoch milliseconds with fractions (`performance.timeOrigin + performance.now()`).
   */
  worstBetween(from: number, to: number): number;
  stop(): Promise<void>;
}

export async function startMachineLag(): Promise<MachineLag> {
  /** [when the tick ran, how late it was]. */
  const late: Array<[number, number]> = [];
  const probe = await startReporter(PROBE, [], (line) => {
    const [at, by] = line.split(" ").map(Number);
    if (at !== undefined && by !== undefined) late.push([at, by]);
  });
  return {
    worstBetween(from, to) {
      let worst = 0;
      // A tick that ran at `at`, `by` late, was due at `at - by`.
      for (const [at, by] of late) if (at - by <= to && at >= from) worst = Math.max(worst, by);
      return worst;
    },
    stop: () => probe.stop(),
  };
}

/** The wall clock the probe's times are in (epoch milliseconds with fractions). */
export const machineNow = (): number => performance.timeOrigin + performance.now();

/**
 * Runs `body` and says how long it took (`ms`) and that less the worst the machine was late
 * meanwhile (`ownMs`): what a bound on the server's own time is checked against.
 */
export async function timedOn<T>(lag: MachineLag, body: () => Promise<T>): Promise<{ value: T; ms: number; ownMs: number }> {
  const from = machineNow();
  const value = await body();
  const to = machineNow();
  const ms = to - from;
  return { value, ms, ownMs: Math.max(0, ms - lag.worstBetween(from, to)) };
}
