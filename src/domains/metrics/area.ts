import type { Config } from "../../config/schema.ts";
import { defineArea } from "../../http/area.ts";
import type { HttpCounters } from "../../http/middleware.ts";
import type { StreamRegistry } from "../../http/sse.ts";
import type { KafkaPool } from "../../kafka/index.ts";
import type { LagEngine } from "../../lag/engine.ts";
import type { JobStatus } from "../../util/background.ts";
import { metricsApi, metricsRoutes } from "./routes.ts";
import type { MetricsDeps } from "./service.ts";

export const metricsArea = defineArea({
  name: "metrics",
  routes: metricsApi,
  build: (d: {
    config: Config;
    kafka: KafkaPool;
    lag: LagEngine;
    counters: HttpCounters;
    streams: StreamRegistry;
    startedAt: number;
    processors: { metrics: NonNullable<MetricsDeps["processors"]> };
    background?: { status(): JobStatus[] };
  }) =>
    metricsRoutes(
      {
        pool: d.kafka,
        lag: d.lag,
        counters: d.counters,
        openStreams: () => d.streams.total,
        startedAt: d.startedAt,
        processors: (cluster) => d.processors.metrics(cluster),
        jobs: () => d.background?.status() ?? [],
      },
      d.config.metrics,
    ),
});
