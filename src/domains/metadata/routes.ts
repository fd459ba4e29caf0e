import type { Context } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/context.ts";
import { clusterOf, userOf } from "../../http/context.ts";
import { defineRoute, json, RouteGroup, text } from "../../http/route.ts";
import { topicName } from "../topics/names.ts";
import type { MetadataService } from "./service.ts";
import { DATA_TYPES } from "./types.ts";

const topicParam = z.object({ topicName });

/** Types are checked by the service (case-insensitive, with the list of allowed values in the error). */
export const metadataQuery = z
  .object({
    keyType: z
      .string()
      .min(1)
      .max(32)
      .describe(`one of ${DATA_TYPES.join(", ")} (any case)`),
    valueType: z
      .string()
      .min(1)
      .max(32)
      .describe(`one of ${DATA_TYPES.join(", ")} (any case)`),
    keySchema: z.string().max(1_000_000).optional(),
    valueSchema: z.string().max(1_000_000).optional(),
  })
  .strict();

const metadata = z.object({
  topicName: z.string(),
  keyType: z.enum(DATA_TYPES),
  valueType: z.enum(DATA_TYPES),
  keySchema: z.string().optional(),
  valueSchema: z.string().optional(),
  inferred: z.boolean(),
});

const tags = ["topic metadata"];
const removal = (path: string) =>
  defineRoute({
    method: "DELETE",
    path,
    level: "write",
    summary: "Remove a topic's stored types",
    audit: { type: "TOPIC_METADATA", change: "REMOVE" },
    tags,
    request: { params: topicParam },
    responses: { 200: text("`Metadata for topic '<name>' removed`") },
  });

export const metadataApi = {
  list: defineRoute({
    method: "GET",
    path: "/api/metadata/topics",
    level: "nodata",
    summary: "Stored key and value types of topics",
    tags,
    responses: { 200: json(z.array(metadata)) },
  }),
  get: defineRoute({
    method: "GET",
    path: "/api/metadata/topics/{topicName}",
    level: "nodata",
    summary: "Key and value types of a topic (stored or inferred)",
    tags,
    request: { params: topicParam },
    responses: { 200: json(metadata) },
  }),
  set: defineRoute({
    method: "POST",
    path: "/api/metadata/topics/{topicName}",
    level: "write",
    summary: "Set key and value types of a topic",
    audit: { type: "TOPIC_METADATA", change: "UPDATE" },
    tags,
    request: { params: topicParam, query: metadataQuery },
    responses: { 200: json(metadata) },
  }),
  remove: removal("/api/metadata/topics/{topicName}"),
  /** The system path of the same removal, which clients use. */
  removeSystem: removal("/api/system/topics/metadata/{topicName}"),
};

export function metadataRoutes(service: MetadataService) {
  const app = new RouteGroup();

  app.handle(metadataApi.list, async (c) => c.json(await service.list(clusterOf(c))));

  app.handle(metadataApi.get, async (c) => c.json(await service.get(clusterOf(c), c.req.valid("param").topicName)));

  app.handle(metadataApi.set, async (c) => {
    const { topicName: t } = c.req.valid("param");
    const q = c.req.valid("query");
    c.set("auditContent", { keyType: q.keyType, valueType: q.valueType });
    return c.json(await service.set(clusterOf(c), t, q, userOf(c)));
  });

  const remove = async (c: Context<AppEnv>, t: string) => {
    await service.delete(clusterOf(c), t);
    return c.text(`Metadata for topic '${t}' removed`);
  };
  app.handle(metadataApi.remove, (c) => remove(c, c.req.valid("param").topicName));
  app.handle(metadataApi.removeSystem, (c) => remove(c, c.req.valid("param").topicName));
  return app;
}
