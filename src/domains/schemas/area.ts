import { defineArea } from "../../http/area.ts";
import type { AuditService } from "../audit/service.ts";
import type { ClusterProbe } from "../health/service.ts";
import { schemaApi, schemaRoutes } from "./routes.ts";
import type { SchemaProxyService } from "./service.ts";

export const schemasArea = defineArea({
  name: "schemas",
  routes: schemaApi,
  build: (d: { schemas: SchemaProxyService; audit: AuditService; clusters: ClusterProbe }) =>
    schemaRoutes({ proxy: d.schemas, audit: d.audit, clusters: () => d.clusters.names() }),
});
