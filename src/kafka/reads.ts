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

import { Consumer, IS_CONTROL, type RecordsBatch } from "@platformatic/kafka";
import { AppError } from "../errors.ts";
import { abortable, clientOptions } from "./client.ts";
import type { KafkaConnection } from "./connection.ts";
import { isTransient, kafkaErrorName, toAppError } from "./errors.ts";
import { negotiatedFetch, type RecordBytes, rawFetch } from "./raw-fetch.ts";
import { type AbortedTransaction, decodeRecordSet, type ReadCursor, skipPast } from "./record-set.ts";
import type { ConsumeRequest, FetchedBatches, RawRecord } from "./types.ts";

/** Batch attribute bit 3: the timestamps are the broker's append time, not the producer's. */
const LOG_APPEND_TIME = 1 << 3;

export interface ConsumeDeps {
  cluster: string;
  createConsumer(): Consumer;
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

const MAX_TRANSIENT_RETRIES = 5;

export async function* consumeRecords(deps: ConsumeDeps, req: ConsumeRequest): AsyncGenerator<RawRecord, void, undefined> {
  for await (const records of consumeBatches(deps, req)) yield* records;
}

export async function* consumeBatches(deps: ConsumeDeps, req: ConsumeRequest): AsyncGenerator<RawRecord[], void, undefined> {
  const { topic, signal } = req;
  const context = `Cannot read topic '${topic}'`;
  validate(req);
  if (signal?.aborted || req.partitions.length === 0) return;

  const consumer = deps.createConsumer();
  deps.onOpen();
  const closeNow = () => void consumer.close(true).catch(() => {});
  signal?.addEventListener("abort", closeNow, { once: true });
  try {
    consumer.topics.track(topic);
    const metadata = await abortable(consumer.metadata({ topics: [topic] }), signal);
    const topicMeta = metadata.topics.get(topic);
    if (!topicMeta) throw new AppError("NOT_FOUND", `${context}: Topic '${topic}' does not exist.`);
    for (const { partition } of req.partitions) {
      if (partition >= topicMeta.partitionsCount) {
        throw new AppError("NOT_FOUND", `${context}: partition ${partition} does not exist (the topic has ${topicMeta.partitionsCount})`);
      }
    }
    const topicId = topicMeta.id;
    const partitionNumbers = req.partitions.map((p) => p.partition);

    // Where the log starts and ends now: starts below the log start move up to it, and
    // without `follow` the read ends at today's end instead of waiting.
    const [earliest, latest] = await abortable(
      Promise.all([
        consumer.listOffsets({ topics: [topic], partitions: { [topic]: partitionNumbers }, timestamp: -2n }),
        consumer.listOffsets({ topics: [topic], partitions: { [topic]: partitionNumbers }, timestamp: -1n }),
      ]),
      signal,
    );
    const cursors: PartitionCursor[] = req.partitions.map((p) => {
      const start = Number(earliest.get(topic)?.[p.partition] ?? 0n);
      const hw = Number(latest.get(topic)?.[p.partition] ?? 0n);
      const from = Math.max(p.from, start);
      let end = p.to === undefined ? null : p.to;
      if (!req.follow) end = end === null || end > hw ? hw : end;
      return { partition: p.partition, next: from, end };
    });
    const fetchApi = await abortable(negotiatedFetch(consumer, req.recordDecoder ?? "loupe"), signal);
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
    const maxWaitTime = req.maxWaitMs ?? 500;
    let transientFailures = 0;

    for (;;) {
      const active = cursors.filter((c) => c.end === null || c.next < c.end);
      if (active.length === 0 || signal?.aborted) return;

      const meta = await abortable(consumer.metadata({ topics: [topic] }), signal);
      const partitionsMeta = meta.topics.get(topic)?.partitions ?? [];
      const byLeader = new Map<number, PartitionCursor[]>();
      for (const c of active) {
        const leader = partitionsMeta[c.partition]?.leader ?? -1;
        byLeader.set(leader, [...(byLeader.get(leader) ?? []), c]);
      }

      let responses: Array<{ cursors: PartitionCursor[]; partitions: FetchedPartition[] }>;
      try {
        responses = await abortable(
          Promise.all(
            [...byLeader].map(async ([node, group]) => {
              if (node < 0) throw new AppError("UNAVAILABLE", `${context}: partition ${group[0]!.partition} has no leader`);
              const partitions = group.map((c) => ({
                partition: c.partition,
                fetchOffset: BigInt(c.next),
                partitionMaxBytes,
                currentLeaderEpoch: -1,
                lastFetchedEpoch: -1,
              }));
              const broker = meta.brokers.get(node);
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
              const response = await rawFetch(consumer, fetchApi, broker, maxWaitTime, maxBytes, topicId, partitions);
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
            }),
          ),
          signal,
        );
        transientFailures = 0;
      } catch (err) {
        if (signal?.aborted || (err instanceof Error && err.name === "AbortError")) return;
        if (kafkaErrorName(err) === "OFFSET_OUT_OF_RANGE") {
          // Records were deleted under the read (retention, DeleteRecords): go on from the new start.
          const starts = await abortable(
            consumer.listOffsets({ topics: [topic], partitions: { [topic]: active.map((c) => c.partition) }, timestamp: -2n }),
            signal,
          );
          let moved = false;
          for (const c of active) {
            const start = Number(starts.get(topic)?.[c.partition] ?? c.next);
            if (start > c.next) {
              c.next = start;
              moved = true;
            }
          }
          if (moved) continue;
        }
        if ((isTransient(err) || (err instanceof AppError && err.code === "UNAVAILABLE")) && transientFailures < MAX_TRANSIENT_RETRIES) {
          transientFailures++;
          consumer.clearMetadata();
          await abortable(Bun.sleep(100 * transientFailures), signal).catch(() => {});
          continue;
        }
        throw toAppError(err, context, deps.cluster);
      }

      for (const { cursors: group, partitions } of responses) {
        for (const p of partitions) {
          const cursor = group.find((c) => c.partition === p.partitionIndex);
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
          // Nothing more will come before the end we were given.
          if (!req.follow && !fetched && p.highWatermark >= 0 && cursor.next >= p.highWatermark) {
            cursor.end = cursor.next;
          }
        }
      }
    }
  } catch (err) {
    if (signal?.aborted || (err instanceof Error && err.name === "AbortError")) return;
    throw toAppError(err, context, deps.cluster);
  } finally {
    signal?.removeEventListener("abort", closeNow);
    // Bounded: a close that hangs on a dead broker must not hold up the caller.
    await Promise.race([consumer.close(true).catch(() => {}), Bun.sleep(1_000)]);
    deps.onClose();
  }
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

  /** As records(), a fetched partition's records at a time: the fast form for long reads. */
  batches(req: ConsumeRequest): AsyncIterable<RawRecord[]> {
    this.#conn.checkOpen();
    return consumeBatches(this.#deps, req);
  }
}
