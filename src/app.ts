import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { compress } from "hono/compress";
import { AREAS } from "./areas.ts";
import type { Config } from "./config/schema.ts";
import { isStoreFull, isStoreRefusedText } from "./db/dialect.ts";
import type { Store } from "./db/index.ts";
import type { GroupService } from "./domains/access/group-service.ts";
import type { InternalTopics } from "./domains/access/internal-topics.ts";
import type { NotificationService } from "./domains/alerts/notifications.ts";
import type { AlertOutbox } from "./domains/alerts/outbox.ts";
import type { AlertSettings } from "./domains/alerts/settings.ts";
import type { AuditService } from "./domains/audit/service.ts";
import type { AuthService } from "./domains/auth/service.ts";
import type { KafkaConfigService } from "./domains/configs/service.ts";
import type { ConnectService } from "./domains/connect/service.ts";
import type { ConsumerService } from "./domains/consumers/service.ts";
import type { ClusterProbe } from "./domains/health/service.ts";
import type { InsertService } from "./domains/insert/service.ts";
import type { MaskingService } from "./domains/masking/service.ts";
import type { MetadataService } from "./domains/metadata/service.ts";
import type { ProcessorService } from "./domains/processors/service.ts";
import type { ProfileService } from "./domains/profile/service.ts";
import type { RedriveService } from "./domains/redrive/service.ts";
import type { SchemaProxyService } from "./domains/schemas/service.ts";
import type { ServerInfoService } from "./domains/server-info/service.ts";
import type { ServiceAccountService } from "./domains/service-accounts/service.ts";
import type { SqlService } from "./domains/sql/service.ts";
import type { SqlLibraryService } from "./domains/sql-library/service.ts";
import type { TopicService } from "./domains/topics/service.ts";
import type { UserService } from "./domains/users/service.ts";
import { AppError } from "./errors.ts";
import { type AccessRule, indexRules, ruleKey } from "./http/access.ts";
import type { Area } from "./http/area.ts";
import type { AppEnv } from "./http/context.ts";
import { errorBody } from "./http/errors.ts";
import { securityHeaders } from "./http/headers.ts";
import { hostCheck } from "./http/host-check.ts";
import { accessLog, authorize, type HttpCounters, requestId } from "./http/middleware.ts";
import { openApiDocument } from "./http/openapi.ts";
import { RouteGroup } from "./http/route.ts";
import type { StreamRegistry } from "./http/sse.ts";
import type { KafkaPool } from "./kafka/index.ts";
import type { LagEngine } from "./lag/engine.ts";
import type { LogHub } from "./log/logger.ts";
import { ACCESS_RULES } from "./routes.ts";
import { uiApi } from "./ui/routes.ts";
import type { JobStatus } from "./util/background.ts";
import { VERSION } from "./version.ts";

/**
 * Everything the HTTP app serves, built by the composition root (src/compose.ts). Every route
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
  /** Each user's query history and saved queries. */
  sqlLibrary: SqlLibraryService;
  /** INSERT statements and the JDBC driver's inserts. */
  inserts: InsertService;
  /** Stream processors (`/api/streams`); their engine runs inside this Loupe. */
  processors: ProcessorService;
  /** Dead-letter redrive jobs (`/api/redrives`); their engine runs inside this Loupe. */
  redrives: RedriveService;
  topics: TopicService;
  /** Kafka's, Connect's, the registry's and Loupe's topics: an unrestricted admin's records, marked internal. */
  internalTopics: InternalTopics;
  metadata: MetadataService;
  consumers: ConsumerService;
  notifications: NotificationService;
  /** Alert settings and conditions per cluster. */
  alertSettings: AlertSettings;
  /** Deliveries of notifications to Alertmanagers and webhooks. */
  alertOutbox: AlertOutbox;
  /** The schema registry proxy (`/api/proxy-sr`), over the registry upstream the decoders share. */
  schemas: SchemaProxyService;
  /** The Kafka Connect proxy's clusters, one failover client per alias. */
  connect: ConnectService;
  /** What the clients read beyond the SPEC: `/api/config`, `/api/license`, favourites, broker configs. */
  serverInfo: ServerInfoService;
  profiles: ProfileService;
  kafkaConfigs: KafkaConfigService;
  /** Groups of the config file and the store (the admin API; scopes are read from them). */
  groups: GroupService;
  /** Data masking policies (the admin API; every query's decoders read them through SqlService). */
  masking: MaskingService;
  /** Local users (config file and store) and service accounts, managed through the admin API. */
  users: UserService;
  serviceAccounts: ServiceAccountService;
  /** The /metrics figures: the lag engine over the pool, HTTP counters and uptime. */
  kafka: KafkaPool;
  lag: LagEngine;
  counters: HttpCounters;
  startedAt: number;
  /** The background jobs' status, for GET /api/health and /metrics. */
  background?: { status(): JobStatus[] };
  /**
   * Test overrides only: extra routes (tests of the middleware itself), declared with
   * `defineRoute` and served through `handle` like every other route.
   */
  extraRoutes?: (group: RouteGroup) => void;
}

/** The methods routes are declared with, for the Allow header of a 405. */
const METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH"] as const;

