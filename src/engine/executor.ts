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
 *
 * The answer's form is not its concern: records are written into a RecordSink the answer form
 * gives (its framing, its bounds), and handed on as bytes. The event stream and the single JSON
 * answer are adapters over these events (stream-answer.ts, json-answer.ts).
 */

import { AppError } from "../errors.ts";
import type { KafkaCluster } from "../kafka/index.ts";
import {
  FETCH_MAX_WAIT_MS,
  type FetchedBatches,
  type ListedOffset,
  type OffsetSpec,
  type ReadOutage,
  type RecordHeader,
  type SkippedPartition,
  type TopicPartitionRef,
} from "../kafka/types.ts";
import { type QueryPlan, type RecordView, resolveOffsetRange } from "../sql/index.ts";
import { abortable } from "../util/abort.ts";
import { type Decoded, DecodeError, type Decoder, decodesJsonText, decodesPlainText, isPlainText } from "./decoders.ts";
import type { Prefilter } from "./prefilter.ts";
import { formatResume, type ReadRange, type Resume, resumeRanges } from "./resume.ts";
import type { StopLimit } from "./schemas.ts";

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

/** Which bound ended a query, and its value (schemas.ts): said with the answer, never left to be guessed. */
export type { StopLimit };

/** Stop reasons that cut the read short of what the query asked: the answer may go on (`resume`). */
const CUT: ReadonlySet<StopReason> = new Set(["MAX_SIZE", "MAX_QUERY_TIME", "MAX_IDLE_TIME", "STOPPED"]);

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
  /** Records read from Kafka, matching or not (what the older clients call totalRecords). */
  totalRecords: number;
  /** True when every selected partition was read to its end offset of the snapshot. */
  isTopicEnd: boolean;
  /** Records read but not returned: not matching, not decodable, passed over by LIMIT or sampling. */
  skippedRecords: number;
  /** Records returned. */
  returnedRecords: number;
  /** Records that could not be decoded (counted in skippedRecords too). */
  undecodableRecords: number;
  recordsLimit: number;
  /** Bytes (raw key + value) of every record read, matching or not. */
  totalSizeRead: number;
  stopReason: StopReason;
  /** Per partition, the offsets the query was to read and how far it got (`next`): what was read of what. */
  ranges: ReadRange[];
  /** The bound that ended the query (absent at the snapshot's end and for a kill). */
  stopLimit?: StopLimit;
  /**
   * Present when a bound or a kill cut the read short: given back as `resume`, the same query
   * reads on from where this one stopped (see resume.ts).
   */
  resume?: string;
  /** Partitions left out because they had no leader (present only when there are some). */
  skippedPartitions?: SkippedPartition[];
  /** What the UI shows beside the answer, e.g. "partition 3 has no leader: skipped". */
  warnings?: string[];
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

/**
 * Where the executor writes the records of the answer, as JSON text (see record-text.ts): the
 * answer form (event stream, single JSON object) gives its own framing, so the executor knows
 * neither. Bytes accumulate until take().
 */
export interface RecordSink {
  /**
   * A record whose value is the JSON text in `bytes`; false, and nothing written, when the bytes
   * are not plain JSON text (the record is then decoded and given to add()).
   */
  addJson(
    timestamp: number,
    partition: number,
    key: string | Uint8Array | null,
    offset: number,
    bytes: Uint8Array,
    headers?: readonly RecordHeader[],
  ): boolean;
  /** A record whose value is given as JSON text. */
  add(timestamp: number, partition: number, key: string | null, offset: number, valueJson: string, headers?: readonly RecordHeader[]): void;
  /** Takes back the record added last (it went past a cap). */
  dropLast(): void;
  /** Records and bytes written since the last take(). */
  readonly count: number;
  readonly byteLength: number;
  /** The bytes written since the last take(); valid until the next record is added. */
  take(): Uint8Array;
}

