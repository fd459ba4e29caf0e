/**
 * Stream processors through the API: create (validated like a query, with positions), list and
 * show with their runners' states and figures, pause, resume, scale and delete. What a processor
 * should be doing is written to the store, and the engine of each Loupe instance makes it so.
 */
import { randomBytes } from "node:crypto";
import type { Role } from "../../config/schema.ts";
import { AppError, badRequest, conflict, forbidden, notFound } from "../../errors.ts";
import type { KafkaPool } from "../../kafka/index.ts";
import type { LagEngine } from "../../lag/engine.ts";
import type { Logger } from "../../log/logger.ts";
import { SqlError } from "../../sql/index.ts";
import type { Scope } from "../access/scope.ts";
import type { AuditRecord } from "../audit/types.ts";
import { compactionOf } from "../sql/compaction.ts";
import type { SqlService } from "../sql/service.ts";
import { topicCheck } from "../sql/topic-check.ts";
import { changelogOf, groupIdOf, type ProcessorEngine, repartitionOf } from "./engine.ts";
import { type OutputSchemaOf, outputEncoder } from "./output.ts";
import type { ProcessorPrograms } from "./programs.ts";
import type { ProcessorRepo } from "./repo.ts";
import type { ProcessorAnswer, ProcessorCreateBody } from "./schemas.ts";
import type { DeploymentState, ProcessorMetrics, ProcessorRow, RunnerRow, StreamProgram } from "./types.ts";

export interface ProcessorServiceOptions {
  repo: ProcessorRepo;
  engine: ProcessorEngine;
  /** Each processor's program, compiled once (shared with the runners' setup). */
  programs: ProcessorPrograms;
  pool: KafkaPool;
  lag: LagEngine;
  log: Logger;
  /** The schema Avro output is written in (see output.ts). */
  schemaOf: OutputSchemaOf;
  maxRunners: number;
  /** Most processors one user owns, on all clusters together. */
  maxPerUser: number;
  /**
   * The owner's current rights, resolved as a login would resolve them: its scope, or why it has
   * none ("no longer exists"). Throws when they cannot be known now (the directory is down).
   */
  ownerScope?(owner: string, kind: string | null): Promise<Scope | string>;
  /** Writes an audit entry of what Loupe did by itself (a pause for lost access). */
  audit?(entry: AuditRecord): Promise<unknown>;
  /** The cluster's topics, for validation (null: not checked). */
  catalog(cluster: string): Promise<{ topicExists(name: string): boolean } | null>;
  /** What masking policies hide of a topic's records from a viewer (SqlService.maskFor). */
  masks: Pick<SqlService, "maskFor">;
  now?: () => number;
}

/** What a create names; the clients' other keys are ignored. */
export type CreateInput = Pick<ProcessorCreateBody, "name" | "sql" | "runners" | "clusterName" | "namespace" | "pipeline">;

export interface Caller {
  user: string;
  /** The identity's Loupe groups (masking policies name them). */
  groups: readonly string[];
  scope: Scope;
  admin: boolean;
  /** Where the identity comes from (local, ldap, service): its rights are resolved from there again later. */
  kind?: string;
}

/** Who Loupe's own actions are audited as. */
export const LOUPE_ACTOR = "loupe";

const NAME = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,99}$/;

export class ProcessorService {
  readonly #o: ProcessorServiceOptions;
  readonly #now: () => number;
  /** Creations one at a time: the per-user cap and the cycle check see every earlier creation. */
  #creating: Promise<unknown> = Promise.resolve();
  /** The owner check running (one at a time), and whether another was asked for meanwhile. */
  #checking: Promise<void> | null = null;
  #checkAgain: string | null = null;

  constructor(opts: ProcessorServiceOptions) {
    this.#o = opts;
    this.#now = opts.now ?? Date.now;
  }

  /** Each processor's program, compiled once. */
  get programs(): ProcessorPrograms {
    return this.#o.programs;
  }

