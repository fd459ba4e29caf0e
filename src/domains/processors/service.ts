/**
 * Stream processors through the API: create (validated like a query, with positions), list and
 * show with their runners' states and figures, pause, resume, scale and delete. What a processor
 * should be doing is written to the store, and the engine of each Loupe instance makes it so.
 */
import { randomBytes } from "node:crypto";
import { AppError, badRequest, conflict, forbidden, notFound } from "../../errors.ts";
import type { KafkaPool } from "../../kafka/index.ts";
import type { LagEngine } from "../../lag/engine.ts";
import type { Logger } from "../../log/logger.ts";
import { compileStream, SqlError } from "../../sql/index.ts";
import type { Scope } from "../access/scope.ts";
import type { ProcessorMetrics } from "../metrics/service.ts";
import { topicCheck } from "../sql/topic-check.ts";
import { changelogOf, groupIdOf, type ProcessorEngine, repartitionOf } from "./engine.ts";
import { type AvroSchemaOf, outputEncoder } from "./output.ts";
import type { ProcessorRepo } from "./repo.ts";
import type { DeploymentState, ProcessorFigures, ProcessorRow, RunnerRow, StreamProgram } from "./types.ts";

export interface ProcessorServiceOptions {
  repo: ProcessorRepo;
  engine: ProcessorEngine;
  pool: KafkaPool;
  lag: LagEngine;
  log: Logger;
  /** The schema Avro output is written in (see output.ts). */
  schemaOf: AvroSchemaOf;
  maxRunners: number;
  /** The cluster's topics, for validation (null: not checked). */
  catalog(cluster: string): Promise<{ topicExists(name: string): boolean } | null>;
  now?: () => number;
}

export interface CreateInput {
  name: string;
  sql: string;
  runners?: number;
  clusterName?: string;
  namespace?: string;
  pipeline?: string;
}

export interface Caller {
  user: string;
  scope: Scope;
  admin: boolean;
}

/** A processor as the API answers it (SPEC Processor, CLIENTS.md §1, plus Loupe's figures). */
export interface ProcessorAnswer {
  id: string;
  name: string;
  clusterName: string;
  user: string;
  namespace: string;
  uptime: number;
  sql: string;
  runners: number;
  deploymentState: DeploymentState;
  topicValueDecoder: string;
  topicKeyDecoder: string;
  pipeline: string;
  startTs: number;
  stopTs?: number;
  toTopic: string;
  toTopics: string[];
  fromTopics: string[];
  lastActionMsg?: string;
  deploymentErrorMsg?: string;
  runnerState: Record<string, { id: string; worker: string; state: string; errorMsg: string }>;
  cluster: string;
  /** The consumer group its runners are members of (its lag is the processor's). */
  consumerGroup: string;
  operations: string[];
  figures: ProcessorFigures;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,99}$/;

export class ProcessorService {
  readonly #o: ProcessorServiceOptions;
  readonly #now: () => number;
  /** Compiled programs by SQL text, for the answers (decoders, operations). */
  readonly #programs = new Map<string, StreamProgram | null>();

  constructor(opts: ProcessorServiceOptions) {
    this.#o = opts;
    this.#now = opts.now ?? Date.now;
  }

  #program(sql: string): StreamProgram | null {
    let p = this.#programs.get(sql);
    if (p === undefined) {
      try {
        p = compileStream(sql);
      } catch {
        p = null;
      }
      if (this.#programs.size > 1000) this.#programs.clear();
      this.#programs.set(sql, p);
    }
    return p;
  }

  /** Compiles against the cluster's topics and the caller's scope; SqlError for an invalid program. */
  async compile(sql: string, cluster: string, scope: Scope): Promise<StreamProgram> {
    const catalog = await this.#o.catalog(cluster);
    const allowed = topicCheck(scope, cluster, "run");
    return compileStream(sql, catalog, allowed ? { topicAllowed: allowed } : {});
  }

