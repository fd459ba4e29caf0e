import { defineArea } from "../../http/area.ts";
import type { StreamRegistry } from "../../http/sse.ts";
import type { SqlLibraryService } from "../sql-library/service.ts";
import { sqlApi, sqlRoutes } from "./routes.ts";
import type { SqlService } from "./service.ts";

export const sqlArea = defineArea({
  name: "sql",
  routes: sqlApi,
  build: (d: { sql: SqlService; streams: StreamRegistry; sqlLibrary: SqlLibraryService }) =>
    sqlRoutes(d.sql, d.streams, (user, cluster, text, stop) => void d.sqlLibrary.recordRun(user, cluster, text, stop)),
});
