/**
 * The first stage of a query: which offsets of which partitions to read. The plan's partitions,
 * offset range and time range become the offset range of each partition before anything is
 * fetched (time bounds via offsets by timestamp); the filter still tests every record, so a
 * loose range only costs reading. A cluster that does not answer is waited for, within bounds.
 */

import { AppError } from "../errors.ts";
import type { ReadOutage, SkippedPartition } from "../kafka/types.ts";
import { type QueryPlan, resolveOffsetRange } from "../sql/index.ts";
import { abortable } from "../util/abort.ts";
import type { RecordSource } from "./record-source.ts";

export interface PlannedReads {
  /** Per partition asked for (and online), the offsets to read: [from, to). */
  ranges: Array<{ partition: number; from: number; to: number }>;
  /** End offset of every online partition when the query began: what LAST_OFFSET() sees. */
  ends: Map<number, number>;
  /** Partitions asked for but left out (no leader). */
  skipped: SkippedPartition[];
}

/**
 * Plans the offsets of each partition: snapshot end offsets, push-down of partitions, offsets
 * and time.
 */
async function planReads(source: RecordSource, plan: QueryPlan, signal: AbortSignal): Promise<PlannedReads> {
  const { all, offline, starts, ends, offsetsAt } = await source.offsets(plan.topic, signal);
  const asked = plan.partitions === null ? all : plan.partitions.filter((p) => all.includes(p));
  const skipped = asked.filter((p) => offline.includes(p)).map((partition) => ({ partition, reason: "no leader" }));
  const wanted = asked.filter((p) => !offline.includes(p));
  const ranges = wanted.map((partition) => ({
    partition,
    ...resolveOffsetRange(plan.offsetRange, starts.get(partition)!, ends.get(partition)!),
  }));

  const { fromMs, toMs } = plan.timeRange;
  const timed = ranges.filter((r) => r.from < r.to).map((r) => r.partition);
  if (timed.length > 0 && (fromMs !== undefined || toMs !== undefined)) {
    // The first offset whose timestamp is >= t; -1 when every record is older.
    const [after, before] = await Promise.all([
      fromMs === undefined ? null : offsetsAt(timed, Math.max(0, fromMs)),
      toMs === undefined || toMs + 1 < 0 ? null : offsetsAt(timed, toMs + 1),
    ]);
    for (const r of ranges) {
      const a = after?.get(r.partition);
      if (a !== undefined) r.from = a < 0 ? r.to : Math.max(r.from, a);
      const b = before?.get(r.partition);
      if (b !== undefined && b >= 0) r.to = Math.min(r.to, b);
      if (r.to < r.from) r.to = r.from;
    }
    if (toMs !== undefined && toMs < 0) for (const r of ranges) r.to = r.from;
  }
  return { ranges, ends, skipped };
}

/** How the planning waits for a cluster that does not answer. */
interface PlanWait {
  /** Aborted when the query stops (time, kill, client). */
  signal: AbortSignal;
  /** Date.now() until which the query may run. */
  retryUntil: number;
  /** Most ms to wait for a cluster that does not answer (sql.clusterWait). */
  clusterWaitMs: number;
  /** Told while the cluster is waited for, and with null once the plan is made. */
  outage(outage: ReadOutage | null): void;
}

/** Backoff of a query waiting for its cluster: doubles from 100 ms to 2 s. */
const retryDelay = (failures: number) => Math.min(2_000, 100 * 2 ** (failures - 1));

const isUnavailable = (err: unknown) => err instanceof AppError && (err.code === "UNAVAILABLE" || err.code === "GATEWAY_TIMEOUT");

/**
 * planReads, retried while the cluster is unavailable. Before the read begins a cluster that
 * does not answer (down, or never reached) is waited for at most clusterWaitMs: a query must
 * not hold its slot for an hour on a dead cluster. A planning request still out at that bound
 * is given up too.
 */
export async function planWithin(source: RecordSource, plan: QueryPlan, wait: PlanWait): Promise<PlannedReads> {
  const { signal, retryUntil, clusterWaitMs } = wait;
  const waitFrom = Date.now();
  const waitUntil = Math.min(retryUntil, waitFrom + clusterWaitMs);
  let outage: ReadOutage | null = null;
  let lastFailure: AppError | null = null;
  for (let failures = 1; ; failures++) {
    try {
      const planned = await abortable(answerBy(planReads(source, plan, signal), waitUntil, source.name), signal);
      wait.outage(null);
      return planned;
    } catch (err) {
      if (signal.aborted || !isUnavailable(err)) throw err;
      const gaveUp = Date.now() >= waitUntil;
      const bound = gaveUp && waitUntil < retryUntil ? clusterWaitMs : undefined;
      // An attempt cut short by the bound says less than the failure before it.
      const cause: AppError = err instanceof NoAnswerYet && lastFailure !== null ? lastFailure : (err as AppError);
      lastFailure = cause;
      outage = planningOutage(source, plan.topic, outage?.since ?? waitFrom, cause, bound);
      wait.outage(outage);
      if (gaveUp) throw outage.toError();
      await abortable(Bun.sleep(Math.min(retryDelay(failures), waitUntil - Date.now())), signal);
    }
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
function planningOutage(source: RecordSource, topic: string, since: number, err: AppError, bound?: number): ReadOutage {
  const name = source.name;
  return {
    since,
    what: `Kafka cluster '${name}' unreachable`,
    partitions: [],
    reason: err.message,
    toError: () => {
      const waited = Date.now() - since;
      const secs = Math.max(1, Math.round(waited / 1000));
      // No request to it was ever answered: a cluster down since Loupe started, or a wrong address.
      const neverReached = source.lastRoundTripMs === null;
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
