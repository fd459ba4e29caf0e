import { type Context, Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/context.ts";
import type { ApiDocs } from "../../http/openapi.ts";
import { type StreamRegistry, sseResponse, sseStream } from "../../http/sse.ts";
import { pathParams, queryParams } from "../../http/validate.ts";
import { type QueryPlan, SqlError } from "../../sql/index.ts";
import type { QueryEnd, QueryRecord } from "./executor.ts";
import { RecordLines } from "./lines.ts";
import { queryErrorPayload, type SqlService } from "./service.ts";

/** Most bytes (statistics, heartbeats) that may wait for a stream reader before it is cut off; records wait for the reader instead. */
const STREAM_BUFFER_BYTES = 4 * 1024 * 1024;
/** Most bytes a query answered as one JSON object may read (its max.size is lowered to this). */
export const JSON_ANSWER_MAX_BYTES = 32 * 1024 * 1024;
const HEARTBEAT_MS = 5_000;
/** Above this RSS a query collects garbage while it waits for its reader. */
const MEMORY_SOFT_LIMIT = 160 * 1024 * 1024;
/** At most one collection per this many bytes of query data. */
const MEMORY_MIN_GC_BYTES = 16 * 1024 * 1024;
/** Statistics no more often than this. */
const MIN_STATS_MS = 100;

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

/** `stats` as milliseconds: older clients send seconds (values below 100). */
export function statsIntervalMs(stats: number | undefined): number | null {
  if (stats === undefined || stats === 0) return null;
  return Math.max(MIN_STATS_MS, stats < 100 ? stats * 1000 : stats);
}

function endBody(end: QueryEnd, withOffsets: boolean): Record<string, unknown> {
  const { offsets: o, ...rest } = end;
  return withOffsets ? { ...rest, offsets: o } : rest;
}

function clusterOf(c: Context<AppEnv>, service: SqlService): string {
  return c.req.header("x-service-cluster") ?? service.defaultCluster();
}

const wantsStream = (c: Context<AppEnv>) => (c.req.header("accept") ?? "").toLowerCase().includes("text/event-stream");

export function sqlRoutes(service: SqlService, streams: StreamRegistry, docs: ApiDocs) {
  const app = new Hono<AppEnv>();
  docs.describe({ method: "GET", path: "/api/sql/validation", query: validationQuery, response: validationResult, tags: ["sql"] });
  docs.describe({
    method: "GET",
    path: "/api/sql/data",
    query: dataQuery,
    response: z.object({ messages: z.array(record), offsets }),
    tags: ["sql"],
  });
  docs.describe({ method: "GET", path: "/api/sql/queries", response: z.array(runningQuery), tags: ["sql"] });
  docs.describe({ method: "DELETE", path: "/api/sql/queries/:id", response: z.boolean(), tags: ["sql"] });

  app.get("/sql/validation", async (c) => {
    const { sql } = queryParams(c, validationQuery);
    return c.json(await service.validate(sql, clusterOf(c, service)));
  });

  app.get("/sql/data", async (c) => {
    const params = queryParams(c, dataQuery);
    const session = c.get("session")!;
    const cluster = clusterOf(c, service);
    const stream = wantsStream(c);

    let plan: QueryPlan;
    try {
      plan = await service.compile(params.sql, cluster);
    } catch (err) {
      if (!(err instanceof SqlError)) throw err;
      if (!stream) {
        // The validation object, with the fields every error body carries.
        return c.json(
          {
            isValid: false,
            line: err.line,
            column: err.column,
            message: err.message,
            error_code: 400,
            code: "VALIDATION_FAILED",
            requestId: c.get("requestId"),
          },
          400,
        );
      }
      return sseResponse(
        sseStream(
          {
            heartbeat: "data:0",
            heartbeatMs: HEARTBEAT_MS,
            maxBufferedBytes: 1 << 16,
            errorLine: () => "",
            requestSignal: c.req.raw.signal,
          },
          async (w) => void w.send(`data:3${JSON.stringify(queryErrorPayload(err))}`),
        ),
      );
    }

    // The single JSON answer holds every record in memory at once: bound what it may read,
    // whatever max.size the query asks for (the stream form is bounded by backpressure).
    if (!stream && plan.settings.maxSizeBytes > JSON_ANSWER_MAX_BYTES)
      plan = { ...plan, settings: { ...plan.settings, maxSizeBytes: JSON_ANSWER_MAX_BYTES } };

    const prepared = await service.prepare(params.sql, plan, cluster, session.user.name);

    if (!stream) {
      const messages: QueryRecord[] = [];
      let end: QueryEnd | null = null;
      for await (const ev of prepared.events(c.req.raw.signal)) {
        if (ev.type === "records") for (const r of ev.records) messages.push(r);
        else if (ev.type === "end") end = ev.end;
      }
      return c.json({ messages, offsets: end?.offsets ?? [] });
    }

    let release: () => void;
    try {
      release = streams.acquire(session.user.name, c);
    } catch (err) {
      prepared.release();
      throw err;
    }
    c.env?.server?.timeout(c.req.raw, 0);
    const statsMs = statsIntervalMs(params.stats);
    const withOffsets = params.offsets === true;
    const lines = new RecordLines(JSON.stringify(plan.topic));
    const body = sseStream(
      {
        heartbeat: "data:0",
        heartbeatMs: HEARTBEAT_MS,
        maxBufferedBytes: STREAM_BUFFER_BYTES,
        errorLine: (err) => `data:3${JSON.stringify(queryErrorPayload(err))}`,
        // Lets the record lines be written from one reused buffer (see RecordLines.take()).
        sinkCopies: c.env?.server !== undefined,
        requestSignal: c.req.raw.signal,
        onClose: () => release(),
      },
      async (w) => {
        const { progress } = prepared;
        let collectedAt = 0;
        const timer =
          statsMs === null
            ? undefined
            : setInterval(
                () =>
                  w.send(
                    `data:4${JSON.stringify({
                      totalRecords: progress.totalRecords,
                      recordsSkipped: progress.skippedRecords,
                      recordsLimit: plan.limit,
                      totalBytes: progress.size,
                      maxSize: plan.settings.maxSizeBytes,
                      currentSize: progress.totalSizeRead,
                    })}`,
                  ),
                statsMs,
              );
        try {
          for await (const ev of prepared.events(w.signal, { lines })) {
            if (w.signal.aborted) break;
            if (ev.type === "end") {
              w.send(`data:2${JSON.stringify(endBody(ev.end, withOffsets))}`);
              break;
            }
            // The lines as bytes: the hot path of a large query.
            const bytes = ev.type === "lines" ? ev.bytes : lines.build(ev.records);
            // Backpressure: while the response still holds bytes the socket would not take, wait
            // for the reader; the query is not pulled meanwhile, so nothing more is fetched.
            if (w.buffered > 0) {
              // JSC grows the heap well before it collects, and a long query makes garbage fast.
              // Waiting for a slow reader is free time: collect then, when memory is past the
              // soft limit. A reader that keeps up never waits, and pays nothing.
              const churn = progress.totalSizeRead + progress.size;
              if (churn - collectedAt > MEMORY_MIN_GC_BYTES && process.memoryUsage.rss() > MEMORY_SOFT_LIMIT) {
                collectedAt = churn;
                Bun.gc(true);
              }
              await w.drained();
            }
            if (w.signal.aborted) break;
            w.sendBytes(bytes);
          }
        } finally {
          if (timer) clearInterval(timer);
        }
      },
    );
    return sseResponse(body);
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
