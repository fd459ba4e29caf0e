import { defineArea } from "../../http/area.ts";
import { sqlLibraryApi, sqlLibraryRoutes } from "./routes.ts";
import type { SqlLibraryService } from "./service.ts";

export const sqlLibraryArea = defineArea({
  name: "sql-library",
  routes: sqlLibraryApi,
  build: (d: { sqlLibrary: SqlLibraryService }) => sqlLibraryRoutes(d.sqlLibrary),
});
