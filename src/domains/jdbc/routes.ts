import { z } from "zod";
import { AppError } from "../../errors.ts";
import { clusterOf, userOf } from "../../http/context.ts";
import { defineRoute, json, RouteGroup } from "../../http/route.ts";
import type { KafkaPool } from "../../kafka/index.ts";
import type { Logger } from "../../log/logger.ts";
import { SqlError } from "../../sql/index.ts";
import { INSERT_LIMITS } from "../../sql/insert.ts";
import type { AuditService } from "../audit/service.ts";
import type { InsertService } from "../insert/service.ts";
import type { MetadataService } from "../metadata/service.ts";
import { topicCheck } from "../sql/topic-check.ts";
import { preparedInfo } from "./insert.ts";
import { listTables } from "./metadata.ts";
import { insertAnswer, jdbcTable, preparedAnswer } from "./schemas.ts";

const tags = ["jdbc"];

const preparedRecords = z
  .array(z.object({ key: z.string().nullable().optional(), value: z.unknown() }))
  .max(INSERT_LIMITS.rows, `at most ${INSERT_LIMITS.rows} records per request`);

export const jdbcApi = {
  tables: defineRoute({
    method: "GET",
    path: "/api/jdbc/metadata/table",
    level: "read",
    summary: "Topics as JDBC tables: key and value types, Avro schemas where known",
    tags,
    responses: { 200: json(z.array(jdbcTable)) },
  }),
  // Audited by the handler (TOPIC_DATA INSERT, intent first): the automatic audit reads the
  // body as text, and the raw bytes are needed to tell ISO-8859-1 from UTF-8.
  insert: defineRoute({
    method: "POST",
    path: "/api/jdbc/insert",
    level: "write",
    summary:
      "Run an INSERT statement sent as the text/plain body (ISO-8859-1 unless a charset says otherwise); answers once every record is acknowledged. Audited as TOPIC_DATA INSERT by the handler.",
    tags,
    responses: { 200: json(insertAnswer, "The records were written") },
  }),
  prepare: defineRoute({
    method: "GET",
    path: "/api/jdbc/insert/prepared",
    level: "write",
    summary: "Prepare an INSERT with '?' placeholders: the fields in placeholder order and the topic's types",
    tags,
    request: { query: z.object({ sql: z.string({ error: "the query parameter sql is required" }) }) },
    responses: {
      200: json(preparedAnswer, "`info`, or `info: null` and `error` when the statement cannot be prepared (what the driver reads)"),
    },
  }),
  insertPrepared: defineRoute({
    method: "POST",
    path: "/api/jdbc/insert/prepared/{topic}",
    level: "write",
    audit: { type: "TOPIC_DATA", change: "INSERT" },
    summary: "Write a batch of a prepared INSERT: at most 1000 `{key, value}` records; answers once every record is acknowledged",
    tags,
    request: {
      params: z.object({ topic: z.string().min(1).max(249) }),
      query: z.object({ kt: z.string().max(16).optional(), vt: z.string().max(16).optional() }),
      body: preparedRecords,
    },
    responses: { 200: json(insertAnswer, "The records were written") },
  }),
};

/** A statement the language rejects is the client's error: 400 with where it is wrong. */
export function sqlFailure(err: SqlError): AppError {
  return new AppError("VALIDATION_FAILED", err.message, {
    details: { line: err.line, column: err.column, endLine: err.endLine, endColumn: err.endColumn },
  });
}

/**
 * The body of a text/plain INSERT. The JDBC driver sends ISO-8859-1 without saying so: bytes
 * that are not UTF-8 are read as ISO-8859-1, a declared charset wins.
 */
