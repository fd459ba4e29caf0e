import { z } from "zod";
import { protoTemplate } from "../../engine/index.ts";
import { clusterOf, userOf } from "../../http/context.ts";
import { defineRoute, json, RouteGroup, text } from "../../http/route.ts";
import type { InsertService } from "../insert/service.ts";
import { listHeaders } from "../shared/list-query.ts";
import { viewerOf } from "../sql/service.ts";
import type { RecordBrowser } from "./browse-records.ts";
import { topicName } from "./names.ts";
import {
  browseAnswer,
  browseQuery,
  createTopicBody,
  PRODUCE_LIMITS,
  partitionsAnswer,
  partitionsBody,
  produceAnswer,
  produceBody,
  topicConfigBody,
  topicListItem,
  topicListQuery,
  topicParam,
  topicShape,
  WRITE_FORMATS,
  type WriteFormat,
  writeFormatsAnswer,
} from "./schemas.ts";
import { topicFilterOf } from "./scope-filter.ts";
import type { TopicService } from "./service.ts";
import { requireTopics } from "./visibility.ts";

/** The COMPAT.md text; clients compare the part before the first comma. */
export function deleteRecordsMessage(topic: string, partition: number, offset: number): string {
  return (
    `Records from topic '${topic}' and partition '${partition}' up to offset '${offset}', are being deleted. ` +
    `When the process is completed, an audit entry will appear.`
  );
}

type SideEncoding = Awaited<ReturnType<InsertService["encodingBySide"]>>;

/**
 * What each side of a topic is written as (the produce dialog's formats): the format, where it
 * comes from, its schema and subject, and for Protobuf a template of the message; a side that
 * cannot be written says why in `problems`.
 */
function writeFormatsOf(t: string, sides: SideEncoding, q: { keyFormat?: WriteFormat; valueFormat?: WriteFormat }) {
  const problems: string[] = [];
  const describe = (side: "key" | "value") => {
    const s = sides[side];
    if (s instanceof Error) {
      problems.push(s.message);
      const chosen = side === "key" ? q.keyFormat : q.valueFormat;
      return {
        format: chosen ?? null,
        source: chosen ? ("chosen" as const) : ("metadata" as const),
        schema: null,
        subject: null,
        template: null,
      };
    }
    return {
      format: s.format,
      source: s.source === "statement" ? ("chosen" as const) : s.source,
      schema: s.avro?.text ?? s.proto?.text ?? null,
      subject: s.source === "registry" || (s.avro ?? s.proto)?.id != null ? `${t}-${side}` : null,
      template: s.proto ? protoTemplate(s.proto.message) : null,
    };
  };
  return { key: describe("key"), value: describe("value"), problems };
}

/** Digits only: a sign, a fraction or a word is a 400 before anything reaches the broker. */
const nonNegative = (what: string) =>
  z
    .string()
    .regex(/^\d{1,18}$/, `${what} must be a non-negative integer`)
    .transform(Number)
    .refine(Number.isSafeInteger, `${what} is too large`);
const deleteRecordsParams = z.object({ topicName, partition: nonNegative("partition"), offset: nonNegative("offset") });

const formatsQuery = z.object({
  keyFormat: z.enum(WRITE_FORMATS).optional().describe("the key's format to describe instead of the topic's"),
  valueFormat: z.enum(WRITE_FORMATS).optional().describe("the value's format to describe instead of the topic's"),
});

const tags = ["topics"];

