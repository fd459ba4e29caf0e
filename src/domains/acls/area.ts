import type { Config } from "../../config/schema.ts";
import { defineArea } from "../../http/area.ts";
import type { KafkaPool } from "../../kafka/index.ts";
import { aclApi, aclRoutes } from "./routes.ts";
import { AclService } from "./service.ts";

export const aclsArea = defineArea({
  name: "acls",
  routes: aclApi,
  build: (d: { kafka: KafkaPool; config: Config }) =>
    aclRoutes(new AclService(d.kafka, (cluster) => d.config.kafka.clusters.find((c) => c.name === cluster)?.authorizer)),
});
