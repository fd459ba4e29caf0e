import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/context.ts";
import { clusterOf, userOf } from "../../http/context.ts";
import type { ApiDocs } from "../../http/openapi.ts";
import { jsonBody, pathParams } from "../../http/validate.ts";
import { DATA_TYPES } from "../metadata/types.ts";
import { partitionLag } from "../shared/schemas.ts";
import { topicName } from "./names.ts";
import type { TopicService } from "./service.ts";

/** Config values arrive as strings, and from some clients as numbers or booleans. */
const configValue = z.union([z.string(), z.number(), z.boolean()]).transform(String);
const configKey = z.string().min(1).max(255);

export const createTopicBody = z.object({
  topicName,
  partitions: z.number().int().min(1).max(100_000).optional(),
  replication: z.number().int().min(1).max(32_767).optional(),
  configs: z.record(configKey, configValue).optional(),
});

export const topicConfigBody = z.object({
  configs: z
    .array(z.object({ key: configKey, value: z.union([configValue, z.null()]) }))
    .min(1, "at least one config is needed")
    .max(1_000),
});

const topicParam = z.object({ topicName });
/** Digits only: a sign, a fraction or a word is a 400 before anything reaches the broker. */
const nonNegative = (what: string) =>
  z
    .string()
    .regex(/^\d{1,18}$/, `${what} must be a non-negative integer`)
    .transform(Number)
    .refine(Number.isSafeInteger, `${what} is too large`);
const deleteRecordsParams = z.object({ topicName, partition: nonNegative("partition"), offset: nonNegative("offset") });

const topicShape = z.object({
  topicName: z.string(),
  keyType: z.enum(DATA_TYPES),
  valueType: z.enum(DATA_TYPES),
  keySchema: z.string().nullable(),
  valueSchema: z.string().nullable(),
  inferred: z.boolean(),
  partitions: z.number(),
  replication: z.number(),
  isControlTopic: z.boolean(),
  isMarkedForDeletion: z.boolean(),
  messagesPerSecond: z.number(),
  totalMessages: z.number(),
  timestamp: z.number(),
  config: z.array(
    z.object({
      configuration: z.string(),
      value: z.string().nullable(),
      defaultValue: z.string().nullable(),
      documentation: z.string().nullable(),
    }),
  ),
  consumers: z.array(
    z.object({
      id: z.string(),
      coordinator: z.object({ id: z.number(), host: z.string(), port: z.number() }).nullable(),
      state: z.string(),
      active: z.boolean(),
      lag: z.number(),
      minLag: z.number(),
      maxLag: z.number(),
      consumers: z.array(
        partitionLag.extend({
          consumerId: z.string().nullable(),
          clientId: z.string().nullable(),
          host: z.string().nullable(),
        }),
      ),
    }),
  ),
  messagesPerPartition: z.array(z.object({ partition: z.number(), messages: z.number(), begin: z.number(), end: z.number() })),
});

const listItem = z.object({
  topicName: z.string(),
  partitions: z.number(),
  replication: z.number(),
  isControlTopic: z.boolean(),
  isMarkedForDeletion: z.boolean(),
  keyType: z.enum(DATA_TYPES).nullable(),
  valueType: z.enum(DATA_TYPES).nullable(),
  totalMessages: z.number(),
  messagesPerSecond: z.number(),
});

/** The COMPAT.md text; clients compare the part before the first comma. */
export function deleteRecordsMessage(topic: string, partition: number, offset: number): string {
  return (
    `Records from topic '${topic}' and partition '${partition}' up to offset '${offset}', are being deleted. ` +
    `When the process is completed, an audit entry will appear.`
  );
}

export function topicRoutes(service: TopicService, docs: ApiDocs) {
  const app = new Hono<AppEnv>();
  const tags = ["topics"];
  docs.describe({ method: "GET", path: "/api/topics", response: z.array(listItem), tags });
  docs.describe({ method: "GET", path: "/api/topics/:topicName", response: topicShape, tags });
  docs.describe({ method: "POST", path: "/api/topics", body: createTopicBody, status: 201, responseType: "text/plain", tags });
  docs.describe({ method: "DELETE", path: "/api/topics/:topicName", responseType: "text/plain", tags });
  docs.describe({ method: "PUT", path: "/api/topics/config/:topicName", body: topicConfigBody, responseType: "text/plain", tags });
  docs.describe({ method: "DELETE", path: "/api/topics/:topicName/:partition/:offset", responseType: "text/plain", tags });

  app.get("/topics", async (c) => c.json(await service.list(clusterOf(c))));

  app.get("/topics/:topicName", async (c) => {
    const { topicName: t } = pathParams(c, topicParam);
    return c.json(await service.get(clusterOf(c), t));
  });

  app.post("/topics", async (c) => {
    const body = await jsonBody(c, createTopicBody);
    c.set("auditContent", { topicName: body.topicName, partitions: body.partitions, replication: body.replication, configs: body.configs });
    await service.create(clusterOf(c), body, userOf(c));
    return c.text(`Topic '${body.topicName}' created`, 201);
  });

  app.delete("/topics/:topicName", async (c) => {
    const { topicName: t } = pathParams(c, topicParam);
    await service.delete(clusterOf(c), t, userOf(c));
    return c.text(`Topic '${t}' deleted`);
  });

  app.put("/topics/config/:topicName", async (c) => {
    const { topicName: t } = pathParams(c, topicParam);
    const body = await jsonBody(c, topicConfigBody);
    c.set("auditContent", { configs: Object.fromEntries(body.configs.map((x) => [x.key, x.value])) });
    await service.alterConfigs(clusterOf(c), t, body.configs);
    return c.text(`Topic '${t}' configuration updated`);
  });

  app.delete("/topics/:topicName/:partition/:offset", async (c) => {
    try {
      const p = pathParams(c, deleteRecordsParams);
      await service.deleteRecords(clusterOf(c), p.topicName, p.partition, p.offset, userOf(c));
      return c.text(deleteRecordsMessage(p.topicName, p.partition, p.offset));
    } catch (e) {
      // The outcome of a started deletion is audited when it ends; a refused request here.
      await service.auditRefusedDeletion(c.req.param(), userOf(c), e);
      throw e;
    }
  });
  return app;
}
