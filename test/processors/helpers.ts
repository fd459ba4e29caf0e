/**
 * Shared by the processor tests: topics with JSON records, the output of a topic as a
 * read_committed reader sees it, and the processor API as the clients call it.
 */
import { afterAll, beforeAll } from "bun:test";
import type { KafkaCluster } from "../../src/kafka/index.ts";
import { uniqueTopic } from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { pollFor } from "../helpers/wait.ts";
import { waitForLeaders } from "../kafka/helpers.ts";

/** A runtime for the file's tests, and the topics they made (deleted after the file). */
export function processorFixture(config: Record<string, unknown> = {}): {
  rt: () => TestRuntime;
  kafka: () => KafkaCluster;
  made: string[];
} {
  let rt: TestRuntime | undefined;
  const made: string[] = [];
  beforeAll(async () => {
    rt = await testRuntime(config);
  });
  afterAll(async () => {
    await rt?.dispose({ topics: made });
  }, 60_000);
  return { rt: () => rt!, kafka: () => rt!.kafka.default(), made };
}

/** A topic named `name`, listed in `made` (deleted after the file), once its partitions have leaders. */
export async function makeTopic(
  kafka: KafkaCluster,
  name: string,
  partitions: number,
  made: string[],
  configs?: Record<string, string>,
): Promise<string> {
  await kafka.topics.create({ name, partitions, replication: 1, ...(configs ? { configs } : {}) });
  made.push(name);
  await waitForLeaders(kafka, name, partitions, 30_000);
  return name;
}

export const jsonTopic = (kafka: KafkaCluster, prefix: string, partitions: number, made: string[]): Promise<string> =>
  makeTopic(kafka, uniqueTopic(prefix), partitions, made);

/**
 * A processor's source and target topics, `<name>-src` and `<name>-out`: one partition each, or
 * `partitions` (the same number for both, or `[source, target]`).
 */
export async function sourceAndTarget(
  kafka: KafkaCluster,
  name: string,
  made: string[],
  partitions: number | [number, number] = 1,
): Promise<{ source: string; target: string }> {
  const [inSource, inTarget] = typeof partitions === "number" ? [partitions, partitions] : partitions;
  const source = await jsonTopic(kafka, `${name}-src`, inSource, made);
  const target = await jsonTopic(kafka, `${name}-out`, inTarget, made);
  return { source, target };
}

export interface Rec {
  key?: string;
  value: unknown;
  partition?: number;
  timestamp?: number;
}

/** Writes `records` in order, in requests of at most 500 records and about 256 KiB. */
export async function produce(kafka: KafkaCluster, topic: string, records: Rec[]): Promise<void> {
  const texts = records.map((r) => ({ ...r, value: typeof r.value === "string" ? r.value : JSON.stringify(r.value) }));
  let i = 0;
  while (i < texts.length) {
    let end = i;
    let bytes = 0;
    while (end < texts.length && end - i < 500 && (end === i || bytes + texts[end]!.value.length <= 256 * 1024)) {
      bytes += texts[end]!.value.length;
      end++;
    }
    await kafka.writes.produce(
      topic,
      texts.slice(i, end).map((r) => ({ key: r.key, value: r.value, partition: r.partition, timestamp: r.timestamp })),
    );
    i = end;
  }
}

export interface OutRecord {
  key: string | null;
  value: unknown;
  partition: number;
  timestamp: number;
}

/** How a test reads output values: JSON text by default. */
export type ValueParser = (bytes: Uint8Array) => unknown;
const jsonParser: ValueParser = (bytes) => JSON.parse(new TextDecoder().decode(bytes));

/** Every record of `topic` a read_committed reader sees now, values parsed (as JSON by default). */
export async function readAll(kafka: KafkaCluster, topic: string, parse: ValueParser = jsonParser): Promise<OutRecord[]> {
  const [described] = await kafka.topics.describe([topic]);
  const partitions = described!.partitionDetails.map((p) => p.partition);
  const ends = await kafka.offsets.list(
    partitions.map((partition) => ({ topic, partition })),
    "latest",
  );
  const out: OutRecord[] = [];
  const dec = new TextDecoder();
  for await (const r of kafka.reads.records({ topic, partitions: ends.map((e) => ({ partition: e.partition, from: 0, to: e.offset })) })) {
    out.push({
      key: r.key === null ? null : dec.decode(r.key),
      value: r.value === null ? null : parse(r.value),
      partition: r.partition,
      timestamp: r.timestamp,
    });
  }
  return out;
}

/** Waits until `topic` holds at least `n` committed records; answers them all. */
export function outputOf(kafka: KafkaCluster, topic: string, n: number, timeoutMs = 60_000, parse?: ValueParser): Promise<OutRecord[]> {
  return pollFor(
    `${n} records in ${topic}`,
    async () => {
      const all = await readAll(kafka, topic, parse);
      return all.length >= n ? all : undefined;
    },
    timeoutMs,
  );
}

export interface ProcessorJson {
  id: string;
  name: string;
  deploymentState: string;
  runners: number;
  runnerState: Record<string, { id: string; worker: string; state: string; errorMsg: string }>;
  deploymentErrorMsg?: string;
  lastActionMsg?: string;
  figures: { recordsIn: number; recordsOut: number; failed: number; late: number; lag: number | null };
  [k: string]: unknown;
}

export async function createProcessor(
  rt: TestRuntime,
  name: string,
  sql: string,
  opts: { runners?: number; role?: "admin" | "write" } = {},
): Promise<string> {
  const res = await rt.request("/api/streams", {
    method: "POST",
    role: opts.role ?? "write",
    headers: { accept: "text/plain" },
    body: JSON.stringify({ name, sql, runners: opts.runners ?? 1, clusterName: "" }),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`create ${name}: ${res.status} ${text}`);
  return text;
}

export async function getProcessor(rt: TestRuntime, id: string): Promise<ProcessorJson> {
  const res = await rt.request(`/api/streams/${id}`, { role: "read" });
  if (res.status !== 200) throw new Error(`get ${id}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { streams: ProcessorJson }).streams;
}

/** The processor once it satisfies `holds` (polled until the deadline). */
export function untilProcessor(
  rt: TestRuntime,
  id: string,
  what: string,
  holds: (p: ProcessorJson) => boolean,
  timeoutMs = 30_000,
): Promise<ProcessorJson> {
  return pollFor(
    what,
    async () => {
      const p = await getProcessor(rt, id);
      return holds(p) ? p : undefined;
    },
    timeoutMs,
  );
}

/** The processor once its figures hold `holds`. */
export const untilFigures = (
  rt: TestRuntime,
  id: string,
  what: string,
  holds: (f: ProcessorJson["figures"]) => boolean,
  timeoutMs = 30_000,
) => untilProcessor(rt, id, what, (p) => holds(p.figures), timeoutMs);

export const untilState = (rt: TestRuntime, id: string, state: string, timeoutMs = 60_000) =>
  untilProcessor(rt, id, `processor ${id} ${state}`, (p) => p.deploymentState === state, timeoutMs);

export async function action(rt: TestRuntime, id: string, what: string, role: "admin" | "write" = "write"): Promise<Response> {
  return rt.request(`/api/streams/${id}${what === "delete" ? "" : `/${what}`}`, { method: what === "delete" ? "DELETE" : "PUT", role });
}