/**
 * What a query tells its answer. `records`: the bytes of `count` records, valid until the next
 * event is pulled. `end` or `error` is the last event: `error` carries what ended the query
 * early for a reason of the query itself (a limit of the language, the memory budget); anything
 * else a query throws is a fault, thrown.
 */
export type QueryEvent =
  | { type: "records"; count: number; bytes: Uint8Array }
  | { type: "end"; end: QueryEnd }
  | { type: "error"; error: QueryError };

/** A query stopped for what it asked of the server: its answer says why (4xx, never 500). */
export class QueryError extends Error {
  override readonly name = "QueryError";
  constructor(
    message: string,
    /** What the single JSON answer responds with. */
    readonly status: 400 | 413,
    /** The error as the language threw it (a QueryLimitError may carry a position). */
    override readonly cause?: unknown,
  ) {
    super(message);
  }
}

/** True for what the language throws when a record makes evaluation exceed one of its limits. */
export function isQueryLimitError(err: unknown): err is Error {
  return err instanceof Error && err.name === "QueryLimitError";
}

/** Live counters of a running query, for the statistics messages. */
export class QueryProgress {
  /** Records returned (the end record's returnedRecords). */
  totalRecords = 0;
  /** Records that could not be decoded (the end record's undecodableRecords). */
  skippedRecords = 0;
  /** Raw bytes read / returned. */
  totalSizeRead = 0;
  size = 0;
  /** Bytes of the answer handed on (records and their framing). */
  producedBytes = 0;
  readRecords = 0;
  scans: PartitionScan[] = [];
  /** Partitions the read left out (no leader while others had one). */
  skippedPartitions: SkippedPartition[] = [];
  /** Set while the read retries a broker or cluster it lost; null while it reads. */
  outage: ReadOutage | null = null;
}

/** The warning the answer carries for a partition left out. */
export function skippedWarning(s: SkippedPartition): string {
  return s.reason === "no leader" ? `partition ${s.partition} has no leader: skipped` : `partition ${s.partition} skipped: ${s.reason}`;
}

/**
 * Plans of continuous queries (live subscriptions): each partition is read from its end offset
 * at the start on, new records as they come, and the query ends only when it is aborted or
 * killed. Records are handed on after every fetch, so a quiet topic's few records are not held
 * back waiting for a full batch.
 */
export type FollowHooks = NonNullable<QueryPlan["follow"]>;

/** The plan as a continuous query: no limit, size, time or idle bound ends it (see FollowHooks). */
export function followPlan(plan: QueryPlan, hooks: FollowHooks = {}): QueryPlan {
  const unbounded = Number.MAX_SAFE_INTEGER;
  const followed: QueryPlan = {
    ...plan,
    limit: unbounded,
    settings: { ...plan.settings, maxSizeBytes: unbounded, maxReadBytes: unbounded, maxQueryTimeMs: unbounded, maxIdleTimeMs: unbounded },
    follow: hooks,
  };
  return followed;
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
  /** Where the records of the answer are written. */
  sink: RecordSink;
  /** Largest number of records per `records` event (default 512). */
  batchSize?: number;
  /**
   * Most bytes the answer may produce, below max.size (which bounds both what is read and what
   * is produced): the record that would pass it is not added, and the query ends with MAX_SIZE.
   */
  maxOutputBytes?: number;
  /**
   * Most bytes the query may hold at once: the batch not yet handed on, the raw value at hand
   * and the text computed from it. Beyond it the query ends with a QueryError (default 64 MiB).
   */
  maxMemoryBytes?: number;
  /**
   * How long the query waits for a cluster it cannot reach before its read begins (down now, or
   * never reached since Loupe started): then it ends with UNAVAILABLE naming the cluster and the
   * wait (default DEFAULT_CLUSTER_WAIT_MS; `sql.clusterWait`). max.query.time bounds it too.
   */
  clusterWaitMs?: number;
  /** Clock of the slices (default performance.now). */
  now?: () => number;
  /** Reads on from where an earlier run of the query stopped (its end record's `resume`). */
  resume?: Resume;
  /** The highest max.size and max.query.time a query may SET, told with the bound that ended it. */
  bounds?: { "max.size": number; "max.query.time": number };
  /**
   * Told once the query has decided to stop (time, idle, kill, client), possibly while its
   * events are not being pulled: a consumer waiting for a slow reader can pull again at once,
   * so the query ends and lets go of its read instead of waiting for that reader.
   */
  onStop?: () => void;
}

