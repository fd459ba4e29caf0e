import { defineArea } from "../http/area.ts";
import { openApiRoute } from "../http/openapi.ts";
import { apiDocsRoutes, uiApi, uiRoutes } from "./routes.ts";

/** The OpenAPI document and the reference page that reads it. */
export const apiDocsArea = defineArea({
  name: "api-docs",
  routes: [openApiRoute, uiApi.docs],
  build: (d: { openApi: () => Record<string, unknown> }) => apiDocsRoutes(d.openApi),
});

/** The web UI's page and files; its catch-all is the last route served. */
export const uiArea = defineArea({
  name: "ui",
  routes: [uiApi.index, uiApi.assets],
  build: () => uiRoutes(),
});
