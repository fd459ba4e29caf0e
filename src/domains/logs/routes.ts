import { z } from "zod";
import { defineRoute, json, RouteGroup } from "../../http/route.ts";
import type { LogHub } from "../../log/logger.ts";
import { logLine } from "./schemas.ts";

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