/** Records between two looks at the clock: cheap enough per record, often enough per slice. */
const SLICE_RECORDS = 64;
/** Evaluation gives the event loop a turn once it has run this long without one. */
const SLICE_MS = 5;
/** A record this large is followed by a look at the clock, whatever the count. */
const LARGE_RECORD_BYTES = 64 * 1024;
/** Records waiting in the sink are handed on at least this often. */
const FLUSH_MS = 200;
export const DEFAULT_MAX_QUERY_MEMORY = 64 * 1024 * 1024;
/**
 * How long a query waits for a cluster that does not answer before its read begins: long enough
 * for a broker's restart or a leader election (the client's own connect timeout is 5 s), short
 * enough that a query on a dead or mistyped cluster lets go of its slot and says why.
 */
export const DEFAULT_CLUSTER_WAIT_MS = 30_000;

/** A macrotask: lets timers, sockets and other requests run before evaluation goes on. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** How much longer than its max wait a round of fetches may take before its broker counts as slow, not idle. */
const SLOW_FETCH_GRACE_MS = 250;
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
  signal?: AbortSignal,
): Promise<{ ranges: Array<{ partition: number; from: number; to: number }>; ends: Map<number, number>; skipped: SkippedPartition[] }> {
  let all: number[];
  let offline: number[] = [];
  let listOffsets = (refs: TopicPartitionRef[], spec: OffsetSpec): Promise<ListedOffset[]> => cluster.offsets.list(refs, spec);
  try {
    const [topic] = await cluster.topics.describe([plan.topic]);
    all = topic!.partitionDetails.map((p) => p.partition);
    // The description holds partitions without a leader (leader -1): they are skipped and named.
    offline = topic!.partitionDetails.filter((p) => p.leader < 0).map((p) => p.partition);
  } catch (err) {
    if (!isUnavailable(err)) throw err;
    // One partition without a leader fails the description, and every call of the client over
    // the topic: plan around it with requests that answer for the others.
    ({ all, offline } = await partitionsAround(cluster, plan.topic, signal));
    listOffsets = async (refs, spec) => {
      const found = await cluster.reads.offsetsOf(
        plan.topic,
        refs.map((r) => r.partition),
        spec,
      );
      return refs.map((r) => ({ ...r, offset: found.get(r.partition) ?? -1, timestamp: -1 }));
    };
  }
  const asked = plan.partitions === null ? all : plan.partitions.filter((p) => all.includes(p));
  const skipped = asked.filter((p) => offline.includes(p)).map((partition) => ({ partition, reason: "no leader" }));
  const wanted = asked.filter((p) => !offline.includes(p));
  const refs = all.filter((p) => !offline.includes(p)).map((partition) => ({ topic: plan.topic, partition }));
  const [earliest, latest] = await Promise.all([listOffsets(refs, "earliest"), listOffsets(refs, "latest")]);
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
      fromMs === undefined ? null : listOffsets(wantedRefs, Math.max(0, fromMs)),
      toMs === undefined || toMs + 1 < 0 ? null : listOffsets(wantedRefs, toMs + 1),
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
  return { ranges, ends, skipped };
}

/** Rounds (with backoff, some 1.5 s) a partition may lack a leader before it is left out. */
const OFFLINE_GRACE_ROUNDS = 4;

const isUnavailable = (err: unknown) => err instanceof AppError && (err.code === "UNAVAILABLE" || err.code === "GATEWAY_TIMEOUT");

/**
 * The topic's partitions and those offline: without a leader through a short grace while others
 * have one. When none has a leader the cluster is not readable at all: UNAVAILABLE, retried.
 */