export const topicApi = {
  list: defineRoute({
    method: "GET",
    path: "/api/topics",
    level: "nodata",
    summary: "Topics with partitions, sizes and rates; searched, sorted and paged by the query's parameters",
    tags,
    request: { query: topicListQuery },
    responses: {
      200: {
        ...json(z.array(topicListItem), "The topics (the page asked, or every match without `page`/`perPage`)"),
        headers: {
          ...listHeaders,
          "X-Control-Topics": { description: "Control topics among those the caller may see (shown or not)", schema: { type: "integer" } },
        },
      },
    },
  }),
  get: defineRoute({
    method: "GET",
    path: "/api/topics/{topicName}",
    level: "nodata",
    summary: "One topic: partitions, offsets, configs, consumers and lag",
    tags,
    request: { params: topicParam },
    responses: { 200: json(topicShape) },
  }),
  create: defineRoute({
    method: "POST",
    path: "/api/topics",
    level: "write",
    summary: "Create a topic",
    audit: { type: "TOPIC", change: "ADD" },
    tags,
    request: { body: createTopicBody },
    responses: { 201: text("`Topic '<name>' created`") },
  }),
  delete: defineRoute({
    method: "DELETE",
    path: "/api/topics/{topicName}",
    level: "write",
    summary: "Delete a topic",
    audit: { type: "TOPIC", change: "REMOVE" },
    tags,
    request: { params: topicParam },
    responses: { 200: text("`Topic '<name>' deleted`") },
  }),
  alterConfigs: defineRoute({
    method: "PUT",
    path: "/api/topics/config/{topicName}",
    level: "write",
    summary: "Change topic configs (validated first)",
    audit: { type: "TOPIC", change: "UPDATE" },
    tags,
    request: { params: topicParam, body: topicConfigBody },
    responses: { 200: text("`Topic '<name>' configuration updated`") },
  }),
  // Audited by the service (TOPIC_DATA REMOVE): intent before answering, completed when the
  // background deletion ends; a refused request is audited by the handler's onRefused.
  deleteRecords: defineRoute({
    method: "DELETE",
    path: "/api/topics/{topicName}/{partition}/{offset}",
    level: "write",
    summary: "Delete records up to an offset",
    tags,
    request: { params: deleteRecordsParams },
    responses: { 200: text("`Records from topic '<t>' and partition '<p>' up to offset '<o>', are being deleted. ...`") },
  }),
  addPartitions: defineRoute({
    method: "PUT",
    path: "/api/topics/{topicName}/partitions",
    level: "write",
    summary: "Add partitions to a topic (the count only grows: 400 for a smaller or equal one)",
    audit: { type: "TOPIC", change: "UPDATE" },
    tags,
    request: { params: topicParam, body: partitionsBody },
    responses: { 200: json(partitionsAnswer) },
  }),
  // Not audited, as queries are not: reading records changes nothing. Bounded in records,
  // bytes and time; the answer says which bound cut it.
  records: defineRoute({
    method: "GET",
    path: "/api/topics/{topicName}/records",
    level: "read",
    summary: "Browse a topic's records: newest first, or from an offset or a time; keys, values, headers, raw bytes",
    tags,
    request: { params: topicParam, query: browseQuery },
    responses: { 200: json(browseAnswer) },
  }),
  writeFormats: defineRoute({
    method: "GET",
    path: "/api/topics/{topicName}/records/formats",
    level: "write",
    summary: "How records written to the topic are encoded: format, its source and the Avro schema of key and value",
    tags,
    request: { params: topicParam, query: formatsQuery },
    responses: { 200: json(writeFormatsAnswer) },
  }),
  produce: defineRoute({
    method: "POST",
    path: "/api/topics/{topicName}/records",
    level: "write",
    summary: "Write records with keys, values, headers and partitions (all encoded before any is sent)",
    audit: {
      type: "TOPIC_DATA",
      change: "INSERT",
      // The intent keeps what is written where, not a megabyte of values: a sample, as INSERT keeps its statement's start.
      request: (fields) => ({
        keyFormat: fields.keyFormat,
        valueFormat: fields.valueFormat,
        records: Array.isArray(fields.records) ? fields.records.length : undefined,
        sample: JSON.stringify(fields.records ?? null).slice(0, 2_000),
      }),
    },
    tags,
    request: { params: topicParam, body: produceBody },
    responses: { 200: json(produceAnswer) },
  }),
};

export interface TopicRecordDeps {
  browser: RecordBrowser;
  inserts: InsertService;
}

