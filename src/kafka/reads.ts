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
import { abortable } from "../util/abort.ts";
import { answerWithin, callApi, clientOptions } from "./client.ts";
import type { KafkaConnection, MetadataResponse } from "./connection.ts";
import { kafkaErrorName, toAppError } from "./errors.ts";
import { negotiatedFetch, type RecordBytes, rawFetch } from "./raw-fetch.ts";
import { type AbortedTransaction, decodeRecordSet, type ReadCursor, skipPast } from "./record-set.ts";
import { type ConsumeRequest, FETCH_MAX_WAIT_MS, type FetchedBatches, type RawRecord, type ReadOutage } from "./types.ts";

/** Batch attribute bit 3: the timestamps are the broker's append time, not the producer's. */
const LOG_APPEND_TIME = 1 << 3;

export interface ConsumeDeps {
  cluster: string;
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
/**
 * Rounds (metadata refreshes with backoff, some 1.5 s) a partition may show no leader while
 * others are readable before it is left out: a leader election takes less.
 */
const OFFLINE_GRACE_ROUNDS = 4;

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
 * Failures: a lost broker, a lost leader, a timeout are retried with backoff, until
 * `retryUntil` (or a few times without it); only what a successful Fetch returned moves a
 * cursor, so a read that resumes after a broker restart neither repeats nor misses a record.
 * A partition with no leader while others have one is left out after a short grace, and
 * `onSkip` is told. All of this runs on errors only.
 */
export async function* consumeBatches(deps: ConsumeDeps, req: ConsumeRequest): AsyncGenerator<RawRecord[], void, undefined> {
  const { topic, signal } = req;
  const context = `Cannot read topic '${topic}'`;
  validate(req);
  if (signal?.aborted || req.partitions.length === 0) return;

  const consumer = deps.createConsumer();
  deps.onOpen();
  const closeNow = () => void consumer.close(true).catch(() => {});
  signal?.addEventListener("abort", closeNow, { once: true });

  // Failure state; touched only when something failed.
  let outage: ReadOutage | null = null;
  let failures = 0;
  /** Rounds each partition has been seen without a leader. */
  const leaderless = new Map<number, number>();
  const skipped = new Set<number>();
  const backoff = async (err: unknown): Promise<void> => {
    const failure = err instanceof BrokerFailure ? err : null;
    const mapped = toAppError(failure ? failure.cause : err, context, deps.cluster);
    if (mapped.code !== "UNAVAILABLE" && mapped.code !== "GATEWAY_TIMEOUT") throw mapped;
    const now = Date.now();
    // A failure of the metadata request names no broker: the one that failed before it is more telling.
    const what = failure?.what ?? outage?.what ?? `Kafka broker ${deps.bootstrap.join(", ")} unreachable`;
    const partitions = failure?.partitions ?? outage?.partitions ?? req.partitions.map((p) => p.partition).filter((p) => !skipped.has(p));
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
    outage = current;
    failures++;
    const until = req.retryUntil;
    if (until === undefined ? failures > MAX_TRANSIENT_RETRIES : now >= until) throw current.toError();
    req.onOutage?.(current);
    const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (failures - 1), until === undefined ? RETRY_MAX_MS : until - now);
    await abortable(Bun.sleep(delay), signal);
  };
  const recovered = () => {
    if (outage === null) return;
    outage = null;
    failures = 0;
    req.onOutage?.(null);
  };
  /**
   * The leaders, with partitions that have none handled: within the grace they wait; past it,
   * when other partitions are readable and the caller listens, they are left out.
   */
  const refreshLeaders = async (known: boolean): Promise<Leaders> => {
    const leaders = await topicLeaders(consumer, topic, known, signal);
    const readable = leaders.leader.some((l) => l >= 0);
    for (const { partition } of req.partitions) {
      if (skipped.has(partition) || partition >= leaders.partitionsCount) continue;
      if ((leaders.leader[partition] ?? -1) >= 0) {
        leaderless.delete(partition);
        continue;
      }
      const rounds = (leaderless.get(partition) ?? 0) + 1;
      leaderless.set(partition, rounds);
      if (readable && req.onSkip && rounds > OFFLINE_GRACE_ROUNDS) {
        skipped.add(partition);
        leaderless.delete(partition);
        req.onSkip({ partition, reason: "no leader" });
      }
    }
    return leaders;
  };

