import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/context.ts";
import type { ApiDocs } from "../../http/openapi.ts";
import type { LogHub } from "../../log/logger.ts";

const logLine = z.object({
  timestamp: z.number(),
  logger: z.string(),
  stacktrace: z.string(),
  thread: z.string(),
  message: z.string(),
  time: z.string(),
  level: z.string(),
});

export function logRoutes(hub: LogHub, docs: ApiDocs) {
  const app = new Hono<AppEnv>();
  docs.describe({ method: "GET", path: "/api/logs/INFO", response: z.array(logLine), tags: ["logs"] });
  docs.describe({ method: "GET", path: "/api/logs/METRICS", response: z.array(logLine), tags: ["logs"] });
  app.get("/logs/INFO", (c) => c.json(hub.recent("INFO")));
  app.get("/logs/METRICS", (c) => c.json(hub.recent("METRICS")));
  return app;
}