export function topicRoutes(service: TopicService, records: TopicRecordDeps) {
  const app = new RouteGroup();

  app.handle(topicApi.list, async (c) => {
    const page = await service.list(clusterOf(c), topicFilterOf(c), c.req.valid("query"));
    c.header("X-Total-Count", String(page.total));
    c.header("X-Unfiltered-Count", String(page.unfiltered));
    c.header("X-Control-Topics", String(page.controlTopics));
    return c.json(page.items);
  });

  app.handle(topicApi.get, async (c) => {
    const name = c.req.valid("param").topicName;
    const topic = await service.get(clusterOf(c), name);
    // What the page offers: the caller's groups on this topic, internal topics included.
    const may = (role: "read" | "write") => {
      const filter = topicFilterOf(c, role);
      return filter === null || filter(name);
    };
    return c.json({ ...topic, access: { read: may("read"), write: may("write") } });
  });

  app.handle(topicApi.create, async (c) => {
    const body = c.req.valid("json");
    c.set("auditContent", { topicName: body.topicName, partitions: body.partitions, replication: body.replication, configs: body.configs });
    // The name is in the body, where the access check does not look: a scoped writer creates only within its scope.
    requireTopics(topicFilterOf(c), [body.topicName]);
    await service.create(clusterOf(c), body, userOf(c));
    return c.text(`Topic '${body.topicName}' created`, 201);
  });

  app.handle(topicApi.delete, async (c) => {
    const { topicName: t } = c.req.valid("param");
    await service.delete(clusterOf(c), t, userOf(c));
    return c.text(`Topic '${t}' deleted`);
  });

  app.handle(topicApi.alterConfigs, async (c) => {
    const { topicName: t } = c.req.valid("param");
    const body = c.req.valid("json");
    c.set("auditContent", { configs: Object.fromEntries(body.configs.map((x) => [x.key, x.value])) });
    await service.alterConfigs(clusterOf(c), t, body.configs);
    return c.text(`Topic '${t}' configuration updated`);
  });

  app.handle(
    topicApi.deleteRecords,
    async (c) => {
      const p = c.req.valid("param");
      await service.deleteRecords(clusterOf(c), p.topicName, p.partition, p.offset, userOf(c));
      return c.text(deleteRecordsMessage(p.topicName, p.partition, p.offset));
    },
    // The outcome of a started deletion is audited when it ends; a refused request (malformed
    // parameters included) here.
    { onRefused: (c, e) => service.auditRefusedDeletion(c.req.param(), userOf(c), e) },
  );

  app.handle(topicApi.addPartitions, async (c) => {
    const { topicName: t } = c.req.valid("param");
    const { partitions } = c.req.valid("json");
    c.set("auditContent", { topicName: t, partitions });
    const done = await service.addPartitions(clusterOf(c), t, partitions);
    c.set("auditContent", { topicName: t, partitions, previous: done.previous });
    return c.json({ topicName: t, partitions: done.partitions, previous: done.previous });
  });

  app.handle(topicApi.records, async (c) => {
    const { topicName: t } = c.req.valid("param");
    const q = c.req.valid("query");
    return c.json(
      await records.browser.browse(
        clusterOf(c),
        t,
        {
          seek: q.seek,
          limit: q.limit,
          ...(q.partition !== undefined ? { partition: q.partition } : {}),
          ...(q.offset !== undefined ? { offset: q.offset } : {}),
          ...(q.time !== undefined ? { time: q.time } : {}),
          ...(q.after ? { after: q.after } : {}),
          ...(q.before ? { before: q.before } : {}),
        },
        viewerOf(c.get("session")!, clusterOf(c)),
      ),
    );
  });

  app.handle(topicApi.writeFormats, async (c) => {
    const { topicName: t } = c.req.valid("param");
    const q = c.req.valid("query");
    const cluster = clusterOf(c);
    const partitions = await service.partitionCount(cluster, t);
    const sides = await records.inserts.encodingBySide(cluster, t, { key: q.keyFormat, value: q.valueFormat });
    return c.json({ topicName: t, partitions, ...writeFormatsOf(t, sides, q) });
  });

  app.handle(topicApi.produce, async (c) => {
    const { topicName: t } = c.req.valid("param");
    const body = c.req.valid("json");
    c.set("auditContent", { topic: t, records: body.records.length, keyFormat: body.keyFormat, valueFormat: body.valueFormat });
    const result = await records.inserts.executeRecords(
      clusterOf(c),
      t,
      { key: body.keyFormat, value: body.valueFormat },
      body.records.map((r) => ({
        key: r.key ?? null,
        value: r.value ?? null,
        headers: r.headers,
        ...(r.partition !== undefined ? { partition: r.partition } : {}),
      })),
      PRODUCE_LIMITS.bytes,
    );
    const partitions = [...new Set(result.offsets.map((o) => o.partition))].sort((a, b) => a - b);
    c.set("auditContent", {
      topic: t,
      records: result.records,
      keyType: result.keyType,
      valueType: result.valueType,
      partitions: partitions.join(","),
    });
    return c.json({
      topicName: t,
      records: result.records,
      keyFormat: result.keyType,
      valueFormat: result.valueType,
      offsets: result.offsets.map((o) => ({ partition: o.partition, offset: o.offset })),
    });
  });
  return app;
}
