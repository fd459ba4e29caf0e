import { defineArea } from "../../http/area.ts";
import type { KafkaPool } from "../../kafka/index.ts";
import { kafkaUserApi, kafkaUserRoutes } from "./routes.ts";
import { KafkaUserService } from "./service.ts";

export const kafkaUsersArea = defineArea({
  name: "kafka-users",
  routes: kafkaUserApi,
  build: (d: { kafka: KafkaPool }) => kafkaUserRoutes(new KafkaUserService(d.kafka)),
});
