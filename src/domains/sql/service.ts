/**
 * Queries over topic data: validation against the cluster's topics, and execution of a
 * compiled plan with the decoders the topic calls for. Knows nothing of HTTP; the routes adapt
 * its event iterator to an event stream or one JSON answer.
 */

import { AppError } from "../../errors.ts";
import type { KafkaPool } from "../../kafka/index.ts";
import type { Logger } from "../../log/logger.ts";
import type { SchemaRegistryClient } from "../../registry/client.ts";
import { analyze } from "../../sql/analyzer.ts";
import {
  type Catalog,
  compileQuery,
  DATA_FORMATS,
  type DataFormat,
  parse,
  type QueryPlan,
  SqlError,
  type ValidationResult,
  validateSql,
} from "../../sql/index.ts";
import { DecoderFactory } from "./decoders.ts";
import { executeQuery, type PartitionScan, type QueryEnd, type QueryEvent, QueryProgress } from "./executor.ts";
import type { RecordLines } from "./lines.ts";
import { buildPrefilter } from "./prefilter.ts";
import { QueryRegistry, type RunningQuery } from "./queries.ts";

/** Key and value formats of a topic as its metadata records them (set by the topic metadata API). */
export interface TopicFormat {
  keyType?: string | null;
  valueType?: string | null;
  keySchema?: string | null;
  valueSchema?: string | null;
}

export interface TopicFormats {
  get(cluster: string, topic: string): Promise<TopicFormat | null>;
}

/** No metadata anywhere: every record is inferred (or chosen with SET). */
export const NO_TOPIC_FORMATS: TopicFormats = { get: async () => null };

export interface SqlServiceOptions {
  pool: KafkaPool;
  formats: TopicFormats;
  registry: SchemaRegistryClient | null;
  /** Highest LIMIT, and the LIMIT of a query without one. */
  maxLimit: number;
  maxQueriesPerUser: number;
  log: Logger;
}

/** Told about every query that ends, with what it fetched (tests of push-down, metrics). */
export interface FinishedQuery extends RunningQuery {
  cluster: string;
  end: QueryEnd | null;
  error?: string;
  scans: PartitionScan[];
  readRecords: number;
}

/** A query that compiled and holds a slot: iterate `events(signal)` once, then it releases itself. */
export interface PreparedQuery {
  query: RunningQuery;
  plan: QueryPlan;
  progress: QueryProgress;
  /** `lines`: the answer as event-stream lines (see ExecuteOptions). */
  events(signal: AbortSignal, opts?: { lines?: RecordLines }): AsyncGenerator<QueryEvent, void, undefined>;
  /** Gives the slot back when the events are never iterated. */
  release(): void;
}

function format(name: string | null | undefined): DataFormat | undefined {
  const upper = name?.trim().toUpperCase();
  return upper && (DATA_FORMATS as readonly string[]).includes(upper) ? (upper as DataFormat) : undefined;
}

export class SqlService {
  readonly queries: QueryRegistry;
  readonly #finished = new Set<(q: FinishedQuery) => void>();
  /** NOW() of each plan, so the prefilter evaluates conditions exactly as the filter does. */
  readonly #compiledAt = new WeakMap<QueryPlan, number>();

  constructor(private readonly opts: SqlServiceOptions) {
    this.queries = new QueryRegistry(opts.maxQueriesPerUser);
  }

  defaultCluster(): string {
    return this.opts.pool.default().name;
  }

  /** Listens to finished queries; answers the function that stops listening. */
  onFinished(listener: (q: FinishedQuery) => void): () => void {
    this.#finished.add(listener);
    return () => void this.#finished.delete(listener);
  }

  /** The cluster's topic names as a catalog; null when the cluster cannot be asked (no topic check then). */
  async catalog(cluster: string): Promise<Catalog | null> {
    try {
      const topics = new Set((await this.opts.pool.get(cluster).listTopics({ includeInternal: true })).map((t) => t.name));
      return { topicExists: (name) => topics.has(name) };
    } catch (err) {
      this.opts.log.warn("topics unavailable for query validation", { cluster }, err);
      return null;
    }
  }

