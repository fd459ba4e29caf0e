/**
 * Reads offset ranges of a topic's partitions with raw Fetch requests: no consumer group, no
 * commits, nothing left behind on the cluster. Each call has its own connections, closed when
 * the iteration ends, fails, or its AbortSignal fires (at once: pending requests are dropped).
 *
 * Without `follow`, a partition ends at `to` or at the high watermark seen when the read
 * starts, whichever comes first: the read is a snapshot and never waits for new records.
 *
 * Records come a fetched partition at a time (consumeBatches); consumeRecords flattens them.
 * Record batches are decoded by record-set.ts from the bytes of a raw Fetch (raw-fetch.ts);
 * brokers older than Fetch v13, or `recordDecoder: "client"`, get the client's own Fetch.
 * Transactions: READ_COMMITTED, aborted records are left out either way.
 */

import { type Broker, Consumer, IS_CONTROL, type RecordsBatch } from "@platformatic/kafka";
import { AppError } from "../errors.ts";
import { abortable, abortError } from "../util/abort.ts";
import { answerWithin, callApi, clientOptions } from "./client.ts";
import type { KafkaConnection, MetadataResponse } from "./connection.ts";
import { type ConnectionFacts, kafkaErrorName, toAppError } from "./errors.ts";
import { LeaderlessPartitions } from "./partition-plan.ts";
import { negotiatedFetch, type RecordBytes, rawFetch } from "./raw-fetch.ts";
import { type AbortedTransaction, decodeRecordSet, type ReadCursor, skipPast } from "./record-set.ts";
import {
  type ConsumeRequest,
  FETCH_MAX_WAIT_MS,
  type FetchedBatches,
  type OffsetSpec,
  type RawRecord,
  type ReadObserver,
  type ReadOutage,
} from "./types.ts";

/** Batch attribute bit 3: the timestamps are the broker's append time, not the producer's. */
const LOG_APPEND_TIME = 1 << 3;

export interface ConsumeDeps {
  cluster: string;
  /** What the cluster's connections know of why one failed (a refused client certificate). */
  facts(): ConnectionFacts;
  /** The bootstrap brokers, named when the cluster cannot be asked at all. */
  bootstrap: string[];
  createConsumer(): Consumer;
  /** The client's request timeout: a fetch unanswered well past it is given up (see answerWithin). */
  requestTimeoutMs: number;
  /** Told when the call's connections are open and when they are closed again. */
  onOpen(): void;
  onClose(): void;
}

/** `end` is exclusive; null reads on forever (follow without `to`). */
type PartitionCursor = ReadCursor;

/** One partition's answer to a Fetch, in either decoder's form. */
interface FetchedPartition {
  partitionIndex: number;
  highWatermark: number;
  abortedTransactions: AbortedTransaction[] | null;
  raw: RecordBytes | null;
  batches: RecordsBatch[] | null;
}

/** Beyond the request timeout and the fetch's max wait, before a round counts as lost. */
const ROUND_SLACK_MS = 5_000;

/** Without a deadline (retryUntil), failures in a row before the read gives up. */
const MAX_TRANSIENT_RETRIES = 5;
/** Backoff after a failure: doubles from the first to the most. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 2_000;

/** What the read knows of the topic's leaders; refreshed only after a failure. */
interface Leaders {
  topicId: string;
  partitionsCount: number;
  /** Leader node per partition; -1: none. */
  leader: number[];
  brokers: Map<number, Broker>;
}

/** A failure of what one broker was asked, for the error that names it. */
class BrokerFailure extends Error {
  constructor(
    readonly what: string,
    readonly partitions: number[],
    override readonly cause: unknown,
  ) {
    super(what);
  }
}

const UNKNOWN_TOPIC_OR_PARTITION = 3;

/**
 * The topic's leaders from a raw Metadata request. The client's own metadata fails as a whole
 * when one partition has no leader (its parse throws on the partition's error code), which
 * would make one offline partition stop the whole read: here the answer is taken from the error.
 */
