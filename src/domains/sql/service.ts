/**
 * Queries over topic data: validation against the cluster's topics, and execution of a
 * compiled plan with the decoders the topic calls for. Knows nothing of HTTP; the routes adapt
 * its event iterator to an event stream or one JSON answer.
 */

import {
  buildPrefilter,
  DEFAULT_CLUSTER_WAIT_MS,
  DEFAULT_MAX_QUERY_MEMORY,
  type Decoder,
  DecoderFactory,
  executeQuery,
  kafkaSource,
  type PartitionScan,
  type QueryEnd,
  type QueryEvent,
  type QueryObserver,
  QueryProgress,
  QueryRegistry,
  type RecordMask,
  type RecordSink,
  type Resume,
  type RunningQuery,
} from "../../engine/index.ts";
import { AppError } from "../../errors.ts";
import type { KafkaPool } from "../../kafka/index.ts";
import type { Logger } from "../../log/logger.ts";
import type { SchemaRegistryClient } from "../../registry/client.ts";
import { analyze } from "../../sql/analyzer.ts";
import { walkExpression } from "../../sql/ast.ts";
import {
  type Catalog,
  DATA_FORMATS,
  type DataFormat,
  type ExpressionNode,
  isStreamStatement,
  parse,
  type QueryPlan,
  type TopicAllowed,
  type ValidationResult,
  validateSql,
  validateStream,
} from "../../sql/index.ts";
import { isInsertStatement } from "../../sql/insert.ts";
import { planQuery } from "../../sql/planner.ts";
import { canonicalSetting } from "../../sql/settings.ts";
import { compactionOf } from "./compaction.ts";
import { insertNotHere } from "./insert-statement.ts";

/** How long a query waits for the topic list its validation checks names against. */
export const CATALOG_WAIT_MS = 5_000;

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

/** Who runs a query, as masking policies match it: the user, its groups, its roles on the query's cluster (highest first). */
export interface Viewer {
  name: string;
  groups: readonly string[];
  roles: readonly string[];
}

/** The viewer of a request's session on `cluster`. */
export function viewerOf(
  session: { user: { name: string; groups: readonly string[] }; scope: { clusterRoles(cluster: string): readonly string[] } },
  cluster: string,
): Viewer {
  return { name: session.user.name, groups: session.user.groups, roles: session.scope.clusterRoles(cluster) };
}

/** The masking policies (src/domains/masking): what of a topic's records a viewer may not see in the clear. */
export interface RecordMasks {
  /** Null when no policy masks anything of the topic for the viewer. */
  maskFor(viewer: Viewer, cluster: string, topic: string): Promise<RecordMask | null>;
}

export interface SqlServiceOptions {
  pool: KafkaPool;
  formats: TopicFormats;
  registry: SchemaRegistryClient | null;
  /** Highest LIMIT, and the LIMIT of a query without one. */
  maxLimit: number;
  maxQueriesPerUser: number;
  /** Highest max.size and max.query.time a query may SET (a larger one is lowered to this). */
  maxSizeBytes?: number;
  maxQueryTimeMs?: number;
  /** Most bytes one query may hold at once (see ExecuteOptions.maxMemoryBytes). */
  maxQueryMemoryBytes?: number;
  /** How long a query waits for a cluster that does not answer before its read begins (see ExecuteOptions.clusterWaitMs). */
  clusterWaitMs?: number;
  log: Logger;
  /** Applied to every query's decoders (see prepare); absent, nothing is masked. */
  masks?: RecordMasks;
  /** Validates an INSERT statement (the write path owns its checks); without it INSERT is not valid here. */
  validateInsert?: (sql: string, cluster: string, allowed?: TopicAllowed) => Promise<ValidationResult>;
}

export const DEFAULT_MAX_SIZE = 256 * 1024 * 1024;
export const DEFAULT_MAX_QUERY_TIME = 60 * 60 * 1000;

/** Settings the server lowered to its own bound, with the value that applies. */
export interface ClampedSettings {
  "max.size"?: number;
  "max.query.time"?: number;
}

/**
 * A query parsed and analysed once, with what every later stage needs: the plan, the analysed
 * WHERE (for the prefilter) and the instant NOW() stands for (so the prefilter and the filter
 * agree).
 */
export interface CompiledQuery {
  sql: string;
  plan: QueryPlan;
  where: ExpressionNode | null;
  now: number;
  /** Present when a setting asked for more than the server allows. */
  clamped?: ClampedSettings;
  /** The highest max.size and max.query.time a query may SET here (sql.maxSize, sql.maxQueryTime). */
  bounds: LimitBounds;
}

