import { z } from "zod";
import { defineRoute, json, RouteGroup } from "../../http/route.ts";
import type { NotificationService } from "./notifications.ts";

const listQuery = z
  .object({
    alertId: z.coerce.number().int().positive().optional(),
    limit: z.coerce.number().int().min(1).max(10_000).default(1000),
  })
  .strict();

const notification = z.object({
  alertId: z.number(),
  labels: z.record(z.string(), z.string()),
  annotations: z.record(z.string(), z.string()),
  startsAt: z.string(),
  endsAt: z.string().nullable(),
  generatorURL: z.string(),
});

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
};

export function alertRoutes(notifications: NotificationService) {
  const app = new RouteGroup();
  app.handle(alertApi.list, async (c) => c.json(await notifications.list(c.req.valid("query"))));
  return app;
}
