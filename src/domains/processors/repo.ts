/**
 * Processors and their runner slots in the store. A slot is leased by the Loupe instance that
 * runs it (the store's general lease, src/db/lease.ts, on the slot's row): the lease is taken
 * when free or expired, renewed while the runner runs, and dropped when it stops, so instances
 * sharing the store never run the same runner twice for long (the Kafka transactional id fences
 * the one that lost its lease).
 */
import type { Db } from "../../db/index.ts";
import { type LeaseClock, Leases, type LeaseTable } from "../../db/lease.ts";
import type { Database } from "../../db/types.ts";
import { type DesiredState, NO_FIGURES, type ProcessorRow, type RunnerFigures, type RunnerRow, type RunnerStateName } from "./types.ts";

type ProcessorRecord = Omit<Database["processors"], "updated_at">;

function toRow(r: ProcessorRecord): ProcessorRow {
  return {
    id: r.id,
    name: r.name,
    cluster: r.cluster,
    sql: r.sql,
    runners: r.runners,
    desired: r.desired === "PAUSED" ? "PAUSED" : "RUNNING",
    owner: r.owner,
    sourceTopic: r.source_topic,
    targetTopic: r.target_topic,
    clusterName: r.cluster_name,
    namespace: r.namespace,
    pipeline: r.pipeline,
    createdAt: r.created_at,
    startTs: r.start_ts,
    stopTs: r.stop_ts,
    lastAction: r.last_action,
    ownerKind: r.owner_kind,
    pausedReason: r.paused_reason,
  };
}

function parseFigures(text: string | null): RunnerFigures {
  if (!text) return { ...NO_FIGURES };
  try {
    return { ...NO_FIGURES, ...(JSON.parse(text) as Partial<RunnerFigures>) };
  } catch {
    return { ...NO_FIGURES };
  }
}

/** A runner slot's row is its lease: held by `instance` until `lease_until`. */
const RUNNER_LEASES: LeaseTable = {
  table: "processor_runners",
  key: ["processor_id", "runner"],
  holder: "instance",
  until: "lease_until",
  createRows: false,
};

/** The named lease each instance running processors renews at each tick: who is there to share the runners. */
const PRESENCE = "processor-instance/";

export class ProcessorRepo {
  readonly #leases: Leases;
  readonly #named: Leases;

  /** `clock`: the leases' clock (the store's when absent; a test injects one). */
  constructor(
    private readonly db: Db,
    clock?: LeaseClock,
  ) {
    this.#leases = new Leases(db, { table: RUNNER_LEASES, ...(clock ? { clock } : {}) });
    this.#named = new Leases(db, clock ? { clock } : {});
  }

  /**
   * Says that `instance` runs processors, for `ttlMs`; answers how many instances do now (itself
   * included): those whose presence has not expired on the leases' clock.
   */
  async present(instance: string, ttlMs: number): Promise<number> {
    await this.#named.acquire([`${PRESENCE}${instance}`], instance, ttlMs);
    const now = await this.#named.now();
    const row = await this.db
      .selectFrom("leases")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("name", "like", `${PRESENCE}%`)
      .where("lease_until", ">=", now)
      .executeTakeFirst();
    return Math.max(1, Number(row?.n ?? 1));
  }

  /** Now on the leases' clock: a lease whose `leaseUntil` is before it has expired. */
  leaseNow(): Promise<number> {
    return this.#leases.now();
  }

  async list(cluster?: string): Promise<ProcessorRow[]> {
    let q = this.db.selectFrom("processors").selectAll();
    if (cluster !== undefined) q = q.where("cluster", "=", cluster);
    return (await q.orderBy("created_at").orderBy("id").execute()).map(toRow);
  }

  async get(id: string): Promise<ProcessorRow | null> {
    const r = await this.db.selectFrom("processors").selectAll().where("id", "=", id).executeTakeFirst();
    return r ? toRow(r) : null;
  }

  async byName(cluster: string, name: string): Promise<ProcessorRow | null> {
    const r = await this.db.selectFrom("processors").selectAll().where("cluster", "=", cluster).where("name", "=", name).executeTakeFirst();
    return r ? toRow(r) : null;
  }

