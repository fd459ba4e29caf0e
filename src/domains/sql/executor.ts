/**
 * Runs one compiled query against a topic as a snapshot: each selected partition is read from
 * its start offset up to the end offset it had when the query began, then the query ends.
 * It knows nothing of HTTP: it is an AsyncIterable of typed events driven by an AbortSignal,
 * and reports progress through a small object the transport may read at any time.
 *
 * Push-down: the plan's partitions, offset range and time range become the offset range of
 * each partition before anything is fetched (time bounds via ListOffsets by timestamp); the
 * filter still tests every record, so a loose range only costs reading.
 *
 * Backpressure: nothing is fetched ahead. The Kafka read is pulled record by record through
 * this iterator, so a consumer of the events that stops pulling stops the fetching.
 */

import type { KafkaCluster } from "../../kafka/index.ts";
import type { FetchedBatches } from "../../kafka/types.ts";
import { type QueryPlan, type RecordView, resolveOffsetRange } from "../../sql/index.ts";
import { type Decoded, DecodeError, type Decoder, decodesJsonText, decodesPlainText, isPlainText } from "./decoders.ts";
import type { RecordLines } from "./lines.ts";
import type { Prefilter } from "./prefilter.ts";

/** One record of the answer (SPEC: Query data record). */

/** A batch of records is handed on once its records hold this many bytes, whatever their count. */
const BATCH_MAX_BYTES = 1 << 20;
export interface QueryRecord {
  timestamp: number;
  partition: number;
  key: string | null;
  offset: number;
  topic: string;
  /** The projected value serialised as JSON text. */
  value: string;
}

export interface PartitionOffsets {
  partition: number;
  min: number;
  max: number;
}

export type StopReason = "END" | "LIMIT" | "MAX_SIZE" | "MAX_QUERY_TIME" | "MAX_IDLE_TIME" | "STOPPED" | "CLIENT";

/** The end record (SPEC: type 2), plus why the query stopped. */
export interface QueryEnd {
  /** Bytes (raw key + value) of the records returned. */
  size: number;
  /** False when max.query.time ended the query. */
  isTimeRemaining: boolean;
  /** Per partition, lowest and highest offset read. */
  offsets: PartitionOffsets[];
  /** True when the query was killed (DELETE /api/sql/queries/{id}). */
  isStopped: boolean;
  /** Records returned. */
  totalRecords: number;
  /** True when every selected partition was read to its end offset of the snapshot. */
  isTopicEnd: boolean;
  /** Records that could not be decoded. */
  skippedRecords: number;
  recordsLimit: number;
  /** Bytes (raw key + value) of every record read, matching or not. */
  totalSizeRead: number;
  stopReason: StopReason;
}

/** What a read fetched from the broker, per partition: proof of push-down. */
export interface PartitionScan {
  partition: number;
  /** Offsets asked for: [from, to). */
  from: number;
  to: number;
  fetches: number;
  /** Records in the fetched batches, including those outside [from, to). */
  fetchedRecords: number;
  /** Lowest and highest offset of the fetched batches; -1 when nothing was fetched. */
  firstFetched: number;
  lastFetched: number;
}

export type QueryEvent =
  | { type: "records"; records: QueryRecord[] }
  /** With ExecuteOptions.lines: the stream lines of `records` records. */
  | { type: "lines"; bytes: Uint8Array; records: number }
  | { type: "end"; end: QueryEnd };

/** Live counters of a running query, for the statistics messages. */
export class QueryProgress {
  totalRecords = 0;
  skippedRecords = 0;
  /** Raw bytes read / returned. */
  totalSizeRead = 0;
  size = 0;
  readRecords = 0;
  scans: PartitionScan[] = [];
}

export interface ExecutorDeps {
  cluster: KafkaCluster;
  keyDecoder: Decoder;
  valueDecoder: Decoder;
  /** Rules records out from their raw value before decoding (see prefilter.ts). */
  prefilter?: Prefilter | null;
}

export interface ExecuteOptions {
  signal: AbortSignal;
  /** Fired by a kill: the query ends with isStopped. */
  stopSignal?: AbortSignal;
  progress?: QueryProgress;
  /** Largest number of records per `records` event (default 512). */
  batchSize?: number;
  /**
   * Writes the answer as event-stream lines: `lines` events instead of `records` events. Lets
   * `SELECT *` without a WHERE pass JSON values on from their bytes, checked but not parsed.
   */
  lines?: RecordLines;
}

const EMPTY = new Uint8Array(0);
const NULL_VALUE: Decoded = { value: null, json: "null" };

