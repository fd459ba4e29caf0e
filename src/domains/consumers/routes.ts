import { z } from "zod";
import { clusterOf } from "../../http/context.ts";
import { defineRoute, json, RouteGroup, text } from "../../http/route.ts";
import { partitionLag } from "../shared/schemas.ts";
import { topicName } from "../topics/names.ts";
import { topicFilterOf } from "../topics/scope-filter.ts";
import type { ConsumerService } from "./service.ts";

const groupParam = z.object({ group: z.string().min(1).max(255) });

const topicsField = z.array(topicName).max(1_000).optional();
/** One of: `to` earliest/latest, `timestamp` (epoch ms), or explicit `offsets`. */
export const offsetResetBody = z.union([
  z.object({ to: z.enum(["earliest", "latest"]), topics: topicsField }).strict(),
  z.object({ timestamp: z.number().int().min(0), topics: topicsField }).strict(),
  z
    .object({
      offsets: z
        .array(z.object({ topic: topicName, partition: z.number().int().min(0), offset: z.number().int().min(0) }).strict())
        .min(1)
        .max(100_000),
    })
    .strict(),
]);

const summary = z.object({
  id: z.string(),
  state: z.string(),
  protocolType: z.string(),
  protocol: z.string(),
  members: z.number(),
  topics: z.array(z.string()),
  lag: z.number(),
});
const partitionRef = z.object({ topic: z.string(), partition: z.number() });
const detail = z.object({
  id: z.string(),
  state: z.string(),
  protocolType: z.string(),
  protocol: z.string(),
  members: z.array(
    z.object({
      memberId: z.string(),
      groupInstanceId: z.string().nullable(),
      clientId: z.string(),
      host: z.string(),
      assignments: z.array(partitionRef),
    }),
  ),
  offsets: z.array(
    partitionLag.extend({
      lagSeconds: z.number().nullable(),
      memberId: z.string().nullable(),
      clientId: z.string().nullable(),
      host: z.string().nullable(),
    }),
  ),
  lag: z.number(),
});
/** A window such as `15m`, `1h`, `90s` (or milliseconds); at most what the history keeps. */
const windowQuery = z.object({
  window: z
    .string()
    .regex(/^\d{1,9}(ms|s|m|h)?$/, "window must be a duration such as 90s, 15m or 1h")
    .transform((v) => {
      const [, n, unit] = /^(\d+)(ms|s|m|h)?$/.exec(v)!;
      return Number(n) * { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[(unit ?? "ms") as "ms"];
    })
    .refine((ms) => ms >= 1_000 && ms <= 7 * 86_400_000, "window must be between 1s and 7d")
    .optional(),
});
const lagPoint = z.object({
  t: z.number().int().describe("epoch ms of the end-offset sample"),
  lag: z.number().int().describe("records still to read, all partitions"),
  lagSeconds: z.number().nullable().describe("age of the oldest unread record (estimate); null when unknown"),
  topics: z.record(z.string(), z.number().int()).describe("lag per topic"),
});
const lagHistoryAnswer = z.object({
  group: z.string(),
  windowMs: z.number().int(),
  intervalMs: z.number().int().describe("time between two points"),
  points: z.array(lagPoint),
});
const resetAnswer = z.object({ group: z.string(), offsets: z.array(partitionRef.extend({ offset: z.number() })) });

const tags = ["consumer groups"];

export const consumerApi = {
  list: defineRoute({
    method: "GET",
    path: "/api/consumers",
    level: "read",
    summary: "Consumer groups with state, members, topics and lag",
    tags,
    responses: { 200: json(z.array(summary)) },
  }),
  get: defineRoute({
    method: "GET",
    path: "/api/consumers/{group}",
    level: "read",
    summary: "One consumer group: members, offsets and lag",
    tags,
    request: { params: groupParam },
    responses: { 200: json(detail) },
  }),
  lagHistory: defineRoute({
    method: "GET",
    path: "/api/consumers/{group}/lag-history",
    level: "read",
    summary: "A group's lag over time (one point per end-offset sample)",
    tags,
    request: { params: groupParam, query: windowQuery },
    responses: { 200: json(lagHistoryAnswer) },
  }),
  resetOffsets: defineRoute({
    method: "PUT",
    path: "/api/consumers/{group}/offsets",
    level: "write",
    summary: "Reset a group's offsets (empty groups only)",
    audit: { type: "CONSUMER_GROUP", change: "UPDATE" },
    tags,
    request: { params: groupParam, body: offsetResetBody },
    responses: { 200: json(resetAnswer) },
  }),
  delete: defineRoute({
    method: "DELETE",
    path: "/api/consumers/{group}",
    level: "write",
    summary: "Delete a consumer group",
    audit: { type: "CONSUMER_GROUP", change: "REMOVE" },
    tags,
    request: { params: groupParam },
    responses: { 200: text("`Consumer group '<id>' deleted`") },
  }),
};

export function consumerRoutes(service: ConsumerService) {
  const app = new RouteGroup();

  app.handle(consumerApi.list, async (c) => c.json(await service.list(clusterOf(c), topicFilterOf(c, undefined, "metadata"))));

  app.handle(consumerApi.get, async (c) =>
    c.json(await service.get(clusterOf(c), c.req.valid("param").group, topicFilterOf(c, undefined, "metadata"))),
  );

  app.handle(consumerApi.lagHistory, async (c) => {
    const { group } = c.req.valid("param");
    const { window } = c.req.valid("query");
    return c.json(await service.lagHistory(clusterOf(c), group, window ?? 3_600_000, topicFilterOf(c, undefined, "metadata")));
  });

  app.handle(consumerApi.resetOffsets, async (c) => {
    const { group } = c.req.valid("param");
    const body = c.req.valid("json");
    c.set("auditContent", { reset: body });
    const offsets = await service.resetOffsets(clusterOf(c), group, body, topicFilterOf(c, "write"));
    return c.json({ group, offsets });
  });

  app.handle(consumerApi.delete, async (c) => {
    const { group } = c.req.valid("param");
    // Changes: an internal topic's offsets are an unrestricted admin's; a group on no topic is
    // anyone's whose groups cover every topic.
    await service.delete(clusterOf(c), group, topicFilterOf(c, "write"), topicFilterOf(c, "write", "metadata") !== null);
    return c.text(`Consumer group '${group}' deleted`);
  });
  return app;
}
