/**
 * Redrive jobs through the API: create (the range fixed at the end offsets of now), dry run,
 * start, pause, resume and cancel. What a job should be doing is in the store, and the engine of
 * an instance makes it so (engine.ts). A job runs in its owner's name, with the owner's rights as
 * they are when it runs: the source must be readable, a fixed target writable, and a record
 * whose header names a topic the owner may not write is refused (counted, never written), on
 * every path (the dry run, the run).
 */
import { randomBytes } from "node:crypto";
import { AppError, badRequest, conflict, forbidden, notFound } from "../../errors.ts";
import type { KafkaPool } from "../../kafka/index.ts";
import type { Logger } from "../../log/logger.ts";
import type { Scope } from "../access/scope.ts";
import type { AuditRecord } from "../audit/types.ts";
import type { SqlService } from "../sql/service.ts";
import type { RedriveEngine } from "./engine.ts";
import type { PartitionRange, RedriveRepo, RedriveRow } from "./repo.ts";
import { compileFilter, RecordRouter, tally } from "./router.ts";
import { OwnerRefusedError, type RedriveRunner, type RunEnd } from "./runner.ts";
import {
  NO_COUNTS,
  type RedriveCounts,
  type RedriveCreate,
  type RedriveDryRun,
  type RedriveJob,
  type RedriveSample,
  type RedriveState,
} from "./schemas.ts";

export interface RedriveCaller {
  user: string;
  /** The identity's Loupe groups (masking policies name them). */
  groups: readonly string[];
  scope: Scope;
  admin: boolean;
  /** Where the identity comes from (local, ldap, service): its rights are resolved from there again later. */
  kind?: string;
}

export interface RedriveServiceOptions {
  repo: RedriveRepo;
  pool: KafkaPool;
  sql: SqlService;
  log: Logger;
  /** Prefix of the jobs' consumer groups and transactional ids. */
  prefix: string;
  /** The owner's current rights, resolved as a login would resolve them, or why it has none. */
  ownerScope(owner: string, kind: string | null): Promise<Scope | string>;
  /** Writes an audit entry of what Loupe did by itself (a completion, a pause for lost access). */
  audit(entry: AuditRecord): Promise<unknown>;
  /** The engine of this instance (null when it runs no redrive). */
  engine?: () => RedriveEngine | null;
  /** Longest a dry run reads (ms). */
  dryRunMs?: number;
  now?: () => number;
}

const DEFAULT_RATE = 1_000;
const SAMPLE_SIZE = 10;
const SAMPLE_TEXT = 2_000;
/** Who Loupe's own actions are audited as. */
const LOUPE_ACTOR = "loupe";

export type RedriveAction = "START" | "RESUME" | "PAUSE" | "CANCEL";

const clip = (s: string | null): string | null => (s === null || s.length <= SAMPLE_TEXT ? s : `${s.slice(0, SAMPLE_TEXT)}…`);
const text = (b: Uint8Array | null): string | null => (b === null ? null : clip(Buffer.from(b).toString("utf8")));

export class RedriveService {
  readonly #o: RedriveServiceOptions;
  readonly #now: () => number;

  constructor(opts: RedriveServiceOptions) {
    this.#o = opts;
    this.#now = opts.now ?? Date.now;
  }

  groupOf(id: string): string {
    return `${this.#o.prefix}-${id}`;
  }

