/**
 * A RecordSource in memory, for the executor's own rules (slicing, caps, the idle rule, stop
 * reasons, resume): a topic's partitions as arrays of records, read a few records per fetched
 * batch, one batch per partition per round, as a broker answers a Fetch. The Kafka-backed
 * source is tested against the real broker (test/sql-exec, test/clients); this one stands in
 * for nothing Kafka does, only for what the executor is given.
 */

import type { RangeRead, ReadObserver, RecordSource, TopicOffsets } from "../../src/engine/record-source.ts";
import { AppError } from "../../src/errors.ts";
import type { RawRecord, ReadOutage } from "../../src/kafka/types.ts";

const encoder = new TextEncoder();

export class MemorySource implements RecordSource {
  readonly name = "memory";
  lastRoundTripMs: number | null = 1;
  /** Records per fetched batch. */
  batchRecords = 10;
  /** Partitions without a leader: planned as offline. */
  readonly offline = new Set<number>();
  /** offsets() fails with UNAVAILABLE this many times first. */
  planFailures = 0;
  /** After this many batches the read sends a round that is never answered (a quiet broker). */
  stallAfter = Number.POSITIVE_INFINITY;
  /** With stallAfter: the read reports this outage instead (a lost broker, retried). */
  outageWhenStalled = false;
  /** Told of each read the executor asks for. */
  readonly reads: RangeRead[] = [];
  readonly #partitions: RawRecord[][];
  #appended: (() => void) | null = null;

  constructor(
    readonly topic: string,
    partitions: number,
  ) {
    this.#partitions = Array.from({ length: partitions }, () => []);
  }

  /** Appends a record (value as JSON text unless bytes or null) to a partition; answers its offset. */
  append(partition: number, value: unknown, opts: { key?: string | Uint8Array | null; timestamp?: number } = {}): number {
    const records = this.#partitions[partition]!;
    const offset = records.length;
    const bytes = value === null ? null : value instanceof Uint8Array ? value : encoder.encode(JSON.stringify(value));
    const key = opts.key === undefined || opts.key === null ? null : typeof opts.key === "string" ? encoder.encode(opts.key) : opts.key;
    records.push({
      topic: this.topic,
      partition,
      offset,
      timestamp: opts.timestamp ?? 1_700_000_000_000 + offset,
      timestampType: "CreateTime",
      key,
      value: bytes,
      headers: [],
    });
    this.#appended?.();
    return offset;
  }

  async offsets(topic: string, _signal: AbortSignal): Promise<TopicOffsets> {
    if (topic !== this.topic) throw new AppError("NOT_FOUND", `Topic '${topic}' does not exist.`);
    if (this.planFailures > 0) {
      this.planFailures--;
      throw new AppError("UNAVAILABLE", "no broker answers");
    }
    const all = this.#partitions.map((_, p) => p);
    const online = all.filter((p) => !this.offline.has(p));
    return {
      all,
      offline: [...this.offline],
      starts: new Map(online.map((p) => [p, 0])),
      ends: new Map(online.map((p) => [p, this.#partitions[p]!.length])),
      offsetsAt: async (partitions, timestamp) =>
        new Map(partitions.map((p) => [p, this.#partitions[p]!.findIndex((r) => r.timestamp >= timestamp)])),
    };
  }

  async *read(req: RangeRead, observer: ReadObserver): AsyncIterable<RawRecord[]> {
    this.reads.push(req);
    const cursors = req.partitions.map((r) => ({ ...r }));
    let batches = 0;
    while (!req.signal.aborted) {
      const active = cursors.filter((c) => c.from < Math.min(c.to, this.#partitions[c.partition]!.length));
      if (active.length === 0 && !req.follow) return;
      if (active.length === 0 || batches >= this.stallAfter) {
        // A round out with nothing to answer: until a record arrives (follow) or forever.
        if (batches >= this.stallAfter && this.outageWhenStalled) observer.outage(outage());
        else observer.fetching(Date.now());
        await this.#waitForRecords(req.signal, batches >= this.stallAfter);
        observer.fetching(null);
        continue;
      }
      observer.fetching(Date.now());
      const round: RawRecord[][] = [];
      for (const c of active) {
        const end = Math.min(c.to, this.#partitions[c.partition]!.length, c.from + this.batchRecords);
        const batch = this.#partitions[c.partition]!.slice(c.from, end);
        observer.fetched({ partition: c.partition, records: batch.length, firstOffset: c.from, lastOffset: end - 1 });
        c.from = end;
        round.push(batch);
      }
      observer.fetching(null);
      for (const batch of round) {
        if (req.signal.aborted) return;
        batches++;
        yield batch;
      }
    }
  }

  /** Resolves once a record is appended (not when `forever`) or the read is aborted. */
  #waitForRecords(signal: AbortSignal, forever: boolean): Promise<void> {
    return new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      signal.addEventListener("abort", () => resolve(), { once: true });
      if (!forever) this.#appended = resolve;
    });
  }
}

function outage(): ReadOutage {
  const since = Date.now();
  return {
    since,
    what: "Kafka broker memory:9092 unreachable",
    partitions: [0],
    reason: "connection refused",
    toError: () => new AppError("UNAVAILABLE", "Cannot read topic: Kafka broker memory:9092 unreachable (connection refused)"),
  };
}