  try {
    // Where the log starts and ends now: starts below the log start move up to it, and
    // without `follow` the read ends at today's end instead of waiting.
    let leaders: Leaders;
    let cursors: PartitionCursor[];
    let fetchApi: Awaited<ReturnType<typeof negotiatedFetch>>;
    for (;;) {
      try {
        leaders = await refreshLeaders(false);
        for (const { partition } of req.partitions) {
          if (partition >= leaders.partitionsCount) {
            throw new AppError("NOT_FOUND", `${context}: partition ${partition} does not exist (the topic has ${leaders.partitionsCount})`);
          }
        }
        const wanted = req.partitions.filter((p) => !skipped.has(p.partition));
        const waiting = wanted.filter((p) => (leaders.leader[p.partition] ?? -1) < 0).map((p) => p.partition);
        if (waiting.length > 0) {
          throw new BrokerFailure(`partition ${waiting[0]} has no leader`, waiting, new AppError("UNAVAILABLE", "no leader"));
        }
        const numbers = wanted.map((p) => p.partition);
        const [earliest, latest] = await abortable(
          Promise.all([listOffsets(consumer, leaders, topic, numbers, -2n), listOffsets(consumer, leaders, topic, numbers, -1n)]),
          signal,
        );
        cursors = wanted.map((p) => {
          const start = earliest.get(p.partition) ?? 0;
          const hw = latest.get(p.partition) ?? 0;
          const from = Math.max(p.from, start);
          let end = p.to === undefined ? null : p.to;
          if (!req.follow) end = end === null || end > hw ? hw : end;
          return { partition: p.partition, next: from, end };
        });
        fetchApi = await abortable(negotiatedFetch(consumer, req.recordDecoder ?? "loupe"), signal);
        if (fetchApi === null) {
          // The client's Fetch finds brokers and topic ids in its own metadata.
          consumer.topics.track(topic);
          await abortable(consumer.metadata({ topics: [topic] }), signal);
        }
        break;
      } catch (err) {
        if (signal?.aborted || isAbortError(err)) return;
        await backoff(err);
      }
    }
    recovered();
    const topicId = leaders.topicId;
    // A record set arrives in pieces (network reads); decoding wants it in one buffer.
    let scratch: Buffer | null = null;
    const contiguous = ({ segments, length }: RecordBytes): Buffer => {
      if (segments.length === 1) return segments[0]!;
      if (!req.reuseBuffers) return Buffer.concat(segments, length);
      if (scratch === null || scratch.length < length) scratch = Buffer.allocUnsafe(Math.max(length, 1 << 20));
      let at = 0;
      for (const s of segments) at += s.copy(scratch, at);
      return scratch.subarray(0, length);
    };

    const maxBytes = req.maxBytes ?? 4 * 1024 * 1024;
    const partitionMaxBytes = Math.min(maxBytes, 1024 * 1024);
    const maxWaitTime = req.maxWaitMs ?? FETCH_MAX_WAIT_MS;
    /** The leaders must be asked again before the next round (after a failure). */
    let stale = false;

    for (;;) {
      const active = cursors.filter((c) => !skipped.has(c.partition) && (c.end === null || c.next < c.end));
      if (active.length === 0 || signal?.aborted) return;

      const byLeader = new Map<number, PartitionCursor[]>();
      const settled: Array<PromiseSettledResult<{ cursors: PartitionCursor[]; partitions: FetchedPartition[] }>> = [];
      try {
        if (stale) {
          leaders = await refreshLeaders(true);
          stale = false;
        }
        for (const c of active) {
          const leader = leaders.leader[c.partition] ?? -1;
          byLeader.set(leader, [...(byLeader.get(leader) ?? []), c]);
        }
        req.onFetching?.(Date.now());
        settled.push(
          ...(await abortable(
            Promise.allSettled(
              [...byLeader].map(async ([node, group]) => {
                const numbers = group.map((c) => c.partition);
                if (node < 0)
                  throw new BrokerFailure(`partition ${numbers[0]} has no leader`, numbers, new AppError("UNAVAILABLE", "no leader"));
                const partitions = group.map((c) => ({
                  partition: c.partition,
                  fetchOffset: BigInt(c.next),
                  partitionMaxBytes,
                  currentLeaderEpoch: -1,
                  lastFetchedEpoch: -1,
                }));
                const broker = leaders.brokers.get(node);
                const where = broker ? `Kafka broker ${broker.host}:${broker.port} unreachable` : `Kafka broker ${node} unreachable`;
                try {
                  if (fetchApi === null || !broker) {
                    const response = await consumer.fetch({ node, topics: [{ topicId, partitions }], minBytes: 1, maxBytes, maxWaitTime });
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
                    rawFetch(consumer, fetchApi, broker, maxWaitTime, maxBytes, topicId, partitions),
                    deps.requestTimeoutMs + maxWaitTime + ROUND_SLACK_MS,
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
              }),
            ),
            signal,
          )),
        );
      } catch (err) {
        if (signal?.aborted || isAbortError(err)) return;
        stale = true;
        await backoff(err);
        continue;
      } finally {
        req.onFetching?.(null);
      }

      // What did arrive is read first: a broker that failed does not hold up the others.
      let failed: unknown = null;
      for (const result of settled) {
        if (result.status === "rejected") {
          failed ??= result.reason;
          continue;
        }
        for (const p of result.value.partitions) {
          const cursor = result.value.cursors.find((c) => c.partition === p.partitionIndex);
          if (!cursor) continue;
          const out: RawRecord[] = [];
          let fetched = false;
          if (p.raw !== null) {
            const stats = decodeRecordSet(contiguous(p.raw), topic, cursor, p.abortedTransactions, out);
            fetched = stats.firstOffset >= 0;
            if (fetched && req.onFetch) req.onFetch({ partition: p.partitionIndex, ...stats });
          } else if (p.batches !== null && p.batches.length > 0) {
            fetched = true;
            if (req.onFetch) req.onFetch(fetchedBatches(p.partitionIndex, p.batches));
            for (const batch of p.batches) {
              batchRecords(topic, cursor, batch, out);
              if (cursor.end !== null && cursor.next >= cursor.end) break;
            }
          }
          if (out.length > 0) {
            if (signal?.aborted) return;
            yield out;
          }
          if (fetched && req.onPosition) req.onPosition(p.partitionIndex, cursor.next);
          // Nothing more will come before the end we were given.
          if (!req.follow && !fetched && p.highWatermark >= 0 && cursor.next >= p.highWatermark) {
            cursor.end = cursor.next;
          }
        }
      }
      if (failed === null) {
        recovered();
        continue;
      }
      const cause = failed instanceof BrokerFailure ? failed.cause : failed;
      if (kafkaErrorName(cause) === "OFFSET_OUT_OF_RANGE") {
        // Records were deleted under the read (retention, DeleteRecords): go on from the new start.
        try {
          const starts = await abortable(
            listOffsets(
              consumer,
              leaders,
              topic,
              active.map((c) => c.partition),
              -2n,
            ),
            signal,
          );
          let moved = false;
          for (const c of active) {
            const start = starts.get(c.partition) ?? c.next;
            if (start > c.next) {
              c.next = start;
              moved = true;
            }
          }
          if (moved) continue;
        } catch (err) {
          if (signal?.aborted || isAbortError(err)) return;
          failed = err;
        }
      }
      if (signal?.aborted) return;
      stale = true;
      consumer.clearMetadata();
      await backoff(failed);
    }
  } catch (err) {
    if (signal?.aborted || isAbortError(err)) return;
    throw toAppError(err, context, deps.cluster);
  } finally {
    signal?.removeEventListener("abort", closeNow);
    // Bounded: a close that hangs on a dead broker must not hold up the caller.
    await Promise.race([consumer.close(true).catch(() => {}), Bun.sleep(1_000)]);
    deps.onClose();
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
  async offsetsOf(topic: string, partitions: number[], spec: "earliest" | "latest" | number): Promise<Map<number, number>> {
    this.#conn.checkOpen();
    const timestamp = spec === "earliest" ? -2n : spec === "latest" ? -1n : BigInt(spec);
    return this.#withConsumer(`Cannot list offsets of topic '${topic}'`, async (consumer) => {
      const leaders = await topicLeaders(consumer, topic, false, undefined);
      try {
        return await listOffsets(consumer, leaders, topic, partitions, timestamp);
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
      throw toAppError(err, context, this.#deps.cluster);
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
