import { defineArea } from "../../http/area.ts";
import type { StreamRegistry } from "../../http/sse.ts";
import { auditApi, auditRoutes } from "./routes.ts";
import type { AuditService } from "./service.ts";

export const auditArea = defineArea({
  name: "audit",
  routes: auditApi,
  build: (d: { audit: AuditService; streams: StreamRegistry }) => auditRoutes(d.audit, d.streams),
});
