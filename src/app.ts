import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { compress } from "hono/compress";
import type { Config } from "./config/schema.ts";
import type { Store } from "./db/index.ts";
import type { NotificationService } from "./domains/alerts/notifications.ts";
import { alertRoutes } from "./domains/alerts/routes.ts";
import { auditRoutes } from "./domains/audit/routes.ts";
import type { AuditService } from "./domains/audit/service.ts";
import { authRoutes } from "./domains/auth/routes.ts";
import type { AuthService } from "./domains/auth/service.ts";
import { consumerRoutes } from "./domains/consumers/routes.ts";
import type { ConsumerService } from "./domains/consumers/service.ts";
import { healthRoutes } from "./domains/health/routes.ts";
import type { ClusterProbe } from "./domains/health/service.ts";
import { logRoutes } from "./domains/logs/routes.ts";
import { metadataRoutes } from "./domains/metadata/routes.ts";
import type { MetadataService } from "./domains/metadata/service.ts";
import { metricsRoutes } from "./domains/metrics/routes.ts";
import { sqlRoutes } from "./domains/sql/routes.ts";
import type { SqlService } from "./domains/sql/service.ts";
import { topicRoutes } from "./domains/topics/routes.ts";
import type { TopicService } from "./domains/topics/service.ts";
import { AppError } from "./errors.ts";
import { ACCESS_RULES, type AccessRule, indexRules, patternRegex, ruleKey } from "./http/access.ts";
import type { AppEnv } from "./http/context.ts";
import { errorBody } from "./http/errors.ts";
import { securityHeaders } from "./http/headers.ts";
import { accessLog, authorize, type HttpCounters, requestId } from "./http/middleware.ts";
import { ApiDocs, openApiDocument } from "./http/openapi.ts";
import type { StreamRegistry } from "./http/sse.ts";
import type { KafkaPool } from "./kafka/index.ts";
import type { LagEngine } from "./lag/engine.ts";
import type { LogHub } from "./log/logger.ts";
import { uiRoutes } from "./ui/routes.ts";
import { VERSION } from "./version.ts";

/**
 * Everything the HTTP app serves, built by the composition root (src/runtime.ts). Every route
 * group is always mounted: no feature is optional, so the access table, the OpenAPI document
 * and the role matrix always see the same routes.
 */
export interface AppDeps {
  config: Config;
  store: Store;
  logs: LogHub;
  auth: AuthService;
  audit: AuditService;
  clusters: ClusterProbe;
  streams: StreamRegistry;
  sql: SqlService;
  topics: TopicService;
  metadata: MetadataService;
  consumers: ConsumerService;
  notifications: NotificationService;
  /** The /metrics figures: the lag engine over the pool, HTTP counters and uptime. */
  kafka: KafkaPool;
  lag: LagEngine;
  counters: HttpCounters;
  startedAt: number;
  /** Test overrides only: replaces the access table (tests of the middleware itself). */
  rules?: AccessRule[];
  /** Test overrides only: extra routes mounted under /api (tests of the middleware itself). */
  extraApi?: (app: Hono<AppEnv>) => void;
}