async function topicLeaders(consumer: Consumer, topic: string, known: boolean, signal: AbortSignal | undefined): Promise<Leaders> {
  let md: MetadataResponse;
  try {
    md = await abortable(callApi<MetadataResponse>(consumer, "Metadata", null, [topic], false, false), signal);
  } catch (err) {
    const answer = (err as { response?: Partial<MetadataResponse> }).response;
    if (!Array.isArray(answer?.topics) || !Array.isArray(answer.brokers)) throw err;
    md = answer as MetadataResponse;
  }
  const t = md.topics.find((x) => x.name === topic);
  // A broker that has just restarted may not know the topic yet: only a topic never seen is missing.
  if (!t || t.errorCode === UNKNOWN_TOPIC_OR_PARTITION) {
    if (!known) throw new AppError("NOT_FOUND", `Topic '${topic}' does not exist.`);
    throw new AppError("UNAVAILABLE", `the broker does not know topic '${topic}' (yet)`);
  }
  if (t.errorCode !== 0) throw new AppError("UNAVAILABLE", `the topic's metadata has error ${t.errorCode}`);
  const leader: number[] = [];
  for (const p of t.partitions) leader[p.partitionIndex] = p.errorCode === 0 || p.leaderId >= 0 ? p.leaderId : -1;
  const brokers = new Map<number, Broker>(md.brokers.map((b) => [b.nodeId, { host: b.host, port: b.port }]));
  return { topicId: t.topicId, partitionsCount: t.partitions.length, leader, brokers };
}

/** Offsets of the partitions at `timestamp` (-2 earliest, -1 latest), one raw ListOffsets per leader. */
async function listOffsets(
  consumer: Consumer,
  leaders: Leaders,
  topic: string,
  partitions: number[],
  timestamp: bigint,
): Promise<Map<number, number>> {
  const byLeader = new Map<number, number[]>();
  for (const p of partitions) {
    const node = leaders.leader[p] ?? -1;
    byLeader.set(node, [...(byLeader.get(node) ?? []), p]);
  }
  const out = new Map<number, number>();
  await Promise.all(
    [...byLeader].map(async ([node, group]) => {
      const broker = leaders.brokers.get(node);
      if (node < 0 || !broker)
        throw new BrokerFailure(`partition ${group[0]} has no leader`, group, new AppError("UNAVAILABLE", "no leader"));
      try {
        const res = await callApi<{ topics: Array<{ partitions: Array<{ partitionIndex: number; offset: bigint }> }> }>(
          consumer,
          "ListOffsets",
          broker,
          -1,
          1,
          [{ name: topic, partitions: group.map((partitionIndex) => ({ partitionIndex, currentLeaderEpoch: -1, timestamp })) }],
        );
        for (const t of res.topics) for (const p of t.partitions) out.set(p.partitionIndex, Number(p.offset));
      } catch (err) {
        throw new BrokerFailure(`Kafka broker ${broker.host}:${broker.port} unreachable`, group, err);
      }
    }),
  );
  return out;
}

export async function* consumeRecords(deps: ConsumeDeps, req: ConsumeRequest): AsyncGenerator<RawRecord, void, undefined> {
  for await (const records of consumeBatches(deps, req)) yield* records;
}

/**
 * A fetched partition's records at a time, in the stages of a TopicRead: `start` (the leaders,
 * where each partition's log starts and ends, the Fetch to use), then rounds of `fetch` (one
 * Fetch per leader), `take` (each partition's records decoded and yielded) and `settle` (what
 * failed in the round), until every partition is at its end or the signal fires.
 *
 * Failures: a lost broker, a lost leader, a timeout are retried with backoff, until
 * `retryUntil` (or a few times without it); only what a successful Fetch returned moves a
 * cursor, so a read that resumes after a broker restart neither repeats nor misses a record.
 * A partition with no leader while others have one is left out after a short grace, and the
 * observer's `skipped` is told. All of this runs on errors only.
 */
export async function* consumeBatches(deps: ConsumeDeps, req: ConsumeRequest): AsyncGenerator<RawRecord[], void, undefined> {
  validate(req);
  if (req.signal?.aborted || req.partitions.length === 0) return;
  const read = new TopicRead(deps, req);
  try {
    await read.start();
    for (let active = read.active(); active.length > 0; active = read.active()) {
      const round = await read.fetch(active);
      // Failed before an answer came: retried after a backoff.
      if (round === null) continue;
      const failed = yield* read.take(round);
      await read.settle(active, failed);
    }
  } catch (err) {
    if (read.aborted(err)) return;
    throw toAppError(err, read.context, deps.cluster, deps.facts());
  } finally {
    await read.close();
  }
}

