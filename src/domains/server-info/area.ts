import { defineArea } from "../../http/area.ts";
import { serverInfoApi, serverInfoRoutes } from "./routes.ts";
import type { ServerInfoService } from "./service.ts";

export const serverInfoArea = defineArea({
  name: "server-info",
  routes: serverInfoApi,
  build: (d: { serverInfo: ServerInfoService }) => serverInfoRoutes(d.serverInfo),
});
