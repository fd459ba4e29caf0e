/**
 * The state of an aggregating program for the input partitions a runner owns: one group per
 * (window, GROUP BY values), its accumulator, and the partition's stream time (the highest
 * record timestamp seen). Every change is written to a compacted changelog topic in the same
 * transaction as the output and the input offsets, so the state restored from the changelog is
 * exactly the state at the last committed offsets.
 *
 * Windows close when the stream time passes their end plus the grace period: they are emitted
 * then, once, and removed (a tombstone in the changelog). A record whose window has closed is
 * late: counted, never added. Tables (GROUP BY without a window) emit each changed group at
 * commit: the latest aggregate per key, coalesced per commit interval.
 */
import type { TxnOutput } from "../../kafka/index.ts";
import type { RecordView } from "../../sql/index.ts";
import type { AggregateProgram, StreamOutput } from "./types.ts";

/** The changelog key holding a partition's stream time (never a group's key: those are arrays). */
export const STREAM_TIME_KEY = "streamTime";

interface Group {
  groupKey: unknown[];
  window: { start: number; end: number } | null;
  acc: unknown[];
  /** What it is counted as in the budget (approximate bytes). */
  bytes: number;
}

/**
 * What one group costs beyond its key and accumulator text: the map entry, the group and
 * window objects, the arrays (measured with Bun's heap figures: about 250 bytes; rounded up).
 */
const GROUP_BYTES = 320;

/** A group's approximate size: JS strings take 2 bytes a code unit. */
const groupBytes = (key: string, accText: string) => GROUP_BYTES + 2 * (key.length + accText.length);

/**
 * The state one processor may hold on this instance (processors.maxStateBytes), shared by its
 * runners here. Going past it fails the processor, never the instance.
 */
export class StateBudget {
  used = 0;
  constructor(readonly limitBytes: number) {}
}

/** A processor's state went past its budget: it FAILS at once (no retry, whatever error.policy says). */
export class StateBudgetError extends Error {
  override name = "StateBudgetError";
}

/** 65536 -> "64 KiB", 67108864 -> "64 MiB". */
export function formatBytes(n: number): string {
  for (const [unit, size] of [
    ["GiB", 1024 ** 3],
    ["MiB", 1024 ** 2],
    ["KiB", 1024],
  ] as const) {
    if (n >= size) return `${Math.round((n / size) * 10) / 10} ${unit}`;
  }
  return `${n} B`;
}

class PartitionState {
  readonly groups = new Map<string, Group>();
  streamTime = Number.NEGATIVE_INFINITY;
  /** Changed since the last commit: written to the changelog (and, for tables, emitted). */
  readonly dirty = new Set<string>();
  /** Closed since the last commit: tombstones in the changelog. */
  readonly removed = new Set<string>();
  streamTimeChanged = false;
}

export interface Emitted {
  out: StreamOutput;
  partition: number;
  timestamp: number;
}

const decoder = new TextDecoder();

export class AggregateState {
  readonly #program: AggregateProgram;
  readonly #graceMs: number;
  readonly #changelog: string;
  readonly #partitions = new Map<number, PartitionState>();
  readonly #budget: StateBudget;
  /** This state's part of the budget's use. */
  #bytes = 0;
  /** Records that came after their window closed, since the last take. */
  late = 0;

  constructor(
    program: AggregateProgram,
    graceMs: number,
    changelog: string,
    budget: StateBudget = new StateBudget(Number.MAX_SAFE_INTEGER),
  ) {
    this.#program = program;
    this.#graceMs = graceMs;
    this.#changelog = changelog;
    this.#budget = budget;
  }

