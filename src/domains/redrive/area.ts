import { defineArea } from "../../http/area.ts";
import { redriveApi, redriveRoutes } from "./routes.ts";
import type { RedriveService } from "./service.ts";

export const redriveArea = defineArea({
  name: "redrive",
  routes: redriveApi,
  build: (d: { redrives: RedriveService }) => redriveRoutes(d.redrives),
});
