import { defineArea } from "../../http/area.ts";
import type { SchemaProxyService } from "../schemas/service.ts";
import { authApi, authRoutes } from "./routes.ts";
import type { AuthService } from "./service.ts";

export const authArea = defineArea({
  name: "auth",
  routes: authApi,
  build: (d: { auth: AuthService; schemas: SchemaProxyService }) => authRoutes(d.auth, d.schemas.allowDelete),
});
