import { defineArea } from "../../http/area.ts";
import { metadataApi, metadataRoutes } from "./routes.ts";
import type { MetadataService } from "./service.ts";

export const metadataArea = defineArea({
  name: "metadata",
  routes: metadataApi,
  build: (d: { metadata: MetadataService }) => metadataRoutes(d.metadata),
});
