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
  /** Records that came after their window closed, since the last take. */
  late = 0;

  constructor(program: AggregateProgram, graceMs: number, changelog: string) {
    this.#program = program;
    this.#graceMs = graceMs;
    this.#changelog = changelog;
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
    if (value === null) {
      s.groups.delete(k);
      return;
    }
    const [start, ...groupKey] = JSON.parse(k) as [number | null, ...unknown[]];
    const window = start === null ? null : { start, end: start + (this.#program.window?.sizeMs ?? 0) };
    s.groups.set(k, { groupKey, window, acc: JSON.parse(decoder.decode(value)) as unknown[] });
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
      g = { groupKey, window, acc: this.#program.initial() };
      s.groups.set(key, g);
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
        changelog.add(this.#changelog, partition, key, JSON.stringify(g.acc));
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