/**
 * What the filter and projection see of the record at hand. One instance serves the whole
 * query (the evaluator keeps no reference to it); the key is decoded only when read.
 */
class View implements RecordView {
  value: unknown = null;
  partition = 0;
  offset = 0;
  timestamp = 0;
  keySize = 0;
  valueSize = 0;
  #keyBytes: Uint8Array | null = null;
  #key: Decoded | null | undefined = undefined;

  constructor(
    readonly lastOffset: (partition: number) => number,
    private readonly keyDecoder: Decoder,
  ) {}

  setKey(bytes: Uint8Array | null): void {
    this.#keyBytes = bytes;
    this.keySize = bytes?.byteLength ?? 0;
    this.#key = bytes === null ? null : undefined;
  }

  async setKeyAsync(bytes: Uint8Array): Promise<void> {
    this.setKey(bytes);
    const k = this.keyDecoder(bytes);
    this.#key = k instanceof Promise ? await k : k;
  }

  #decoded(): Decoded | null {
    if (this.#key === undefined) {
      const k = this.keyDecoder(this.#keyBytes!);
      if (k instanceof Promise) throw new DecodeError("the key needs a schema that is not loaded");
      this.#key = k;
    }
    return this.#key;
  }

  get key(): unknown {
    return this.#decoded()?.value ?? null;
  }

  /** The key as the answer shows it: text as it is, anything else as JSON, null when absent. */
  keyText(): string | null {
    const k = this.#decoded();
    if (k === null) return null;
    return typeof k.value === "string" ? k.value : (k.json ?? JSON.stringify(k.value) ?? null);
  }
}

/**
 * Plans the offsets of each partition: snapshot end offsets, push-down of partitions, offsets
 * and time. Answers the ranges to read and the end offsets (what LAST_OFFSET() sees).
 */
export async function planReads(
  cluster: KafkaCluster,
  plan: QueryPlan,
): Promise<{ ranges: Array<{ partition: number; from: number; to: number }>; ends: Map<number, number> }> {
  const [topic] = await cluster.describeTopics([plan.topic]);
  const all = topic!.partitionDetails.map((p) => p.partition);
  const wanted = plan.partitions === null ? all : plan.partitions.filter((p) => all.includes(p));
  const refs = all.map((partition) => ({ topic: plan.topic, partition }));
  const [earliest, latest] = await Promise.all([cluster.listOffsets(refs, "earliest"), cluster.listOffsets(refs, "latest")]);
  const ends = new Map(latest.map((o) => [o.partition, o.offset]));
  const starts = new Map(earliest.map((o) => [o.partition, o.offset]));
  const ranges = wanted.map((partition) => ({
    partition,
    ...resolveOffsetRange(plan.offsetRange, starts.get(partition)!, ends.get(partition)!),
  }));

  const { fromMs, toMs } = plan.timeRange;
  const wantedRefs = ranges.filter((r) => r.from < r.to).map((r) => ({ topic: plan.topic, partition: r.partition }));
  if (wantedRefs.length > 0 && (fromMs !== undefined || toMs !== undefined)) {
    // The first offset whose timestamp is >= t; -1 when every record is older.
    const [after, before] = await Promise.all([
      fromMs === undefined ? null : cluster.listOffsets(wantedRefs, Math.max(0, fromMs)),
      toMs === undefined || toMs + 1 < 0 ? null : cluster.listOffsets(wantedRefs, toMs + 1),
    ]);
    for (const r of ranges) {
      const a = after?.find((o) => o.partition === r.partition);
      if (a) r.from = a.offset < 0 ? r.to : Math.max(r.from, a.offset);
      const b = before?.find((o) => o.partition === r.partition);
      if (b && b.offset >= 0) r.to = Math.min(r.to, b.offset);
      if (r.to < r.from) r.to = r.from;
    }
    if (toMs !== undefined && toMs < 0) for (const r of ranges) r.to = r.from;
  }
  return { ranges, ends };
}

