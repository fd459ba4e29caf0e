import { defineArea } from "../../http/area.ts";
import type { NotificationService } from "../alerts/notifications.ts";
import type { AuditService } from "../audit/service.ts";
import { connectApi, connectRoutes } from "./routes.ts";
import type { ConnectService } from "./service.ts";

export const connectArea = defineArea({
  name: "connect",
  routes: connectApi,
  build: (d: { connect: ConnectService; notifications: NotificationService; audit: AuditService }) =>
    connectRoutes({ service: d.connect, notifications: d.notifications, audit: d.audit }),
});
