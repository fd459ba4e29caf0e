import type { Context } from "hono";
import { z } from "zod";
import { isQueryLimitError, parseResume, readRanges, recordHeader, stopLimit } from "../../engine/index.ts";
import { type AppEnv, clusterOf } from "../../http/context.ts";
import { defineRoute, json, RouteGroup } from "../../http/route.ts";
import type { StreamRegistry } from "../../http/sse.ts";
import { editorFacts } from "../../sql/editor-facts.ts";
import { SqlError } from "../../sql/index.ts";
import { jsonAnswer, jsonInvalid } from "./json-answer.ts";
import { type CompiledQuery, type SqlService, viewerOf } from "./service.ts";
import { sendsStatsInSeconds, statsIntervalMs, streamAnswer, streamInvalid } from "./stream-answer.ts";
import { topicCheck } from "./topic-check.ts";

const flag = z
  .enum(["true", "false", "TRUE", "FALSE", "True", "False", "1", "0", ""])
  .transform((v) => v.toLowerCase() === "true" || v === "1");

export const validationQuery = z.object({
  sql: z.string({ error: "the query parameter sql is required" }),
  /** The answer carries `editor` too: what the UI's editor needs and only the dialect's lexer can tell. */
  editor: flag.optional(),
});

export const dataQuery = z.object({
  sql: z.string({ error: "the query parameter sql is required" }).min(1, "the query is empty"),
  /** Milliseconds between statistics messages; seconds below 100 or from the Go client (see statsIntervalMs). 0: none. */
  stats: z.coerce.number().int().min(0).max(86_400_000).optional(),
  offsets: flag.optional(),
  /** The end record's `resume` of an earlier run of the same query: reads on from where it stopped (see resume.ts). */
  resume: z
    .string()
    .max(4_000_000)
    .optional()
    .transform((text, ctx) => {
      if (text === undefined) return undefined;
      const resume = parseResume(text);
      if (typeof resume !== "string") return resume;
      ctx.addIssue({ code: "custom", message: `resume: ${resume}` });
      return z.NEVER;
    }),
  /** Each record carries its Kafka headers (`headers`): asked for by the UI, never sent to a client that does not ask. */
  headers: flag.optional(),
});

const validationResult = z.object({ isValid: z.boolean(), line: z.number(), column: z.number(), message: z.string().nullable() });
/** Only with `editor=true` (see sql/editor-facts.ts); no client of the API is sent it. */
const editorAnswer = z.object({
  insert: z.boolean(),
  settings: z.array(z.object({ key: z.string(), value: z.object({ start: z.number().int(), end: z.number().int() }) })),
  problemLength: z.number().int().optional(),
});
const record = z.object({
  timestamp: z.number(),
  partition: z.number(),
  key: z.string().nullable(),
  offset: z.number(),
  topic: z.string(),
  value: z.string(),
  /** Only with `headers=true`. */
  headers: z.array(recordHeader).optional(),
});
const offsets = z.array(z.object({ partition: z.number(), min: z.number(), max: z.number() }));
const jsonAnswerBody = z.object({
  messages: z.array(record),
  offsets,
  /** Why the query ended: MAX_SIZE when the answer reached its 32 MiB bound. */
  stopReason: z.string(),
  ranges: readRanges,
  stopLimit: stopLimit.optional(),
  /** Given back as the `resume` parameter, the same query reads on from where this one stopped. */
  resume: z.string().optional(),
  /** Settings the server lowered to its bounds (sql.maxSize, sql.maxQueryTime), with the value applied. */
  clampedSettings: z.record(z.string(), z.number()).optional(),
  /** Partitions left out because they had no leader (the rest was read); absent when none was. */
  skippedPartitions: z.array(z.object({ partition: z.number(), reason: z.string() })).optional(),
  /** What a person should be told about the answer, e.g. "partition 3 has no leader: skipped". */
  warnings: z.array(z.string()).optional(),
});
/** The validation object of an invalid query, with the fields of every error body (see json-answer.ts). */
const invalidQuery = validationResult.extend({
  isValid: z.literal(false),
  error_code: z.literal(400),
  code: z.literal("VALIDATION_FAILED"),
  requestId: z.string(),
});
const runningQuery = z.object({ id: z.number().int(), sql: z.string(), user: z.string(), ts: z.number().int() });

