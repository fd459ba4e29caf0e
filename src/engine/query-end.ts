/**
 * The last stage of a query: its end record, from what the read covered (the tally) and why it
 * stopped. A read cut short by a bound or a kill says where to go on (`resume`).
 */

import { type PartitionOffsets, type QueryEnd, type QueryProgress, type StopReason, skippedWarning } from "./query.ts";
import { formatResume, type ReadRange } from "./resume.ts";
import { type Caps, stopLimitOf } from "./stop-rules.ts";

/** Stop reasons that cut the read short of what the query asked: the answer may go on (`resume`). */
const CUT: ReadonlySet<StopReason> = new Set(["MAX_SIZE", "MAX_QUERY_TIME", "MAX_IDLE_TIME", "STOPPED"]);

/** What the read covered, by partition number; the read stage keeps it as it goes. */
export class Tally {
  /** Lowest and highest offset read. */
  readonly mins: number[] = [];
  readonly maxs: number[] = [];
  /** The first offset not read. */
  readonly nexts: number[] = [];
  /** The ranges the read covers, once planned (none for a continuous query). */
  readPlan: Array<{ partition: number; from: number; to: number }> = [];
  /** Which of max.size's two bounds was reached: the bytes read or the bytes of the answer. */
  sizeReached: "read" | "answer" = "read";

  constructor(
    /** Matching records still to pass over (OFFSET). */
    public toSkip: number,
  ) {}
}

/** The end record of a query that stopped for `why` (END when nothing stopped it). */
export function queryEnd(why: StopReason, tally: Tally, caps: Caps, progress: QueryProgress, follow: boolean): QueryEnd {
  const offsets: PartitionOffsets[] = [];
  tally.mins.forEach((min, partition) => {
    if (min !== undefined) offsets.push({ partition, min, max: tally.maxs[partition]! });
  });
  // At the end every range was read whole, whatever its last offsets held (compacted away, a transaction's marker).
  const ranges: ReadRange[] = tally.readPlan.map((r) => ({
    ...r,
    next: why === "END" ? r.to : Math.min(r.to, Math.max(r.from, tally.nexts[r.partition] ?? r.from)),
  }));
  const left = caps.limit - progress.totalRecords;
  const resumeText = CUT.has(why) && !follow && left > 0 ? formatResume(ranges, left, tally.toSkip) : null;
  const limitReached = stopLimitOf(why, caps, tally.sizeReached);
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
    recordsLimit: caps.limit,
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
}