  /**
   * Compiles against the cluster's topics, the caller's scope and the cluster's other processors
   * (a target they copy back into the source closes a cycle); SqlError for an invalid program.
   */
  async compile(sql: string, cluster: string, scope: Scope): Promise<StreamProgram> {
    const catalog = await this.#o.catalog(cluster);
    const allowed = topicCheck(scope, cluster, "run");
    const targetLoop = loopOf(await this.#o.repo.list(cluster));
    const topicCompacted = await compactionOf(this.#o.pool.get(cluster), sql, catalog);
    return this.#o.programs.compile(sql, catalog, { targetLoop, topicCompacted, ...(allowed ? { topicAllowed: allowed } : {}) });
  }

  async create(input: CreateInput, cluster: string, caller: Caller): Promise<ProcessorAnswer> {
    // One at a time: two creations checked together could each pass the cap or close a cycle.
    const run = this.#creating.then(() => this.#create(input, cluster, caller));
    this.#creating = run.catch(() => {});
    return run;
  }

  /**
   * A processor writes what it reads in the clear: a caller whom masking policies hide fields of
   * the source from would read them back from the target, so such a source is refused.
   */
  async #refuseMasked(caller: Caller, cluster: string, source: string): Promise<void> {
    if (!(await this.#masked(caller.user, caller.groups, caller.scope, cluster, source))) return;
    throw badRequest(
      `Masking policies hide fields of topic '${source}' from you: a processor would write them in the clear, so it cannot read that topic`,
    );
  }

  async #masked(user: string, groups: readonly string[], scope: Scope, cluster: string, source: string): Promise<boolean> {
    const viewer = { name: user, groups, roles: scope.clusterRoles(cluster) };
    return (await this.#o.masks.maskFor(viewer, cluster, source)) !== null;
  }

  async #create(input: CreateInput, cluster: string, caller: Caller): Promise<ProcessorAnswer> {
    const name = input.name.trim();
    if (!NAME.test(name)) {
      throw badRequest("A processor name is 1 to 100 letters, digits, spaces, '.', '_' or '-', starting with a letter or digit");
    }
    const runners = input.runners ?? 1;
    if (!Number.isInteger(runners) || runners < 1 || runners > this.#o.maxRunners) {
      throw badRequest(`runners must be an integer from 1 to ${this.#o.maxRunners}`);
    }
    const owned = await this.#o.repo.countByOwner(caller.user);
    if (owned >= this.#o.maxPerUser) {
      throw new AppError(
        "TOO_MANY_REQUESTS",
        `At most ${this.#o.maxPerUser} processors per user (processors.maxPerUser): ${caller.user} has ${owned}; delete one first`,
      );
    }
    let program: StreamProgram;
    try {
      program = await this.compile(input.sql, cluster, caller.scope);
    } catch (err) {
      if (err instanceof SqlError) throw invalidSql(err);
      throw err;
    }
    await this.#refuseMasked(caller, cluster, program.source);
    // Avro or Protobuf output needs the target's registered schema, fit for the program's columns.
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
      ownerKind: caller.kind ?? null,
      pausedReason: null,
    };
    await this.#o.repo.create(row, now);
    // The program checked here is the one its runners and answers use.
    this.#o.programs.keep(id, row.sql, program);
    this.#o.log.info("processor created", { processor: id, name, owner: caller.user, source: program.source, target: program.target });
    void this.#o.engine.kick();
    return this.#answer(row, await this.#o.repo.runners(id), null, await this.#o.repo.leaseNow());
  }

  /** The processors of `cluster` whose topics the caller may read. */
  async list(cluster: string, caller: Caller): Promise<ProcessorAnswer[]> {
    const rows = (await this.#o.repo.list(cluster)).filter((p) => this.#visible(p, caller));
    const slots = await this.#o.repo.runners();
    const lags = await this.#lags(cluster, rows);
    const leaseNow = await this.#o.repo.leaseNow();
    return rows.map((p) =>
      this.#answer(
        p,
        slots.filter((s) => s.processorId === p.id),
        lags.get(p.id) ?? null,
        leaseNow,
      ),
    );
  }

  /** Every processor of `cluster` with its figures, for /metrics (no scope: operators see all). */
  async metrics(cluster: string): Promise<ProcessorMetrics[]> {
    const rows = await this.#o.repo.list(cluster);
    const slots = await this.#o.repo.runners();
    const lags = await this.#lags(cluster, rows);
    const leaseNow = await this.#o.repo.leaseNow();
    return rows.map((p) => {
      const a = this.#answer(
        p,
        slots.filter((s) => s.processorId === p.id),
        lags.get(p.id) ?? null,
        leaseNow,
      );
      return { id: a.id, name: a.name, consumerGroup: a.consumerGroup, state: a.deploymentState, ...a.figures };
    });
  }

