/**
 * Where one record of a redrive goes: left out by the filter, written to its target, refused
 * (the owner may not write there: counted, never written) or unroutable (no header naming a
 * target, or a topic that does not exist). The dry run and the run ask the same router, so a dry
 * run's counts are what a run writes.
 */
import { AppError, badRequest } from "../../errors.ts";
import type { KafkaCluster, RawRecord } from "../../kafka/index.ts";
import { compileQuery, type RecordView, SqlError } from "../../sql/index.ts";
import type { Scope } from "../access/scope.ts";
import type { SqlService } from "../sql/service.ts";
import type { RedriveRow } from "./repo.ts";
import type { RedriveCounts } from "./schemas.ts";

export type Outcome =
  | { kind: "FILTERED" }
  | { kind: "WRITE"; target: string; partitions: number }
  | { kind: "REFUSED"; target: string }
  | { kind: "UNROUTABLE"; target: string | null };

/** The record as the filter sees it (key and value decoded as queries decode them). */
class View implements RecordView {
  key: unknown = null;
  value: unknown = null;
  partition = 0;
  offset = 0;
  timestamp = 0;
  keySize = 0;
  valueSize = 0;
  constructor(readonly ends: Map<number, number>) {}
  lastOffset(partition: number): number {
    return this.ends.get(partition) ?? this.offset + 1;
  }
}

type Filter = (raw: RawRecord) => boolean | Promise<boolean>;

/** The query a filter is compiled as: its WHERE is the job's condition, from the second line on (its columns are the condition's). */
const filterQuery = (topic: string, where: string) => `SELECT * FROM \`${topic}\` WHERE\n${where}`;

/** The limit of a query without LIMIT: the filter's plan has it unless the condition wrote one. */
const NO_LIMIT = Number.MAX_SAFE_INTEGER;

/** A problem's position in the condition as the user wrote it (its first line is the query's second). */
const inCondition = (err: SqlError) => ({
  message: err.message.replace(/at line (\d+)/, (_, line: string) => `at line ${Number(line) - 1}`),
  line: err.line - 1,
  column: err.column,
});

/**
 * The job's WHERE as a test of a record; a 400 naming the problem when it is not a valid
 * condition. Its key and value are decoded only when there is a condition.
 */
export async function compileFilter(job: Pick<RedriveRow, "cluster" | "topic" | "where" | "ranges">, sql: SqlService): Promise<Filter> {
  if (job.where === null) return () => true;
  let plan: ReturnType<typeof compileQuery>;
  try {
    plan = compileQuery(filterQuery(job.topic, job.where), await sql.catalog(job.cluster), { maxLimit: NO_LIMIT });
  } catch (err) {
    if (err instanceof SqlError) {
      const at = inCondition(err);
      throw badRequest(`Invalid filter: ${at.message}`, { where: job.where, line: at.line, column: at.column });
    }
    throw err;
  }
  // A condition that goes on past the WHERE (a LIMIT) or samples is no filter.
  if (plan.limit !== NO_LIMIT || plan.skip > 0 || plan.columns !== null || plan.sample !== null) {
    throw badRequest("Invalid filter: give a condition only (no LIMIT, projection or hint)", { where: job.where });
  }
  const { keyDecoder, valueDecoder } = await sql.decoders(job.cluster, job.topic, {});
  const view = new View(new Map(job.ranges.map((r) => [r.partition, r.to])));
  return async (raw) => {
    try {
      view.partition = raw.partition;
      view.offset = raw.offset;
      view.timestamp = raw.timestamp;
      view.keySize = raw.key?.byteLength ?? 0;
      view.valueSize = raw.value?.byteLength ?? 0;
      view.key = raw.key === null ? null : (await keyDecoder(raw.key)).value;
      view.value = raw.value === null ? null : (await valueDecoder(raw.value)).value;
      return plan.filter(view);
    } catch {
      // A record the condition cannot read (bytes its decoder refuses) does not match it.
      return false;
    }
  };
}