  /** The processor and its runner slots, in one transaction. */
  async create(p: ProcessorRow, now: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto("processors")
        .values({
          id: p.id,
          name: p.name,
          cluster: p.cluster,
          sql: p.sql,
          runners: p.runners,
          desired: p.desired,
          owner: p.owner,
          source_topic: p.sourceTopic,
          target_topic: p.targetTopic,
          cluster_name: p.clusterName,
          namespace: p.namespace,
          pipeline: p.pipeline,
          created_at: p.createdAt,
          start_ts: p.startTs,
          stop_ts: p.stopTs,
          last_action: p.lastAction,
          owner_kind: p.ownerKind,
          paused_reason: p.pausedReason,
          updated_at: now,
        })
        .execute();
      for (let i = 0; i < p.runners; i++) {
        await trx
          .insertInto("processor_runners")
          .values({ processor_id: p.id, runner: i, lease_until: 0, state: "PENDING", updated_at: now })
          .execute();
      }
    });
  }

  async setDesired(id: string, desired: DesiredState, action: string, now: number): Promise<void> {
    await this.db
      .updateTable("processors")
      .set(
        desired === "RUNNING"
          ? { desired, start_ts: now, stop_ts: null, last_action: action, paused_reason: null, updated_at: now }
          : { desired, stop_ts: now, last_action: action, paused_reason: null, updated_at: now },
      )
      .where("id", "=", id)
      .execute();
  }

  /**
   * Loupe pauses a running processor by itself, with the reason its answer shows until it is
   * resumed. The risk marks of its slots go too: a resume starts it afresh. False when it was
   * not running (paused meanwhile, or deleted).
   */
  async pauseFor(id: string, reason: string, now: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const r = await trx
        .updateTable("processors")
        .set({ desired: "PAUSED", stop_ts: now, last_action: reason, paused_reason: reason, updated_at: now })
        .where("id", "=", id)
        .where("desired", "=", "RUNNING")
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) return false;
      await trx.updateTable("processor_runners").set({ risk: null }).where("processor_id", "=", id).execute();
      return true;
    });
  }

  /** How many processors `owner` has, on every cluster. */
  async countByOwner(owner: string): Promise<number> {
    const r = await this.db
      .selectFrom("processors")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("owner", "=", owner)
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  /** Marks (or clears, null) the risky phase of a slot `instance` holds, before it starts. */
  async setRisk(processorId: string, runner: number, instance: string, risk: string | null): Promise<void> {
    await this.db
      .updateTable("processor_runners")
      .set({ risk })
      .where("processor_id", "=", processorId)
      .where("runner", "=", runner)
      .where("instance", "=", instance)
      .execute();
  }

  /** New runner count: slots added or removed with it. */
  async scale(id: string, runners: number, action: string, now: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable("processors").set({ runners, last_action: action, updated_at: now }).where("id", "=", id).execute();
      await trx.deleteFrom("processor_runners").where("processor_id", "=", id).where("runner", ">=", runners).execute();
      const have = await trx.selectFrom("processor_runners").select("runner").where("processor_id", "=", id).execute();
      const existing = new Set(have.map((r) => r.runner));
      for (let i = 0; i < runners; i++) {
        if (!existing.has(i))
          await trx
            .insertInto("processor_runners")
            .values({ processor_id: id, runner: i, lease_until: 0, state: "PENDING", updated_at: now })
            .execute();
      }
    });
  }

  async delete(id: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom("processor_runners").where("processor_id", "=", id).execute();
      await trx.deleteFrom("processors").where("id", "=", id).execute();
    });
  }

  async runners(processorId?: string): Promise<RunnerRow[]> {
    let q = this.db.selectFrom("processor_runners").selectAll();
    if (processorId !== undefined) q = q.where("processor_id", "=", processorId);
    const rows = await q.orderBy("processor_id").orderBy("runner").execute();
    return rows.map((r) => ({
      processorId: r.processor_id,
      runner: r.runner,
      instance: r.instance,
      leaseUntil: r.lease_until,
      state: r.state as RunnerStateName,
      error: r.error,
      figures: parseFigures(r.figures),
      risk: r.risk,
      updatedAt: r.updated_at,
    }));
  }

  /** Takes or renews the slot's lease for `instance`, for `leaseMs` from now; false when another instance holds it. */
  async lease(processorId: string, runner: number, instance: string, leaseMs: number): Promise<boolean> {
    return (await this.#leases.acquire([processorId, runner], instance, leaseMs)) !== null;
  }

  /** The runner's state and figures, when `instance` still holds its lease. */
  async report(
    processorId: string,
    runner: number,
    instance: string,
    state: RunnerStateName,
    error: string | null,
    figures: RunnerFigures,
    now: number,
  ): Promise<void> {
    await this.db
      .updateTable("processor_runners")
      .set({ state, error, figures: JSON.stringify(figures), updated_at: now })
      .where("processor_id", "=", processorId)
      .where("runner", "=", runner)
      .where("instance", "=", instance)
      .execute();
  }

  /** Gives the slot up (the runner stopped here): another instance may take it at once. */
  async release(processorId: string, runner: number, instance: string, state: RunnerStateName, now: number): Promise<void> {
    await this.db
      .updateTable("processor_runners")
      .set({ state, risk: null, updated_at: now })
      .where("processor_id", "=", processorId)
      .where("runner", "=", runner)
      .where("instance", "=", instance)
      .execute();
    await this.#leases.release([processorId, runner], instance);
  }
}
