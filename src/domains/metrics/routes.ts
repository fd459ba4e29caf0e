import { z } from "zod";
import { notFound } from "../../errors.ts";
import { defineRoute, RouteGroup, text } from "../../http/route.ts";
import { type MetricsDeps, renderMetrics } from "./service.ts";

/**
 * GET /metrics, without authentication (SPEC). The default cluster's lag; another configured
 * cluster with `?cluster=<name>` (a scrape config's `params`) or the `x-service-cluster` header.
 */
export const metricsApi = {
  scrape: defineRoute({
    method: "GET",
    path: "/metrics",
    level: "public",
    summary: "Prometheus metrics: consumer lag, process and HTTP figures",
    tags: ["metrics"],
    request: { query: z.object({ cluster: z.string().optional().describe("a configured cluster; the default otherwise") }) },
    responses: { 200: text("Prometheus text exposition format", "text/plain; version=0.0.4") },
  }),
};

export function metricsRoutes(deps: MetricsDeps) {
  const app = new RouteGroup();
  app.handle(metricsApi.scrape, async (c) => {
    const cluster = c.req.valid("query").cluster ?? c.req.header("x-service-cluster") ?? deps.pool.default().name;
    if (!deps.pool.names().includes(cluster)) throw notFound(`Unknown cluster '${cluster}'`);
    const text = await renderMetrics(deps, cluster);
    return c.body(text, 200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
  });
  return app;
}
