import { defineArea } from "../../http/area.ts";
import { groupApi, groupRoutes } from "./group-routes.ts";
import type { GroupService } from "./group-service.ts";

export const groupsArea = defineArea({
  name: "groups",
  routes: groupApi,
  build: (d: { groups: GroupService }) => groupRoutes(d.groups),
});
