import { defineArea } from "../../http/area.ts";
import type { KafkaPool } from "../../kafka/index.ts";
import type { LagEngine } from "../../lag/engine.ts";
import type { InternalTopics } from "../access/internal-topics.ts";
import { clusterApi, clusterRoutes } from "./routes.ts";
import { ClusterOverviewService } from "./service.ts";

export const clusterArea = defineArea({
  name: "cluster",
  routes: clusterApi,
  build: (d: { kafka: KafkaPool; lag: LagEngine; internalTopics: InternalTopics }) =>
    clusterRoutes(new ClusterOverviewService(d.kafka, d.lag, d.internalTopics)),
});
