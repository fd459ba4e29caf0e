import { z } from "zod";
import { defineRoute, json, RouteGroup } from "../../http/route.ts";
import type { LogHub } from "../../log/logger.ts";

const logLine = z.object({
  timestamp: z.number(),
  logger: z.string(),
  stacktrace: z.string(),
  thread: z.string(),
  message: z.string(),
  time: z.string(),
  level: z.string(),
  fields: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
    .describe("the line's structured fields (request: method, path, status, ms, user...); secrets redacted, long values cut"),
});

const lines = (level: "INFO" | "METRICS") =>
  defineRoute({
    method: "GET",
    path: `/api/logs/${level}`,
    level: "admin",
    summary: `Latest 512 ${level} log lines`,
    tags: ["logs"],
    responses: { 200: json(z.array(logLine)) },
  });

export const logApi = { info: lines("INFO"), metrics: lines("METRICS") };

export function logRoutes(hub: LogHub) {
  const app = new RouteGroup();
  app.handle(logApi.info, (c) => c.json(hub.recent("INFO")));
  app.handle(logApi.metrics, (c) => c.json(hub.recent("METRICS")));
  return app;
}
