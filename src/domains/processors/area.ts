import { defineArea } from "../../http/area.ts";
import { processorApi, processorRoutes } from "./routes.ts";
import type { ProcessorService } from "./service.ts";

export const processorsArea = defineArea({
  name: "processors",
  routes: processorApi,
  build: (d: { processors: ProcessorService }) => processorRoutes(d.processors),
});