/** Builds the whole HTTP app from its dependencies. No globals: tests build their own. */
export function createApp(deps: AppDeps): Hono<AppEnv> {
  const log = deps.logs.logger("http");
  const counters = deps.counters;
  const app = new OpenAPIHono<AppEnv>();

  // x-service-cluster picks one of the configured clusters for an /api route; the default
  // otherwise (also for the routes outside /api, whose roles are those on the default cluster).
  const selectCluster = (rule: AccessRule, c: Context<AppEnv>): string => {
    const name = rule.path.startsWith("/api/") ? c.req.header("x-service-cluster") : undefined;
    if (name !== undefined && !deps.clusters.names().includes(name)) throw new AppError("NOT_FOUND", `Unknown cluster '${name}'`);
    // A Connect cluster's connectors act on the Kafka cluster it is bound to, whatever the request selects.
    const bound = rule.path.startsWith("/api/proxy-connect/") ? deps.connect.kafkaClusterOf(c.req.param("clusterAlias") ?? "") : undefined;
    const cluster = bound || (name ?? deps.clusters.defaultName());
    c.set("cluster", cluster);
    return cluster;
  };
  const guard = authorize({ auth: deps.auth, audit: deps.audit, selectCluster });

  app.use("*", requestId());
  app.use("*", securityHeaders());
  app.use("*", accessLog(log, counters));
  // Before anything reads the request: a Host that names no name of this Loupe is 421.
  app.use(
    "*",
    hostCheck({
      listenHost: deps.config.server.host,
      allowedHosts: deps.config.server.allowedHosts,
      checkForwardedHost: deps.config.server.checkForwardedHost,
    }),
  );
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
    c.set("rule", undefined);
    c.set("guard", guard);
    await next();
  });

  /** The rules of every route served, from the groups that handle them. */
  const served: AccessRule[] = [];
  const mount = (group: RouteGroup) => {
    app.route("/", group);
    served.push(...group.rules);
  };

  // Test-only routes first: they never shadow an area's, and the UI's catch-all stays last.
  const extra = new RouteGroup();
  deps.extraRoutes?.(extra);
  mount(extra);
  let openapi: Record<string, unknown> | undefined;
  const parts = { ...deps, openApi: () => (openapi ??= openApiDocument(app, VERSION)) };
  const areas: readonly Area<typeof parts>[] = AREAS;
  for (const area of areas) mount(area.build(parts));

  app.notFound((c) => {
    const path = c.req.path;
    // The path exists with other methods: 405 with Allow. Hono's own router says which (the
    // UI's catch-all answers any GET and does not count).
    const methods = METHODS.filter((m) =>
      app.router.match(m, path)[0].some(([[, route]]) => route.method !== "ALL" && route.path !== uiApi.assets.access.path),
    );
    if (methods.length) {
      const err = new AppError("METHOD_NOT_ALLOWED", `${c.req.method} is not allowed on ${path}`, {
        headers: { Allow: methods.join(", ") },
      });
      return respondError(c, err);
    }
    return respondError(c, new AppError("NOT_FOUND", `No such resource: ${c.req.method} ${path}`));
  });

  app.onError((err, c) => {
    if (err instanceof AppError) return respondError(c, err);
    const requestId = c.get("requestId") ?? "unknown";
    if (isStoreFull(err)) {
      // Nothing was acknowledged: a full disk is the operator's to fix, and the client may retry.
      log.error("the store is full", { requestId, method: c.req.method, path: c.req.path }, err);
      return respondError(
        c,
        new AppError("UNAVAILABLE", "Loupe's store is full: the request was not carried out", { headers: { "Retry-After": "30" } }),
      );
    }
    if (isStoreRefusedText(err)) {
      // A NUL in a filter or a name no route's schema checked: bad input, on PostgreSQL as it is.
      log.warn("the store refused a text of the request", { requestId, method: c.req.method, path: c.req.path });
      return respondError(c, new AppError("BAD_REQUEST", "The request holds a NUL character, which no name or filter may contain"));
    }
    log.error("unhandled error", { requestId, method: c.req.method, path: c.req.path }, err);
    return respondError(c, new AppError("INTERNAL", "Internal server error"));
  });

  assertRoutesCovered(app, indexRules(served));
  assertTableServed(served, extra.rules);
  return app;
}

function respondError(c: import("hono").Context<AppEnv>, err: AppError): Response {
  const body = errorBody(err, c.get("requestId") ?? "unknown");
  const res = c.json(body, err.status as 400);
  for (const [k, v] of Object.entries(err.headers ?? {})) res.headers.set(k, v);
  return res;
}

/**
 * Every registered handler must have an access rule: a route registered without its
 * declaration (a plain `app.get`) fails start-up.
 */
export function assertRoutesCovered(app: Hono<AppEnv>, rules: Map<string, AccessRule>): void {
  const missing = app.routes
    .filter((r) => r.method !== "ALL")
    .map((r) => ruleKey(r.method, r.path))
    .filter((key) => !rules.has(key));
  if (missing.length) throw new Error(`Routes without an access rule: ${[...new Set(missing)].join(", ")}`);
}

/**
 * The access table (src/routes.ts, which the role table in docs/api.md and the role matrix read) is exactly what
 * the app serves: a declared route no group serves, or a route served under a declaration
 * the table does not list, fails start-up. Test-only routes are the exception.
 */
export function assertTableServed(served: readonly AccessRule[], testOnly: readonly AccessRule[]): void {
  const servedSet = new Set(served);
  const unserved = ACCESS_RULES.filter((r) => !servedSet.has(r));
  const table = new Set(ACCESS_RULES);
  const unlisted = served.filter((r) => !table.has(r) && !testOnly.includes(r));
  const keys = (rules: readonly AccessRule[]) => rules.map((r) => ruleKey(r.method, r.path)).join(", ");
  if (unserved.length) throw new Error(`Routes in the access table that nothing serves: ${keys(unserved)}`);
  if (unlisted.length) throw new Error(`Routes served but missing from the access table (src/routes.ts): ${keys(unlisted)}`);
}
