import { defineArea } from "../../http/area.ts";
import type { LogHub } from "../../log/logger.ts";
import { logApi, logRoutes } from "./routes.ts";

export const logsArea = defineArea({
  name: "logs",
  routes: logApi,
  build: (d: { logs: LogHub }) => logRoutes(d.logs),
});