  async create(body: RedriveCreate, cluster: string, caller: RedriveCaller): Promise<RedriveJob> {
    const { scope } = caller;
    const readRefusal = scope.refusal(cluster, body.topic, "read");
    if (readRefusal !== undefined) throw forbidden(readRefusal);
    if (body.target !== undefined) {
      const writeRefusal = scope.refusal(cluster, body.target, "write");
      if (writeRefusal !== undefined) throw forbidden(writeRefusal);
    }
    await this.#refuseMasked(caller, cluster, body.topic);
    const kafka = this.#o.pool.get(cluster);
    const topics = body.target !== undefined ? [body.topic, body.target] : [body.topic];
    const found = await kafka.topics.describe(topics).catch((err: unknown) => {
      if (err instanceof AppError && err.code === "NOT_FOUND") throw badRequest(err.message);
      throw err;
    });
    const all = found[0]!.partitionDetails.map((p) => p.partition);
    const partitions = [...new Set(body.partitions ?? all)].sort((a, b) => a - b);
    const unknown = partitions.filter((p) => !all.includes(p));
    if (unknown.length > 0) throw badRequest(`Topic '${body.topic}' has no partition ${unknown.join(", ")} (it has ${all.length})`);
    const ranges = await this.#ranges(cluster, body, partitions);
    const now = this.#now();
    const id = `rdr_${randomBytes(8).toString("hex")}`;
    const name = body.name ?? id;
    if ((await this.#o.repo.countByName(cluster, name)) > 0) throw conflict(`A redrive named '${name}' already exists`);
    const job: RedriveRow = {
      id,
      name,
      cluster,
      owner: caller.user,
      ownerKind: caller.kind ?? null,
      topic: body.topic,
      ranges,
      target: body.target ?? null,
      targetHeader: body.targetHeader ?? null,
      where: body.where?.trim() || null,
      rate: body.ratePerSecond ?? DEFAULT_RATE,
      state: "PAUSED",
      reason: null,
      counts: structuredClone(NO_COUNTS),
      progress: Object.fromEntries(ranges.map((r) => [String(r.partition), r.from])),
      createdAt: now,
      startedAt: null,
      finishedAt: null,
    };
    // The filter is checked now: a job is never created with one that cannot run.
    await compileFilter(job, this.#o.sql);
    await this.#o.repo.create(job, now);
    this.#o.log.info("redrive created", { redrive: id, name, owner: caller.user, topic: job.topic });
    return this.answer(job);
  }

  /**
   * A redrive copies what it reads in the clear, and its dry run shows records: a caller whom
   * masking policies hide fields of the source from would read them back, so such a source is
   * refused (as a processor's is).
   */
  async #refuseMasked(caller: RedriveCaller, cluster: string, topic: string): Promise<void> {
    const viewer = { name: caller.user, groups: caller.groups, roles: caller.scope.clusterRoles(cluster) };
    if ((await this.#o.sql.maskFor(viewer, cluster, topic)) === null) return;
    throw badRequest(`Masking policies hide fields of topic '${topic}' from you: a redrive would copy and show them in the clear`);
  }

  /** Each partition's offsets from and to, fixed now: the end is at most the end offset of now. */
  async #ranges(cluster: string, body: RedriveCreate, partitions: number[]): Promise<PartitionRange[]> {
    const reads = this.#o.pool.get(cluster).reads;
    const [earliest, latest] = await reads.offsetsAt(body.topic, partitions, ["earliest", "latest"] as const);
    const at = async (time: number | undefined) => (time === undefined ? null : await reads.offsetsOf(body.topic, partitions, time));
    const [fromTimes, toTimes] = await Promise.all([at(body.fromTime), at(body.toTime)]);
    return partitions.map((partition) => {
      const start = earliest.get(partition) ?? 0;
      const end = latest.get(partition) ?? 0;
      // A time no record reaches is the end (-1).
      const byTime = (m: Map<number, number> | null) => {
        const o = m?.get(partition);
        return o === undefined ? undefined : o < 0 ? end : o;
      };
      const from = Math.min(end, Math.max(start, byTime(fromTimes) ?? body.fromOffset ?? start));
      const to = Math.max(from, Math.min(end, byTime(toTimes) ?? body.toOffset ?? end));
      return { partition, from, to };
    });
  }

  async list(cluster: string, caller: RedriveCaller): Promise<RedriveJob[]> {
    const rows = await this.#o.repo.list(cluster);
    return rows.filter((r) => this.#visible(r, caller)).map((r) => this.answer(r));
  }

  async get(id: string, caller: RedriveCaller): Promise<RedriveJob> {
    return this.answer(await this.#visibleJob(id, caller));
  }

  /** A job is seen by its owner, an admin, and whoever sees its source topic (as topics are listed). */
  #visible(r: RedriveRow, caller: RedriveCaller): boolean {
    return caller.admin || r.owner === caller.user || caller.scope.refusal(r.cluster, r.topic, undefined, "metadata") === undefined;
  }

  async #visibleJob(id: string, caller: RedriveCaller): Promise<RedriveRow> {
    const job = await this.#o.repo.get(id);
    if (!job || !this.#visible(job, caller)) throw notFound(`No redrive '${id}'`);
    return job;
  }

  /** Only its owner or an admin changes a job. */
  async #ownJob(id: string, caller: RedriveCaller): Promise<RedriveRow> {
    const job = await this.#visibleJob(id, caller);
    if (!caller.admin && job.owner !== caller.user)
      throw forbidden(`Only its owner (${job.owner}) or an admin may change redrive '${job.name}'`);
    return job;
  }

  answer(r: RedriveRow): RedriveJob {
    const progress = r.ranges.map((range) => {
      const next = Math.min(range.to, Math.max(range.from, r.progress[String(range.partition)] ?? range.from));
      return { partition: range.partition, from: range.from, to: range.to, done: next - range.from, total: range.to - range.from };
    });
    return {
      id: r.id,
      name: r.name,
      cluster: r.cluster,
      owner: r.owner,
      state: r.state,
      reason: r.reason,
      topic: r.topic,
      target: r.target,
      targetHeader: r.targetHeader,
      where: r.where,
      ratePerSecond: r.rate,
      consumerGroup: this.groupOf(r.id),
      progress,
      done: progress.reduce((n, p) => n + p.done, 0),
      total: progress.reduce((n, p) => n + p.total, 0),
      counts: r.counts,
      createdAt: r.createdAt,
      startedAt: r.startedAt,
      finishedAt: r.finishedAt,
    };
  }

  /**
   * Why the owner's current rights no longer let the job run (read of the source, write of a
   * fixed target), or their scope when they do.
   */
  async ownerRights(job: RedriveRow): Promise<Scope | string> {
    const scope = await this.#o.ownerScope(job.owner, job.ownerKind);
    if (typeof scope === "string") return `its owner '${job.owner}' ${scope}`;
    if (scope.unrestricted.has("admin")) return scope;
    if (scope.refusal(job.cluster, job.topic, "read") !== undefined)
      return `its owner '${job.owner}' no longer holds read on '${job.topic}'`;
    if (job.target !== null && scope.refusal(job.cluster, job.target, "write") !== undefined)
      return `its owner '${job.owner}' no longer holds write on '${job.target}'`;
    return scope;
  }

  /** The job's router, with its owner's rights as they are now; OwnerRefusedError when they no longer let it run. */
  async routerFor(job: RedriveRow): Promise<RecordRouter> {
    const scope = await this.ownerRights(job);
    if (typeof scope === "string") throw new OwnerRefusedError(`Paused by Loupe: ${scope}`);
    return new RecordRouter(job, this.#o.pool.get(job.cluster), await compileFilter(job, this.#o.sql), scope);
  }

  /**
   * What the job would do from where it is now (its committed offsets, or its start) to its end:
   * counts per target and a sample, nothing written; with its owner's current rights.
   */
  async dryRun(id: string, caller: RedriveCaller, signal?: AbortSignal): Promise<RedriveDryRun> {
    const job = await this.#ownJob(id, caller);
    await this.#refuseMasked(caller, job.cluster, job.topic);
    const router = await this.routerFor(job).catch((err: unknown) => {
      if (err instanceof OwnerRefusedError) throw forbidden(err.message.replace(/^Paused by Loupe: /, "Refused: "));
      throw err;
    });
    const kafka = this.#o.pool.get(job.cluster);
    const committed = await kafka.groups.committedOffsets([this.groupOf(id)]);
    const at = new Map((committed.get(this.groupOf(id)) ?? []).filter((c) => c.topic === job.topic).map((c) => [c.partition, c.offset]));
    const open = job.ranges.map((r) => ({ ...r, from: Math.max(r.from, at.get(r.partition) ?? r.from) })).filter((r) => r.from < r.to);
    const counts: RedriveCounts = structuredClone(NO_COUNTS);
    const sample: RedriveSample[] = [];
    const reading = new AbortController();
    const onAbort = () => reading.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    const deadline = this.#now() + (this.#o.dryRunMs ?? 60_000);
    let complete = true;
    try {
      if (open.length > 0) {
        const ends = new Map(open.map((r) => [r.partition, r.to]));
        for await (const records of kafka.reads.batches({
          topic: job.topic,
          partitions: open.map((r) => ({ partition: r.partition, from: r.from, to: r.to })),
          signal: reading.signal,
          reuseBuffers: true,
        })) {
          for (const raw of records) {
            if (raw.offset >= (ends.get(raw.partition) ?? 0)) continue;
            const outcome = await router.route(raw);
            tally(counts, outcome);
            if (outcome.kind !== "FILTERED" && sample.length < SAMPLE_SIZE) {
              sample.push({
                partition: raw.partition,
                offset: raw.offset,
                target: outcome.target,
                outcome: outcome.kind,
                key: text(raw.key),
                value: text(raw.value),
              });
            }
          }
          if (this.#now() > deadline) {
            complete = false;
            break;
          }
        }
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
      reading.abort();
    }
    return { id, counts, sample, complete };
  }

  /**
   * Starts (or resumes) a job: its owner's current rights must let it run (403 otherwise, even
   * for an admin). A running job stays as it is.
   */
  async start(id: string, caller: RedriveCaller): Promise<RedriveRow> {
    const job = await this.#ownJob(id, caller);
    if (job.state === "RUNNING") return job;
    if (job.state === "DONE" || job.state === "CANCELLED") throw conflict(`Redrive '${job.name}' is ${job.state}`);
    const rights = await this.ownerRights(job);
    if (typeof rights === "string") throw forbidden(`Redrive '${job.name}' cannot run: ${rights}`);
    const now = this.#now();
    const moved = await this.#o.repo.transition(id, ["PAUSED", "FAILED"], "RUNNING", now, {
      reason: null,
      ...(job.startedAt === null ? { startedAt: now } : {}),
    });
    if (!moved) return this.#current(id);
    void this.#o.engine?.()?.kick();
    return this.#current(id);
  }

  /** Pauses a running job: its runner commits what it holds and stops. A paused job stays as it is. */
  async pause(id: string, caller: RedriveCaller): Promise<RedriveRow> {
    const job = await this.#ownJob(id, caller);
    if (job.state === "PAUSED") return job;
    if (job.state !== "RUNNING") throw conflict(`Redrive '${job.name}' is ${job.state}`);
    await this.#o.repo.transition(id, ["RUNNING"], "PAUSED", this.#now(), { reason: null });
    await this.#o.engine?.()?.kick();
    return this.#current(id);
  }

  /** Cancels a job for good: what it wrote stays written. A cancelled job stays as it is. */
  async cancel(id: string, caller: RedriveCaller): Promise<RedriveRow> {
    const job = await this.#ownJob(id, caller);
    if (job.state === "CANCELLED") return job;
    if (job.state === "DONE") throw conflict(`Redrive '${job.name}' is DONE`);
    await this.#o.repo.transition(id, ["PAUSED", "RUNNING", "FAILED"], "CANCELLED", this.#now(), { finishedAt: this.#now() });
    await this.#o.engine?.()?.kick();
    return this.#current(id);
  }

  async #current(id: string): Promise<RedriveRow> {
    const job = await this.#o.repo.get(id);
    if (!job) throw notFound(`No redrive '${id}'`);
    return job;
  }

  /** A run ended here: DONE with its counts, PAUSED (its owner's rights) or FAILED, stored and audited. */
  async ended(job: RedriveRow, end: Exclude<RunEnd, { end: "STOPPED" }>): Promise<void> {
    const now = this.#now();
    const next: RedriveState = end.end;
    const extra = end.end === "DONE" ? { finishedAt: now, counts: end.counts, reason: null } : { reason: end.reason };
    if (!(await this.#o.repo.transition(job.id, ["RUNNING"], next, now, extra))) return;
    const action = end.end === "DONE" ? "COMPLETE" : end.end === "PAUSED" ? "PAUSE" : "FAIL";
    this.#o.log.info(`redrive ${end.end.toLowerCase()}`, { redrive: job.id, name: job.name });
    await this.#o.audit({
      type: "REDRIVE",
      change: "UPDATE",
      user: LOUPE_ACTOR,
      content: {
        id: job.id,
        name: job.name,
        action,
        owner: job.owner,
        topic: job.topic,
        ...(job.target !== null ? { target: job.target } : { targetHeader: job.targetHeader }),
        ...(end.end === "DONE" ? countsContent(end.counts) : { reason: end.reason }),
      },
    });
  }

  /** The owner of a job running here checked again: paused (stored, audited) when they may no longer run it. */
  async recheck(job: RedriveRow, runner: RedriveRunner): Promise<void> {
    const rights = await this.ownerRights(job);
    if (typeof rights !== "string") {
      if (runner.router) runner.router.scope = rights;
      return;
    }
    await this.ended(job, { end: "PAUSED", reason: `Paused by Loupe: ${rights}` });
    // Called from the engine's tick: the next one stops the runner (not awaited here).
    void this.#o.engine?.()?.kick();
  }
}

/** The counts of a completion, as audit content (flat strings). */
export function countsContent(c: RedriveCounts): Record<string, string> {
  return {
    read: String(c.read),
    written: String(c.written),
    filtered: String(c.filtered),
    refused: String(c.refused),
    unroutable: String(c.unroutable),
    byTarget: JSON.stringify(c.byTarget),
    ...(c.refused > 0 ? { refusedByTarget: JSON.stringify(c.refusedByTarget) } : {}),
  };
}