/** One leader's answer to a round: the cursors it was asked for and its partitions. */
type LeaderAnswer = { cursors: PartitionCursor[]; partitions: FetchedPartition[] };
type Round = Array<PromiseSettledResult<LeaderAnswer>>;

/**
 * The state of one read of a topic and its stages (see consumeBatches). Its connections are its
 * own: opened by the constructor, closed by close() or at once when the signal fires.
 */
class TopicRead {
  readonly context: string;
  readonly #deps: ConsumeDeps;
  readonly #req: ConsumeRequest;
  readonly #topic: string;
  readonly #signal: AbortSignal | undefined;
  readonly #observer: ReadObserver;
  readonly #consumer: Consumer;
  readonly #closeNow = () => void this.#consumer.close(true).catch(() => {});

  // Failure state; touched only when something failed.
  #outage: ReadOutage | null = null;
  #failures = 0;
  /** Rounds each partition has been seen without a leader. */
  readonly #leaderless = new LeaderlessPartitions();
  readonly #skipped = this.#leaderless.leftOut;
  /** The leaders must be asked again before the next round (after a failure). */
  #stale = false;

  // Set by start().
  #leaders: Leaders = { topicId: "", partitionsCount: 0, leader: [], brokers: new Map() };
  #cursors: PartitionCursor[] = [];
  #fetchApi: Awaited<ReturnType<typeof negotiatedFetch>> = null;

  readonly #maxBytes: number;
  readonly #partitionMaxBytes: number;
  readonly #maxWaitTime: number;
  /** A record set arrives in pieces (network reads); decoding wants it in one buffer. */
  #scratch: Buffer | null = null;

  constructor(deps: ConsumeDeps, req: ConsumeRequest) {
    this.#deps = deps;
    this.#req = req;
    this.#topic = req.topic;
    this.#signal = req.signal;
    this.#observer = req.observer ?? {};
    this.context = `Cannot read topic '${req.topic}'`;
    this.#maxBytes = req.maxBytes ?? 4 * 1024 * 1024;
    this.#partitionMaxBytes = Math.min(this.#maxBytes, 1024 * 1024);
    this.#maxWaitTime = req.maxWaitMs ?? FETCH_MAX_WAIT_MS;
    this.#consumer = deps.createConsumer();
    deps.onOpen();
    this.#signal?.addEventListener("abort", this.#closeNow, { once: true });
  }

  /** True when the read ends because its signal fired (`err` being what that made fail). */
  aborted(err?: unknown): boolean {
    return this.#signal?.aborted === true || isAbortError(err);
  }

  /**
   * Stage 1: where the log starts and ends now. Starts below the log start move up to it, and
   * without `follow` the read ends at today's end instead of waiting.
   */
  async start(): Promise<void> {
    const topic = this.#topic;
    const req = this.#req;
    for (;;) {
      try {
        const leaders = await this.#refreshLeaders(false);
        for (const { partition } of req.partitions) {
          if (partition >= leaders.partitionsCount) {
            throw new AppError(
              "NOT_FOUND",
              `${this.context}: partition ${partition} does not exist (the topic has ${leaders.partitionsCount})`,
            );
          }
        }
        const wanted = req.partitions.filter((p) => !this.#skipped.has(p.partition));
        const waiting = wanted.filter((p) => (leaders.leader[p.partition] ?? -1) < 0).map((p) => p.partition);
        if (waiting.length > 0) {
          throw new BrokerFailure(`partition ${waiting[0]} has no leader`, waiting, new AppError("UNAVAILABLE", "no leader"));
        }
        const numbers = wanted.map((p) => p.partition);
        const consumer = this.#consumer;
        const [earliest, latest] = await abortable(
          Promise.all([listOffsets(consumer, leaders, topic, numbers, -2n), listOffsets(consumer, leaders, topic, numbers, -1n)]),
          this.#signal,
        );
        this.#cursors = wanted.map((p) => {
          const start = earliest.get(p.partition) ?? 0;
          const hw = latest.get(p.partition) ?? 0;
          const from = Math.max(p.from, start);
          let end = p.to === undefined ? null : p.to;
          if (!req.follow) end = end === null || end > hw ? hw : end;
          return { partition: p.partition, next: from, end };
        });
        this.#fetchApi = await abortable(negotiatedFetch(consumer, req.recordDecoder ?? "loupe"), this.#signal);
        if (this.#fetchApi === null) {
          // The client's Fetch finds brokers and topic ids in its own metadata.
          consumer.topics.track(topic);
          await abortable(consumer.metadata({ topics: [topic] }), this.#signal);
        }
        this.#leaders = leaders;
        break;
      } catch (err) {
        if (this.aborted(err)) throw err;
        await this.#backoff(err);
      }
    }
    this.#recovered();
  }