async function partitionsAround(cluster: KafkaCluster, topic: string, signal?: AbortSignal): Promise<{ all: number[]; offline: number[] }> {
  for (let round = 1; ; round++) {
    const leaders = await cluster.reads.leaders(topic);
    const all = leaders.map((_, p) => p);
    const offline = all.filter((p) => (leaders[p] ?? -1) < 0);
    if (offline.length === 0) return { all, offline };
    if (offline.length === all.length) throw new AppError("UNAVAILABLE", `no partition of topic '${topic}' has a leader`);
    if (round > OFFLINE_GRACE_ROUNDS) return { all, offline };
    await abortable(Bun.sleep(100 * 2 ** (round - 1)), signal ?? new AbortController().signal);
  }
}

/** Backoff of a query waiting for its cluster: doubles from 100 ms to 2 s. */
const retryDelay = (failures: number) => Math.min(2_000, 100 * 2 ** (failures - 1));

/**
 * Runs the plan; the last event is `end` or `error` unless the iteration is abandoned or a fault
 * is thrown.
 *
 * Evaluation runs in slices: every SLICE_RECORDS records (or after a large one) it looks at the
 * clock, gives the event loop a turn once a slice has run SLICE_MS, and ends the query when
 * max.query.time has passed. A timer alone could not stop it: no timer fires while a slice runs.
 */
