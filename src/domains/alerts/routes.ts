import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/context.ts";
import type { ApiDocs } from "../../http/openapi.ts";
import { queryParams } from "../../http/validate.ts";
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

export function alertRoutes(notifications: NotificationService, docs: ApiDocs) {
  const app = new Hono<AppEnv>();
  docs.describe({ method: "GET", path: "/api/alerts", query: listQuery, response: z.array(notification), tags: ["alerts"] });
  app.get("/alerts", async (c) => c.json(await notifications.list(queryParams(c, listQuery))));
  return app;
}
