/**
 * The request and answer shapes of the redrive routes (`/api/redrives`). Imports only zod: the UI
 * takes its types and its form's check from here.
 */
import { z } from "zod";

const int = z.number().int();
const offset = int.min(0).max(Number.MAX_SAFE_INTEGER);

/** A job's states: created PAUSED (dry run first), RUNNING, then DONE, CANCELLED or FAILED. */
export const REDRIVE_STATES = ["PAUSED", "RUNNING", "DONE", "CANCELLED", "FAILED"] as const;

/**
 * A job's source (a topic, some or all of its partitions, an offset or time range: each bound
 * at the latest at the end offsets of its creation, so the job ends), its target (a topic, or
 * the header naming each record's), an optional WHERE filter, and its pace.
 */
export const redriveCreate = z
  .strictObject({
    name: z
      .string()
      .trim()
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,99}$/,
        "A name is 1 to 100 letters, digits, spaces, '.', '_' or '-', starting with a letter or digit",
      )
      .optional(),
    topic: z.string().min(1).max(249),
    partitions: z.array(int.min(0).max(100_000)).min(1).max(10_000).optional(),
    /** First offset of each partition copied (default: its start). */
    fromOffset: offset.optional(),
    /** First offset of each partition NOT copied (default: its end offset now). */
    toOffset: offset.optional(),
    /** Epoch ms: from the first record at or after this time. */
    fromTime: offset.optional(),
    /** Epoch ms: up to the first record at or after this time (excluded). */
    toTime: offset.optional(),
    /** A fixed target topic. */
    target: z.string().min(1).max(249).optional(),
    /** Or the header whose value (UTF-8) names each record's target, e.g. Kafka Connect's `__connect.errors.topic`. */
    targetHeader: z.string().min(1).max(1000).optional(),
    /** A SQL condition over the source's records (as in `SELECT * FROM <topic> WHERE ...`). */
    where: z.string().min(1).max(10_000).optional(),
    /** Records written per second at most (default 1000). */
    ratePerSecond: int.min(1).max(1_000_000).optional(),
  })
  .refine((b) => (b.target === undefined) !== (b.targetHeader === undefined), {
    message: "Name exactly one of target (a topic) and targetHeader (a header naming each record's topic)",
    path: ["target"],
  })
  .refine((b) => b.fromOffset === undefined || b.fromTime === undefined, {
    message: "Give fromOffset or fromTime, not both",
    path: ["fromTime"],
  })
  .refine((b) => b.toOffset === undefined || b.toTime === undefined, { message: "Give toOffset or toTime, not both", path: ["toTime"] });

/** What a job did, or (a dry run) would do. */
export const redriveCounts = z.object({
  /** Records read from the source. */
  read: int,
  /** Records written (would be written), all targets together. */
  written: int,
  /** Records written per target topic. */
  byTarget: z.record(z.string(), int),
  /** Records the filter left out. */
  filtered: int,
  /** Records whose target the owner may not write: counted, never written. */
  refused: int,
  /** Records refused per target topic. */
  refusedByTarget: z.record(z.string(), int),
  /** Records without a target: no such header, or a topic that does not exist. */
  unroutable: int,
});

export const redrivePartition = z.object({ partition: int, from: int, to: int, done: int, total: int });

export const redriveJob = z.object({
  id: z.string(),
  name: z.string(),
  cluster: z.string(),
  owner: z.string(),
  state: z.enum(REDRIVE_STATES),
  /** Why Loupe paused or failed it. */
  reason: z.string().nullable(),
  topic: z.string(),
  target: z.string().nullable(),
  targetHeader: z.string().nullable(),
  where: z.string().nullable(),
  ratePerSecond: int,
  /** The job's consumer group: its committed offsets are where the job is. */
  consumerGroup: z.string(),
  /** Per partition: offsets from and to (fixed at creation), records done and in all. */
  progress: z.array(redrivePartition),
  done: int,
  total: int,
  counts: redriveCounts,
  createdAt: int,
  startedAt: int.nullable(),
  finishedAt: int.nullable(),
});

export const redriveSample = z.object({
  partition: int,
  offset: int,
  /** Where it would go (null: unroutable), and whether the owner may write there. */
  target: z.string().nullable(),
  outcome: z.enum(["WRITE", "REFUSED", "UNROUTABLE"]),
  key: z.string().nullable(),
  value: z.string().nullable(),
});

export const redriveDryRun = z.object({
  id: z.string(),
  /** From where the job is now (its committed offsets, or its start) to its end. */
  counts: redriveCounts,
  sample: z.array(redriveSample),
  /** False when the read stopped at its time bound before the end. */
  complete: z.boolean(),
});

export const redriveList = z.object({ redrives: z.array(redriveJob) });
export const redriveDone = z.object({ id: z.string(), name: z.string(), action: z.string(), state: z.enum(REDRIVE_STATES) });

export type RedriveCreate = z.output<typeof redriveCreate>;
export type RedriveCounts = z.output<typeof redriveCounts>;
export type RedriveJob = z.output<typeof redriveJob>;
export type RedriveState = (typeof REDRIVE_STATES)[number];
export type RedriveDryRun = z.output<typeof redriveDryRun>;
export type RedriveList = z.output<typeof redriveList>;
export type RedriveDone = z.output<typeof redriveDone>;
export type RedriveSample = z.output<typeof redriveSample>;

export const NO_COUNTS: RedriveCounts = {
  read: 0,
  written: 0,
  byTarget: {},
  filtered: 0,
  refused: 0,
  refusedByTarget: {},
  unroutable: 0,
};
