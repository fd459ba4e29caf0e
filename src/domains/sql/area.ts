import { defineArea } from "../../http/area.ts";
import type { StreamRegistry } from "../../http/sse.ts";
import { sqlApi, sqlRoutes } from "./routes.ts";
import type { SqlService } from "./service.ts";

/** Each run is kept in its user's history (the query library, which reads this area's runs). */
interface RunHistory {
  recordRun(user: string, cluster: string, text: string, stopReason?: string): Promise<void>;
}

export const sqlArea = defineArea({
  name: "sql",
  routes: sqlApi,
  build: (d: { sql: SqlService; streams: StreamRegistry; sqlLibrary: RunHistory }) =>
    sqlRoutes(d.sql, d.streams, (user, cluster, text, stop) => void d.sqlLibrary.recordRun(user, cluster, text, stop)),
});
