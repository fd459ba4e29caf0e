/**
 * One redrive job running: a bounded copy, exactly once, on Kafka's transactions. The job's
 * consumer group (one static member) holds where it is: each transaction writes a slice of the
 * records to their targets and commits, for each source partition, the next offset and that
 * partition's counts so far (as the offset's metadata), so records, position and counts move
 * together or not at all. After any failure (a crash of Loupe, a fenced producer, a lost broker)
 * the job starts over from what Kafka committed; the transactional id (`<group>`) fences a
 * predecessor and aborts what it left open, so a record is never in its target twice.
 *
 * Not the processors' runner: a redrive reads fixed offset ranges to their end, routes each
 * record to a topic of its own, is paced, and needs no state, repartition or rebalance handling;
 * it shares the processors' output path (TransactionalWriter, TxnOutput, GroupMember).
 */
import { type KafkaCluster, partitionForKey, type RawRecord, type TxnHeader, type TxnOffset, TxnOutput } from "../../kafka/index.ts";
import type { Logger } from "../../log/logger.ts";
import type { PartitionRange, RedriveRow } from "./repo.ts";
import type { RecordRouter } from "./router.ts";
import { sumCounts, tally } from "./router.ts";
import { NO_COUNTS, type RedriveCounts } from "./schemas.ts";

/** How a run ended. */
export type RunEnd =
  | { end: "DONE"; counts: RedriveCounts }
  | { end: "STOPPED" }
  | { end: "PAUSED"; reason: string }
  | { end: "FAILED"; reason: string };

/** The owner may no longer run the job (its rights, as resolved now): it is paused, not retried. */
export class OwnerRefusedError extends Error {
  override name = "OwnerRefusedError";
}

export interface RunnerDeps {
  kafka: KafkaCluster;
  /** The job's router with its owner's current rights; OwnerRefusedError when they no longer let it run. */
  router(job: RedriveRow): Promise<RecordRouter>;
  /** The figures after each transaction (and at each start): kept in the store for the API. */
  report(counts: RedriveCounts, progress: Record<string, number>): Promise<void>;
  groupId: string;
  log: Logger;
  /** Records or milliseconds a transaction holds at most. */
  maxRecords?: number;
  commitIntervalMs?: number;
  failAfterMs?: number;
  now?: () => number;
}

const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 15_000;

/**
 * Records per second at most: a record may go when its slot has come; up to a tenth of a second
 * of records go at once (a burst after a wait is no faster than the rate).
 */
export class Pace {
  readonly #intervalMs: number;
  readonly #burstMs: number;
  #next = 0;

  constructor(
    perSecond: number,
    readonly now: () => number = () => performance.now(),
  ) {
    this.#intervalMs = 1000 / perSecond;
    this.#burstMs = Math.max(this.#intervalMs, 100);
  }

  /** Takes one record's slot: how long to wait before writing it (0: now). */
  take(): number {
    const t = this.now();
    if (this.#next < t - this.#burstMs) this.#next = t - this.#burstMs;
    const wait = this.#next - t;
    this.#next += this.#intervalMs;
    return Math.max(0, wait);
  }
}

/** A partition's counts as committed with its offset (the offset's metadata, at most 4096 bytes). */
function countsFrom(metadata: string | null): RedriveCounts {
  if (!metadata) return structuredClone(NO_COUNTS);
  try {
    return { ...structuredClone(NO_COUNTS), ...(JSON.parse(metadata) as Partial<RedriveCounts>) };
  } catch {
    return structuredClone(NO_COUNTS);
  }
}

/** The counts as metadata; past the broker's bound the per-target figures are left out (the totals stay exact). */
function metadataOf(c: RedriveCounts): string {
  const full = JSON.stringify(c);
  if (full.length <= 3_500) return full;
  return JSON.stringify({ ...c, byTarget: {}, refusedByTarget: {} });
}

const headersOf = (raw: RawRecord): TxnHeader[] | null => (raw.headers.length === 0 ? null : raw.headers.map((h) => [h.key, h.value]));

interface Position {
  range: PartitionRange;
  next: number;
  counts: RedriveCounts;
  dirty: boolean;
}

export class RedriveRunner {
  readonly #job: RedriveRow;
  readonly #d: RunnerDeps;
  readonly #now: () => number;
  readonly #stop = new AbortController();
  #router: RecordRouter | null = null;
  readonly done: Promise<RunEnd>;

  constructor(job: RedriveRow, deps: RunnerDeps) {
    this.#job = job;
    this.#d = deps;
    this.#now = deps.now ?? Date.now;
    this.done = this.#run();
  }

  get router(): RecordRouter | null {
    return this.#router;
  }

  /** Stops reading, commits what it holds, leaves the group. */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.done;
  }

