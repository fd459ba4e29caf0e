import { z } from "zod";
import { clusterOf } from "../../http/context.ts";
import { defineRoute, json, RouteGroup, text } from "../../http/route.ts";
import { topicFilterOf } from "../topics/scope-filter.ts";
import { detail, lagHistoryAnswer, offsetResetBody, resetAnswer, summary, windowQuery } from "./schemas.ts";
import type { ConsumerService } from "./service.ts";

const groupParam = z.object({ group: z.string().min(1).max(255) });

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
    summary: "A group's lag over time, 5 minutes to 30 days (per sample, or downsampled past 6 hours)",
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
