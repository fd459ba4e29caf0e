import { defineArea } from "../../http/area.ts";
import { consumerApi, consumerRoutes } from "./routes.ts";
import type { ConsumerService } from "./service.ts";

export const consumersArea = defineArea({
  name: "consumers",
  routes: consumerApi,
  build: (d: { consumers: ConsumerService }) => consumerRoutes(d.consumers),
});
