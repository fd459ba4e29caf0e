import { defineArea } from "../../http/area.ts";
import { serviceAccountApi, serviceAccountRoutes } from "./routes.ts";
import type { ServiceAccountService } from "./service.ts";

export const serviceAccountsArea = defineArea({
  name: "service-accounts",
  routes: serviceAccountApi,
  build: (d: { serviceAccounts: ServiceAccountService }) => serviceAccountRoutes(d.serviceAccounts),
});
