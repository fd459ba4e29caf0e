import { clusterOf } from "../../http/context.ts";
import { defineRoute, json, RouteGroup } from "../../http/route.ts";
import { topicFilterOf } from "../topics/scope-filter.ts";
import { clusterOverview } from "./schemas.ts";
import type { ClusterOverviewService } from "./service.ts";

export const clusterApi = {
  overview: defineRoute({
    method: "GET",
    path: "/api/cluster",
    level: "nodata",
    summary: "The cluster at a glance: brokers, controller, counts, unhealthy partitions, total consumer lag",
    tags: ["cluster"],
    responses: { 200: json(clusterOverview) },
  }),
};

export function clusterRoutes(service: ClusterOverviewService) {
  const app = new RouteGroup();
  app.handle(clusterApi.overview, async (c) => c.json(await service.overview(clusterOf(c), topicFilterOf(c))));
  return app;
}
