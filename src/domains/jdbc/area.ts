import type { Store } from "../../db/index.ts";
import { defineArea } from "../../http/area.ts";
import type { StreamRegistry } from "../../http/sse.ts";
import type { KafkaPool } from "../../kafka/index.ts";
import type { LogHub } from "../../log/logger.ts";
import type { AuditService } from "../audit/service.ts";
import type { InsertService } from "../insert/service.ts";
import type { MetadataService } from "../metadata/service.ts";
import { storeTopicFormats } from "../metadata/topic-formats.ts";
import type { SqlService } from "../sql/service.ts";
import { jdbcApi, jdbcRoutes } from "./routes.ts";
import { jdbcSelectApi, jdbcSelectRoutes } from "./select-routes.ts";

/** The JDBC driver's queries (a websocket), listed with the other query routes. */
export const jdbcSelectArea = defineArea({
  name: "jdbc-select",
  routes: jdbcSelectApi,
  build: (d: { sql: SqlService; streams: StreamRegistry; store: Store; logs: LogHub }) =>
    jdbcSelectRoutes({ sql: d.sql, streams: d.streams, formats: storeTopicFormats(d.store.db), log: d.logs.logger("jdbc") }),
});

/** The JDBC driver's metadata and inserts, listed with the topics' metadata. */
export const jdbcArea = defineArea({
  name: "jdbc",
  routes: jdbcApi,
  build: (d: { inserts: InsertService; metadata: MetadataService; audit: AuditService; kafka: KafkaPool; logs: LogHub }) =>
    jdbcRoutes({ inserts: d.inserts, metadata: d.metadata, audit: d.audit, pool: d.kafka, log: d.logs.logger("jdbc") }),
});
