/**
 * What a runner holds between two commits of one assignment: the output records, the source
 * records re-keyed into the repartition topic, the input positions to commit with them, and the
 * counts the figures add once they are committed.
 */
import { type TxnOffset, TxnOutput } from "../../kafka/index.ts";

/** One transaction of a commit: its records and offsets, and what the figures add once it is committed. */
export interface CommitLeg {
  records: TxnOutput;
  offsets: TxnOffset[];
  recordsIn: number;
  recordsOut: number;
  failed: number;
  late: number;
}

export class CommitBatch {
  /** Output, changelog and state records of the next commit. */
  output = new TxnOutput();
  /** Source records re-keyed into the repartition topic, for the next commit. */
  rekeyed = new TxnOutput();
  /** Input positions to commit, by `topic/partition`. */
  readonly offsets = new Map<string, TxnOffset>();
  /** Per input partition, the offset last committed (or read from). */
  readonly committedAt = new Map<string, number>();
  /** When the first record (or position) of the next commit was read; null when it holds none. */
  firstAt: number | null = null;
  recordsIn = 0;
  recordsOut = 0;
  /** Records and results skipped under error.policy = skip, by the leg they are committed with. */
  failedUp = 0;
  failedDown = 0;

  /** Nothing to commit. */
  get empty(): boolean {
    return this.offsets.size === 0 && this.output.empty && this.rekeyed.empty;
  }

  /** Records and bytes held, against the caps of a commit. */
  get records(): number {
    return this.output.records + this.rekeyed.records;
  }

  get bytes(): number {
    return this.output.bytes + this.rekeyed.bytes;
  }

  /** An input record read: its next offset is committed with the next commit. */
  read(topic: string, partition: number, offset: number, now: number): void {
    this.offsets.set(`${topic}/${partition}`, { topic, partition, offset: offset + 1 });
    this.firstAt ??= now;
  }

  /**
   * A read's position past what it yielded (transaction markers, aborted records), committed too
   * so that a processor caught up on a topic written in transactions shows no lag. True when it
   * moved past what is held or committed.
   */
  position(topic: string, partition: number, next: number, now: number): boolean {
    const key = `${topic}/${partition}`;
    if (next <= (this.offsets.get(key)?.offset ?? this.committedAt.get(key) ?? next)) return false;
    this.offsets.set(key, { topic, partition, offset: next });
    this.firstAt ??= now;
    return true;
  }

  /**
   * Takes what is held as the transactions of one commit, and starts the next batch empty. With a
   * repartition topic (`split`), two legs: the source's offsets with the re-keyed records, then
   * the repartition topic's offsets with the output; one leg otherwise.
   */
  take(split: boolean, source: string, late: number): { up: CommitLeg; down: CommitLeg } {
    const all = [...this.offsets.values()];
    const up: CommitLeg = {
      records: this.rekeyed,
      offsets: split ? all.filter((off) => off.topic === source) : [],
      recordsIn: split ? this.recordsIn : 0,
      recordsOut: 0,
      failed: this.failedUp,
      late: 0,
    };
    const down: CommitLeg = {
      records: this.output,
      offsets: split ? all.filter((off) => off.topic !== source) : all,
      recordsIn: split ? 0 : this.recordsIn,
      recordsOut: this.recordsOut,
      failed: this.failedDown,
      late,
    };
    this.output = new TxnOutput();
    this.rekeyed = new TxnOutput();
    this.offsets.clear();
    for (const off of all) this.committedAt.set(`${off.topic}/${off.partition}`, off.offset);
    this.recordsIn = 0;
    this.recordsOut = 0;
    this.failedUp = 0;
    this.failedDown = 0;
    this.firstAt = null;
    return { up, down };
  }
}