  /** The FAILED processors of `cluster` (as their answers show them), for the alert evaluation: no lag read. */
  async failed(cluster: string): Promise<{ id: string; name: string; owner: string; error: string }[]> {
    const rows = await this.#o.repo.list(cluster);
    if (rows.length === 0) return [];
    const slots = await this.#o.repo.runners();
    const leaseNow = await this.#o.repo.leaseNow();
    return rows
      .map((p) =>
        this.#answer(
          p,
          slots.filter((s) => s.processorId === p.id),
          null,
          leaseNow,
        ),
      )
      .filter((a) => a.deploymentState === "FAILED")
      .map((a) => ({ id: a.id, name: a.name, owner: a.user, error: a.deploymentErrorMsg ?? "" }));
  }

  async get(id: string, caller: Caller): Promise<ProcessorAnswer> {
    const p = await this.#find(id, caller);
    const lags = await this.#lags(p.cluster, [p]);
    return this.#answer(p, await this.#o.repo.runners(p.id), lags.get(p.id) ?? null, await this.#o.repo.leaseNow());
  }

  async pause(id: string, caller: Caller): Promise<ProcessorRow> {
    const p = await this.#changeable(id, caller);
    if (p.desired !== "PAUSED") await this.#o.repo.setDesired(p.id, "PAUSED", `Paused by ${caller.user}`, this.#now());
    await this.#o.engine.kick();
    return p;
  }

  async resume(id: string, caller: Caller): Promise<ProcessorRow> {
    const p = await this.#changeable(id, caller);
    // Processors stored in a cycle before creation refused them stay paused until one is deleted.
    const loop = await this.cycleOf(p);
    if (loop !== null) throw conflict(`Processor '${p.name}' cannot run: ${loop}; delete one of the processors of the cycle`);
    // It runs with its owner's rights, whoever resumes it: they must still hold.
    const refused = await this.ownerRefusal(p);
    if (refused !== null) throw forbidden(`Processor '${p.name}' cannot run: ${refused}`);
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
    this.#o.programs.forget(p.id);
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

  /**
   * Why the processor may not run now, asked before any of its runners starts: a cycle with the
   * cluster's other processors, or its owner's rights.
   */
  async admission(p: ProcessorRow): Promise<string | null> {
    return (await this.cycleOf(p)) ?? (await this.ownerRefusal(p));
  }

  /**
   * The cycle the processor is part of, in words, or null. Creation refuses cycles; processors
   * stored in one before that (A->B and B->A copying one record round forever) are caught here.
   */
  async cycleOf(p: ProcessorRow): Promise<string | null> {
    const others = (await this.#o.repo.list(p.cluster)).filter((o) => o.id !== p.id);
    const chain = loopOf(others)(p.targetTopic, p.sourceTopic);
    return chain === null ? null : `its target '${p.targetTopic}' leads back to its source '${p.sourceTopic}' (${chain})`;
  }

  /**
   * Why the owner's current rights no longer let the processor run (read of the source, write
   * of the target, as at its creation), or null when they do. Throws when the owner's rights
   * cannot be known now.
   */
  async ownerRefusal(p: ProcessorRow, seen?: Map<string, Promise<Scope | string>>): Promise<string | null> {
    const resolve = this.#o.ownerScope;
    if (!resolve) return null;
    const key = `${p.ownerKind ?? ""}\u0000${p.owner}`;
    let resolving = seen?.get(key);
    if (!resolving) {
      resolving = resolve(p.owner, p.ownerKind);
      seen?.set(key, resolving);
    }
    const scope = await resolving;
    if (typeof scope === "string") return `its owner '${p.owner}' ${scope}`;
    // As at creation, admins included: a policy made since masks fields of the source from the
    // owner, and the processor would go on writing them in the clear.
    if (await this.#masked(p.owner, scope.groupNames, scope, p.cluster, p.sourceTopic))
      return `masking policies hide fields of '${p.sourceTopic}' from its owner '${p.owner}': it would write them in the clear`;
    if (scope.unrestricted.has("admin")) return null;
    const needs: Array<[string, Role]> = [
      [p.sourceTopic, "read"],
      [p.targetTopic, "write"],
    ];
    for (const [topic, role] of needs) {
      if (scope.refusal(p.cluster, topic, role) !== undefined) return `its owner '${p.owner}' no longer holds ${role} on '${topic}'`;
    }
    return null;
  }

  /**
   * Loupe pauses a running processor by itself: the reason stays in its answer until it is
   * resumed, and an audit entry says it. False when it was not running.
   */
  async pauseFor(p: ProcessorRow, reason: string): Promise<boolean> {
    const text = `Paused by Loupe: ${reason}`;
    if (!(await this.#o.repo.pauseFor(p.id, text, this.#now()))) return false;
    this.#o.log.warn("processor paused", { processor: p.id, name: p.name, owner: p.owner, reason });
    await this.#o.audit?.({
      type: "PROCESSOR",
      change: "UPDATE",
      user: LOUPE_ACTOR,
      content: { id: p.id, name: p.name, action: "PAUSE", owner: p.owner, reason },
    });
    void this.#o.engine.kick();
    return true;
  }

  /**
   * Checks every running processor's owner anew (access changed: a group, a user, a directory's
   * groups) and pauses those whose owner no longer may run them. Checks asked for while one runs
   * are folded into one more.
   */
  checkOwners(why: string): Promise<void> {
    if (this.#checking) {
      this.#checkAgain = why;
      return this.#checking;
    }
    this.#checking = (async () => {
      try {
        let reason: string | null = why;
        while (reason !== null) {
          this.#checkAgain = null;
          await this.#checkOwnersOnce(reason).catch((err: unknown) =>
            this.#o.log.warn("processor owners not checked", { after: reason }, err),
          );
          reason = this.#checkAgain;
        }
      } finally {
        this.#checking = null;
      }
    })();
    return this.#checking;
  }

  async #checkOwnersOnce(why: string): Promise<void> {
    // Each owner resolved once per check (a directory lookup each).
    const seen = new Map<string, Promise<Scope | string>>();
    for (const p of await this.#o.repo.list()) {
      if (p.desired !== "RUNNING") continue;
      try {
        const refused = await this.ownerRefusal(p, seen);
        if (refused !== null) await this.pauseFor(p, refused);
      } catch (err) {
        // Unknown now (the directory is down): the processor stays as it is until the next check.
        this.#o.log.warn("processor owner not checked", { processor: p.id, owner: p.owner, after: why }, err);
      }
    }
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

  /** `leaseNow`: now on the leases' clock (the store's), against which a slot's lease is live. */
  #answer(p: ProcessorRow, slots: RunnerRow[], lag: number | null, leaseNow: number): ProcessorAnswer {
    const now = this.#now();
    const program = this.#o.programs.peek(p);
    const runnerState: ProcessorAnswer["runnerState"] = {};
    const figures = { recordsIn: 0, recordsOut: 0, inPerSec: 0, outPerSec: 0, failed: 0, late: 0, lag };
    for (const s of slots) {
      const id = `${p.id}-${s.runner}`;
      // A lease under this instance's name without a runner here was left by its previous life
      // (a crash): not live until the engine has started the runner again.
      const mine = s.instance === this.#o.engine.instance;
      const live = s.instance !== null && s.leaseUntil >= leaseNow && (!mine || this.#o.engine.localRunner(p.id, s.runner) !== undefined);
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
    if (p.desired === "PAUSED" && p.pausedReason !== null) {
      for (const r of Object.values(runnerState)) r.errorMsg = p.pausedReason;
    }
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

/**
 * Whether a program writing `target` from `source` closes a cycle with the cluster's processors
 * (paused ones included: they may be resumed): the chain from the target back to the source.
 */
export function loopOf(processors: readonly ProcessorRow[]): (target: string, source: string) => string | null {
  return (target, source) => {
    const from = new Map<string, ProcessorRow[]>();
    for (const p of processors) from.set(p.sourceTopic, [...(from.get(p.sourceTopic) ?? []), p]);
    // Breadth first: the shortest chain is the one named.
    const via = new Map<string, ProcessorRow>();
    const queue = [target];
    const seen = new Set(queue);
    while (queue.length > 0) {
      const topic = queue.shift()!;
      for (const p of from.get(topic) ?? []) {
        if (seen.has(p.targetTopic)) continue;
        seen.add(p.targetTopic);
        via.set(p.targetTopic, p);
        if (p.targetTopic === source) {
          const steps: string[] = [];
          for (let t = source; t !== target; t = via.get(t)!.sourceTopic) steps.unshift(`'${t}' (processor '${via.get(t)!.name}')`);
          return [`'${target}'`, ...steps].join(" -> ");
        }
        queue.push(p.targetTopic);
      }
    }
    return null;
  };
}

const blank = (s: string | undefined): string | null => (s === undefined || s.trim() === "" ? null : s);

/** An invalid program: 400 with the position, as the validation route gives it. */
export function invalidSql(err: SqlError): AppError {
  return new AppError("BAD_REQUEST", err.message, { details: { line: err.line, column: err.column } });
}
