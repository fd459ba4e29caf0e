/**
 * Stream processors: shapes the engine, the service and the routes share. A processor is one
 * `INSERT INTO ... SELECT STREAM ...` program run by `runners` members of one consumer group.
 */
import type { StreamProgram } from "../../sql/index.ts";

export type { AggregateProgram, StreamOutput, StreamProgram } from "../../sql/index.ts";

/** What the user asked for last. */
export type DesiredState = "RUNNING" | "PAUSED";

import type { ProcessorFigures } from "./schemas.ts";

export type { DeploymentState } from "./schemas.ts";

/** One runner, as it reports itself. */
export type RunnerStateName = "PENDING" | "RUNNING" | "FAILED" | "STOPPED";

export interface RunnerFigures {
  recordsIn: number;
  recordsOut: number;
  /** Records skipped under error.policy=skip (decoding or evaluation failed). */
  failed: number;
  /** Records that came after their window closed (past the grace period). */
  late: number;
  /** Transactions committed. */
  commits: number;
  /** Per second, over the last report interval. */
  inPerSec: number;
  outPerSec: number;
  /** Input partitions the runner owns now. */
  partitions: number;
}

export const NO_FIGURES: RunnerFigures = {
  recordsIn: 0,
  recordsOut: 0,
  failed: 0,
  late: 0,
  commits: 0,
  inPerSec: 0,
  outPerSec: 0,
  partitions: 0,
};

export interface ProcessorRow {
  id: string;
  name: string;
  cluster: string;
  sql: string;
  runners: number;
  desired: DesiredState;
  owner: string;
  sourceTopic: string;
  targetTopic: string;
  clusterName: string | null;
  namespace: string | null;
  pipeline: string | null;
  createdAt: number;
  startTs: number | null;
  stopTs: number | null;
  lastAction: string | null;
  /** local, ldap or service: where the owner's rights are resolved from; null for processors created before it was kept. */
  ownerKind: string | null;
  /** Why Loupe paused it by itself; null when it runs or a user paused it. */
  pausedReason: string | null;
}

export interface RunnerRow {
  processorId: string;
  runner: number;
  instance: string | null;
  leaseUntil: number;
  state: RunnerStateName;
  error: string | null;
  figures: RunnerFigures;
  /** The risky phase the holder was in (restoring, a large state); null outside one. */
  risk: string | null;
  updatedAt: number;
}

/** Everything a runner needs that depends on the processor, built when a runner starts. */
export interface RunnerSetup {
  program: StreamProgram;
  /** Decoders of the source's key and value (topic metadata, SET formats, or inference). */
  decodeKey(bytes: Uint8Array): unknown | Promise<unknown>;
  decodeValue(bytes: Uint8Array): unknown | Promise<unknown>;
  /** Output values in Avro (SET output.format = AVRO); absent: JSON text. Throws EncodeError. */
  encodeValue?(value: unknown): Uint8Array | null;
  /** Partitions of the target (created before the runner starts when autocreate). */
  targetPartitions: number;
  /** The target is compacted (cleanup.policy has compact): every record written to it needs a key. */
  targetCompacted?: boolean;
  /** Aggregations: the compacted topic holding the state, one partition per input partition. */
  changelog?: string;
  /** Aggregations grouped by other than the record key: where records are re-keyed by group first. */
  repartition?: { topic: string; partitions: number };
}

/** A processor's figures with what names it on /metrics (the metrics area renders them). */
export interface ProcessorMetrics extends ProcessorFigures {
  id: string;
  name: string;
  consumerGroup: string;
  state: string;
}
