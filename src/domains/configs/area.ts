import { defineArea } from "../../http/area.ts";
import { configsApi, configsRoutes } from "./routes.ts";
import type { KafkaConfigService } from "./service.ts";

export const configsArea = defineArea({
  name: "configs",
  routes: configsApi,
  build: (d: { kafkaConfigs: KafkaConfigService }) => configsRoutes(d.kafkaConfigs),
});
