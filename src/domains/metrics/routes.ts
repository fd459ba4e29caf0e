import { Hono } from "hono";
import { notFound } from "../../errors.ts";
import type { AppEnv } from "../../http/context.ts";
import type { ApiDocs } from "../../http/openapi.ts";
import { type MetricsDeps, renderMetrics } from "./service.ts";

/**
 * GET /metrics, without authentication (SPEC). The default cluster's lag; another configured
 * cluster with `?cluster=<name>` (a scrape config's `params`) or the `x-service-cluster` header.
 */
export function metricsRoutes(deps: MetricsDeps, docs: ApiDocs) {
  const app = new Hono<AppEnv>();
  docs.describe({ method: "GET", path: "/metrics", responseType: "text/plain; version=0.0.4", tags: ["metrics"] });
  app.get("/metrics", async (c) => {
    const cluster = c.req.query("cluster") ?? c.req.header("x-service-cluster") ?? deps.pool.default().name;
    if (!deps.pool.names().includes(cluster)) throw notFound(`Unknown cluster '${cluster}'`);
    const text = await renderMetrics(deps, cluster);
    return c.body(text, 200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
  });
  return app;
}