/** The highest value of each setting a query may SET on this server. */
export interface LimitBounds {
  "max.size": number;
  "max.query.time": number;
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
  compiled: CompiledQuery;
  plan: QueryPlan;
  progress: QueryProgress;
  /**
   * The query's events; records are written into `sink`. `maxOutputBytes`: the answer form's own
   * bound on what it produces (below max.size).
   */
  events(
    signal: AbortSignal,
    opts: { sink: RecordSink; maxOutputBytes?: number; observer?: QueryObserver },
  ): AsyncGenerator<QueryEvent, void, undefined>;
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

  constructor(private readonly opts: SqlServiceOptions) {
    this.queries = new QueryRegistry(opts.maxQueriesPerUser);
  }

  /** How long a query waits for a cluster that does not answer before its read begins (sql.clusterWait). */
  get clusterWaitMs(): number {
    return this.opts.clusterWaitMs ?? DEFAULT_CLUSTER_WAIT_MS;
  }

  defaultCluster(): string {
    return this.opts.pool.default().name;
  }

  /** Listens to finished queries; answers the function that stops listening. */
  onFinished(listener: (q: FinishedQuery) => void): () => void {
    this.#finished.add(listener);
    return () => void this.#finished.delete(listener);
  }

  /**
   * The cluster's topic names as a catalog; null when the cluster cannot be asked, or does not
   * answer within CATALOG_WAIT_MS (no topic check then: the read itself waits for the cluster,
   * within sql.clusterWait). Regression: a broker that did not answer held every query's start
   * for the client's whole request timeout (30 s) before the read even began.
   */
  async catalog(cluster: string): Promise<Catalog | null> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const listed = this.opts.pool.get(cluster).topics.list({ includeInternal: true });
      const late = new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), CATALOG_WAIT_MS);
      });
      const topics = await Promise.race([listed, late]);
      if (topics === null) {
        listed.catch(() => {});
        this.opts.log.warn("topics not listed in time for query validation", { cluster, waitedMs: CATALOG_WAIT_MS });
        return null;
      }
      const names = new Set(topics.map((t) => t.name));
      return { topicExists: (name) => names.has(name) };
    } catch (err) {
      this.opts.log.warn("topics unavailable for query validation", { cluster }, err);
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  /** `allowed`: the topics the caller may name (see topic-check.ts); absent: all. */
  async validate(sql: string, cluster: string, allowed?: TopicAllowed): Promise<ValidationResult> {
    // A stream program (INSERT INTO ... SELECT) is validated as the processor route compiles it.
    if (isStreamStatement(sql)) {
      const catalog = await this.catalog(cluster);
      const topicCompacted = await compactionOf(this.opts.pool.get(cluster), sql, catalog);
      return validateStream(sql, catalog, { topicCompacted, ...(allowed ? { topicAllowed: allowed } : {}) });
    }
    if (this.opts.validateInsert && isInsertStatement(sql)) return this.opts.validateInsert(sql, cluster, allowed);
    return validateSql(sql, await this.catalog(cluster), { maxLimit: this.opts.maxLimit, ...(allowed ? { topicAllowed: allowed } : {}) });
  }

  /**
   * Parses, analyses and plans the query once, against the cluster's topics; throws SqlError for
   * an invalid query, a topic out of `allowed` included. A max.size or max.query.time beyond the
   * server's bounds is lowered to them.
   */
  async compile(sql: string, cluster: string, allowed?: TopicAllowed): Promise<CompiledQuery> {
    if (isInsertStatement(sql)) throw insertNotHere(sql);
    const catalog = await this.catalog(cluster);
    const now = Date.now();
    const analysed = analyze(sql, parse(sql), catalog, allowed);
    const plan = planQuery(analysed, { maxLimit: this.opts.maxLimit, now });
    const maxSize = this.opts.maxSizeBytes ?? DEFAULT_MAX_SIZE;
    const maxTime = this.opts.maxQueryTimeMs ?? DEFAULT_MAX_QUERY_TIME;
    // Lowered either way; said so only when the query asked for more (a default is no request).
    const asked = new Set(analysed.document.settings.map((s) => canonicalSetting(s.key)));
    const clamped: ClampedSettings = {};
    if (plan.settings.maxSizeBytes > maxSize) {
      plan.settings = { ...plan.settings, maxSizeBytes: maxSize };
      if (asked.has("max.size")) clamped["max.size"] = maxSize;
    }
    // Bytes read are bounded by size only when the query asks (else by time): then as far as the server allows.
    if (plan.settings.maxReadBytes > maxSize && asked.has("max.size")) plan.settings = { ...plan.settings, maxReadBytes: maxSize };
    if (plan.settings.maxQueryTimeMs > maxTime) {
      plan.settings = { ...plan.settings, maxQueryTimeMs: maxTime };
      if (asked.has("max.query.time")) clamped["max.query.time"] = maxTime;
    }
    const bounds = { "max.size": maxSize, "max.query.time": maxTime };
    return { sql, plan, where: analysed.where, now, bounds, ...(Object.keys(clamped).length > 0 ? { clamped } : {}) };
  }

  /** The decoders of a topic's key and value: SET key.format / value.format win over the topic's metadata; without either, inference. */
  async decoders(
    cluster: string,
    topic: string,
    chosen: { keyFormat?: DataFormat; valueFormat?: DataFormat },
    /** Only these top-level fields of a JSON value are read (see DecoderFactory.create). */
    valueFields?: readonly string[] | null,
  ): Promise<{ keyDecoder: Decoder; valueDecoder: Decoder; keyFormat?: DataFormat; valueFormat?: DataFormat }> {
    const meta = await this.opts.formats.get(cluster, topic);
    const factory = new DecoderFactory({ registry: this.opts.registry });
    const keyFormat = chosen.keyFormat ?? format(meta?.keyType);
    const valueFormat = chosen.valueFormat ?? format(meta?.valueType);
    return {
      keyDecoder: factory.create(keyFormat, meta?.keySchema ?? undefined, "key"),
      valueDecoder: factory.create(valueFormat, meta?.valueSchema ?? undefined, "value", valueFields),
      ...(keyFormat ? { keyFormat } : {}),
      ...(valueFormat ? { valueFormat } : {}),
    };
  }

  /** What of the topic's records the viewer's masking policies hide; null for nothing. */
  maskFor(viewer: Viewer, cluster: string, topic: string): Promise<RecordMask | null> {
    return this.opts.masks ? this.opts.masks.maskFor(viewer, cluster, topic) : Promise.resolve(null);
  }

  /**
   * The decoders of the topic as `viewer` may see its records: the viewer's masking policies
   * applied where each key and value is decoded (src/engine/mask.ts), so that nothing evaluated
   * over the record (WHERE, projection, functions, `_key`, `_value`) reads a clear masked field.
   * A WHERE that names a masked field is refused (BAD_REQUEST), rather than answering by what
   * the field holds.
   */
  async viewedDecoders(
    viewer: Viewer,
    cluster: string,
    topic: string,
    chosen: { keyFormat?: DataFormat; valueFormat?: DataFormat },
    where: ExpressionNode | null = null,
  ): Promise<{ keyDecoder: Decoder; valueDecoder: Decoder; valueFormat?: DataFormat; mask: RecordMask | null }> {
    const [decoders, mask] = await Promise.all([this.decoders(cluster, topic, chosen), this.maskFor(viewer, cluster, topic)]);
    const { keyDecoder, valueDecoder, valueFormat } = decoders;
    if (mask === null) return { keyDecoder, valueDecoder, ...(valueFormat ? { valueFormat } : {}), mask };
    if (where !== null) refuseMaskedFilter(where, mask);
    if (chosen.keyFormat !== undefined || chosen.valueFormat !== undefined)
      refuseRawFormat(chosen, (await this.opts.formats.get(cluster, topic)) ?? {});
    return {
      keyDecoder: mask.decoder(keyDecoder, "key"),
      valueDecoder: mask.decoder(valueDecoder, "value"),
      ...(valueFormat ? { valueFormat } : {}),
      mask,
    };
  }

  /**
   * Takes a query slot for the user (TOO_MANY_REQUESTS beyond the cap) and builds the decoders,
   * masked for `viewer` (see viewedDecoders). Nothing is read until `events` is iterated.
   */
  async prepare(compiled: CompiledQuery, cluster: string, viewer: Viewer, options: { resume?: Resume } = {}): Promise<PreparedQuery> {
    const { plan, sql } = compiled;
    const user = viewer.name;
    const kafka = this.opts.pool.get(cluster);
    const { keyDecoder, valueDecoder, valueFormat, mask } = await this.viewedDecoders(
      viewer,
      cluster,
      plan.topic,
      plan.settings,
      compiled.where,
    );
    // Only JSON (or inferred) values can be ruled out from their bytes; never a masked query's
    // (the prefilter reads the clear bytes).
    const prefilter =
      mask === null && (valueFormat === undefined || valueFormat === "JSON") ? buildPrefilter(compiled.where, compiled.now) : null;
    const maskedFields = mask?.patterns;
    const maxMemoryBytes = this.opts.maxQueryMemoryBytes ?? DEFAULT_MAX_QUERY_MEMORY;
    const clusterWaitMs = this.clusterWaitMs;

    const slot = this.queries.register(user, sql);
    const progress = new QueryProgress();
    let used = false;
    const told = (done: FinishedQuery) => this.#told(done, user, plan.topic, progress);
    return {
      query: slot.query,
      compiled,
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
          for await (const ev of executeQuery(
            { source: mask ? mask.source(kafkaSource(kafka)) : kafkaSource(kafka), keyDecoder, valueDecoder, prefilter },
            plan,
            {
              signal,
              stopSignal: slot.killSignal,
              progress,
              sink: opts.sink,
              maxMemoryBytes,
              clusterWaitMs,
              bounds: compiled.bounds,
              ...(options.resume ? { resume: options.resume } : {}),
              ...(opts.maxOutputBytes !== undefined ? { maxOutputBytes: opts.maxOutputBytes } : {}),
              ...(opts.observer ? { observer: opts.observer } : {}),
            },
          )) {
            if (ev.type === "end") {
              end = ev.end;
              if (maskedFields) end.maskedFields = maskedFields;
            } else if (ev.type === "error") error = ev.error.message;
            yield ev;
          }
        } catch (err) {
          error = err instanceof Error ? err.message : String(err);
          throw err;
        } finally {
          slot.release();
          told({ ...slot.query, cluster, end, scans: progress.scans, readRecords: progress.readRecords, ...(error ? { error } : {}) });
        }
      },
    };
  }

  /** A query ended: logged, and told to every listener (onFinished). */
  #told(done: FinishedQuery, user: string, topic: string, progress: QueryProgress): void {
    this.opts.log.debug("query finished", {
      id: done.id,
      user,
      topic,
      records: progress.totalRecords,
      read: progress.readRecords,
      stop: done.end?.stopReason,
    });
    for (const f of this.#finished) {
      try {
        f(done);
      } catch {
        /* a listener's failure is not the query's */
      }
    }
  }

  close(): void {
    this.queries.killAll();
  }
}