  async #run(): Promise<RunEnd> {
    const failAfter = this.#d.failAfterMs ?? 5 * 60_000;
    let since: number | null = null;
    for (let failures = 0; ; ) {
      try {
        return await this.#session();
      } catch (err) {
        if (this.#stop.signal.aborted) return { end: "STOPPED" };
        const message = err instanceof Error ? err.message : String(err);
        if (err instanceof OwnerRefusedError) return { end: "PAUSED", reason: message };
        failures++;
        since ??= this.#now();
        const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (failures - 1));
        if (this.#now() - since + delay > failAfter) {
          this.#d.log.warn("redrive FAILED", { redrive: this.#job.id, error: message, failures });
          return { end: "FAILED", reason: message };
        }
        this.#d.log.warn("redrive failed; retrying", { redrive: this.#job.id, error: message, failures, retryInMs: delay });
        await this.#sleep(delay);
        if (this.#stop.signal.aborted) return { end: "STOPPED" };
      }
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const signal = this.#stop.signal;
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  /** One membership and one producer: from the committed offsets to the end, or until stopped. */
  async #session(): Promise<RunEnd> {
    const job = this.#job;
    const d = this.#d;
    const router = await d.router(job);
    this.#router = router;
    const member = d.kafka.processing.member({ groupId: d.groupId, instanceId: `${d.groupId}-0`, topics: [job.topic] });
    const writer = d.kafka.processing.writer(d.groupId);
    const reading = new AbortController();
    const abortReading = () => reading.abort();
    this.#stop.signal.addEventListener("abort", abortReading, { once: true });
    try {
      // The transactional id first: a predecessor is fenced and its open transaction aborted, so
      // the offsets read next are stable.
      await writer.init();
      await member.join();
      const committed = await member.committedEntries(
        job.topic,
        job.ranges.map((r) => r.partition),
      );
      const positions = new Map<number, Position>();
      for (const range of job.ranges) {
        const entry = committed.get(range.partition) ?? null;
        positions.set(range.partition, {
          range,
          next: Math.max(range.from, entry?.offset ?? range.from),
          counts: countsFrom(entry?.metadata ?? null),
          dirty: false,
        });
      }
      await this.#report(positions);
      const open = [...positions.values()].filter((p) => p.next < p.range.to);
      if (open.length > 0) {
        const stopped = await this.#copy(open, positions, router, reading.signal, async (output, offsets) => {
          await writer.commit(output, offsets, member);
        });
        if (stopped) return { end: "STOPPED" };
      }
      // Read to the end: each partition's position is its end (past markers and aborted records).
      for (const p of positions.values()) {
        if (p.next < p.range.to) {
          p.next = p.range.to;
          p.dirty = true;
        }
      }
      const last = this.#offsets(positions);
      if (last.length > 0) await writer.commit(new TxnOutput(), last, member);
      await this.#report(positions);
      return { end: "DONE", counts: sumCounts([...positions.values()].map((p) => p.counts)) };
    } finally {
      this.#stop.signal.removeEventListener("abort", abortReading);
      reading.abort();
      await writer.close();
      await member.close();
    }
  }

  /** Each dirty partition's next offset and counts, to commit with the records. */
  #offsets(positions: Map<number, Position>): TxnOffset[] {
    const out: TxnOffset[] = [];
    for (const p of positions.values()) {
      if (!p.dirty) continue;
      out.push({ topic: this.#job.topic, partition: p.range.partition, offset: p.next, metadata: metadataOf(p.counts) });
    }
    return out;
  }

  async #report(positions: Map<number, Position>): Promise<void> {
    const progress = Object.fromEntries([...positions.values()].map((p) => [String(p.range.partition), p.next]));
    await this.#d.report(sumCounts([...positions.values()].map((p) => p.counts)), progress).catch((err: unknown) => {
      this.#d.log.warn("redrive figures not stored", { redrive: this.#job.id }, err);
    });
  }

  /**
   * Reads the open partitions to their ends, each record to its target, committing every
   * commit interval or maxRecords; true when stopped before the end (what it held is committed).
   */
  async #copy(
    open: Position[],
    positions: Map<number, Position>,
    router: RecordRouter,
    signal: AbortSignal,
    commit: (output: TxnOutput, offsets: TxnOffset[]) => Promise<void>,
  ): Promise<boolean> {
    const d = this.#d;
    const job = this.#job;
    const maxRecords = d.maxRecords ?? 5_000;
    const interval = d.commitIntervalMs ?? 200;
    const pace = new Pace(job.rate);
    let output = new TxnOutput();
    let firstAt: number | null = null;
    const flush = async () => {
      if (firstAt === null) return;
      await commit(output, this.#offsets(positions));
      for (const p of positions.values()) p.dirty = false;
      output = new TxnOutput();
      firstAt = null;
      await this.#report(positions);
    };
    const reads = d.kafka.reads.batches({
      topic: job.topic,
      partitions: open.map((p) => ({ partition: p.range.partition, from: p.next, to: p.range.to })),
      signal,
      reuseBuffers: true,
      retryUntil: this.#now() + 60_000,
    });
    try {
      for await (const records of reads) {
        for (const raw of records) {
          const p = positions.get(raw.partition);
          if (p === undefined || raw.offset < p.next || raw.offset >= p.range.to) continue;
          const outcome = await router.route(raw);
          if (outcome.kind === "WRITE") {
            const wait = pace.take();
            if (wait > 0) {
              await this.#sleep(wait);
              if (signal.aborted) break;
            }
            const partition = raw.key !== null ? partitionForKey(raw.key, outcome.partitions) : raw.partition % outcome.partitions;
            output.add(outcome.target, partition, raw.key, raw.value, raw.timestamp, headersOf(raw));
          }
          tally(p.counts, outcome);
          p.next = raw.offset + 1;
          p.dirty = true;
          firstAt ??= this.#now();
          if (output.records >= maxRecords || this.#now() - firstAt >= interval) await flush();
        }
        if (signal.aborted) break;
      }
    } catch (err) {
      if (!signal.aborted) throw err;
    }
    // Stopping or read to the end: what is held is committed.
    await flush();
    return signal.aborted;
  }
}
