/**
 * What a query is and says, shared by the executor's stages: the records and end of its answer,
 * its live progress, the sink it writes into, the events it hands on and why it stops.
 */

import type { ReadOutage, RecordHeader, SkippedPartition } from "../kafka/types.ts";
import type { ReadRange } from "./resume.ts";
import type { StopLimit } from "./schemas.ts";

/** One record of the answer (SPEC: Query data record). */
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
  /** The field patterns masking policies hid from the caller in this answer (present only when some did). */
  maskedFields?: string[];
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

/** The error of a query that would hold more than its memory budget at once. */
export function overBudget(maxMemory: number, cause?: unknown): QueryError {
  return new QueryError(
    `The query needs more than ${Math.round(maxMemory / 1048576)} MiB of memory at once (the server's sql.maxQueryMemory): select fewer or smaller values`,
    413,
    cause,
  );
}

/**
 * What a running query tells whoever runs it, besides its events and its progress counters
 * (which are read, not told).
 */
export interface QueryObserver {
  /**
   * The read is planned and begins: for a continuous query, records written from now on are
   * read (a live subscription answers its SUBSCRIBE then).
   */
  onReading?(): void;
  /**
   * The query has decided to stop (time, idle, kill, client, a cap), possibly while its events
   * are not being pulled: a consumer waiting for a slow reader can pull again at once, so the
   * query ends and lets go of its read instead of waiting for that reader.
   */
  onStop?(): void;
}
