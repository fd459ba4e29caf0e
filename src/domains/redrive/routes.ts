/**
 * The redrive routes (`/api/redrives`): create (PAUSED, for a dry run first), list, show, dry
 * run, start, pause, resume, cancel. Every change is audited as REDRIVE with who, what and (at
 * the end, by Loupe) how many.
 */
import type { Context } from "hono";
import { z } from "zod";
import { type AppEnv, clusterOf } from "../../http/context.ts";
import { defineRoute, json, RouteGroup } from "../../http/route.ts";
import type { RedriveRow } from "./repo.ts";
import { redriveCreate, redriveDone, redriveDryRun, redriveJob, redriveList } from "./schemas.ts";
import type { RedriveAction, RedriveCaller, RedriveService } from "./service.ts";

const tags = ["redrive"];
const idParams = z.object({ redriveId: z.string().min(1).max(100) });

/** A change of one job's state (`/api/redrives/{redriveId}/<action>`), audited. */
const change = (rest: string, summary: string) =>
  defineRoute({
    method: "PUT",
    path: `/api/redrives/{redriveId}/${rest}`,
    level: "write",
    summary,
    audit: { type: "REDRIVE", change: "UPDATE" },
    tags,
    request: { params: idParams },
    responses: { 200: json(redriveDone) },
  });

export const redriveApi = {
  list: defineRoute({
    method: "GET",
    path: "/api/redrives",
    level: "nodata",
    summary: "Redrive jobs of the cluster (those whose source topic the caller sees, or owns)",
    tags,
    responses: { 200: json(redriveList) },
  }),
  get: defineRoute({
    method: "GET",
    path: "/api/redrives/{redriveId}",
    level: "nodata",
    summary: "One redrive job, with its progress per partition and its counts",
    tags,
    request: { params: idParams },
    responses: { 200: json(redriveJob) },
  }),
  create: defineRoute({
    method: "POST",
    path: "/api/redrives",
    level: "write",
    summary: "Create a redrive job (PAUSED): a topic's records, up to its end offsets now, to a topic or the topic a header names",
    audit: { type: "REDRIVE", change: "ADD" },
    tags,
    request: { body: redriveCreate },
    responses: { 201: json(redriveJob) },
  }),
  dryRun: defineRoute({
    method: "POST",
    path: "/api/redrives/{redriveId}/dry-run",
    level: "write",
    summary: "What the job would write from where it is to its end: counts per target and a sample; nothing is written",
    tags,
    request: { params: idParams },
    responses: { 200: json(redriveDryRun) },
  }),
  start: change("start", "Start the job: exactly once, at its rate, with its owner's current rights"),
  pause: change("pause", "Pause a running job: what it holds is committed, the rest waits"),
  resume: change("resume", "Resume a paused (or failed) job from where its last transaction left it"),
  cancel: change("cancel", "Cancel the job for good: what it wrote stays written"),
};

function callerOf(c: Context<AppEnv>): RedriveCaller {
  const session = c.get("session")!;
  return {
    user: session.user.name,
    groups: session.user.groups,
    scope: session.scope,
    admin: session.scope.unrestricted.has("admin"),
    kind: session.user.kind,
  };
}

/** Who, what: the audit entry of a job's change. */
function described(job: RedriveRow): Record<string, string> {
  return {
    id: job.id,
    name: job.name,
    owner: job.owner,
    topic: job.topic,
    ...(job.target !== null ? { target: job.target } : { targetHeader: job.targetHeader ?? "" }),
    ...(job.where !== null ? { where: job.where } : {}),
    ratePerSecond: String(job.rate),
    records: String(job.ranges.reduce((n, r) => n + (r.to - r.from), 0)),
  };
}

export function redriveRoutes(service: RedriveService) {
  const app = new RouteGroup();

  app.handle(redriveApi.list, async (c) => c.json({ redrives: await service.list(clusterOf(c), callerOf(c)) }));

  app.handle(redriveApi.get, async (c) => c.json(await service.get(c.req.valid("param").redriveId, callerOf(c))));

  app.handle(redriveApi.create, async (c) => {
    const body = c.req.valid("json");
    c.set("auditContent", { topic: body.topic, ...(body.target ? { target: body.target } : { targetHeader: body.targetHeader }) });
    const job = await service.create(body, clusterOf(c), callerOf(c));
    c.set("auditContent", {
      id: job.id,
      name: job.name,
      owner: job.owner,
      topic: job.topic,
      ...(job.target !== null ? { target: job.target } : { targetHeader: job.targetHeader }),
      ...(job.where !== null ? { where: job.where } : {}),
      ratePerSecond: String(job.ratePerSecond),
      records: String(job.total),
    });
    return c.json(job, 201);
  });

  app.handle(redriveApi.dryRun, async (c) =>
    c.json(await service.dryRun(c.req.valid("param").redriveId, callerOf(c), c.req.raw.signal), 200),
  );

  const did = (c: Context<AppEnv>, job: RedriveRow, action: RedriveAction) => {
    c.set("auditContent", { ...described(job), action });
    return c.json({ id: job.id, name: job.name, action, state: job.state }, 200);
  };

  app.handle(redriveApi.start, async (c) => did(c, await service.start(c.req.valid("param").redriveId, callerOf(c)), "START"));
  app.handle(redriveApi.pause, async (c) => did(c, await service.pause(c.req.valid("param").redriveId, callerOf(c)), "PAUSE"));
  app.handle(redriveApi.resume, async (c) => did(c, await service.start(c.req.valid("param").redriveId, callerOf(c)), "RESUME"));
  app.handle(redriveApi.cancel, async (c) => did(c, await service.cancel(c.req.valid("param").redriveId, callerOf(c)), "CANCEL"));

  return app;
}
