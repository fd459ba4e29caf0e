import { clusterOf } from "../../http/context.ts";
import { type AnyRoute, defineRoute, json, RouteGroup } from "../../http/route.ts";
import { brokerConfigList, brokerList, brokerParams } from "./schemas.ts";
import type { BrokerService } from "./service.ts";

const tags = ["brokers"];

export const brokersApi = {
  list: defineRoute({
    method: "GET",
    path: "/api/brokers",
    level: "nodata",
    summary: "The brokers: address, rack, log dirs and their sizes, and which is the active controller",
    tags,
    responses: { 200: json(brokerList) },
  }),
  configs: defineRoute({
    method: "GET",
    path: "/api/brokers/{brokerId}/configs",
    level: "nodata",
    summary:
      "A broker's configs, each with its source, whether it is dynamic, and the values of each level (broker, cluster default, static, Kafka's)",
    tags,
    request: { params: brokerParams },
    responses: { 200: json(brokerConfigList) },
  }),
} satisfies Record<string, AnyRoute>;

export function brokersRoutes(service: BrokerService) {
  const app = new RouteGroup();
  app.handle(brokersApi.list, async (c) => c.json(await service.list(clusterOf(c)), 200));
  app.handle(brokersApi.configs, async (c) => c.json(await service.configs(clusterOf(c), c.req.valid("param").brokerId), 200));
  return app;
}