function statementText(bytes: ArrayBuffer, contentType: string | undefined): string {
  const charset = /charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? "")?.[1];
  if (charset && !/^(iso-?8859-1|latin-?1)$/i.test(charset)) {
    try {
      return new TextDecoder(charset as "utf-8").decode(bytes);
    } catch {
      throw new AppError("BAD_REQUEST", `Unknown charset '${charset}'`);
    }
  }
  if (charset) return Buffer.from(bytes).toString("latin1");
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    // Buffer's latin1 is ISO-8859-1 itself (TextDecoder's label means windows-1252).
    return Buffer.from(bytes).toString("latin1");
  }
}

export function jdbcRoutes(deps: { inserts: InsertService; metadata: MetadataService; audit: AuditService; pool: KafkaPool; log: Logger }) {
  const app = new RouteGroup();
  const { inserts } = deps;

  app.handle(jdbcApi.tables, async (c) => c.json(await listTables(deps, clusterOf(c), c.get("session")!.scope)));

  app.handle(jdbcApi.insert, async (c) => {
    const sql = statementText(await c.req.arrayBuffer(), c.req.header("content-type")).trim();
    // An audit entry keeps the start of a long statement (up to 1 MiB of rows).
    const shown = sql.length > 2_000 ? `${sql.slice(0, 2_000)}...` : sql;
    // The intent is stored before anything is checked or written (UNAVAILABLE, and nothing
    // written, when it cannot be), and completed with the outcome.
    const pending = await deps.audit.begin({ type: "TOPIC_DATA", change: "INSERT", user: userOf(c), request: { sql: shown } });
    try {
      if (sql === "")
        throw new AppError("BAD_REQUEST", "The body holds no statement: send `INSERT INTO <topic> (...) VALUES (...)` as text");
      const cluster = clusterOf(c);
      const result = await inserts.execute(sql, cluster, topicCheck(c.get("session")!.scope, cluster, "run")).catch((err: unknown) => {
        throw err instanceof SqlError ? sqlFailure(err) : err;
      });
      const answer = { topic: result.topic, records: result.records, keyType: result.keyType, valueType: result.valueType };
      await pending.complete({ content: { ...answer, records: String(result.records), sql: shown } });
      return c.json({ ...answer, offsets: result.offsets.map((o) => ({ partition: o.partition, offset: o.offset })) });
    } catch (err) {
      const reason = err instanceof AppError ? `${err.code}: ${err.message}` : "INTERNAL: unexpected error";
      await pending.complete({ content: { sql: shown }, failure: reason });
      throw err;
    }
  });

  app.handle(jdbcApi.prepare, async (c) => {
    const { sql } = c.req.valid("query");
    const cluster = clusterOf(c);
    try {
      const allowed = topicCheck(c.get("session")!.scope, cluster, "run");
      const plan = await inserts.compile(sql, cluster, { prepared: true, ...(allowed ? { topicAllowed: allowed } : {}) });
      const encoding = await inserts.encoding(cluster, plan.topic, { key: plan.keyFormat, value: plan.valueFormat });
      return c.json({ info: preparedInfo(plan, encoding) });
    } catch (err) {
      // The driver throws `error` when `info` is null; any other status would bury the message.
      if (err instanceof SqlError) return c.json({ info: null, error: err.message });
      if (err instanceof AppError && err.status < 500 && err.status !== 401 && err.status !== 403)
        return c.json({ info: null, error: err.message });
      throw err;
    }
  });

  app.handle(jdbcApi.insertPrepared, async (c) => {
    const { topic } = c.req.valid("param");
    const { kt, vt } = c.req.valid("query");
    const records = c.req.valid("json");
    c.set("auditContent", { topic, records: String(records.length), keyType: kt, valueType: vt });
    const result = await inserts.executePrepared(
      clusterOf(c),
      topic,
      { ...(kt ? { key: kt } : {}), ...(vt ? { value: vt } : {}) },
      records.map((r) => ({ key: r.key ?? null, value: r.value })),
    );
    c.set("auditContent", { topic, records: String(result.records), keyType: result.keyType, valueType: result.valueType });
    return c.json({ topic: result.topic, records: result.records, keyType: result.keyType, valueType: result.valueType });
  });

  return app;
}
