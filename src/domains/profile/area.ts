import { defineArea } from "../../http/area.ts";
import { profileApi, profileRoutes } from "./routes.ts";
import type { ProfileService } from "./service.ts";

export const profileArea = defineArea({
  name: "profile",
  routes: profileApi,
  build: (d: { profiles: ProfileService }) => profileRoutes(d.profiles),
});
