import { defineArea } from "../../http/area.ts";
import type { StreamRegistry } from "../../http/sse.ts";
import type { NotificationService } from "./notifications.ts";
import type { AlertOutbox } from "./outbox.ts";
import { alertApi, alertRoutes } from "./routes.ts";
import type { AlertSettings } from "./settings.ts";

export const alertsArea = defineArea({
  name: "alerts",
  routes: alertApi,
  build: (d: { notifications: NotificationService; alertSettings: AlertSettings; alertOutbox: AlertOutbox; streams: StreamRegistry }) =>
    alertRoutes({ notifications: d.notifications, settings: d.alertSettings, outbox: d.alertOutbox, streams: d.streams }),
});
