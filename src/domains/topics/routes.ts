import { z } from "zod";
import { clusterOf, userOf } from "../../http/context.ts";
import { defineRoute, json, RouteGroup, text } from "../../http/route.ts";
import { DATA_TYPES } from "../metadata/types.ts";
import { partitionLag } from "../shared/schemas.ts";
import { topicName } from "./names.ts";
import { topicFilterOf } from "./scope-filter.ts";
import type { TopicService } from "./service.ts";
import { requireTopics } from "./visibility.ts";

/** Config values arrive as strings, and from some clients as numbers or booleans. */
const configValue = z.union([z.string(), z.number(), z.boolean()]).transform(String);
const configKey = z.string().min(1).max(255);

export const createTopicBody = z.object({
  topicName,
  partitions: z.number().int().min(1).max(100_000).optional(),
  replication: z.number().int().min(1).max(32_767).optional(),
  /** The Go client sends `"configs": null` when it has none (a nil map). */
  configs: z
    .record(configKey, configValue)
    .nullish()
    .transform((v) => v ?? undefined),
});

/**
 * A `null` entry in the list is skipped (a client may build the list with holes); a `null` value
 * resets the key to its default.
 */
export const topicConfigBody = z.object({
  configs: z
    .array(z.union([z.object({ key: configKey, value: z.union([configValue, z.null()]) }), z.null()]))
    .max(1_000)
    .transform((list) => list.filter((x) => x !== null))
    .refine((list) => list.length > 0, "at least one config is needed"),
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

/** Counts, offsets, rates and times are integers: the Go client decodes them as int64. */
const int = () => z.number().int();

const topicShape = z.object({
  topicName: z.string(),
  keyType: z.enum(DATA_TYPES),
  valueType: z.enum(DATA_TYPES),
  keySchema: z.string().nullable(),
  valueSchema: z.string().nullable(),
  inferred: z.boolean(),
  partitions: int(),
  replication: int(),
  isControlTopic: z.boolean(),
  isMarkedForDeletion: z.boolean(),
  messagesPerSecond: int().describe("whole messages per second"),
  totalMessages: int(),
  timestamp: int().describe("epoch ms of the newest record; 0 when empty"),
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
      coordinator: z.object({ id: int(), host: z.string(), port: int(), rack: z.string().nullable() }).nullable(),
      active: z.boolean(),
      state: z.enum(["Unknown", "Stable", "Rebalancing", "Dead", "NoActiveMembers", "ExistsNot", "CoordinatorNotFound"]),
      kafkaState: z.string().describe("Kafka's name of the state"),
      consumers: z.array(z.string()).describe("ids of the members reading the topic"),
      consumersCount: int(),
      topicPartitionsCount: int(),
      lag: int(),
      minLag: int(),
      maxLag: int(),
      partitions: z.array(
        partitionLag.extend({
          consumerId: z.string().nullable(),
          clientId: z.string().nullable(),
          host: z.string().nullable(),
        }),
      ),
    }),
  ),
  messagesPerPartition: z.array(
    z.object({
      partition: int(),
      messages: int(),
      begin: int(),
      end: int(),
      leader: int().describe("Broker id of the partition's leader; -1 when it has none (offline)"),
      replicas: z.array(int()).describe("Broker ids holding a replica"),
      isr: z.array(int()).describe("Broker ids of the in-sync replicas"),
    }),
  ),
});

const listItem = z.object({
  topicName: z.string(),
  partitions: int(),
  replication: int(),
  isControlTopic: z.boolean(),
  isMarkedForDeletion: z.boolean(),
  keyType: z.enum(DATA_TYPES),
  valueType: z.enum(DATA_TYPES),
  inferred: z.boolean(),
  typesKnown: z
    .boolean()
    .describe("false when no types are stored and none was guessed yet from records: keyType and valueType then mean not known yet"),
  totalMessages: int(),
  messagesPerSecond: int().describe("whole messages per second"),
  sizeBytes: int().nullable().describe("bytes of one copy of the topic on disk; null when the brokers do not say"),
  lag: int().nullable().describe("records not yet read by the groups that committed on the topic; null when unknown"),
});

/** The COMPAT.md text; clients compare the part before the first comma. */
export function deleteRecordsMessage(topic: string, partition: number, offset: number): string {
  return (
    `Records from topic '${topic}' and partition '${partition}' up to offset '${offset}', are being deleted. ` +
    `When the process is completed, an audit entry will appear.`
  );
}

const tags = ["topics"];

export const topicApi = {
  list: defineRoute({
    method: "GET",
    path: "/api/topics",
    level: "nodata",
    summary: "Topics with partitions, sizes and rates",
    tags,
    responses: { 200: json(z.array(listItem)) },
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
};

export function topicRoutes(service: TopicService) {
  const app = new RouteGroup();

  app.handle(topicApi.list, async (c) => c.json(await service.list(clusterOf(c), topicFilterOf(c))));

  app.handle(topicApi.get, async (c) => c.json(await service.get(clusterOf(c), c.req.valid("param").topicName)));

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
  return app;
}
