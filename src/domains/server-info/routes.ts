import { z } from "zod";
import { clusterOf } from "../../http/context.ts";
import { defineRoute, json, RouteGroup } from "../../http/route.ts";
import type { ServerInfoService } from "./service.ts";

const urlList = z.array(z.object({ url: z.string(), jmx: z.string() }));
const clientConfig = z.object({
  "lenses.version": z.string(),
  "lenses.ip": z.string(),
  "lenses.port": z.number().int(),
  "lenses.kafka.brokers": z.string(),
  "lenses.security.mode": z.string(),
  "lenses.sql.execution.mode": z.literal("IN_PROC"),
  "lenses.schema.registry.urls": urlList,
  "lenses.zookeeper.hosts": urlList,
  "lenses.connect.clusters": z.array(
    z.object({ name: z.string(), urls: urlList, statuses: z.string(), configs: z.string(), offsets: z.string() }),
  ),
});

const license = z.object({
  clientId: z.string(),
  isRespected: z.boolean(),
  maxBrokers: z.number().int(),
  maxMessages: z.number().int(),
  expiry: z.number().int().describe("epoch milliseconds"),
});

const tags = ["server"];

export const serverInfoApi = {
  config: defineRoute({
    method: "GET",
    path: "/api/config",
    level: "nodata",
    summary: "Loupe's settings under the keys the clients read (`lenses.*`), without secrets",
    tags,
    responses: { 200: json(clientConfig) },
  }),
  license: defineRoute({
    method: "GET",
    path: "/api/license",
    level: "nodata",
    summary: "License: Loupe needs none; the answer reads as valid and unlimited",
    tags,
    responses: { 200: json(license) },
  }),
};

export function serverInfoRoutes(service: ServerInfoService) {
  const app = new RouteGroup();
  app.handle(serverInfoApi.config, (c) => c.json(service.clientConfig(clusterOf(c), c.env?.server?.port)));
  app.handle(serverInfoApi.license, (c) => c.json(service.license()));
  return app;
}
