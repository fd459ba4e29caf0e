import { defineArea } from "../../http/area.ts";
import type { LogHub } from "../../log/logger.ts";
import type { LiveDeps } from "./connection.ts";
import { liveApi, liveRoutes } from "./routes.ts";

export const liveArea = defineArea({
  name: "live",
  routes: liveApi,
  build: (d: Omit<LiveDeps, "log"> & { logs: LogHub }) => liveRoutes({ ...d, log: d.logs.logger("live") }),
});
