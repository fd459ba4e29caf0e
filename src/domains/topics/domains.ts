/**
 * Builds and mounts the Kafka-facing features that share the lag engine and the end-offset
 * sampler: topics, topic metadata, consumer groups, alert notifications and /metrics.
 */

import type { Hono } from "hono";
import type { Config } from "../../config/schema.ts";
import type { Db } from "../../db/index.ts";
import type { AppEnv } from "../../http/context.ts";
import type { HttpCounters } from "../../http/middleware.ts";
import type { ApiDocs } from "../../http/openapi.ts";
import type { StreamRegistry } from "../../http/sse.ts";
import type { KafkaPool } from "../../kafka/index.ts";
import { LagEngine } from "../../lag/engine.ts";
import { OffsetSampler } from "../../lag/sampler.ts";
import type { LogHub } from "../../log/logger.ts";
import { NotificationService } from "../alerts/notifications.ts";
import { alertRoutes } from "../alerts/routes.ts";
import type { AuditService } from "../audit/service.ts";
import { consumerRoutes } from "../consumers/routes.ts";
import { ConsumerService } from "../consumers/service.ts";
import { MetadataRepo } from "../metadata/repo.ts";
import { metadataRoutes } from "../metadata/routes.ts";
import { MetadataService } from "../metadata/service.ts";
import { metricsRoutes } from "../metrics/routes.ts";
import { topicRoutes } from "./routes.ts";
import { TopicService } from "./service.ts";

export interface KafkaDomains {
  pool: KafkaPool;
  lag: LagEngine;
  sampler: OffsetSampler;
  topics: TopicService;
  metadata: MetadataService;
  consumers: ConsumerService;
  notifications: NotificationService;
  /** Starts the background sampler. */
  start(): void;
  /** Stops the sampler and waits (bounded) for background record deletions. */
  stop(): Promise<void>;
}

export function buildKafkaDomains(deps: { config: Config; db: Db; pool: KafkaPool; audit: AuditService; logs: LogHub }): KafkaDomains {
  const { config, pool } = deps;
  const sampler = new OffsetSampler(
    pool,
    { intervalMs: config.lag.sampleInterval, windowMs: config.lag.sampleWindow },
    deps.logs.logger("sampler"),
  );
  const lag = new LagEngine(pool, sampler, { ttlMs: config.lag.cacheTtl });
  const notifications = new NotificationService(deps.db, deps.logs.logger("alerts"));
  const metadata = new MetadataService(new MetadataRepo(deps.db), pool);
  const topics = new TopicService({ pool, lag, sampler, metadata, audit: deps.audit, notifications, log: deps.logs.logger("topics") });
  const consumers = new ConsumerService(pool, lag);
  return {
    pool,
    lag,
    sampler,
    topics,
    metadata,
    consumers,
    notifications,
    start: () => sampler.start(),
    stop: async () => {
      sampler.stop();
      await topics.drain();
    },
  };
}

/** Mounts the /api routes on `api` and /metrics on the root `app`. */
export function mountKafkaDomains(
  d: KafkaDomains,
  api: Hono<AppEnv>,
  app: Hono<AppEnv>,
  docs: ApiDocs,
  figures: { counters: HttpCounters; streams: StreamRegistry; startedAt: number },
): void {
  api.route("/", topicRoutes(d.topics, docs));
  api.route("/", metadataRoutes(d.metadata, docs));
  api.route("/", consumerRoutes(d.consumers, docs));
  api.route("/", alertRoutes(d.notifications, docs));
  app.route(
    "/",
    metricsRoutes(
      { pool: d.pool, lag: d.lag, counters: figures.counters, openStreams: () => figures.streams.total, startedAt: figures.startedAt },
      docs,
    ),
  );
}