/** Runs the plan; the last event is always `end` unless the iteration is abandoned or throws. */
export async function* executeQuery(
  deps: ExecutorDeps,
  plan: QueryPlan,
  opts: ExecuteOptions,
): AsyncGenerator<QueryEvent, void, undefined> {
  const progress = opts.progress ?? new QueryProgress();
  const batchSize = opts.batchSize ?? 512;
  const { settings } = plan;
  const internal = new AbortController();
  let reason: StopReason | null = null;
  const stop = (why: StopReason) => {
    if (reason === null) reason = why;
    internal.abort();
  };
  const onClient = () => stop("CLIENT");
  const onKill = () => stop("STOPPED");
  opts.signal.addEventListener("abort", onClient, { once: true });
  opts.stopSignal?.addEventListener("abort", onKill, { once: true });
  if (opts.signal.aborted) onClient();
  if (opts.stopSignal?.aborted) onKill();
  // setTimeout fires at once beyond 2^31-1 ms (~24.8 days): clamp a longer max.query.time.
  const queryTimer = setTimeout(() => stop("MAX_QUERY_TIME"), Math.min(settings.maxQueryTimeMs, 2_147_483_647));
  // Idle: no record arrived from Kafka for max.idle.time. A timer per record would cost more
  // than the rest of the loop, so a ticker compares the count of records read between ticks.
  // Time spent waiting for the reader of the events (backpressure) is not idle time.
  let waitingForReader = false;
  let idleSince = Date.now();
  let seenAtTick = -1;
  const idleTicker = setInterval(
    () => {
      const now = Date.now();
      if (waitingForReader || progress.readRecords !== seenAtTick) {
        seenAtTick = progress.readRecords;
        idleSince = now;
      } else if (now - idleSince >= settings.maxIdleTimeMs) stop("MAX_IDLE_TIME");
    },
    Math.max(1, Math.min(250, Math.floor(settings.maxIdleTimeMs / 4))),
  );

  // Lowest and highest offset read, by partition number.
  const mins: number[] = [];
  const maxs: number[] = [];
  const ended = () => {
    const offsets: PartitionOffsets[] = [];
    mins.forEach((min, partition) => {
      if (min !== undefined) offsets.push({ partition, min, max: maxs[partition]! });
    });
    const why: StopReason = reason ?? "END";
    return {
      size: progress.size,
      isTimeRemaining: why !== "MAX_QUERY_TIME",
      offsets,
      isStopped: why === "STOPPED",
      totalRecords: progress.totalRecords,
      isTopicEnd: why === "END",
      skippedRecords: progress.skippedRecords,
      recordsLimit: plan.limit,
      totalSizeRead: progress.totalSizeRead,
      stopReason: why,
    } satisfies QueryEnd;
  };

  try {
    if (plan.limit === 0) {
      stop("LIMIT");
      yield { type: "end", end: ended() };
      return;
    }
    const { ranges, ends } = await abortable(planReads(deps.cluster, plan), internal.signal);
    const toRead = ranges.filter((r) => r.from < r.to);
    progress.scans = toRead.map((r) => ({ ...r, fetches: 0, fetchedRecords: 0, firstFetched: -1, lastFetched: -1 }));
    const scanOf = new Map(progress.scans.map((s) => [s.partition, s]));
    const onFetch = (f: FetchedBatches) => {
      const s = scanOf.get(f.partition);
      if (!s) return;
      s.fetches++;
      s.fetchedRecords += f.records;
      if (s.firstFetched < 0 || f.firstOffset < s.firstFetched) s.firstFetched = f.firstOffset;
      if (f.lastOffset > s.lastFetched) s.lastFetched = f.lastOffset;
    };
    const view = new View((partition: number) => ends.get(partition) ?? 0, deps.keyDecoder);
    const topic = plan.topic;
    const { filter, projectionIsStar, limit } = plan;
    const maxSize = settings.maxSizeBytes;
    const prefilter = deps.prefilter ?? null;
    const lines = opts.lines ?? null;
    // Every record matches and is shown whole: JSON text need not be parsed, only checked.
    const rawJson = lines !== null && projectionIsStar && !plan.hasFilter && decodesJsonText(deps.valueDecoder);
    // Keys whose text is their bytes are written as they are, not decoded.
    const rawKeys = rawJson && decodesPlainText(deps.keyDecoder);
    const pending = () => (lines === null ? batch.length : lines.count);
    let toSkip = plan.skip;
    let batch: QueryRecord[] = [];
    let lastYield = Date.now();
    /** Bytes of the records matched since the last yield: large records make small batches. */
    let pendingBytes = 0;

    if (toRead.length > 0 && !internal.signal.aborted) {
      const batches = deps.cluster.consumeBatches({
        topic,
        partitions: toRead.map((r) => ({ partition: r.partition, from: r.from, to: r.to })),
        signal: internal.signal,
        onFetch,
        // Each fetched batch is written out or decoded before the next is pulled.
        reuseBuffers: true,
      });
      read: for await (const fetched of batches)
        for (const raw of fetched) {
          const keyBytes = raw.key;
          const valueBytes = raw.value ?? EMPTY;
          const bytes = (keyBytes?.byteLength ?? 0) + valueBytes.byteLength;
          const { partition, offset } = raw;
          progress.readRecords++;
          progress.totalSizeRead += bytes;
          const min = mins[partition];
          if (min === undefined || offset < min) mins[partition] = offset;
          if ((maxs[partition] ?? -1) < offset) maxs[partition] = offset;
          if (prefilter && raw.value !== null && !prefilter(valueBytes)) {
            if (progress.totalSizeRead >= maxSize) {
              stop("MAX_SIZE");
              break read;
            }
            continue;
          }

          let matched = false;
          let outValue = "";
          let skipped = false;
          if (rawJson && raw.value !== null && toSkip === 0) {
            try {
              let key: string | Uint8Array | null = keyBytes;
              if (keyBytes !== null && !(rawKeys && isPlainText(keyBytes))) {
                if (keyBytes.byteLength >= 5 && keyBytes[0] === 0) await view.setKeyAsync(keyBytes);
                else view.setKey(keyBytes);
                key = view.keyText();
              }
              // False for anything but plain JSON text: decoded below.
              matched = lines!.addJson(raw.timestamp, partition, key, offset, valueBytes);
            } catch (err) {
              if (!(err instanceof DecodeError)) throw err;
              progress.skippedRecords++;
              skipped = true;
            }
          }
          if (!matched && !skipped)
            try {
              let value: Decoded;
              if (raw.value === null) value = NULL_VALUE;
              else {
                const v = deps.valueDecoder(valueBytes);
                value = v instanceof Promise ? await v : v;
              }
              view.value = value.value;
              view.partition = partition;
              view.offset = offset;
              view.timestamp = raw.timestamp;
              view.valueSize = valueBytes.byteLength;
              // The key is decoded when the query reads it; only a possible registry id is fetched first.
              if (keyBytes !== null && keyBytes.byteLength >= 5 && keyBytes[0] === 0) await view.setKeyAsync(keyBytes);
              else view.setKey(keyBytes);
              if (filter(view)) {
                if (toSkip > 0) toSkip--;
                else {
                  matched = true;
                  outValue = projectionIsStar
                    ? (value.json ?? JSON.stringify(value.value) ?? "null")
                    : (JSON.stringify(plan.project(view)) ?? "null");
                }
              }
              if (matched) {
                if (lines) lines.add(raw.timestamp, partition, view.keyText(), offset, outValue);
                else batch.push({ timestamp: raw.timestamp, partition, key: view.keyText(), offset, topic, value: outValue });
              }
            } catch (err) {
              if (!(err instanceof DecodeError)) throw err;
              progress.skippedRecords++;
              matched = false;
            }
          if (matched) {
            progress.totalRecords++;
            progress.size += bytes;
            pendingBytes += bytes;
            if (progress.totalRecords >= limit) {
              stop("LIMIT");
              break read;
            }
            if (pending() >= batchSize || pendingBytes >= BATCH_MAX_BYTES || Date.now() - lastYield > 200) {
              pendingBytes = 0;
              waitingForReader = true;
              if (lines) yield { type: "lines", records: lines.count, bytes: lines.take() };
              else {
                const out = batch;
                batch = [];
                yield { type: "records", records: out };
              }
              waitingForReader = false;
              lastYield = Date.now();
            }
          }
          if (progress.totalSizeRead >= maxSize) {
            stop("MAX_SIZE");
            break read;
          }
          if (reason !== null) break read;
        }
    }
    if (pending() > 0 && reason !== "CLIENT") {
      if (lines) yield { type: "lines", records: lines.count, bytes: lines.take() };
      else yield { type: "records", records: batch };
    }
    // The read can also end because its signal fired (time, idle, kill): only a clean end is the topic's end.
    yield { type: "end", end: ended() };
  } catch (err) {
    if (reason !== null && isAbort(err)) {
      yield { type: "end", end: ended() };
      return;
    }
    throw err;
  } finally {
    clearTimeout(queryTimer);
    clearInterval(idleTicker);
    opts.signal.removeEventListener("abort", onClient);
    opts.stopSignal?.removeEventListener("abort", onKill);
    internal.abort();
  }
}

function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === "AbortError" || err.message === "aborted");
}

function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    p.catch(() => {});
    return Promise.reject(Object.assign(new Error("aborted"), { name: "AbortError" }));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(Object.assign(new Error("aborted"), { name: "AbortError" }));
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}
