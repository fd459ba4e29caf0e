import { defineArea } from "../../http/area.ts";
import type { KafkaPool } from "../../kafka/index.ts";
import { quotasApi, quotasRoutes } from "./routes.ts";
import { QuotaService } from "./service.ts";

export const quotasArea = defineArea({
  name: "quotas",
  routes: quotasApi,
  build: (d: { kafka: KafkaPool }) => quotasRoutes(new QuotaService(d.kafka)),
});
