/**
 * Runs one compiled query against a topic as a snapshot: each selected partition is read from
 * its start offset up to the end offset it had when the query began, then the query ends.
 * It knows nothing of HTTP: it is an AsyncIterable of typed events driven by an AbortSignal;
 * it reports progress through a small object the transport may read at any time, and tells
 * one observer (QueryObserver) when its read begins and when it has decided to stop.
 *
 * It knows nothing of Kafka either: it reads from a RecordSource (record-source.ts), a Kafka
 * cluster in production. Its stages, each in its own file:
 *   1. plan the reads (read-plan.ts): partitions, offsets and time pushed down to offset ranges;
 *   2. slice/merge and decode + filter (read-stage.ts): batches pulled, records evaluated in
 *      slices and written to the sink, full batches of the answer handed on;
 *   3. caps, idle and stop rules (stop-rules.ts): why and when the query stops;
 *   4. the end (query-end.ts): the end record, with a resume token when the read was cut short.
 *
 * Backpressure: nothing is fetched ahead. The read is pulled batch by batch through this
 * iterator, so a consumer of the events that stops pulling stops the fetching.
 *
 * The answer's form is not its concern: records are written into a RecordSink the answer form
 * gives (its framing, its bounds), and handed on as bytes. The event stream and the single JSON
 * answer are adapters over these events (stream-answer.ts, json-answer.ts).
 */

import type { QueryPlan } from "../sql/index.ts";
import type { Decoder } from "./decoders.ts";
import type { Prefilter } from "./prefilter.ts";
import { isQueryLimitError, QueryError, type QueryEvent, type QueryObserver, QueryProgress, type RecordSink } from "./query.ts";
import { queryEnd, Tally } from "./query-end.ts";
import { type PlannedReads, planWithin } from "./read-plan.ts";
import { handOn, ReadStage } from "./read-stage.ts";
import type { RecordSource } from "./record-source.ts";
import { type Resume, resumeRanges } from "./resume.ts";
import { capsOf, StopRules } from "./stop-rules.ts";

export * from "./query.ts";
export { DEFAULT_MAX_QUERY_MEMORY } from "./stop-rules.ts";

/**
 * Plans of continuous queries (live subscriptions): each partition is read from its end offset
 * at the start on, new records as they come, and the query ends only when it is aborted or
 * killed. Records are handed on after every fetch, so a quiet topic's few records are not held
 * back waiting for a full batch.
 */
export function followPlan(plan: QueryPlan): QueryPlan {
  const unbounded = Number.MAX_SAFE_INTEGER;
  return {
    ...plan,
    limit: unbounded,
    settings: { ...plan.settings, maxSizeBytes: unbounded, maxReadBytes: unbounded, maxQueryTimeMs: unbounded, maxIdleTimeMs: unbounded },
    follow: true,
  };
}

export interface ExecutorDeps {
  /** Where the records come from: a Kafka cluster (kafkaSource) in production. */
  source: RecordSource;
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
  /** Told when the read begins and when the query has decided to stop. */
  observer?: QueryObserver;
}

/**
 * How long a query waits for a cluster that does not answer before its read begins: long enough
 * for a broker's restart or a leader election (the client's own connect timeout is 5 s), short
 * enough that a query on a dead or mistyped cluster lets go of its slot and says why.
 */
export const DEFAULT_CLUSTER_WAIT_MS = 30_000;

/**
 * Runs the plan; the last event is `end` or `error` unless the iteration is abandoned or a fault
 * is thrown.
 */
export async function* executeQuery(
  deps: ExecutorDeps,
  plan: QueryPlan,
  opts: ExecuteOptions,
): AsyncGenerator<QueryEvent, void, undefined> {
  const progress = opts.progress ?? new QueryProgress();
  const clock = opts.now ?? (() => performance.now());
  const observer = opts.observer ?? {};
  const caps = capsOf(plan, opts);
  const rules = new StopRules({
    signal: opts.signal,
    stopSignal: opts.stopSignal,
    caps,
    clock,
    progress,
    onStop: () => observer.onStop?.(),
  });
  const tally = new Tally(caps.skip);
  const follow = plan.follow === true;
  const sink = opts.sink;
  const end = (): QueryEvent => ({ type: "end", end: queryEnd(rules.reason ?? "END", tally, caps, progress, follow) });
  /** The end, unless max.query.time ran out while the read was retrying a lost broker: then the error that names it. */
  const endOrOutage = (): QueryEvent => {
    if (rules.reason === "MAX_QUERY_TIME" && progress.outage !== null) throw progress.outage.toError();
    return end();
  };

  try {
    if (caps.limit === 0) {
      rules.stop("LIMIT");
      yield end();
      return;
    }
    // A broker lost once the read began is waited for as long as the query may run (a restart
    // resumes the read); before it began, a cluster that does not answer for sql.clusterWait.
    const retryUntil = Date.now() + Math.max(0, rules.deadline - clock());
    const planned = await planWithin(deps.source, plan, {
      signal: rules.signal,
      retryUntil,
      clusterWaitMs: opts.clusterWaitMs ?? DEFAULT_CLUSTER_WAIT_MS,
      outage: (o) => {
        progress.outage = o;
      },
    });
    const toRead = rangesToRead(planned, opts.resume, follow, tally, progress);
    observer.onReading?.();
    const stage = new ReadStage({ ...deps, plan, caps, rules, tally, progress, sink, clock, ends: planned.ends, follow });
    if (toRead.length > 0 && !rules.signal.aborted) yield* stage.read(toRead, retryUntil);
    if (sink.count > 0 && rules.reason !== "CLIENT") yield handOn(progress, sink);
    if (stage.failure !== null) {
      yield { type: "error", error: stage.failure };
      return;
    }
    // The read can also end because its signal fired (time, idle, kill): only a clean end is the topic's end.
    yield endOrOutage();
  } catch (err) {
    if (rules.reason !== null && isAbort(err)) {
      yield endOrOutage();
      return;
    }
    // A record made the filter, the projection or the prefilter exceed a limit of the language:
    // what matched before it is handed on, then why the query ends.
    if (isQueryLimitError(err)) {
      if (sink.count > 0 && rules.reason !== "CLIENT") yield handOn(progress, sink);
      yield { type: "error", error: new QueryError(err.message, 400, err) };
      return;
    }
    throw err;
  } finally {
    rules.dispose();
  }
}

/**
 * The planned ranges as read: from where a resumed query stopped; for a continuous query from
 * the end offsets on, without end. Notes the ranges a snapshot covers (for its end record), the
 * partitions left out and the scans to count fetches in.
 */
function rangesToRead(
  planned: PlannedReads,
  resume: Resume | undefined,
  follow: boolean,
  tally: Tally,
  progress: QueryProgress,
): Array<{ partition: number; from: number; to: number }> {
  const ranges = resume ? resumeRanges(planned.ranges, resume) : planned.ranges;
  if (!follow) tally.readPlan = ranges.map((r) => ({ partition: r.partition, from: r.from, to: r.to }));
  progress.skippedPartitions.push(...planned.skipped);
  const toRead = follow
    ? ranges.map((r) => ({ partition: r.partition, from: planned.ends.get(r.partition) ?? r.from, to: Number.MAX_SAFE_INTEGER }))
    : ranges.filter((r) => r.from < r.to);
  progress.scans = toRead.map((r) => ({ ...r, fetches: 0, fetchedRecords: 0, firstFetched: -1, lastFetched: -1 }));
  return toRead;
}

function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === "AbortError" || err.message === "aborted");
}
