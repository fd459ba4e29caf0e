/**
 * The request and answer shapes of the processor routes (SPEC Processor, CLIENTS.md §1, plus
 * Loupe's figures). Imports only zod: the UI takes its types and its form's check from here.
 */
import { z } from "zod";

const str = z.string();
const int = z.number().int();

/** A processor as a whole (SPEC States); FAILED when a runner is. */
export const DEPLOYMENT_STATES = ["PENDING", "RUNNING", "PAUSED", "FAILED", "STOPPED"] as const;

/** A processor's figures, in its answer and on /metrics. */
export const processorFigures = z.object({
  recordsIn: int,
  recordsOut: int,
  inPerSec: int,
  outPerSec: int,
  failed: int,
  late: int,
  /** Its consumer group's lag; null when unknown. */
  lag: int.nullable(),
});

/** The clients send all six keys, some empty; an empty string is absent (CLIENTS.md §1). */
const optionalText = z.string().max(200).optional();
export const createBody = z.looseObject({
  name: z.string().min(1).max(100),
  sql: z.string().min(1).max(100_000),
  runners: z.number().int().optional(),
  clusterName: optionalText,
  namespace: optionalText,
  pipeline: optionalText,
});

export const runnerState = z.object({ id: str, worker: str, state: str, errorMsg: str });
export const processorSchema = z.object({
  id: str,
  name: str,
  clusterName: str,
  user: str,
  namespace: str,
  uptime: int,
  sql: str,
  runners: int,
  deploymentState: z.enum(DEPLOYMENT_STATES),
  topicValueDecoder: str,
  topicKeyDecoder: str,
  pipeline: str,
  startTs: int,
  stopTs: int.optional(),
  toTopic: str,
  toTopics: z.array(str),
  fromTopics: z.array(str),
  lastActionMsg: str.optional(),
  deploymentErrorMsg: str.optional(),
  runnerState: z.record(str, runnerState),
  cluster: str,
  /** The consumer group its runners are members of (its lag is the processor's). */
  consumerGroup: str,
  operations: z.array(str),
  figures: processorFigures,
});
export const target = z.object({ cluster: str, version: str.nullable(), namespaces: z.array(str) });
export const done = z.object({ id: str, name: str, action: str });
/** One processor's answer: under `streams`, as the clients read it. */
export const processorOne = z.object({ streams: processorSchema });

export type DeploymentState = (typeof DEPLOYMENT_STATES)[number];
export type ProcessorFigures = z.output<typeof processorFigures>;
export type ProcessorAnswer = z.output<typeof processorSchema>;
export type ProcessorCreateBody = z.input<typeof createBody>;
export type ProcessorList = { targets: z.output<typeof target>[]; streams: ProcessorAnswer[] };
export type ProcessorDone = z.output<typeof done>;
export type ProcessorOne = z.output<typeof processorOne>;
