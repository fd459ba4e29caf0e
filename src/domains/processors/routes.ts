/**
 * The SPEC's 7 processor routes (`/api/streams`), shaped for the real clients (CLIENTS.md §1):
 * create answers 200 with the bare `lsql_<hex>` id as text unless Accept names JSON; pause,
 * resume, scale and delete answer 200 with JSON; `targets` is an array; `clusterName`,
 * `namespace` and `pipeline` are accepted and kept (they apply to other execution modes).
 */
import type { Context } from "hono";
import { z } from "zod";
import { type AppEnv, clusterOf } from "../../http/context.ts";
import { defineRoute, json, RouteGroup } from "../../http/route.ts";
import { createBody, done, type ProcessorAnswer, processorOne, processorSchema, target } from "./schemas.ts";
import type { Caller, ProcessorService } from "./service.ts";

const tags = ["processors"];

const idParams = z.object({ processorId: z.string().min(1).max(200) });
const scaleParams = z.object({ processorId: z.string().min(1).max(200), numberOfRunners: z.string().max(12) });

const audited = (change: "ADD" | "UPDATE" | "REMOVE") => ({ type: "PROCESSOR" as const, change });

/** A change to one processor (`/api/streams/{processorId}<rest>`), audited, answered with what was done. */
const change = <P extends z.ZodType = typeof idParams, Q extends z.ZodType | undefined = undefined>(
  method: "PUT" | "DELETE",
  rest: string,
  summary: string,
  audit: "UPDATE" | "REMOVE",
  request: { params: P; query?: Q } = { params: idParams as z.ZodType as P },
) =>
  defineRoute({
    method,
    path: `/api/streams/{processorId}${rest}`,
    level: "write",
    summary,
    audit: audited(audit),
    tags,
    request,
    responses: { 200: json(done) },
  });

export const processorApi = {
  list: defineRoute({
    method: "GET",
    path: "/api/streams",
    level: "nodata",
    summary: "Stream processors of the cluster, with their runners' states and figures",
    tags,
    responses: { 200: json(z.object({ targets: z.array(target), streams: z.array(processorSchema) })) },
  }),
  get: defineRoute({
    method: "GET",
    path: "/api/streams/{processorId}",
    level: "nodata",
    summary: "One stream processor",
    tags,
    request: { params: idParams },
    responses: { 200: json(processorOne) },
  }),
  create: defineRoute({
    method: "POST",
    path: "/api/streams",
    level: "write",
    summary: "Create a stream processor from `INSERT INTO <target> SELECT STREAM ... FROM <source> ...`",
    audit: audited("ADD"),
    tags,
    request: { body: createBody },
    responses: {
      200: {
        description: "The processor as JSON when Accept names application/json; otherwise its bare id (`lsql_<hex>`) as text/plain",
        content: { "application/json": { schema: processorSchema }, "text/plain": { schema: { type: "string" } } },
      },
    },
  }),
  pause: change("PUT", "/pause", "Pause a processor: its runners commit what they hold and leave the group", "UPDATE"),
  resume: change("PUT", "/resume", "Resume a paused or failed processor (a running one stays as it is)", "UPDATE"),
  scale: change("PUT", "/scale/{numberOfRunners}", "Change the number of runners (members of the processor's consumer group)", "UPDATE", {
    params: scaleParams,
  }),
  delete: change(
    "DELETE",
    "",
    "Stop and delete a processor and its consumer group (`deleteChangelog=true`: its changelog topic too)",
    "REMOVE",
    { params: idParams, query: z.object({ deleteChangelog: z.enum(["true", "false"]).optional() }) },
  ),
};

function callerOf(c: Context<AppEnv>): Caller {
  const session = c.get("session")!;
  return {
    user: session.user.name,
    groups: session.user.groups,
    scope: session.scope,
    admin: session.scope.unrestricted.has("admin"),
    kind: session.user.kind,
  };
}

type Action = "PAUSE" | "RESUME" | "SCALE" | "DELETE";

function audit(c: Context<AppEnv>, p: { id: string; name: string }, extra: Record<string, string> = {}): void {
  c.set("auditContent", { ...(c.get("auditContent") ?? {}), id: p.id, name: p.name, ...extra });
}

export function processorRoutes(service: ProcessorService, version: () => string | null = () => null) {
  const app = new RouteGroup();

  app.handle(processorApi.list, async (c) => {
    const cluster = clusterOf(c);
    const streams = await service.list(cluster, callerOf(c));
    return c.json({ targets: [{ cluster, version: version(), namespaces: [] as string[] }], streams });
  });

  app.handle(processorApi.get, async (c) => {
    return c.json({ streams: await service.get(c.req.valid("param").processorId, callerOf(c)) });
  });

  app.handle(processorApi.create, async (c) => {
    const body = c.req.valid("json");
    c.set("auditContent", { name: body.name, sql: body.sql });
    const created: ProcessorAnswer = await service.create(
      {
        name: body.name,
        sql: body.sql,
        runners: body.runners === undefined || body.runners <= 0 ? undefined : body.runners,
        clusterName: body.clusterName,
        namespace: body.namespace,
        pipeline: body.pipeline,
      },
      clusterOf(c),
      callerOf(c),
    );
    audit(c, created, { sql: created.sql, source: created.fromTopics[0]!, target: created.toTopic, runners: String(created.runners) });
    if (!/application\/json/i.test(c.req.header("accept") ?? "")) return c.text(created.id);
    return c.json(created);
  });

  /** The audit entry and the answer of what was done to `p`. */
  const did = (c: Context<AppEnv>, p: { id: string; name: string }, action: Action, extra: Record<string, string> = {}) => {
    audit(c, p, { action, ...extra });
    return c.json({ id: p.id, name: p.name, action }, 200);
  };

  app.handle(processorApi.pause, async (c) => did(c, await service.pause(c.req.valid("param").processorId, callerOf(c)), "PAUSE"));

  app.handle(processorApi.resume, async (c) => did(c, await service.resume(c.req.valid("param").processorId, callerOf(c)), "RESUME"));

  app.handle(processorApi.scale, async (c) => {
    const { processorId, numberOfRunners } = c.req.valid("param");
    const n = /^-?\d+$/.test(numberOfRunners) ? Number(numberOfRunners) : Number.NaN;
    return did(c, await service.scale(processorId, n, callerOf(c)), "SCALE", { runners: String(n) });
  });

  app.handle(processorApi.delete, async (c) => {
    const { processorId } = c.req.valid("param");
    const deleteChangelog = c.req.valid("query").deleteChangelog === "true";
    return did(c, await service.delete(processorId, callerOf(c), { deleteChangelog }), "DELETE");
  });

  return app;
}
