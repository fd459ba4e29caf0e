import { z } from "zod";
import { defineRoute, eventStream, json, RouteGroup } from "../../http/route.ts";
import { feedResponse, type StreamRegistry } from "../../http/sse.ts";
import type { Scope } from "../access/scope.ts";
import { type AlertNotification, type NotificationService, TOPIC_ALERTS } from "./notifications.ts";
import { notification } from "./schemas.ts";

const TOPIC_ALERT_IDS = new Set<number>(Object.values(TOPIC_ALERTS).map((a) => a.id));

/**
 * Whether an identity may see a notification: one about a topic (its `instance`) only when the
 * topic is in its scope on the notification's cluster, as the topic list would show it.
 */
function visibleTo(scope: Scope | undefined): (n: AlertNotification) => boolean {
  if (!scope) return () => false;
  return (n) => !TOPIC_ALERT_IDS.has(n.alertId) || scope.topicAllowed(n.labels.cluster ?? "", n.labels.instance ?? "");
}

/** COMPAT.md: the alert stream's heartbeat comes every 10 s. */
const ALERT_HEARTBEAT_MS = 10_000;

const listQuery = z
  .object({
    alertId: z.coerce.number().int().positive().optional(),
    limit: z.coerce.number().int().min(1).max(10_000).default(1000),
  })
  .strict();

export const alertApi = {
  list: defineRoute({
    method: "GET",
    path: "/api/alerts",
    level: "nodata",
    summary: "Alert notifications, newest first",
    tags: ["alerts"],
    request: { query: listQuery },
    responses: { 200: json(z.array(notification)) },
  }),
  stream: defineRoute({
    method: "GET",
    path: "/api/sse/alerts",
    level: "nodata",
    summary: "Live alert notifications (event stream)",
    tags: ["alerts"],
    responses: { 200: eventStream("`data:<notification JSON>` lines (no type digit), `:` heartbeats every 10 s") },
  }),
};

export function alertRoutes(notifications: NotificationService, streams: StreamRegistry) {
  const app = new RouteGroup();
  app.handle(alertApi.list, async (c) => {
    const visible = visibleTo(c.get("session")?.scope);
    return c.json((await notifications.list(c.req.valid("query"))).filter(visible));
  });
  app.handle(alertApi.stream, (c) => {
    const visible = visibleTo(c.get("session")?.scope);
    return feedResponse(c, streams, (send) => notifications.subscribe((n) => visible(n) && send(n)), ALERT_HEARTBEAT_MS);
  });
  return app;
}
