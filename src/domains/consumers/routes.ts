import { z } from "zod";
import { clusterOf } from "../../http/context.ts";
import { defineRoute, json, RouteGroup, text } from "../../http/route.ts";
import { listHeaders } from "../shared/list-query.ts";
import { topicConfigBody } from "../topics/schemas.ts";
import { topicFilterOf } from "../topics/scope-filter.ts";
import {
  detail,
  groupConfigEntry,
  groupListQuery,
  lagHistoryAnswer,
  offsetResetBody,
  resetAnswer,
  shareDetail,
  shareOffsetsDeleteQuery,
  summary,
  windowQuery,
} from "./schemas.ts";
import type { ConsumerService } from "./service.ts";
import type { ShareGroupService } from "./share-groups.ts";

const groupParam = z.object({ group: z.string().min(1).max(255) });

const tags = ["consumer groups"];

export const consumerApi = {
  list: defineRoute({
    method: "GET",
    path: "/api/consumers",
    level: "read",
    summary: "Consumer groups with state, members, topics and lag; searched, sorted and paged by the query's parameters",
    tags,
    request: { query: groupListQuery },
    responses: {
      200: { ...json(z.array(summary), "The groups (the page asked, or every match without `page`/`perPage`)"), headers: listHeaders },
    },
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
  // Kafka 4 share groups (KIP-932): listed by GET /api/consumers with type "share".
  shareGet: defineRoute({
    method: "GET",
    path: "/api/share-groups/{group}",
    level: "read",
    summary: "One share group: members, assignments, start offset and lag per partition",
    tags,
    request: { params: groupParam },
    responses: { 200: json(shareDetail) },
  }),
  shareResetOffsets: defineRoute({
    method: "PUT",
    path: "/api/share-groups/{group}/offsets",
    level: "write",
    summary: "Reset a share group's start offsets (empty groups only)",
    audit: { type: "CONSUMER_GROUP", change: "UPDATE" },
    tags,
    request: { params: groupParam, body: offsetResetBody },
    responses: { 200: json(resetAnswer) },
  }),
  shareDeleteOffsets: defineRoute({
    method: "DELETE",
    path: "/api/share-groups/{group}/offsets",
    level: "write",
    summary: "Delete a share group's start offsets on the topics named (`?topics=a,b`; empty groups only)",
    audit: { type: "CONSUMER_GROUP", change: "UPDATE" },
    tags,
    request: { params: groupParam, query: shareOffsetsDeleteQuery },
    responses: { 200: text("`Start offsets of share group '<id>' on <topics> deleted`") },
  }),
  shareDelete: defineRoute({
    method: "DELETE",
    path: "/api/share-groups/{group}",
    level: "write",
    summary: "Delete a share group (empty groups only)",
    audit: { type: "CONSUMER_GROUP", change: "REMOVE" },
    tags,
    request: { params: groupParam },
    responses: { 200: text("`Share group '<id>' deleted`") },
  }),
  shareConfigs: defineRoute({
    method: "GET",
    path: "/api/share-groups/{group}/configs",
    level: "read",
    summary: "A share group's share.* configs: its own values and the brokers' defaults",
    tags,
    request: { params: groupParam },
    responses: { 200: json(z.array(groupConfigEntry)) },
  }),
  shareAlterConfigs: defineRoute({
    method: "PUT",
    path: "/api/share-groups/{group}/configs",
    level: "write",
    summary: "Set (or with a null value remove) a share group's own share.* configs",
    audit: { type: "CONSUMER_GROUP", change: "UPDATE" },
    tags,
    request: { params: groupParam, body: topicConfigBody },
    responses: { 200: text("`Share group '<id>' configuration updated`") },
  }),
};

export function consumerRoutes(service: ConsumerService) {
  const app = new RouteGroup();

  app.handle(consumerApi.list, async (c) => {
    const page = await service.list(clusterOf(c), topicFilterOf(c, undefined, "metadata"), c.req.valid("query"));
    c.header("X-Total-Count", String(page.total));
    c.header("X-Unfiltered-Count", String(page.unfiltered));
    return c.json(page.items);
  });

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
  shareRoutes(app, service.shares);
  return app;
}

function shareRoutes(app: RouteGroup, shares: ShareGroupService): void {
  // Scopes as for consumer groups: a group is seen through its visible topics ("metadata" use);
  // a change needs write on every topic it touches.
  app.handle(consumerApi.shareGet, async (c) =>
    c.json(await shares.get(clusterOf(c), c.req.valid("param").group, topicFilterOf(c, undefined, "metadata"))),
  );

  app.handle(consumerApi.shareResetOffsets, async (c) => {
    const { group } = c.req.valid("param");
    const body = c.req.valid("json");
    c.set("auditContent", { shareGroup: true, reset: body });
    const offsets = await shares.resetOffsets(clusterOf(c), group, body, topicFilterOf(c, "write"));
    return c.json({ group, offsets });
  });

  app.handle(consumerApi.shareDeleteOffsets, async (c) => {
    const { group } = c.req.valid("param");
    const { topics } = c.req.valid("query");
    c.set("auditContent", { shareGroup: true, deleteOffsets: topics });
    await shares.deleteOffsets(clusterOf(c), group, topics, topicFilterOf(c, "write"));
    return c.text(`Start offsets of share group '${group}' on ${topics.join(", ")} deleted`);
  });

  app.handle(consumerApi.shareDelete, async (c) => {
    const { group } = c.req.valid("param");
    c.set("auditContent", { shareGroup: true });
    await shares.delete(clusterOf(c), group, topicFilterOf(c, "write"), topicFilterOf(c, "write", "metadata") !== null);
    return c.text(`Share group '${group}' deleted`);
  });

  app.handle(consumerApi.shareConfigs, async (c) =>
    c.json(await shares.configs(clusterOf(c), c.req.valid("param").group, topicFilterOf(c, undefined, "metadata"))),
  );

  app.handle(consumerApi.shareAlterConfigs, async (c) => {
    const { group } = c.req.valid("param");
    const { configs } = c.req.valid("json");
    c.set("auditContent", { shareGroup: true, configs: Object.fromEntries(configs.map((x) => [x.key, x.value])) });
    const allowed = topicFilterOf(c, "write");
    await shares.alterConfigs(clusterOf(c), group, configs, allowed, topicFilterOf(c, "write", "metadata") !== null);
    return c.text(`Share group '${group}' configuration updated`);
  });
}
