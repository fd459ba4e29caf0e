import { clusterOf } from "../../http/context.ts";
import { defineRoute, json, RouteGroup } from "../../http/route.ts";
import { clientConfig, license } from "./schemas.ts";
import type { ServerInfoService } from "./service.ts";

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