  /** The partitions left to read: none once the signal fired. */
  active(): PartitionCursor[] {
    if (this.#signal?.aborted) return [];
    return this.#cursors.filter((c) => !this.#skipped.has(c.partition) && (c.end === null || c.next < c.end));
  }

  /**
   * Stage 2: one round of Fetch requests, one per leader of the active partitions, sent together.
   * Null when the round could not be sent (its leaders unknown): retried after a backoff.
   */
  async fetch(active: PartitionCursor[]): Promise<Round | null> {
    const observer = this.#observer;
    try {
      if (this.#stale) {
        this.#leaders = await this.#refreshLeaders(true);
        this.#stale = false;
      }
      const byLeader = new Map<number, PartitionCursor[]>();
      for (const c of active) {
        const leader = this.#leaders.leader[c.partition] ?? -1;
        byLeader.set(leader, [...(byLeader.get(leader) ?? []), c]);
      }
      observer.fetching?.(Date.now());
      return await abortable(Promise.allSettled([...byLeader].map(([node, group]) => this.#fetchFrom(node, group))), this.#signal);
    } catch (err) {
      if (this.aborted(err)) throw err;
      this.#stale = true;
      await this.#backoff(err);
      return null;
    } finally {
      observer.fetching?.(null);
    }
  }

  /** One Fetch to the leader `node` for its partitions, by the raw Fetch or the client's. */
  async #fetchFrom(node: number, group: PartitionCursor[]): Promise<LeaderAnswer> {
    const numbers = group.map((c) => c.partition);
    if (node < 0) throw new BrokerFailure(`partition ${numbers[0]} has no leader`, numbers, new AppError("UNAVAILABLE", "no leader"));
    const partitionMaxBytes = this.#partitionMaxBytes;
    const partitions = group.map((c) => ({
      partition: c.partition,
      fetchOffset: BigInt(c.next),
      partitionMaxBytes,
      currentLeaderEpoch: -1,
      lastFetchedEpoch: -1,
    }));
    const { topicId } = this.#leaders;
    const broker = this.#leaders.brokers.get(node);
    const where = broker ? `Kafka broker ${broker.host}:${broker.port} unreachable` : `Kafka broker ${node} unreachable`;
    const maxBytes = this.#maxBytes;
    const maxWaitTime = this.#maxWaitTime;
    try {
      if (this.#fetchApi === null || !broker) {
        const response = await this.#consumer.fetch({ node, topics: [{ topicId, partitions }], minBytes: 1, maxBytes, maxWaitTime });
        return {
          cursors: group,
          partitions: response.responses.flatMap((t) =>
            t.partitions.map((p) => ({
              partitionIndex: p.partitionIndex,
              highWatermark: Number(p.highWatermark),
              abortedTransactions: null,
              raw: null,
              batches: p.records ?? [],
            })),
          ),
        };
      }
      // The client times requests out itself; this bounds a round whose answer it lost.
      const response = await answerWithin(
        rawFetch(this.#consumer, this.#fetchApi, broker, maxWaitTime, maxBytes, topicId, partitions),
        this.#deps.requestTimeoutMs + maxWaitTime + ROUND_SLACK_MS,
        `Fetch from Kafka broker ${broker.host}:${broker.port}`,
      );
      return {
        cursors: group,
        partitions: response.responses.flatMap((t) =>
          t.partitions.map((p) => ({
            partitionIndex: p.partitionIndex,
            highWatermark: p.highWatermark,
            abortedTransactions: p.abortedTransactions,
            raw: p.records,
            batches: null,
          })),
        ),
      };
    } catch (err) {
      throw new BrokerFailure(where, numbers, err);
    }
  }

  /**
   * Stage 3: the records of what did arrive, a partition at a time, moving the cursors. A broker
   * that failed does not hold up the others: its failure (the first) is returned for settle().
   */
  async *take(round: Round): AsyncGenerator<RawRecord[], unknown, undefined> {
    const observer = this.#observer;
    let failed: unknown = null;
    for (const result of round) {
      if (result.status === "rejected") {
        failed ??= result.reason;
        continue;
      }
      for (const p of result.value.partitions) {
        const cursor = result.value.cursors.find((c) => c.partition === p.partitionIndex);
        if (!cursor) continue;
        const out: RawRecord[] = [];
        const fetched = this.#decode(p, cursor, out);
        if (out.length > 0) {
          if (this.#signal?.aborted) throw abortError();
          yield out;
        }
        if (fetched) observer.position?.(p.partitionIndex, cursor.next);
        // Nothing more will come before the end we were given.
        if (!this.#req.follow && !fetched && p.highWatermark >= 0 && cursor.next >= p.highWatermark) {
          cursor.end = cursor.next;
        }
      }
    }
    return failed;
  }

  /** Appends a fetched partition's records past its cursor to `out`; true when the answer held batches. */
  #decode(p: FetchedPartition, cursor: PartitionCursor, out: RawRecord[]): boolean {
    const observer = this.#observer;
    if (p.raw !== null) {
      const stats = decodeRecordSet(this.#contiguous(p.raw), this.#topic, cursor, p.abortedTransactions, out);
      if (stats.firstOffset < 0) return false;
      observer.fetched?.({ partition: p.partitionIndex, ...stats });
      return true;
    }
    if (p.batches === null || p.batches.length === 0) return false;
    observer.fetched?.(fetchedBatches(p.partitionIndex, p.batches));
    for (const batch of p.batches) {
      batchRecords(this.#topic, cursor, batch, out);
      if (cursor.end !== null && cursor.next >= cursor.end) break;
    }
    return true;
  }

  #contiguous({ segments, length }: RecordBytes): Buffer {
    if (segments.length === 1) return segments[0]!;
    if (!this.#req.reuseBuffers) return Buffer.concat(segments, length);
    if (this.#scratch === null || this.#scratch.length < length) this.#scratch = Buffer.allocUnsafe(Math.max(length, 1 << 20));
    let at = 0;
    for (const s of segments) at += s.copy(this.#scratch, at);
    return this.#scratch.subarray(0, length);
  }

  /**
   * Stage 4: after a round, what failed in it. Records deleted under the read (retention,
   * DeleteRecords) move the cursors to the new log start; anything else is retried after a
   * backoff with the leaders asked again.
   */
  async settle(active: PartitionCursor[], failed: unknown): Promise<void> {
    if (failed === null) {
      this.#recovered();
      return;
    }
    const cause = failed instanceof BrokerFailure ? failed.cause : failed;
    if (kafkaErrorName(cause) === "OFFSET_OUT_OF_RANGE") {
      try {
        const starts = await abortable(
          listOffsets(
            this.#consumer,
            this.#leaders,
            this.#topic,
            active.map((c) => c.partition),
            -2n,
          ),
          this.#signal,
        );
        let moved = false;
        for (const c of active) {
          const start = starts.get(c.partition) ?? c.next;
          if (start > c.next) {
            c.next = start;
            moved = true;
          }
        }
        if (moved) return;
      } catch (err) {
        if (this.aborted(err)) throw err;
        failed = err;
      }
    }
    if (this.#signal?.aborted) throw abortError();
    this.#stale = true;
    this.#consumer.clearMetadata();
    await this.#backoff(failed);
  }

  /** Ends the read: bounded, as a close that hangs on a dead broker must not hold up the caller. */
  async close(): Promise<void> {
    this.#signal?.removeEventListener("abort", this.#closeNow);
    await Promise.race([this.#consumer.close(true).catch(() => {}), Bun.sleep(1_000)]);
    this.#deps.onClose();
  }

  /** After a failure: the observer is told of the outage and the read waits, or gives up past its time. */
  async #backoff(err: unknown): Promise<void> {
    const { context } = this;
    const deps = this.#deps;
    const req = this.#req;
    const failure = err instanceof BrokerFailure ? err : null;
    const mapped = toAppError(failure ? failure.cause : err, context, deps.cluster, deps.facts());
    if (mapped.code !== "UNAVAILABLE" && mapped.code !== "GATEWAY_TIMEOUT") throw mapped;
    const now = Date.now();
    const outage = this.#outage;
    // A failure of the metadata request names no broker: the one that failed before it is more telling.
    const what = failure?.what ?? outage?.what ?? `Kafka broker ${deps.bootstrap.join(", ")} unreachable`;
    const partitions =
      failure?.partitions ?? outage?.partitions ?? req.partitions.map((p) => p.partition).filter((p) => !this.#skipped.has(p));
    const since: number = outage?.since ?? now;
    const reason = mapped.message.startsWith(`${context}: `) ? mapped.message.slice(context.length + 2) : mapped.message;
    const current: ReadOutage = {
      since,
      what,
      partitions,
      reason,
      toError: () => {
        const secs = Math.max(1, Math.round((Date.now() - since) / 1000));
        const which = partitions.length === 1 ? `partition ${partitions[0]}` : `partitions ${partitions.join(", ")}`;
        return new AppError("UNAVAILABLE", `${context}: ${what} for ${secs} s while reading ${which} (${reason})`, {
          details: { cluster: deps.cluster, retriable: true, partitions, unavailableMs: Date.now() - since },
          cause: mapped,
        });
      },
    };
    this.#outage = current;
    this.#failures++;
    const failures = this.#failures;
    const until = req.retryUntil;
    if (until === undefined ? failures > MAX_TRANSIENT_RETRIES : now >= until) throw current.toError();
    this.#observer.outage?.(current);
    const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (failures - 1), until === undefined ? RETRY_MAX_MS : until - now);
    await abortable(Bun.sleep(delay), this.#signal);
  }

  #recovered(): void {
    if (this.#outage === null) return;
    this.#outage = null;
    this.#failures = 0;
    this.#observer.outage?.(null);
  }

  /**
   * The leaders, with partitions that have none handled: within the grace they wait; past it,
   * when other partitions are readable and the caller listens, they are left out.
   */
  async #refreshLeaders(known: boolean): Promise<Leaders> {
    const observer = this.#observer;
    const leaders = await topicLeaders(this.#consumer, this.#topic, known, this.#signal);
    const partitions = this.#req.partitions.map((p) => p.partition);
    for (const partition of this.#leaderless.observe(leaders.leader, partitions, observer.skipped !== undefined)) {
      observer.skipped?.({ partition, reason: "no leader" });
    }
    return leaders;
  }
}

function isAbortError(err: unknown): boolean {
  return err instanceof Error && err.name === "AbortError";
}

function fetchedBatches(partition: number, batches: RecordsBatch[]): FetchedBatches {
  let records = 0;
  for (const b of batches) if ((b.attributes & IS_CONTROL) === 0) records += b.records.length;
  const last = batches[batches.length - 1]!;
  return { partition, records, firstOffset: Number(batches[0]!.firstOffset), lastOffset: Number(last.firstOffset) + last.lastOffsetDelta };
}

/** Appends the batch's records from the cursor on, below its end, to `out`; moves the cursor past the batch. */
function batchRecords(topic: string, cursor: PartitionCursor, batch: RecordsBatch, out: RawRecord[]): void {
  const firstOffset = Number(batch.firstOffset);
  const lastOffset = firstOffset + batch.lastOffsetDelta;
  // Transaction markers occupy offsets but are no records.
  if ((batch.attributes & IS_CONTROL) === 0) {
    const logAppendTime = (batch.attributes & LOG_APPEND_TIME) !== 0;
    for (const r of batch.records) {
      const offset = firstOffset + r.offsetDelta;
      if (offset < cursor.next) continue;
      if (cursor.end !== null && offset >= cursor.end) {
        cursor.next = cursor.end;
        return;
      }
      cursor.next = offset + 1;
      out.push({
        topic,
        partition: cursor.partition,
        offset,
        timestamp: Number(logAppendTime ? batch.maxTimestamp : batch.firstTimestamp + r.timestampDelta),
        timestampType: logAppendTime ? "LogAppendTime" : "CreateTime",
        key: r.key,
        value: r.value,
        headers: r.headers.map(([k, v]) => ({ key: k ? k.toString("utf8") : "", value: v })),
      });
    }
  }
  skipPast(cursor, lastOffset);
}

function validate(req: ConsumeRequest): void {
  const seen = new Set<number>();
  for (const p of req.partitions) {
    if (!Number.isInteger(p.partition) || p.partition < 0) throw new AppError("BAD_REQUEST", `Invalid partition ${p.partition}`);
    if (seen.has(p.partition)) throw new AppError("BAD_REQUEST", `Partition ${p.partition} is listed twice`);
    seen.add(p.partition);
    if (!Number.isSafeInteger(p.from) || p.from < 0)
      throw new AppError("BAD_REQUEST", `Invalid start offset ${p.from} for partition ${p.partition}`);
    if (p.to !== undefined && (!Number.isSafeInteger(p.to) || p.to < p.from)) {
      throw new AppError("BAD_REQUEST", `Invalid end offset ${p.to} for partition ${p.partition}: it must be at least the start ${p.from}`);
    }
  }
}

export class ReadOps {
  readonly #conn: KafkaConnection;
  readonly #deps: ConsumeDeps;

  constructor(conn: KafkaConnection) {
    this.#conn = conn;
    this.#deps = {
      cluster: conn.name,
      facts: () => conn.facts(),
      bootstrap: conn.config.bootstrapServers,
      requestTimeoutMs: conn.config.requestTimeoutMs ?? 30_000,
      createConsumer: () =>
        new Consumer({
          ...clientOptions(conn.config, conn.counter),
          // Required by the client; never joined: reads use Fetch directly.
          groupId: `${conn.config.clientId}-reader`,
        }),
      onOpen: () => conn.openReads++,
      onClose: () => conn.openReads--,
    };
  }

  /**
   * Reads the given offset ranges without a consumer group. Aborting the signal ends the
   * iteration and closes its connections.
   */
  records(req: ConsumeRequest): AsyncIterable<RawRecord> {
    this.#conn.checkOpen();
    return consumeRecords(this.#deps, req);
  }

  /**
   * The leader of each partition of the topic (-1: none), and the brokers, from a raw Metadata
   * request: unlike a description, one partition without a leader does not fail it.
   */
  async leaders(topic: string): Promise<number[]> {
    this.#conn.checkOpen();
    return this.#withConsumer(
      `Cannot describe topic '${topic}'`,
      async (consumer) => (await topicLeaders(consumer, topic, false, undefined)).leader,
    );
  }

  /**
   * Offsets of partitions that have a leader, at `spec`, one raw ListOffsets per leader: the
   * client's own needs the whole topic's metadata, which one leaderless partition fails.
   * `timestamp` offsets are -1 where no record is that recent.
   */
  async offsetsOf(topic: string, partitions: number[], spec: OffsetSpec): Promise<Map<number, number>> {
    const [found] = await this.offsetsAt(topic, partitions, [spec]);
    return found!;
  }

  /** As offsetsOf, at each of `specs` (in their order), over one connection and one metadata lookup. */
  async offsetsAt<const S extends readonly OffsetSpec[]>(
    topic: string,
    partitions: number[],
    specs: S,
  ): Promise<{ -readonly [K in keyof S]: Map<number, number> }> {
    this.#conn.checkOpen();
    return this.#withConsumer(`Cannot list offsets of topic '${topic}'`, async (consumer) => {
      const leaders = await topicLeaders(consumer, topic, false, undefined);
      const timestamp = (spec: OffsetSpec) => (spec === "earliest" ? -2n : spec === "latest" ? -1n : BigInt(spec));
      try {
        const found = await Promise.all(specs.map((spec) => listOffsets(consumer, leaders, topic, partitions, timestamp(spec))));
        return found as { -readonly [K in keyof S]: Map<number, number> };
      } catch (err) {
        throw err instanceof BrokerFailure ? err.cause : err;
      }
    });
  }

  async #withConsumer<T>(context: string, fn: (consumer: Consumer) => Promise<T>): Promise<T> {
    const consumer = this.#deps.createConsumer();
    try {
      return await fn(consumer);
    } catch (err) {
      throw toAppError(err, context, this.#deps.cluster, this.#deps.facts());
    } finally {
      await Promise.race([consumer.close(true).catch(() => {}), Bun.sleep(1_000)]);
    }
  }

  /** As records(), a fetched partition's records at a time: the fast form for long reads. */
  batches(req: ConsumeRequest): AsyncIterable<RawRecord[]> {
    this.#conn.checkOpen();
    return consumeBatches(this.#deps, req);
  }
}
