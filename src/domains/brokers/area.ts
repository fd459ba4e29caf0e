import { defineArea } from "../../http/area.ts";
import type { KafkaPool } from "../../kafka/index.ts";
import { brokersApi, brokersRoutes } from "./routes.ts";
import { BrokerService } from "./service.ts";

export const brokersArea = defineArea({
  name: "brokers",
  routes: brokersApi,
  build: (d: { kafka: KafkaPool }) => brokersRoutes(new BrokerService(d.kafka)),
});
