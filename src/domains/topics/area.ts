import { defineArea } from "../../http/area.ts";
import type { KafkaPool } from "../../kafka/index.ts";
import type { InsertService } from "../insert/service.ts";
import type { SqlService } from "../sql/service.ts";
import { RecordBrowser, topicDecoders } from "./browse-records.ts";
import { topicApi, topicRoutes } from "./routes.ts";
import type { TopicService } from "./service.ts";

export const topicsArea = defineArea({
  name: "topics",
  routes: topicApi,
  build: (d: { topics: TopicService; inserts: InsertService; kafka: KafkaPool; sql: SqlService }) =>
    topicRoutes(d.topics, {
      inserts: d.inserts,
      browser: new RecordBrowser({ pool: d.kafka, decoders: (cluster, topic, viewer) => topicDecoders(d.sql, cluster, topic, viewer) }),
    }),
});