  async create(input: CreateInput, cluster: string, caller: Caller): Promise<ProcessorAnswer> {
    const name = input.name.trim();
    if (!NAME.test(name)) {
      throw badRequest("A processor name is 1 to 100 letters, digits, spaces, '.', '_' or '-', starting with a letter or digit");
    }
    const runners = input.runners ?? 1;
    if (!Number.isInteger(runners) || runners < 1 || runners > this.#o.maxRunners) {
      throw badRequest(`runners must be an integer from 1 to ${this.#o.maxRunners}`);
    }
    let program: StreamProgram;
    try {
      program = await this.compile(input.sql, cluster, caller.scope);
    } catch (err) {
      if (err instanceof SqlError) throw invalidSql(err);
      throw err;
    }
    // Avro output needs the target's registered schema, fit for the program's columns.
    await outputEncoder(program, cluster, this.#o.schemaOf);
    if (await this.#o.repo.byName(cluster, name)) throw conflict(`A processor named '${name}' already exists`);
    const kafka = this.#o.pool.get(cluster);
    const [source] = await kafka.topics.describe([program.source]);
    if (!source) throw badRequest(`Topic '${program.source}' does not exist`);
    const existing = await kafka.topics.list({ includeInternal: true });
    if (!existing.some((t) => t.name === program.target)) {
      if (!program.settings.autoCreate) throw badRequest(`Topic '${program.target}' does not exist; SET autocreate = true; to create it`);
      const table = program.aggregate !== null && program.aggregate.window === null;
      await kafka.topics
        .create({
          name: program.target,
          partitions: program.settings.partitions ?? source.partitionDetails.length,
          replication: program.settings.replication ?? -1,
          configs: table ? { "cleanup.policy": "compact" } : undefined,
        })
        .catch((err: unknown) => {
          // Created meanwhile by someone else is as good.
          if (!(err instanceof AppError && err.code === "CONFLICT")) throw err;
        });
    }
    const now = this.#now();
    const id = `lsql_${randomBytes(8).toString("hex")}`;
    const row: ProcessorRow = {
      id,
      name,
      cluster,
      sql: input.sql,
      runners,
      desired: "RUNNING",
      owner: caller.user,
      sourceTopic: program.source,
      targetTopic: program.target,
      clusterName: blank(input.clusterName),
      namespace: blank(input.namespace),
      pipeline: blank(input.pipeline) ?? name,
      createdAt: now,
      startTs: now,
      stopTs: null,
      lastAction: `Created by ${caller.user}`,
    };
    await this.#o.repo.create(row, now);
    this.#o.log.info("processor created", { processor: id, name, owner: caller.user, source: program.source, target: program.target });
    void this.#o.engine.kick();
    return this.#answer(row, await this.#o.repo.runners(id), null);
  }

  /** The processors of `cluster` whose topics the caller may read. */
  async list(cluster: string, caller: Caller): Promise<ProcessorAnswer[]> {
    const rows = (await this.#o.repo.list(cluster)).filter((p) => this.#visible(p, caller));
    const slots = await this.#o.repo.runners();
    const lags = await this.#lags(cluster, rows);
    return rows.map((p) =>
      this.#answer(
        p,
        slots.filter((s) => s.processorId === p.id),
        lags.get(p.id) ?? null,
      ),
    );
  }

  /** Every processor of `cluster` with its figures, for /metrics (no scope: operators see all). */
  async metrics(cluster: string): Promise<ProcessorMetrics[]> {
    const rows = await this.#o.repo.list(cluster);
    const slots = await this.#o.repo.runners();
    const lags = await this.#lags(cluster, rows);
    return rows.map((p) => {
      const a = this.#answer(
        p,
        slots.filter((s) => s.processorId === p.id),
        lags.get(p.id) ?? null,
      );
      return { id: a.id, name: a.name, consumerGroup: a.consumerGroup, state: a.deploymentState, ...a.figures };
    });
  }

  async get(id: string, caller: Caller): Promise<ProcessorAnswer> {
    const p = await this.#find(id, caller);
    const lags = await this.#lags(p.cluster, [p]);
    return this.#answer(p, await this.#o.repo.runners(p.id), lags.get(p.id) ?? null);
  }

  async pause(id: string, caller: Caller): Promise<ProcessorRow> {
    const p = await this.#changeable(id, caller);
    if (p.desired !== "PAUSED") await this.#o.repo.setDesired(p.id, "PAUSED", `Paused by ${caller.user}`, this.#now());
    await this.#o.engine.kick();
    return p;
  }

  async resume(id: string, caller: Caller): Promise<ProcessorRow> {
    const p = await this.#changeable(id, caller);
    const slots = await this.#o.repo.runners(p.id);
    // Resuming a processor that runs is fine (the clients resume right after creating); one
    // that FAILED starts its runners again.
    if (p.desired !== "RUNNING" || slots.some((s) => s.state === "FAILED")) {
      await this.#o.repo.setDesired(p.id, "RUNNING", `Resumed by ${caller.user}`, this.#now());
      if (p.desired === "RUNNING") await this.#restartFailed(p);
    }
    await this.#o.engine.kick();
    return p;
  }

  async scale(id: string, runners: number, caller: Caller): Promise<ProcessorRow> {
    if (!Number.isInteger(runners) || runners < 1 || runners > this.#o.maxRunners) {
      throw badRequest(`The number of runners must be an integer from 1 to ${this.#o.maxRunners}`);
    }
    const p = await this.#changeable(id, caller);
    if (runners !== p.runners)
      await this.#o.repo.scale(p.id, runners, `Scaled from ${p.runners} to ${runners} by ${caller.user}`, this.#now());
    await this.#o.engine.kick();
    return p;
  }

  /** Stops it, removes its consumer group and (asked) its changelog topic. */
  async delete(id: string, caller: Caller, opts: { deleteChangelog?: boolean } = {}): Promise<ProcessorRow> {
    const p = await this.#changeable(id, caller);
    await this.#o.repo.delete(p.id);
    await this.#o.engine.stopProcessor(p.id);
    const kafka = this.#o.pool.get(p.cluster);
    const group = groupIdOf(this.#o.engine.prefix, p.id);
    // Runners of other instances leave the group at their next tick: try for a while.
    void (async () => {
      for (let i = 0; i < 30; i++) {
        try {
          await kafka.groups.delete([group]);
          return;
        } catch (err) {
          if (err instanceof AppError && err.code === "NOT_FOUND") return;
          await Bun.sleep(1_000);
        }
      }
      this.#o.log.warn("processor group not deleted", { processor: p.id, group });
    })();
    // The repartition topic holds nothing anyone else reads; the changelog only when asked.
    await kafka.topics.delete(repartitionOf(this.#o.engine.prefix, p.id)).catch(() => {});
    if (opts.deleteChangelog) await kafka.topics.delete(changelogOf(this.#o.engine.prefix, p.id)).catch(() => {});
    this.#o.log.info("processor deleted", { processor: p.id, name: p.name, by: caller.user });
    return p;
  }

  async #restartFailed(p: ProcessorRow): Promise<void> {
    await this.#o.engine.stopProcessor(p.id);
  }

  #visible(p: ProcessorRow, caller: Caller): boolean {
    if (caller.admin) return true;
    return caller.scope.topicAllowed(p.cluster, p.sourceTopic) && caller.scope.topicAllowed(p.cluster, p.targetTopic);
  }

  async #find(id: string, caller: Caller): Promise<ProcessorRow> {
    const p = await this.#o.repo.get(id);
    if (!p || !this.#visible(p, caller)) throw notFound(`Processor '${id}' does not exist`);
    return p;
  }

  async #changeable(id: string, caller: Caller): Promise<ProcessorRow> {
    const p = await this.#find(id, caller);
    if (!caller.admin && p.owner !== caller.user)
      throw forbidden(`Only its owner (${p.owner}) or an admin may change processor '${p.name}'`);
    return p;
  }

  async #lags(cluster: string, rows: ProcessorRow[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (rows.length === 0) return out;
    const byGroup = new Map(rows.map((p) => [groupIdOf(this.#o.engine.prefix, p.id), p.id]));
    try {
      for (const l of await this.#o.lag.groupLag(cluster, [...byGroup.keys()])) {
        const id = byGroup.get(l.group);
        if (id !== undefined) out.set(id, (out.get(id) ?? 0) + l.lag);
      }
    } catch (err) {
      this.#o.log.debug("processor lag unavailable", { cluster, error: err instanceof Error ? err.message : String(err) });
    }
    return out;
  }

  #answer(p: ProcessorRow, slots: RunnerRow[], lag: number | null): ProcessorAnswer {
    const now = this.#now();
    const program = this.#program(p.sql);
    const runnerState: ProcessorAnswer["runnerState"] = {};
    const figures = { recordsIn: 0, recordsOut: 0, inPerSec: 0, outPerSec: 0, failed: 0, late: 0, lag };
    for (const s of slots) {
      const id = `${p.id}-${s.runner}`;
      // A lease under this instance's name without a runner here was left by its previous life
      // (a crash): not live until the engine has started the runner again.
      const mine = s.instance === this.#o.engine.instance;
      const live = s.instance !== null && s.leaseUntil >= now && (!mine || this.#o.engine.localRunner(p.id, s.runner) !== undefined);
      const state = p.desired === "PAUSED" ? "STOPPED" : live || s.state === "FAILED" ? s.state : "PENDING";
      runnerState[id] = { id, worker: live ? (s.instance ?? "") : "", state, errorMsg: s.error ?? "" };
      figures.recordsIn += s.figures.recordsIn;
      figures.recordsOut += s.figures.recordsOut;
      figures.failed += s.figures.failed;
      figures.late += s.figures.late;
      if (live) {
        figures.inPerSec += s.figures.inPerSec;
        figures.outPerSec += s.figures.outPerSec;
      }
    }
    const states = Object.values(runnerState).map((r) => r.state);
    const failed = Object.values(runnerState).find((r) => r.state === "FAILED");
    const deploymentState: DeploymentState =
      p.desired === "PAUSED"
        ? "PAUSED"
        : failed
          ? "FAILED"
          : states.length > 0 && states.every((s) => s === "RUNNING")
            ? "RUNNING"
            : "PENDING";
    const pendingError = Object.values(runnerState).find((r) => r.errorMsg !== "");
    const answer: ProcessorAnswer = {
      id: p.id,
      name: p.name,
      clusterName: p.clusterName ?? p.cluster,
      user: p.owner,
      namespace: p.namespace ?? "",
      uptime: p.desired === "RUNNING" && p.startTs !== null ? Math.max(0, now - p.startTs) : 0,
      sql: p.sql,
      runners: p.runners,
      deploymentState,
      topicValueDecoder: program?.settings.valueFormat ?? "JSON",
      topicKeyDecoder: program?.settings.keyFormat ?? "STRING",
      pipeline: p.pipeline ?? p.name,
      startTs: p.startTs ?? p.createdAt,
      toTopic: p.targetTopic,
      toTopics: [p.targetTopic],
      fromTopics: [p.sourceTopic],
      runnerState,
      cluster: p.cluster,
      consumerGroup: groupIdOf(this.#o.engine.prefix, p.id),
      operations: program?.operations ?? [],
      figures,
    };
    if (p.stopTs !== null) answer.stopTs = p.stopTs;
    if (p.lastAction !== null) answer.lastActionMsg = p.lastAction;
    if (failed || pendingError) answer.deploymentErrorMsg = (failed ?? pendingError)!.errorMsg;
    return answer;
  }
}

const blank = (s: string | undefined): string | null => (s === undefined || s.trim() === "" ? null : s);

/** An invalid program: 400 with the position, as the validation route gives it. */
export function invalidSql(err: SqlError): AppError {
  return new AppError("BAD_REQUEST", err.message, { details: { line: err.line, column: err.column } });
}
