import { type Context, Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/context.ts";
import type { ApiDocs } from "../../http/openapi.ts";
import type { StreamRegistry } from "../../http/sse.ts";
import { pathParams, queryParams } from "../../http/validate.ts";
import { SqlError } from "../../sql/index.ts";
import { isQueryLimitError } from "./executor.ts";
import { jsonAnswer, jsonInvalid } from "./json-answer.ts";
import type { CompiledQuery, SqlService } from "./service.ts";
import { statsIntervalMs, streamAnswer, streamInvalid } from "./stream-answer.ts";

export const validationQuery = z.object({ sql: z.string({ error: "the query parameter sql is required" }) });

const flag = z
  .enum(["true", "false", "TRUE", "FALSE", "True", "False", "1", "0", ""])
  .transform((v) => v.toLowerCase() === "true" || v === "1");

export const dataQuery = z.object({
  sql: z.string({ error: "the query parameter sql is required" }).min(1, "the query is empty"),
  /** Milliseconds between statistics messages; below 100 it is seconds (older clients). 0: none. */
  stats: z.coerce.number().int().min(0).max(86_400_000).optional(),
  offsets: flag.optional(),
});

const validationResult = z.object({ isValid: z.boolean(), line: z.number(), column: z.number(), message: z.string().nullable() });
const record = z.object({
  timestamp: z.number(),
  partition: z.number(),
  key: z.string().nullable(),
  offset: z.number(),
  topic: z.string(),
  value: z.string(),
});
const offsets = z.array(z.object({ partition: z.number(), min: z.number(), max: z.number() }));
const runningQuery = z.object({ id: z.string(), sql: z.string(), user: z.string(), ts: z.number() });

const wantsStream = (c: Context<AppEnv>) => (c.req.header("accept") ?? "").toLowerCase().includes("text/event-stream");

export function sqlRoutes(service: SqlService, streams: StreamRegistry, docs: ApiDocs) {
  const app = new Hono<AppEnv>();
  docs.describe({ method: "GET", path: "/api/sql/validation", query: validationQuery, response: validationResult, tags: ["sql"] });
  docs.describe({
    method: "GET",
    path: "/api/sql/data",
    query: dataQuery,
    response: z.object({
      messages: z.array(record),
      offsets,
      /** Why the query ended: MAX_SIZE when the answer reached its 32 MiB bound. */
      stopReason: z.string(),
      /** Settings the server lowered to its bounds (sql.maxSize, sql.maxQueryTime), with the value applied. */
      clampedSettings: z.record(z.string(), z.number()).optional(),
    }),
    tags: ["sql"],
  });
  docs.describe({ method: "GET", path: "/api/sql/queries", response: z.array(runningQuery), tags: ["sql"] });
  docs.describe({ method: "DELETE", path: "/api/sql/queries/:id", response: z.boolean(), tags: ["sql"] });

  app.get("/sql/validation", async (c) => {
    const { sql } = queryParams(c, validationQuery);
    return c.json(await service.validate(sql, c.get("cluster")));
  });

  app.get("/sql/data", async (c) => {
    const params = queryParams(c, dataQuery);
    const session = c.get("session")!;
    const cluster = c.get("cluster");
    const stream = wantsStream(c);
    let compiled: CompiledQuery;
    try {
      compiled = await service.compile(params.sql, cluster);
    } catch (err) {
      // A query the language rejects (including one past its limits) is the client's error.
      if (!(err instanceof SqlError) && !isQueryLimitError(err)) throw err;
      if (!stream) return jsonInvalid(c, err);
      return streamInvalid(err, c.req.raw.signal);
    }
    const prepared = await service.prepare(compiled, cluster, session.user.name);
    if (!stream) return jsonAnswer(c, prepared);

    let release: () => void;
    try {
      release = streams.acquire(session.user.name, c);
    } catch (err) {
      prepared.release();
      throw err;
    }
    c.env?.server?.timeout(c.req.raw, 0);
    return streamAnswer(prepared, {
      statsMs: statsIntervalMs(params.stats),
      withOffsets: params.offsets === true,
      sinkCopies: c.env?.server !== undefined,
      requestSignal: c.req.raw.signal,
      onClose: () => release(),
    });
  });

  app.get("/sql/queries", (c) => {
    const session = c.get("session")!;
    return c.json(service.queries.list(session.user.name, session.user.roles.includes("admin")));
  });

  app.delete("/sql/queries/:id", (c) => {
    const { id } = pathParams(c, z.object({ id: z.string().min(1).max(128) }));
    const session = c.get("session")!;
    return c.json(service.queries.kill(id, session.user.name, session.user.roles.includes("admin")));
  });

  return app;
}
