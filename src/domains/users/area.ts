import { defineArea } from "../../http/area.ts";
import { userApi, userRoutes } from "./routes.ts";
import type { UserService } from "./service.ts";

export const usersArea = defineArea({
  name: "users",
  routes: userApi,
  build: (d: { users: UserService }) => userRoutes(d.users),
});