/** Formats whose values are the structured values masking policies mask field by field. */
const STRUCTURED: ReadonlySet<DataFormat> = new Set(["JSON", "AVRO", "PROTOBUF"]);

/**
 * Throws BAD_REQUEST when a masked query chooses (SET key.format / value.format, `_ktype` /
 * `_vtype`) to read a side as text, bytes or a number other than the topic's stored format: that
 * would show the payload's bytes, masked fields and all.
 */
function refuseRawFormat(chosen: { keyFormat?: DataFormat; valueFormat?: DataFormat }, stored: TopicFormat): void {
  for (const [side, f, own] of [
    ["key", chosen.keyFormat, format(stored.keyType)],
    ["value", chosen.valueFormat, format(stored.valueType)],
  ] as const) {
    if (f === undefined || STRUCTURED.has(f) || f === own) continue;
    throw new AppError(
      "BAD_REQUEST",
      `The query reads the ${side} as ${f}, which would show fields a masking policy hides from you: on this topic, read it in its own format (drop SET ${side}.format)`,
    );
  }
}

/** Throws BAD_REQUEST when the WHERE reads a field `mask` hides (see RecordMask.named). */
function refuseMaskedFilter(where: ExpressionNode, mask: RecordMask): void {
  walkExpression(where, (node) => {
    if (node.kind !== "FieldPath") return;
    const path = node.segments.flatMap((s) => (s.kind === "Field" ? [s.name] : []));
    const pattern = mask.named(path);
    if (pattern === null) return;
    const named = `${node.rooted ? `_${node.source}${path.length > 0 ? "." : ""}` : ""}${path.join(".")}`;
    throw new AppError(
      "BAD_REQUEST",
      `The WHERE clause filters on '${named}', which a masking policy hides from you (field pattern '${pattern}'): filters on masked fields are refused`,
    );
  });
}