const decoder = new TextDecoder();

export class RecordRouter {
  readonly #job: RedriveRow;
  readonly #kafka: KafkaCluster;
  readonly #filter: Filter;
  #scope: Scope;
  /** Partitions of each target topic; null: no such topic. */
  readonly #topics = new Map<string, number | null>();

  constructor(job: RedriveRow, kafka: KafkaCluster, filter: Filter, scope: Scope) {
    this.#job = job;
    this.#kafka = kafka;
    this.#filter = filter;
    this.#scope = scope;
  }

  /** The owner's rights as now resolved: each record's target is checked against them. */
  set scope(scope: Scope) {
    this.#scope = scope;
  }

  /** The target a record names: the fixed one, or its header's value (the last of that name). */
  targetOf(raw: RawRecord): string | null {
    if (this.#job.target !== null) return this.#job.target;
    let value: Uint8Array | null | undefined;
    for (const h of raw.headers) if (h.key === this.#job.targetHeader) value = h.value;
    if (value === undefined || value === null || value.byteLength === 0) return null;
    return decoder.decode(value).trim() || null;
  }

  async route(raw: RawRecord): Promise<Outcome> {
    if (!(await this.#filter(raw))) return { kind: "FILTERED" };
    const target = this.targetOf(raw);
    if (target === null) return { kind: "UNROUTABLE", target: null };
    const scope = this.#scope;
    // A header never sends records into Kafka's own topics (`__consumer_offsets`, `__transaction_state`, ...), whoever owns the job.
    if (this.#job.targetHeader !== null && target.startsWith("__")) return { kind: "REFUSED", target };
    if (!scope.unrestricted.has("admin") && scope.refusal(this.#job.cluster, target, "write") !== undefined) {
      return { kind: "REFUSED", target };
    }
    const partitions = await this.#partitionsOf(target);
    if (partitions === null) return { kind: "UNROUTABLE", target };
    return { kind: "WRITE", target, partitions };
  }

  async #partitionsOf(topic: string): Promise<number | null> {
    if (this.#topics.has(topic)) return this.#topics.get(topic)!;
    let partitions: number | null = null;
    if (/^[A-Za-z0-9._-]{1,249}$/.test(topic)) {
      const [found] = await this.#kafka.topics.describe([topic]).catch((err: unknown) => {
        if (err instanceof AppError && err.code === "NOT_FOUND") return [undefined];
        throw err;
      });
      partitions = found ? found.partitionDetails.length : null;
    }
    this.#topics.set(topic, partitions);
    return partitions;
  }
}

/** Adds one record's outcome to the counts. */
export function tally(counts: RedriveCounts, outcome: Outcome): void {
  counts.read++;
  switch (outcome.kind) {
    case "FILTERED":
      counts.filtered++;
      break;
    case "WRITE":
      counts.written++;
      counts.byTarget[outcome.target] = (counts.byTarget[outcome.target] ?? 0) + 1;
      break;
    case "REFUSED":
      counts.refused++;
      counts.refusedByTarget[outcome.target] = (counts.refusedByTarget[outcome.target] ?? 0) + 1;
      break;
    case "UNROUTABLE":
      counts.unroutable++;
      break;
  }
}

/** Counts of several partitions together. */
export function sumCounts(all: Iterable<RedriveCounts>): RedriveCounts {
  const out: RedriveCounts = { read: 0, written: 0, byTarget: {}, filtered: 0, refused: 0, refusedByTarget: {}, unroutable: 0 };
  for (const c of all) {
    out.read += c.read;
    out.written += c.written;
    out.filtered += c.filtered;
    out.refused += c.refused;
    out.unroutable += c.unroutable;
    for (const [t, n] of Object.entries(c.byTarget)) out.byTarget[t] = (out.byTarget[t] ?? 0) + n;
    for (const [t, n] of Object.entries(c.refusedByTarget)) out.refusedByTarget[t] = (out.refusedByTarget[t] ?? 0) + n;
  }
  return out;
}
