import type { Hono } from "hono";
import { type AppDeps, createApp } from "./app.ts";
import { type Config, defaultCluster } from "./config/schema.ts";
import { openStore, type Store } from "./db/index.ts";
import { AuditService } from "./domains/audit/service.ts";
import { AuthService } from "./domains/auth/service.ts";
import type { ClusterProbe } from "./domains/health/routes.ts";
import { SqlService } from "./domains/sql/service.ts";
import { storeTopicFormats } from "./domains/sql/topic-formats.ts";
import { buildKafkaDomains, type KafkaDomains } from "./domains/topics/domains.ts";
import type { AppEnv } from "./http/context.ts";
import type { HttpCounters } from "./http/middleware.ts";
import { StreamRegistry } from "./http/sse.ts";
import { createKafkaPool, type KafkaPool } from "./kafka/index.ts";
import { LogHub as Hub, type LogHub, type LogSink } from "./log/logger.ts";
import { SchemaRegistryClient } from "./registry/client.ts";

/** Everything a running Loupe holds, built from a config. main.ts and the tests both use this. */
export interface Runtime {
  config: Config;
  store: Store;
  logs: LogHub;
  auth: AuthService;
  audit: AuditService;
  kafka: KafkaPool;
  streams: StreamRegistry;
  sql: SqlService;
  /** Topics, metadata, consumer groups, notifications, the lag engine and the offset sampler. */
  kafkaDomains: KafkaDomains;
  counters: HttpCounters;
  app: Hono<AppEnv>;
  /** Set when the first start created the admin user with a random password. */
  generatedAdminPassword?: string;
  close(): Promise<void>;
}

export function kafkaProbe(pool: KafkaPool, config: Config): ClusterProbe {
  return {
    names: () => config.kafka.clusters.map((c) => c.name),
    defaultName: () => defaultCluster(config).name,
    health: (name) => pool.get(name).health(),
  };
}

export async function buildRuntime(
  config: Config,
  opts: { sink?: LogSink; adminPassword?: string; app?: Partial<AppDeps> } = {},
): Promise<Runtime> {
  const logs = new Hub(config.log.level, opts.sink, { maxLines: config.log.maxLines, maxAgeMs: config.log.maxAge });
  const store = await openStore(config.dataDir);
  const audit = new AuditService(store.db, logs.logger("audit"));
  const auth = new AuthService(
    store.db,
    {
      tokenLifetimeMs: config.auth.tokenLifetime,
      idleTimeoutMs: config.auth.idleTimeout,
      maxFailedLogins: config.auth.maxFailedLogins,
      failedLoginWindowMs: config.auth.failedLoginWindow,
    },
    config.users,
    logs.logger("auth"),
  );
  const admin = await auth.ensureBootstrapAdmin(opts.adminPassword);
  const kafka = createKafkaPool(
    config.kafka.clusters.map((c) => ({
      name: c.name,
      bootstrapServers: c.bootstrapServers,
      clientId: c.clientId,
      default: c.default,
      ...(c.sasl ? { sasl: c.sasl } : {}),
      ...(c.tls ? { tls: c.tls } : {}),
    })),
  );
  const streams = new StreamRegistry(config.auth.maxStreamsPerUser);
  const sql = new SqlService({
    pool: kafka,
    formats: storeTopicFormats(store.sqlite),
    registry: config.sql.schemaRegistry ? new SchemaRegistryClient({ urls: config.sql.schemaRegistry.urls }) : null,
    maxLimit: config.sql.maxLimit,
    maxQueriesPerUser: config.sql.maxQueriesPerUser,
    maxSizeBytes: config.sql.maxSize,
    maxQueryTimeMs: config.sql.maxQueryTime,
    maxQueryMemoryBytes: config.sql.maxQueryMemory,
    log: logs.logger("sql"),
  });
  const counters: HttpCounters = { requests: 0, errors: 0, totalMs: 0 };
  const kafkaDomains = buildKafkaDomains({ config, db: store.db, pool: kafka, audit, logs });
  const app = createApp({
    config,
    store,
    logs,
    auth,
    audit,
    clusters: kafkaProbe(kafka, config),
    streams,
    sql,
    counters,
    kafkaDomains,
    ...opts.app,
  });
  const timers: ReturnType<typeof setInterval>[] = [];
  const housekeeping = async () => {
    try {
      await audit.prune({ maxAgeMs: config.audit.maxAge, maxEntries: config.audit.maxEntries });
      await auth.pruneTokens();
    } catch (e) {
      logs.logger("housekeeping").warn("housekeeping failed", {}, e);
    }
  };
  timers.push(setInterval(housekeeping, 3_600_000));
  void housekeeping();
  const metricsLog = logs.logger("metrics");
  let lastRequests = 0;
  timers.push(
    setInterval(() => {
      const mem = process.memoryUsage();
      metricsLog.metrics(
        `requests=${counters.requests} (+${counters.requests - lastRequests}) errors=${counters.errors} ` +
          `avgMs=${counters.requests ? (counters.totalMs / counters.requests).toFixed(1) : "0"} ` +
          `openStreams=${streams.total} rssMb=${(mem.rss / 1048576).toFixed(1)} ` +
          `kafkaRttMs=${config.kafka.clusters.map((c) => `${c.name}:${kafka.get(c.name).lastRoundTripMs?.toFixed(1) ?? "-"}`).join(",")}`,
      );
      lastRequests = counters.requests;
    }, config.log.metricsInterval),
  );
  for (const t of timers) t.unref?.();
  kafkaDomains.start();
  return {
    config,
    store,
    logs,
    auth,
    audit,
    kafka,
    streams,
    sql,
    kafkaDomains,
    counters,
    app,
    ...(admin.password ? { generatedAdminPassword: admin.password } : {}),
    close: async () => {
      for (const t of timers) clearInterval(t);
      sql.close();
      await kafkaDomains.stop();
      await kafka.close();
      await store.close();
    },
  };
}
