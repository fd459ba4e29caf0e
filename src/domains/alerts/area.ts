import { defineArea } from "../../http/area.ts";
import type { StreamRegistry } from "../../http/sse.ts";
import type { NotificationService } from "./notifications.ts";
import { alertApi, alertRoutes } from "./routes.ts";

export const alertsArea = defineArea({
  name: "alerts",
  routes: alertApi,
  build: (d: { notifications: NotificationService; streams: StreamRegistry }) => alertRoutes(d.notifications, d.streams),
});
