import { timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { AppError, notFound } from "../../errors.ts";
import { defineRoute, RouteGroup, text } from "../../http/route.ts";
import { type MetricsDeps, renderMetrics } from "./service.ts";

/** Whether the Authorization header carries the configured token, compared in constant time. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(/^bearer\s+(.+)$/i.exec(header?.trim() ?? "")?.[1] ?? "");
  const want = Buffer.from(token);
  return given.length === want.length && timingSafeEqual(given, want);
}

/**
 * GET /metrics, without a user's token (SPEC): for operators, unfiltered by any scope. The
 * `metrics` setting turns it off or puts it behind a token of its own. The default cluster's lag; another configured
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

export function metricsRoutes(deps: MetricsDeps, access: { enabled: boolean; token?: string | undefined } = { enabled: true }) {
  const app = new RouteGroup();
  app.handle(metricsApi.scrape, async (c) => {
    if (!access.enabled) throw notFound("Metrics are turned off (metrics.enabled: false)");
    if (access.token !== undefined && !bearerMatches(c.req.header("authorization"), access.token))
      throw new AppError("UNAUTHORIZED", "Metrics need the metrics token: Authorization: Bearer <metrics.token>", {
        headers: { "WWW-Authenticate": 'Bearer realm="metrics"' },
      });
    const cluster = c.req.valid("query").cluster ?? c.req.header("x-service-cluster") ?? deps.pool.default().name;
    if (!deps.pool.names().includes(cluster)) throw notFound(`Unknown cluster '${cluster}'`);
    const text = await renderMetrics(deps, cluster);
    return c.body(text, 200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
  });
  return app;
}