export const sqlApi = {
  // Validating reveals no records; running and stopping queries reads them.
  validation: defineRoute({
    method: "GET",
    path: "/api/sql/validation",
    level: "nodata",
    summary: "Validate a query (always 200 with the result)",
    tags: ["sql"],
    request: { query: validationQuery },
    responses: { 200: json(validationResult.extend({ editor: editorAnswer.optional() }), "The validation result, valid or not") },
  }),
  data: defineRoute({
    method: "GET",
    path: "/api/sql/data",
    level: "read",
    summary: "Run a query: event stream, or one JSON answer",
    tags: ["sql"],
    request: { query: dataQuery },
    responses: {
      200: {
        description:
          "With `Accept: text/event-stream`: `data:<type><JSON>` lines (1 record, 2 end, 3 error, 4 statistics, `data:0` heartbeats), an invalid query being one type 3 line. Otherwise one JSON object.",
        content: {
          "text/event-stream": { schema: { type: "string" as const } },
          "application/json": { schema: jsonAnswerBody },
        },
      },
      400: json(invalidQuery, "The query is invalid (JSON form): the validation object and the error body's fields"),
    },
  }),
  queries: defineRoute({
    method: "GET",
    path: "/api/sql/queries",
    level: "read",
    summary: "Running queries (all for admin, else your own)",
    tags: ["sql"],
    responses: { 200: json(z.array(runningQuery)) },
  }),
  stop: defineRoute({
    method: "DELETE",
    path: "/api/sql/queries/{id}",
    level: "read",
    summary: "Stop a running query (your own; admin any); an id that is not an integer names no query: false",
    tags: ["sql"],
    request: { params: z.object({ id: z.string().min(1).max(128) }) },
    responses: { 200: json(z.boolean(), "Whether a query was stopped") },
  }),
};

const wantsStream = (c: Context<AppEnv>) => (c.req.header("accept") ?? "").toLowerCase().includes("text/event-stream");

/** `onRun`: told of every run that starts (`INVALID` when it does not compile), for the user's query history; must not throw or wait. */
export function sqlRoutes(
  service: SqlService,
  streams: StreamRegistry,
  onRun?: (user: string, cluster: string, sql: string, stopReason?: string) => void,
) {
  const app = new RouteGroup();

  app.handle(sqlApi.validation, async (c) => {
    const cluster = clusterOf(c);
    const { sql, editor } = c.req.valid("query");
    const result = await service.validate(sql, cluster, topicCheck(c.get("session")!.scope, cluster, "validate"));
    return c.json(editor ? { ...result, editor: editorFacts(sql, result.isValid ? null : result) } : result);
  });

  app.handle(sqlApi.data, async (c) => {
    const params = c.req.valid("query");
    const session = c.get("session")!;
    const cluster = clusterOf(c);
    const stream = wantsStream(c);
    // A client's own run (the UI sampling fields for completion) asks to stay out of the history.
    const recordRun = c.req.header("x-loupe-history")?.toLowerCase() === "skip" ? undefined : onRun;
    let compiled: CompiledQuery;
    try {
      compiled = await service.compile(params.sql, cluster, topicCheck(session.scope, cluster, "run"));
    } catch (err) {
      // A query the language rejects (including one past its limits) is the client's error.
      if (!(err instanceof SqlError) && !isQueryLimitError(err)) throw err;
      recordRun?.(session.user.name, cluster, params.sql, "INVALID");
      if (!stream) return jsonInvalid(c, err);
      return streamInvalid(err, c.req.raw.signal);
    }
    const prepared = await service.prepare(compiled, cluster, viewerOf(session, cluster), params.resume ? { resume: params.resume } : {});
    recordRun?.(session.user.name, cluster, params.sql);
    if (!stream) return jsonAnswer(c, prepared, params.headers === true);

    let release: () => void;
    try {
      release = streams.acquire(session.user.name, c);
    } catch (err) {
      prepared.release();
      throw err;
    }
    c.env?.server?.timeout(c.req.raw, 0);
    return streamAnswer(prepared, {
      statsMs: statsIntervalMs(params.stats, sendsStatsInSeconds(c.req.header("accept"))),
      withOffsets: params.offsets === true,
      withHeaders: params.headers === true,
      sinkCopies: c.env?.server !== undefined,
      requestSignal: c.req.raw.signal,
      onClose: () => release(),
    });
  });

  app.handle(sqlApi.queries, (c) => {
    const session = c.get("session")!;
    return c.json(service.queries.list(session.user.name, session.scope.unrestricted.has("admin")));
  });

  app.handle(sqlApi.stop, (c) => {
    const session = c.get("session")!;
    return c.json(service.queries.kill(c.req.valid("param").id, session.user.name, session.scope.unrestricted.has("admin")));
  });

  return app;
}
