/**
 * Redrive jobs in the store. A job's row is also its lease (src/db/lease.ts): the instance that
 * runs it holds `instance` until `lease_until`, renews it at each tick and gives it up when the job
 * stops here; one that dies loses it when it expires, and another takes the job over (the job's
 * Kafka transactional id fences the dead holder).
 */
import type { Db } from "../../db/index.ts";
import { Leases, type LeaseTable } from "../../db/lease.ts";
import type { Database } from "../../db/types.ts";
import { NO_COUNTS, type RedriveCounts, type RedriveState } from "./schemas.ts";

/** The offsets one partition of a job copies: from `from` up to `to` (excluded), fixed at creation. */
export interface PartitionRange {
  partition: number;
  from: number;
  to: number;
}

export interface RedriveRow {
  id: string;
  name: string;
  cluster: string;
  owner: string;
  ownerKind: string | null;
  topic: string;
  ranges: PartitionRange[];
  target: string | null;
  targetHeader: string | null;
  where: string | null;
  rate: number;
  state: RedriveState;
  reason: string | null;
  counts: RedriveCounts;
  /** Next offset per partition, as the running instance last reported it. */
  progress: Record<string, number>;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
}

const JOB_LEASES: LeaseTable = { table: "redrive_jobs", key: ["id"], holder: "instance", until: "lease_until", createRows: false };

function parsed<T>(text: string | null, fallback: T): T {
  if (!text) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

const num = (v: number | null): number | null => (v === null ? null : Number(v));

function toRow(r: Database["redrive_jobs"]): RedriveRow {
  return {
    id: r.id,
    name: r.name,
    cluster: r.cluster,
    owner: r.owner,
    ownerKind: r.owner_kind,
    topic: r.source_topic,
    ranges: parsed<PartitionRange[]>(r.ranges, []),
    target: r.target_topic,
    targetHeader: r.target_header,
    where: r.filter,
    rate: Number(r.rate),
    state: r.state as RedriveState,
    reason: r.reason,
    counts: { ...NO_COUNTS, ...parsed<Partial<RedriveCounts>>(r.counts, {}) },
    progress: parsed<Record<string, number>>(r.progress, {}),
    createdAt: Number(r.created_at),
    startedAt: num(r.started_at),
    finishedAt: num(r.finished_at),
  };
}

export class RedriveRepo {
  readonly #leases: Leases;

  constructor(private readonly db: Db) {
    this.#leases = new Leases(db, { table: JOB_LEASES });
  }

  get leases(): Leases {
    return this.#leases;
  }

  async create(job: RedriveRow, now: number): Promise<void> {
    await this.db
      .insertInto("redrive_jobs")
      .values({
        id: job.id,
        name: job.name,
        cluster: job.cluster,
        owner: job.owner,
        owner_kind: job.ownerKind,
        source_topic: job.topic,
        ranges: JSON.stringify(job.ranges),
        target_topic: job.target,
        target_header: job.targetHeader,
        filter: job.where,
        rate: job.rate,
        state: job.state,
        reason: job.reason,
        counts: JSON.stringify(job.counts),
        progress: JSON.stringify(job.progress),
        instance: null,
        lease_until: 0,
        created_at: job.createdAt,
        started_at: job.startedAt,
        finished_at: job.finishedAt,
        updated_at: now,
      })
      .execute();
  }

  async get(id: string): Promise<RedriveRow | null> {
    const r = await this.db.selectFrom("redrive_jobs").selectAll().where("id", "=", id).executeTakeFirst();
    return r ? toRow(r) : null;
  }

  async list(cluster?: string): Promise<RedriveRow[]> {
    let q = this.db.selectFrom("redrive_jobs").selectAll();
    if (cluster !== undefined) q = q.where("cluster", "=", cluster);
    return (await q.orderBy("created_at").orderBy("id").execute()).map(toRow);
  }

  async running(): Promise<RedriveRow[]> {
    return (await this.db.selectFrom("redrive_jobs").selectAll().where("state", "=", "RUNNING").execute()).map(toRow);
  }

  async countByName(cluster: string, name: string): Promise<number> {
    const r = await this.db
      .selectFrom("redrive_jobs")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("cluster", "=", cluster)
      .where("name", "=", name)
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  /**
   * Moves the job to `next` when it is in one of `from`: true when it moved (two changes at once
   * cannot both win).
   */
  async transition(
    id: string,
    from: readonly RedriveState[],
    next: RedriveState,
    now: number,
    extra: { reason?: string | null; startedAt?: number; finishedAt?: number; counts?: RedriveCounts } = {},
  ): Promise<boolean> {
    const r = await this.db
      .updateTable("redrive_jobs")
      .set({
        state: next,
        updated_at: now,
        ...(extra.reason !== undefined ? { reason: extra.reason } : {}),
        ...(extra.startedAt !== undefined ? { started_at: extra.startedAt } : {}),
        ...(extra.finishedAt !== undefined ? { finished_at: extra.finishedAt } : {}),
        ...(extra.counts !== undefined ? { counts: JSON.stringify(extra.counts) } : {}),
      })
      .where("id", "=", id)
      .where("state", "in", [...from])
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** The figures of the running instance, after each transaction. */
  async report(id: string, counts: RedriveCounts, progress: Record<string, number>, now: number): Promise<void> {
    await this.db
      .updateTable("redrive_jobs")
      .set({ counts: JSON.stringify(counts), progress: JSON.stringify(progress), updated_at: now })
      .where("id", "=", id)
      .execute();
  }
}
