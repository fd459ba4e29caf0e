/**
 * The redrive area's parts, built once by the composition root: the service the API uses and the
 * engine that runs this instance's share of the jobs (registered as the `redrive-engine`
 * background job).
 */
import type { Db } from "../../db/index.ts";
import type { KafkaPool } from "../../kafka/index.ts";
import type { Logger } from "../../log/logger.ts";
import type { BackgroundJob } from "../../util/background.ts";
import type { Scope } from "../access/scope.ts";
import type { AuditRecord } from "../audit/types.ts";
import type { SqlService } from "../sql/service.ts";
import { RedriveEngine } from "./engine.ts";
import { RedriveRepo } from "./repo.ts";
import { RedriveRunner } from "./runner.ts";
import { RedriveService } from "./service.ts";

export interface RedriveSetup {
  db: Db;
  pool: KafkaPool;
  sql: SqlService;
  log: Logger;
  /** Prefix of the jobs' consumer groups and transactional ids (`<prefix>-<id>`). */
  prefix: string;
  /** This instance's name in the jobs' leases. */
  instance: string;
  leaseMs: number;
  failAfterMs: number;
  /** Whether this instance runs jobs (processors.enabled). */
  enabled: boolean;
  ownerScope(owner: string, kind: string | null): Promise<Scope | string>;
  audit(entry: AuditRecord): Promise<unknown>;
  /** How often the owners of the jobs running here are checked again. */
  recheckMs: number;
}

export function redriveParts(s: RedriveSetup): { service: RedriveService; job: BackgroundJob; accessChanged(): void } {
  const repo = new RedriveRepo(s.db);
  let engine: RedriveEngine | null = null;
  const service = new RedriveService({
    repo,
    pool: s.pool,
    sql: s.sql,
    log: s.log,
    prefix: s.prefix,
    ownerScope: s.ownerScope,
    audit: s.audit,
    engine: () => engine,
  });
  const built = new RedriveEngine({
    repo,
    instance: s.instance,
    log: s.log,
    leaseMs: s.leaseMs,
    recheckMs: s.recheckMs,
    runner: (job) =>
      new RedriveRunner(job, {
        kafka: s.pool.get(job.cluster),
        router: (j) => service.routerFor(j),
        report: (counts, progress) => repo.report(job.id, counts, progress, Date.now()),
        groupId: service.groupOf(job.id),
        log: s.log,
        failAfterMs: s.failAfterMs,
      }),
    ended: (job, end) => service.ended(job, end),
    recheck: (job, runner) => service.recheck(job, runner),
  });
  return {
    service,
    accessChanged: () => engine?.recheckOwners(),
    job: {
      name: "redrive-engine",
      enabled: s.enabled,
      start: (runs) => {
        engine = built;
        built.start(runs);
      },
      stop: () => built.stop(),
    },
  };
}