export async function* executeQuery(
  deps: ExecutorDeps,
  plan: QueryPlan,
  opts: ExecuteOptions,
): AsyncGenerator<QueryEvent, void, undefined> {
  const progress = opts.progress ?? new QueryProgress();
  const batchSize = opts.batchSize ?? 512;
  const clock = opts.now ?? (() => performance.now());
  const { settings } = plan;
  const internal = new AbortController();
  let reason: StopReason | null = null;
  const stop = (why: StopReason) => {
    if (reason !== null) return;
    reason = why;
    internal.abort();
    opts.onStop?.();
  };
  const onClient = () => stop("CLIENT");
  const onKill = () => stop("STOPPED");
  opts.signal.addEventListener("abort", onClient, { once: true });
  opts.stopSignal?.addEventListener("abort", onKill, { once: true });
  if (opts.signal.aborted) onClient();
  if (opts.stopSignal?.aborted) onKill();
  const deadline = clock() + settings.maxQueryTimeMs;
  // setTimeout fires at once beyond 2^31-1 ms (~24.8 days): clamp a longer max.query.time.
  // The timer ends a query that waits (for Kafka, for its reader); slices check the deadline.
  const queryTimer = setTimeout(() => stop("MAX_QUERY_TIME"), Math.min(settings.maxQueryTimeMs, 2_147_483_647));
  // Idle: no record arrived from Kafka for max.idle.time. A timer per record would cost more
  // than the rest of the loop, so a ticker compares the count of records read between ticks.
  // Only waiting on a broker for records is idle time, and only within a round of fetches
  // (idle time starts when a round is sent). Planning the read, finding the leaders and
  // connecting are not; any record, a wait for the reader of the events (backpressure), a
  // round out past its max wait (a slow or frozen broker) or a lost broker retried
  // (max.query.time bounds those) starts the idle clock over. Regressions: a loaded broker that
  // took seconds to answer the first fetch, and a broker just thawed that was slow to name the
  // leaders, ended the query as idle with no record read.
  let waitingForReader = false;
  let fetchingSince: number | null = null;
  /** Since when the query has waited for records, or null while it does something else. */
  let quietFrom: number | null = null;
  let seenAtTick = -1;
  const slowRound = (now: number) => fetchingSince !== null && now - fetchingSince > FETCH_MAX_WAIT_MS + SLOW_FETCH_GRACE_MS;
  const onFetching = (since: number | null) => {
    if (since !== null) quietFrom ??= since;
    else if (slowRound(Date.now())) quietFrom = null;
    fetchingSince = since;
  };
  const idleTicker = setInterval(
    () => {
      const now = Date.now();
      if (waitingForReader || slowRound(now) || progress.outage !== null) {
        seenAtTick = progress.readRecords;
        quietFrom = null;
      } else if (progress.readRecords !== seenAtTick) {
        // Records are read between rounds, never during one: a round out now began after them.
        seenAtTick = progress.readRecords;
        quietFrom = fetchingSince;
      } else if (quietFrom !== null && now - quietFrom >= settings.maxIdleTimeMs) stop("MAX_IDLE_TIME");
    },
    Math.max(1, Math.min(250, Math.floor(settings.maxIdleTimeMs / 4))),
  );

  // Lowest and highest offset read, by partition number.
  const mins: number[] = [];
  const maxs: number[] = [];
  // The ranges the read covers (once planned), and by partition number the first offset not read.
  let readPlan: Array<{ partition: number; from: number; to: number }> = [];
  const nexts: number[] = [];
  // A resumed query returns what is left of its LIMIT, and skips what is left to skip.
  const resume = opts.resume;
  const limit = resume?.limit !== undefined ? Math.min(plan.limit, resume.limit) : plan.limit;
  let toSkip = resume ? Math.min(plan.skip, resume.skip) : plan.skip;
  const maxRead = settings.maxReadBytes;
  // What the answer produces counts against max.size too, strictly: a record that would pass
  // the bound is taken back, so an answer never exceeds it.
  const maxOutput = Math.min(settings.maxSizeBytes, opts.maxOutputBytes ?? Number.POSITIVE_INFINITY);
  /** Which of max.size's two bounds was reached: the bytes read or the bytes of the answer. */
  let sizeReached: "read" | "answer" = "read";
  const stopLimit = (why: StopReason): StopLimit | undefined => {
    const bounds = opts.bounds;
    switch (why) {
      case "LIMIT":
        return { setting: "LIMIT", value: limit };
      case "MAX_SIZE":
        return {
          setting: "max.size",
          value: sizeReached === "read" ? maxRead : maxOutput,
          of: sizeReached,
          ...(bounds ? { bound: bounds["max.size"] } : {}),
        };
      case "MAX_QUERY_TIME":
        return { setting: "max.query.time", value: settings.maxQueryTimeMs, ...(bounds ? { bound: bounds["max.query.time"] } : {}) };
      case "MAX_IDLE_TIME":
        return { setting: "max.idle.time", value: settings.maxIdleTimeMs };
      default:
        return undefined;
    }
  };
  const ended = () => {
    const offsets: PartitionOffsets[] = [];
    mins.forEach((min, partition) => {
      if (min !== undefined) offsets.push({ partition, min, max: maxs[partition]! });
    });
    const why: StopReason = reason ?? "END";
    // At the end every range was read whole, whatever its last offsets held (compacted away, a transaction's marker).
    const ranges: ReadRange[] = readPlan.map((r) => ({
      ...r,
      next: why === "END" ? r.to : Math.min(r.to, Math.max(r.from, nexts[r.partition] ?? r.from)),
    }));
    const left = limit - progress.totalRecords;
    const resumeText = CUT.has(why) && plan.follow === undefined && left > 0 ? formatResume(ranges, left, toSkip) : null;
    const limitReached = stopLimit(why);
    return {
      size: progress.size,
      isTimeRemaining: why !== "MAX_QUERY_TIME",
      offsets,
      isStopped: why === "STOPPED",
      totalRecords: progress.readRecords,
      isTopicEnd: why === "END",
      skippedRecords: progress.readRecords - progress.totalRecords,
      returnedRecords: progress.totalRecords,
      undecodableRecords: progress.skippedRecords,
      recordsLimit: limit,
      totalSizeRead: progress.totalSizeRead,
      stopReason: why,
      ranges,
      ...(limitReached ? { stopLimit: limitReached } : {}),
      ...(resumeText !== null ? { resume: resumeText } : {}),
      // A topic end with partitions left out says so: never a short read that looks whole.
      ...(progress.skippedPartitions.length > 0
        ? { skippedPartitions: progress.skippedPartitions, warnings: progress.skippedPartitions.map(skippedWarning) }
        : {}),
    } satisfies QueryEnd;
  };
  /** The end, unless max.query.time ran out while the read was retrying a lost broker: then the error that names it. */
  const endOrOutage = (): QueryEvent => {
    if (reason === "MAX_QUERY_TIME" && progress.outage !== null) throw progress.outage.toError();
    return { type: "end", end: ended() };
  };
  const sink = opts.sink;
  /** Hands the records in the sink on; the bytes are valid until the next pull. */
  const batchOf = (): QueryEvent => {
    progress.producedBytes += sink.byteLength;
    return { type: "records", count: sink.count, bytes: sink.take() };
  };
  let failure: QueryError | null = null;

  try {
    if (limit === 0) {
      stop("LIMIT");
      yield { type: "end", end: ended() };
      return;
    }
    // A broker lost once the read began is waited for as long as the query may run (a restart
    // resumes the read). Before it began, a cluster that does not answer (down, or never reached)
    // is waited for at most clusterWaitMs: a query must not hold its slot for an hour on a dead
    // cluster. A planning request still out at that bound is given up too.
    const retryUntil = Date.now() + Math.max(0, deadline - clock());
    const waitFrom = Date.now();
    const clusterWait = opts.clusterWaitMs ?? DEFAULT_CLUSTER_WAIT_MS;
    const waitUntil = Math.min(retryUntil, waitFrom + clusterWait);
    let planned: Awaited<ReturnType<typeof planReads>> | null = null;
    let lastFailure: AppError | null = null;
    for (let failures = 1; planned === null; failures++) {
      try {
        const planning = planReads(deps.cluster, plan, internal.signal);
        planned = await abortable(answerBy(planning, waitUntil, deps.cluster.name), internal.signal);
      } catch (err) {
        if (internal.signal.aborted || !isUnavailable(err)) throw err;
        const gaveUp = Date.now() >= waitUntil;
        const bound = gaveUp && waitUntil < retryUntil ? clusterWait : undefined;
        // An attempt cut short by the bound says less than the failure before it.
        const cause: AppError = err instanceof NoAnswerYet && lastFailure !== null ? lastFailure : (err as AppError);
        lastFailure = cause;
        progress.outage = planningOutage(deps.cluster, plan.topic, progress.outage?.since ?? waitFrom, cause, bound);
        if (gaveUp) throw progress.outage.toError();
        await abortable(Bun.sleep(Math.min(retryDelay(failures), waitUntil - Date.now())), internal.signal);
      }
    }
    progress.outage = null;
    const { ends } = planned;
    const ranges = resume ? resumeRanges(planned.ranges, resume) : planned.ranges;
    if (plan.follow === undefined) readPlan = ranges.map((r) => ({ partition: r.partition, from: r.from, to: r.to }));
    progress.skippedPartitions.push(...planned.skipped);
    const toRead =
      plan.follow !== undefined
        ? ranges.map((r) => ({ partition: r.partition, from: ends.get(r.partition) ?? r.from, to: Number.MAX_SAFE_INTEGER }))
        : ranges.filter((r) => r.from < r.to);
    plan.follow?.onReading?.();
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
    const { filter, projectionIsStar } = plan;
    const maxMemory = opts.maxMemoryBytes ?? DEFAULT_MAX_QUERY_MEMORY;
    const prefilter = deps.prefilter ?? null;
    // Every record matches and is shown whole: JSON text need not be parsed, only checked.
    const rawJson = projectionIsStar && !plan.hasFilter && decodesJsonText(deps.valueDecoder);
    // Keys whose text is their bytes are written as they are, not decoded.
    const rawKeys = rawJson && decodesPlainText(deps.keyDecoder);
    const sample = plan.sample;
    let sampleWindowStart = Number.NEGATIVE_INFINITY;
    let sampledInWindow = 0;
    let sliceStart = clock();
    let lastFlush = sliceStart;
    /** Records left before the next look at the clock. */
    let untilCheck = SLICE_RECORDS;

    if (toRead.length > 0 && !internal.signal.aborted) {
      const batches = deps.cluster.reads.batches({
        topic: plan.topic,
        partitions: toRead.map((r) => ({ partition: r.partition, from: r.from, to: r.to })),
        signal: internal.signal,
        follow: plan.follow !== undefined,
        onFetch,
        onFetching,
        // Each fetched batch is written out or decoded before the next is pulled.
        reuseBuffers: true,
        // A broker that restarts is waited for as long as the query may run.
        retryUntil,
        onOutage: (o) => {
          progress.outage = o;
        },
        onSkip: (skipped) => void progress.skippedPartitions.push(skipped),
      });
      read: for await (const fetched of batches) {
        for (const raw of fetched) {
          if (--untilCheck <= 0) {
            untilCheck = SLICE_RECORDS;
            const now = clock();
            if (now >= deadline) {
              stop("MAX_QUERY_TIME");
              break read;
            }
            if (sink.count > 0 && now - lastFlush > FLUSH_MS) {
              waitingForReader = true;
              yield batchOf();
              waitingForReader = false;
              lastFlush = sliceStart = clock();
            } else if (now - sliceStart >= SLICE_MS) {
              await nextTurn();
              sliceStart = clock();
            }
            if (reason !== null) break read;
          }
          const keyBytes = raw.key;
          const valueBytes = raw.value ?? EMPTY;
          const bytes = (keyBytes?.byteLength ?? 0) + valueBytes.byteLength;
          const { partition, offset } = raw;
          nexts[partition] = offset + 1;
          progress.readRecords++;
          progress.totalSizeRead += bytes;
          if (bytes >= LARGE_RECORD_BYTES) {
            untilCheck = 1;
            if (bytes + sink.byteLength > maxMemory) {
              failure = overBudget(maxMemory);
              break read;
            }
          }
          const min = mins[partition];
          if (min === undefined || offset < min) mins[partition] = offset;
          if ((maxs[partition] ?? -1) < offset) maxs[partition] = offset;
          if (prefilter && raw.value !== null && !prefilter(valueBytes)) {
            if (progress.totalSizeRead >= maxRead) {
              stop("MAX_SIZE");
              break read;
            }
            continue;
          }

          let matched = false;
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
              matched = sink.addJson(raw.timestamp, partition, key, offset, valueBytes, raw.headers);
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
                  const outValue = projectionIsStar
                    ? (value.json ?? JSON.stringify(value.value) ?? "null")
                    : plan.projectText(view, value.typedAt);
                  // The text is held twice while it is written (and escaped once more).
                  if (outValue.length >= LARGE_RECORD_BYTES) {
                    untilCheck = 1;
                    if (bytes + 2 * outValue.length + sink.byteLength > maxMemory) {
                      failure = overBudget(maxMemory);
                      break read;
                    }
                  }
                  sink.add(raw.timestamp, partition, view.keyText(), offset, outValue, raw.headers);
                  matched = true;
                }
              }
            } catch (err) {
              if (err instanceof DecodeError) {
                progress.skippedRecords++;
                matched = false;
              } else if (err instanceof RangeError) {
                // A string or array past what the engine can hold: the query asked too much.
                failure = overBudget(maxMemory, err);
                break read;
              } else throw err;
            }
          // Sampling (`_sample`/`_sampleWindow`): past its count in the current window of the
          // clock, a matching record is taken back and counts as skipped.
          if (matched && sample !== null) {
            const now = clock();
            if (now - sampleWindowStart >= sample.windowMs) {
              sampleWindowStart = now;
              sampledInWindow = 0;
            }
            if (sampledInWindow >= sample.records) {
              sink.dropLast();
              matched = false;
            } else sampledInWindow++;
          }
          if (matched) {
            if (progress.producedBytes + sink.byteLength > maxOutput) {
              sink.dropLast();
              // Taken back: the record is read again by a resumed query.
              nexts[partition] = offset;
              sizeReached = "answer";
              stop("MAX_SIZE");
              break read;
            }
            progress.totalRecords++;
            progress.size += bytes;
            if (progress.totalRecords >= limit) {
              stop("LIMIT");
              break read;
            }
            if (sink.count >= batchSize || sink.byteLength >= BATCH_MAX_BYTES) {
              waitingForReader = true;
              yield batchOf();
              waitingForReader = false;
              lastFlush = clock();
            }
          }
          if (progress.totalSizeRead >= maxRead) {
            stop("MAX_SIZE");
            break read;
          }
          if (reason !== null) break read;
        }
        if (plan.follow !== undefined && sink.count > 0) {
          waitingForReader = true;
          yield batchOf();
          waitingForReader = false;
          lastFlush = clock();
        }
      }
    }
    if (sink.count > 0 && reason !== "CLIENT") yield batchOf();
    if (failure !== null) {
      yield { type: "error", error: failure };
      return;
    }
    // The read can also end because its signal fired (time, idle, kill): only a clean end is the topic's end.
    yield endOrOutage();
  } catch (err) {
    if (reason !== null && isAbort(err)) {
      yield endOrOutage();
      return;
    }
    // A record made the filter, the projection or the prefilter exceed a limit of the language:
    // what matched before it is handed on, then why the query ends.
    if (isQueryLimitError(err)) {
      if (sink.count > 0 && reason !== "CLIENT") yield batchOf();
      yield { type: "error", error: new QueryError(err.message, 400, err) };
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

/** A planning request still out when the wait for the cluster ended. */
class NoAnswerYet extends AppError {
  constructor(cluster: string) {
    super("UNAVAILABLE", `no answer from Kafka cluster '${cluster}'`);
  }
}

/**
 * `planning`, or UNAVAILABLE once `until` (a Date.now() time) passes without its answer: the
 * client waits its connect timeout for each broker and retries, which could outlast the bound.
 * The late answer is dropped.
 */
function answerBy<T>(planning: Promise<T>, until: number, cluster: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new NoAnswerYet(cluster)), Math.max(0, until - Date.now()));
  });
  planning.catch(() => {});
  return Promise.race([planning, late]).finally(() => clearTimeout(timer));
}