  async validate(sql: string, cluster: string): Promise<ValidationResult> {
    return validateSql(sql, await this.catalog(cluster), { maxLimit: this.opts.maxLimit });
  }

  /** Compiles against the cluster's topics; throws SqlError for an invalid query. */
  async compile(sql: string, cluster: string): Promise<QueryPlan> {
    const now = Date.now();
    const plan = compileQuery(sql, await this.catalog(cluster), { maxLimit: this.opts.maxLimit, now });
    this.#compiledAt.set(plan, now);
    return plan;
  }

  /**
   * Takes a query slot for the user (TOO_MANY_REQUESTS beyond the cap) and builds the decoders.
   * Nothing is read until `events` is iterated.
   */
  async prepare(sql: string, plan: QueryPlan, cluster: string, user: string): Promise<PreparedQuery> {
    const kafka = this.opts.pool.get(cluster);
    const meta = await this.opts.formats.get(cluster, plan.topic);
    const factory = new DecoderFactory({ registry: this.opts.registry });
    // SET key.format / value.format win over the topic's metadata; without either, inference.
    const keyFormat = plan.settings.keyFormat ?? format(meta?.keyType);
    const valueFormat = plan.settings.valueFormat ?? format(meta?.valueType);
    const keyDecoder = factory.create(keyFormat, meta?.keySchema ?? undefined, "key");
    const valueDecoder = factory.create(valueFormat, meta?.valueSchema ?? undefined, "value");
    // Only JSON (or inferred) values can be ruled out from their bytes.
    const prefilter =
      valueFormat === undefined || valueFormat === "JSON"
        ? buildPrefilter(analyze(sql, parse(sql)).where, this.#compiledAt.get(plan) ?? Date.now())
        : null;

    const slot = this.queries.register(user, sql);
    const progress = new QueryProgress();
    let used = false;
    const finished = this.#finished;
    const log = this.opts.log;
    return {
      query: slot.query,
      plan,
      progress,
      release: () => {
        if (!used) slot.release();
      },
      async *events(signal, opts) {
        if (used) throw new Error("a prepared query runs once");
        used = true;
        let end: QueryEnd | null = null;
        let error: string | undefined;
        try {
          for await (const ev of executeQuery({ cluster: kafka, keyDecoder, valueDecoder, prefilter }, plan, {
            signal,
            stopSignal: slot.killSignal,
            progress,
            ...(opts?.lines ? { lines: opts.lines } : {}),
          })) {
            if (ev.type === "end") end = ev.end;
            yield ev;
          }
        } catch (err) {
          error = err instanceof Error ? err.message : String(err);
          throw err;
        } finally {
          slot.release();
          const done: FinishedQuery = {
            ...slot.query,
            cluster,
            end,
            scans: progress.scans,
            readRecords: progress.readRecords,
            ...(error ? { error } : {}),
          };
          log.debug("query finished", {
            id: done.id,
            user,
            topic: plan.topic,
            records: progress.totalRecords,
            read: progress.readRecords,
            stop: end?.stopReason,
          });
          for (const f of finished) {
            try {
              f(done);
            } catch {
              /* a listener's failure is not the query's */
            }
          }
        }
      },
    };
  }

  close(): void {
    this.queries.killAll();
  }
}

/** The stream's error message (type 3) for anything a query throws. */
export function queryErrorPayload(err: unknown): { fromLine: number; toLine: number; fromColumn: number; toColumn: number; error: string } {
  if (err instanceof SqlError)
    return { fromLine: err.line, toLine: err.endLine, fromColumn: err.column, toColumn: err.endColumn, error: err.message };
  const message = err instanceof AppError ? err.message : "Internal error while running the query";
  return { fromLine: 0, toLine: 0, fromColumn: 0, toColumn: 0, error: message };
}