/** Builds the whole HTTP app from its dependencies. No globals: tests build their own. */
export function createApp(deps: AppDeps): Hono<AppEnv> {
  const rulesList = deps.rules ?? ACCESS_RULES;
  const rules = indexRules(rulesList);
  const log = deps.logs.logger("http");
  const counters = deps.counters;
  const docs = new ApiDocs();
  const app = new Hono<AppEnv>();

  app.use("*", requestId());
  app.use("*", securityHeaders());
  app.use("*", accessLog(log, counters));
  app.use("/api/*", compress({ threshold: 4096 }));
  app.use(
    "*",
    bodyLimit({
      maxSize: deps.config.server.bodyLimit,
      onError: () => {
        throw new AppError("PAYLOAD_TOO_LARGE", `Request body is larger than ${deps.config.server.bodyLimit} bytes`);
      },
    }),
  );
  app.use("*", async (c, next) => {
    c.set("session", undefined);
    c.set("auditContent", undefined);
    await next();
  });
  app.use("*", authorize({ rules, auth: deps.auth, audit: deps.audit }));
  app.use("/api/*", async (c, next) => {
    // x-service-cluster picks one of the configured clusters; the default otherwise.
    const name = c.req.header("x-service-cluster");
    if (name !== undefined && !deps.clusters.names().includes(name)) throw new AppError("NOT_FOUND", `Unknown cluster '${name}'`);
    c.set("cluster", name ?? deps.clusters.defaultName());
    await next();
  });

  const api = new Hono<AppEnv>();
  api.route("/", authRoutes(deps.auth, docs));
  api.route(
    "/",
    healthRoutes(
      {
        probe: deps.clusters,
        storeCheck: async () => void deps.store.sqlite.query("SELECT 1").get(),
        version: VERSION,
        startedAt: deps.startedAt,
      },
      docs,
    ),
  );
  api.route("/", auditRoutes(deps.audit, deps.streams, docs));
  api.route("/", sqlRoutes(deps.sql, deps.streams, docs));
  api.route("/", logRoutes(deps.logs, docs));
  let openapi: Record<string, unknown> | undefined;
  api.get("/openapi.json", (c) => c.json((openapi ??= openApiDocument(rulesList, docs, VERSION))));
  deps.extraApi?.(api);
  api.route("/", topicRoutes(deps.topics, docs));
  api.route("/", metadataRoutes(deps.metadata, docs));
  api.route("/", consumerRoutes(deps.consumers, docs));
  api.route("/", alertRoutes(deps.notifications, docs));
  app.route(
    "/",
    metricsRoutes({ pool: deps.kafka, lag: deps.lag, counters, openStreams: () => deps.streams.total, startedAt: deps.startedAt }, docs),
  );
  app.route("/api", api);
  app.route("/", uiRoutes());

  const patterns = rulesList.map((r) => ({ rule: r, re: patternRegex(r.path) }));
  app.notFound((c) => {
    const path = c.req.path;
    // The path exists with other methods: 405 with Allow.
    const methods = patterns.filter((p) => p.rule.path !== "/*" && p.re.test(path)).map((p) => p.rule.method);
    if (methods.length) {
      const err = new AppError("METHOD_NOT_ALLOWED", `${c.req.method} is not allowed on ${path}`, {
        headers: { Allow: [...new Set(methods)].join(", ") },
      });
      return respondError(c, err);
    }
    return respondError(c, new AppError("NOT_FOUND", `No such resource: ${c.req.method} ${path}`));
  });

  app.onError((err, c) => {
    if (err instanceof AppError) return respondError(c, err);
    const requestId = c.get("requestId") ?? "unknown";
    log.error("unhandled error", { requestId, method: c.req.method, path: c.req.path }, err);
    return respondError(c, new AppError("INTERNAL", "Internal server error"));
  });

  assertRoutesCovered(app, rules);
  return app;
}

function respondError(c: import("hono").Context<AppEnv>, err: AppError): Response {
  const body = errorBody(err, c.get("requestId") ?? "unknown");
  const res = c.json(body, err.status as 400);
  for (const [k, v] of Object.entries(err.headers ?? {})) res.headers.set(k, v);
  return res;
}

/** Every registered handler must have an access rule: a route missing from the table fails start-up. */
export function assertRoutesCovered(app: Hono<AppEnv>, rules: Map<string, AccessRule>): void {
  const missing = app.routes
    .filter((r) => r.method !== "ALL")
    .map((r) => ruleKey(r.method, r.path))
    .filter((key) => !rules.has(key));
  if (missing.length) throw new Error(`Routes without an access rule: ${[...new Set(missing)].join(", ")}`);
}