  /** Counts `delta` bytes against the budget; throws StateBudgetError past it. */
  #charge(delta: number): void {
    this.#bytes += delta;
    this.#budget.used += delta;
    if (delta > 0 && this.#budget.used > this.#budget.limitBytes) {
      throw new StateBudgetError(
        `The processor's state went past its budget of ${formatBytes(this.#budget.limitBytes)} (processors.maxStateBytes) ` +
          `with ${this.size} groups of windows and GROUP BY values on this runner; ` +
          "fewer distinct GROUP BY values, shorter windows or a larger budget let it run",
      );
    }
  }

  /** Approximate bytes this state holds. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Drops the state and gives its part of the budget back (the assignment ended). */
  dispose(): void {
    this.#budget.used -= this.#bytes;
    this.#bytes = 0;
    this.#partitions.clear();
  }

  #state(partition: number): PartitionState {
    let s = this.#partitions.get(partition);
    if (!s) {
      s = new PartitionState();
      this.#partitions.set(partition, s);
    }
    return s;
  }

  /** Applies one changelog record of `partition` (restoring): a group, a tombstone, or the stream time. */
  restore(partition: number, key: Uint8Array | null, value: Uint8Array | null): void {
    if (key === null) return;
    const s = this.#state(partition);
    const k = decoder.decode(key);
    if (k === STREAM_TIME_KEY) {
      if (value !== null) s.streamTime = (JSON.parse(decoder.decode(value)) as { t: number }).t;
      return;
    }
    const old = s.groups.get(k);
    if (old) {
      s.groups.delete(k);
      this.#charge(-old.bytes);
    }
    if (value === null) return;
    const [start, ...groupKey] = JSON.parse(k) as [number | null, ...unknown[]];
    const window = start === null ? null : { start, end: start + (this.#program.window?.sizeMs ?? 0) };
    const text = decoder.decode(value);
    const bytes = groupBytes(k, text);
    s.groups.set(k, { groupKey, window, acc: JSON.parse(text) as unknown[], bytes });
    this.#charge(bytes);
  }

  /** Folds a record of `partition` into its groups; false when it was late for every window it falls in. */
  add(partition: number, view: RecordView): boolean {
    const p = this.#program;
    const s = this.#state(partition);
    const groupKey = p.groupKey(view);
    if (p.window === null) {
      this.#accumulate(s, groupKey, null, view);
      return true;
    }
    if (view.timestamp > s.streamTime) {
      s.streamTime = view.timestamp;
      s.streamTimeChanged = true;
    }
    let added = false;
    for (const w of p.windowsOf(view.timestamp)) {
      if (w.end + this.#graceMs <= s.streamTime) continue;
      this.#accumulate(s, groupKey, w, view);
      added = true;
    }
    if (!added) this.late++;
    return added;
  }

  /** Adds the record to its group's aggregate (in `window`, or the table's when null). */
  #accumulate(s: PartitionState, groupKey: unknown[], window: Group["window"], view: RecordView): void {
    const key = JSON.stringify([window?.start ?? null, ...groupKey]);
    let g = s.groups.get(key);
    if (!g) {
      const acc = this.#program.initial();
      g = { groupKey, window, acc, bytes: groupBytes(key, JSON.stringify(acc)) };
      s.groups.set(key, g);
      this.#charge(g.bytes);
    }
    this.#program.accumulate(g.acc, view);
    s.dirty.add(key);
    s.removed.delete(key);
  }

  /** Emits and removes the windows of every partition that the stream time has closed. */
  close(out: Emitted[]): void {
    if (this.#program.window === null) return;
    for (const [partition, s] of this.#partitions) {
      for (const [key, g] of s.groups) {
        if (g.window !== null && g.window.end + this.#graceMs <= s.streamTime) {
          out.push({ out: this.#program.emit(g.groupKey, g.acc, g.window), partition, timestamp: g.window.end - 1 });
          s.groups.delete(key);
          this.#charge(-g.bytes);
          s.dirty.delete(key);
          s.removed.add(key);
        }
      }
    }
  }

  /**
   * What the next transaction writes of the state: the changelog records of every change since
   * the last commit, and (tables) the output of every changed group. The state counts them as
   * written; after a failed transaction it is restored from the changelog anew.
   */
  take(changelog: TxnOutput, out: Emitted[], now: number): void {
    for (const [partition, s] of this.#partitions) {
      for (const key of s.dirty) {
        const g = s.groups.get(key);
        if (!g) continue;
        const text = JSON.stringify(g.acc);
        changelog.add(this.#changelog, partition, key, text);
        // An accumulator grows (MIN and MAX of text): counted anew when written.
        const bytes = groupBytes(key, text);
        if (bytes !== g.bytes) {
          const delta = bytes - g.bytes;
          g.bytes = bytes;
          this.#charge(delta);
        }
        if (this.#program.window === null) out.push({ out: this.#program.emit(g.groupKey, g.acc, null), partition, timestamp: now });
      }
      for (const key of s.removed) changelog.add(this.#changelog, partition, key, null);
      if (s.streamTimeChanged) {
        changelog.add(this.#changelog, partition, STREAM_TIME_KEY, JSON.stringify({ t: s.streamTime }));
      }
      s.dirty.clear();
      s.removed.clear();
      s.streamTimeChanged = false;
    }
  }

  /** Groups held now (all partitions). */
  get size(): number {
    let n = 0;
    for (const s of this.#partitions.values()) n += s.groups.size;
    return n;
  }
}