/**
 * The cluster could not be asked for the topic's offsets: the outage, and the error once the
 * query gives up. `bound`: the wait (sql.clusterWait) that ended it, when that did.
 */
function planningOutage(cluster: KafkaCluster, topic: string, since: number, err: AppError, bound?: number): ReadOutage {
  const name = cluster.name;
  return {
    since,
    what: `Kafka cluster '${name}' unreachable`,
    partitions: [],
    reason: err.message,
    toError: () => {
      const waited = Date.now() - since;
      const secs = Math.max(1, Math.round(waited / 1000));
      // No request to it was ever answered: a cluster down since Loupe started, or a wrong address.
      const neverReached = cluster.lastRoundTripMs === null;
      return new AppError(
        "UNAVAILABLE",
        `Cannot read topic '${topic}': Kafka cluster '${name}' unreachable for ${secs} s before the read began` +
          `${neverReached ? ", never reached since Loupe started" : ""}` +
          `${bound !== undefined ? `; the query gave up after sql.clusterWait (${formatWait(bound)})` : ""} (${err.message})`,
        {
          details: { cluster: name, retriable: true, unavailableMs: waited, neverReached },
          cause: err,
        },
      );
    },
  };
}

/** 30000 -> "30 s", 1500 -> "1500 ms". */
const formatWait = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

function overBudget(maxMemory: number, cause?: unknown): QueryError {
  return new QueryError(
    `The query needs more than ${Math.round(maxMemory / 1048576)} MiB of memory at once (the server's sql.maxQueryMemory): select fewer or smaller values`,
    413,
    cause,
  );
}

function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === "AbortError" || err.message === "aborted");
}
