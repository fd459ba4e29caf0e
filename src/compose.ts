import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
/**
 * The composition root: the one place where Loupe is built from its config, in this order:
 * store -> logs -> Kafka pool -> services -> HTTP app. `src/main.ts` calls it to serve; tests call
 * it the same way, with overrides, so what they test is what runs.
 */
import type { Hono } from "hono";
import { type AppDeps, createApp } from "./app.ts";
import { type Config, credentialWarnings, defaultCluster, deprecations } from "./config/schema.ts";
import type { Db } from "./db/index.ts";
import { InstanceEvents } from "./db/instance-events.ts";
import { Leases } from "./db/lease.ts";
import { openConfiguredStore } from "./db/open.ts";
import { GroupRepo } from "./domains/access/group-repo.ts";
import { GroupService } from "./domains/access/group-service.ts";
import { internalTopicsOf } from "./domains/access/internal-topics.ts";
import { BrokerMetrics } from "./domains/alerts/broker-metrics.ts";
import { ConnectorRestarts } from "./domains/alerts/connect-failures.ts";
import { AlertEvaluator } from "./domains/alerts/evaluator.ts";
import { NotificationService } from "./domains/alerts/notifications.ts";
import { AlertOutbox } from "./domains/alerts/outbox.ts";
import { NotificationRetention } from "./domains/alerts/retention.ts";
import type { AlertNotification } from "./domains/alerts/schemas.ts";
import { ServiceHostHealth } from "./domains/alerts/service-hosts.ts";
import { AlertSettings } from "./domains/alerts/settings.ts";
import { AuditService } from "./domains/audit/service.ts";
import type { AuditEntry } from "./domains/audit/types.ts";
import { LdapDirectory } from "./domains/auth/ldap.ts";
import { type AuthOptions, AuthService } from "./domains/auth/service.ts";
import { KafkaConfigService } from "./domains/configs/service.ts";
import { ConnectService } from "./domains/connect/service.ts";
import { ConsumerService } from "./domains/consumers/service.ts";
import { type ClusterProbe, kafkaProbe } from "./domains/health/service.ts";
import { InsertService } from "./domains/insert/service.ts";
import { MaskingRepo } from "./domains/masking/repo.ts";
import { MaskingService } from "./domains/masking/service.ts";
import { MetadataRepo } from "./domains/metadata/repo.ts";
import { MetadataService } from "./domains/metadata/service.ts";
import { storeTopicFormats } from "./domains/metadata/topic-formats.ts";
import { ProcessorEngine } from "./domains/processors/engine.ts";
import { outputSchemaOf as outputSchemas } from "./domains/processors/output.ts";
import { ProcessorPrograms } from "./domains/processors/programs.ts";
import { ProcessorRepo } from "./domains/processors/repo.ts";
import { ProcessorService } from "./domains/processors/service.ts";
import { runnerSetup } from "./domains/processors/setup.ts";
import { ProfileRepo } from "./domains/profile/repo.ts";
import { ProfileService } from "./domains/profile/service.ts";
import type { RedriveService } from "./domains/redrive/service.ts";
import { redriveParts } from "./domains/redrive/setup.ts";
import { SchemaProxyService } from "./domains/schemas/service.ts";
import { ServerInfoService } from "./domains/server-info/service.ts";
import { ServiceAccountService } from "./domains/service-accounts/service.ts";
import { SqlService } from "./domains/sql/service.ts";
import { SqlLibraryRepo } from "./domains/sql-library/repo.ts";
import { SqlLibraryService } from "./domains/sql-library/service.ts";
import { TopicService } from "./domains/topics/service.ts";
import { UserService } from "./domains/users/service.ts";
import type { AppEnv } from "./http/context.ts";
import type { HttpCounters } from "./http/middleware.ts";
import { StreamRegistry } from "./http/sse.ts";
import { createKafkaPool, type KafkaPool } from "./kafka/index.ts";
import { LagEngine } from "./lag/engine.ts";
import { LagHistory } from "./lag/history.ts";
import { LagHistoryStore } from "./lag/history-store.ts";
import { Inventory } from "./lag/inventory.ts";
import { OffsetSampler } from "./lag/sampler.ts";
import { type Logger, LogHub, type LogSink } from "./log/logger.ts";
import { basicAuthorization, tlsOptions, Upstream } from "./proxy/upstream.ts";
import { SchemaRegistryClient } from "./registry/client.ts";
import { Background, periodicJob } from "./util/background.ts";
import { VERSION } from "./version.ts";

/** Everything a running Loupe holds. It is also what the HTTP app is built from (AppDeps). */
export interface Runtime extends AppDeps {
  kafka: KafkaPool;
  sampler: OffsetSampler;
  clusters: ClusterProbe;
  app: Hono<AppEnv>;
  /** The background jobs, started in order; their status is in GET /api/health. */
  background: Background;
  /** The alert evaluation (its job calls it; the benchmark too). */
  alertEvaluator: AlertEvaluator;
  /** Set when the first start created the admin user with a random password. */
  generatedAdminPassword?: string;
  /** Stops the background jobs (in reverse order), waits (bounded) for background deletions, closes Kafka and the store. */
  close(): Promise<void>;
}

export interface RuntimeOptions {
  sink?: LogSink;
  adminPassword?: string;
  /** Test overrides of the app's parts (a replaced access table, extra routes). */
  app?: Partial<AppDeps>;
  /** Test overrides of authentication: its clock and the delay that slows attacked accounts. */
  auth?: AuthOptions;
}

export async function buildRuntime(config: Config, opts: RuntimeOptions = {}): Promise<Runtime> {
  const startedAt = Date.now();
  const logs = new LogHub(config.log.level, opts.sink, { maxLines: config.log.maxLines, maxAgeMs: config.log.maxAge });
  const store = await openConfiguredStore(config);
  for (const line of [...deprecations(config), ...credentialWarnings(config)]) logs.logger("config").warn(line);

  // Identity and audit.
  const audit = new AuditService(store.db, logs.logger("audit"));
  const groups = new GroupService(new GroupRepo(store.db), config.groups);
  // Kafka's, Connect's, the registry's and Loupe's own topics: their records are an unrestricted admin's only.
  const internalTopics = internalTopicsOf(config);
  // The directory, when configured: logins of names that are no local user are checked there.
  const ldap = config.ldap ? new LdapDirectory(config.ldap, logs.logger("ldap")) : undefined;
  const directory = ldap && {
    authenticate: (name: string, password: string) => ldap.authenticate(name, password),
    lookup: (name: string) => ldap.lookup(name),
    refreshMs: config.ldap!.refreshInterval,
  };
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
    // A store other instances share: every request reads what they may have changed.
    { ...(store.kind === "postgres" ? { storeTtlMs: 0 } : {}), ...opts.auth },
    { groups: (names) => groups.resolve(names), internalTopics, ...(directory ? { directory } : {}) },
  );
  groups.onChange(() => auth.accessChanged("group changed"));
  const admin = await auth.ensureBootstrapAdmin(opts.adminPassword);

  // Kafka, and what reads it in the background: end-offset samples and the shared lag engine.
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
  const { inventory, sampler, lag, lagHistory } = lagParts(config, kafka, store.db, logs);

  // The features.
  const streams = new StreamRegistry(config.auth.maxStreamsPerUser, { auth });
  const alerts = alertParts(config, store.db, { kafka, lag, log: logs.logger("alerts") });
  const { notifications } = alerts;
  // One upstream for the registry: the decoders and the proxy skip the same bad host.
  const sr = config.schemaRegistry;
  const registryUpstream = sr
    ? new Upstream({
        name: "Schema registry",
        urls: sr.urls,
        authorization: basicAuthorization(sr.auth),
        tls: tlsOptions(sr.tls),
        timeoutMs: sr.timeout,
        graceMs: sr.grace,
        maxBytes: sr.maxResponseSize,
        failoverOn5xx: true,
      })
    : null;
  const registry = registryUpstream ? new SchemaRegistryClient({ upstream: registryUpstream }) : null;
  const metadata = new MetadataService(new MetadataRepo(store.db), kafka);
  const topics = new TopicService({
    pool: kafka,
    inventory,
    lag,
    sampler,
    metadata,
    audit,
    notifications,
    log: logs.logger("topics"),
    internalTopics,
    registry,
  });
  const consumers = new ConsumerService(kafka, lag, lagHistory, config.lag.sampleInterval, inventory);
  const schemas = new SchemaProxyService({
    upstream: registryUpstream,
    allowDelete: sr?.allowDelete ?? false,
    hosts: alerts.hostHealth,
  });
  const inserts = new InsertService({ pool: kafka, formats: storeTopicFormats(store.db), registry, log: logs.logger("insert") });
  const masking = new MaskingService(new MaskingRepo(store.db));
  const sql = new SqlService({
    pool: kafka,
    masks: masking,
    formats: storeTopicFormats(store.db),
    registry,
    validateInsert: (statement, cluster, allowed) => inserts.validate(statement, cluster, allowed),
    ...sqlLimits(config.sql),
    log: logs.logger("sql"),
  });
  const processorLog = logs.logger("processors");
  const outputSchemaOf = outputSchemas(inserts);
  const programs = new ProcessorPrograms();
  const processorEngine: ProcessorEngine = new ProcessorEngine({
    repo: new ProcessorRepo(store.db),
    pool: kafka,
    instance: instanceName(config),
    prefix: config.processors.prefix,
    log: processorLog,
    setup: runnerSetup(kafka, sql, config.processors.prefix, outputSchemaOf, programs),
    leaseMs: config.processors.lease,
    failAfterMs: config.processors.failAfter,
    maxStateBytes: config.processors.maxStateBytes,
    // The service is built below; the engine asks it only once started.
    admit: (p): Promise<string | null> => processors.admission(p),
    pause: (p, reason): Promise<boolean> => processors.pauseFor(p, reason),
  });
  const processors: ProcessorService = new ProcessorService({
    repo: new ProcessorRepo(store.db),
    engine: processorEngine,
    programs,
    pool: kafka,
    lag,
    log: processorLog,
    maxRunners: config.processors.maxRunners,
    maxPerUser: config.processors.maxPerUser,
    ownerScope: (owner, kind) => auth.scopeOfIdentity(owner, kind),
    audit: (entry) => audit.record(entry),
    schemaOf: outputSchemaOf,
    catalog: (cluster) => sql.catalog(cluster),
    masks: sql,
  });
  // A processor runs with its owner's rights: checked again whenever access changes, and now and then for what changes outside Loupe.
  auth.onRevoke((tokenHash, reason) => {
    if (tokenHash === null) void processors.checkOwners(reason);
  });
  masking.onChange((why) => void processors.checkOwners(why));
  const sqlLibrary = new SqlLibraryService(new SqlLibraryRepo(store.db), logs.logger("sql"));
  sqlLibrary.completeRunsOf(sql);
  const counters: HttpCounters = { requests: 0, errors: 0, totalMs: 0 };
  const clusters = kafkaProbe(kafka, config);
  const connect = connectService(config, alerts.hostHealth, logs);
  watchFailures(config, alerts, { connect, processors, schemas, audit, log: logs.logger("alerts") });

  const jobs = { audit, auth, logs, counters, streams, kafka, inventory, sampler, lagHistory, processorEngine, processors, alerts };
  const shared = store.kind === "postgres";
  const events = shared ? relayAcrossInstances(store.db, instanceName(config), { audit, notifications }, logs.logger("store")) : undefined;
  const background = backgroundJobs(config, { ...jobs, db: store.db, shared, ownerCheckMs: directory?.refreshMs ?? 60_000 });
  if (events) background.register({ name: "instance-events", start: () => events.start(), stop: () => events.stop() });
  const parts: AppDeps = {
    config,
    store,
    logs,
    auth,
    audit,
    clusters,
    streams,
    sql,
    sqlLibrary,
    inserts,
    processors,
    redrives: redrives(config, background, { db: store.db, kafka, sql, auth, audit, logs, refreshMs: directory?.refreshMs }),
    topics,
    internalTopics,
    metadata,
    consumers,
    ...alerts,
    schemas,
    connect,
    serverInfo: new ServerInfoService(config, VERSION),
    profiles: new ProfileService(new ProfileRepo(store.db)),
    kafkaConfigs: new KafkaConfigService(kafka),
    groups,
    masking,
    users: new UserService(store.db, auth, groups),
    serviceAccounts: new ServiceAccountService(store.db, auth, groups),
    kafka,
    lag,
    counters,
    startedAt,
    background,
    ...opts.app,
  };
  const app = createApp(parts);

  await background.start();
  return {
    ...parts,
    kafka,
    sampler,
    clusters,
    app,
    background,
    alertEvaluator: alerts.alertEvaluator,
    ...(admin.password ? { generatedAdminPassword: admin.password } : {}),
    close: async () => {
      streams.stop();
      sql.close();
      // In the reverse order of the start: runners commit what they hold and leave their groups
      // before the clients close.
      await background.stop();
      await topics.drain();
      await kafka.close();
      await ldap?.close();
      await store.close();
    },
  };
}

/**
 * Redrive jobs: the service of the API, and the `redrive-engine` background job that runs this
 * instance's share of them (with the processors' prefix, lease and switch); their owners are
 * checked again whenever access changes.
 */
function redrives(
  config: Config,
  background: Background,
  d: { db: Db; kafka: KafkaPool; sql: SqlService; auth: AuthService; audit: AuditService; logs: LogHub; refreshMs: number | undefined },
): RedriveService {
  const parts = redriveParts({
    db: d.db,
    pool: d.kafka,
    sql: d.sql,
    log: d.logs.logger("redrive"),
    prefix: `${config.processors.prefix}-redrive`,
    instance: instanceName(config),
    leaseMs: config.processors.lease,
    failAfterMs: config.processors.failAfter,
    enabled: config.processors.enabled,
    ownerScope: (owner, kind) => d.auth.scopeOfIdentity(owner, kind),
    audit: (entry) => d.audit.record(entry),
    recheckMs: d.refreshMs ?? 60_000,
  });
  background.register(parts.job);
  // A job runs with its owner's rights: checked again whenever access changes through Loupe.
  d.auth.onRevoke((tokenHash) => {
    if (tokenHash === null) parts.accessChanged();
  });
  return parts.service;
}

/** On a shared store, a PENDING audit entry older than this is one its instance left at a crash: no change takes an hour. */
const SHARED_PENDING_MS = 3_600_000;

/**
 * Which PENDING audit entries a start (and, on a shared store, the hourly housekeeping) closes:
 * all of them on a store of this instance alone; on a shared store, where other instances'
 * changes may be under way, only those older than any change takes.
 */
function pendingRule(shared: boolean): () => { startedBefore?: number } {
  return () => (shared ? { startedBefore: Date.now() - SHARED_PENDING_MS } : {});
}

/**
 * Each cluster's topics and groups listed on a cadence (the inventory), the end-offset sampler,
 * the shared lag engine and the lag history: what every list, /metrics and the overview read.
 */
function lagParts(config: Config, kafka: KafkaPool, db: Db, logs: LogHub) {
  const inventory = new Inventory(kafka, { intervalMs: config.inventory.refreshInterval });
  const { sampleInterval, sampleWindow, cacheTtl, historyGroups } = config.lag;
  const sampler = new OffsetSampler(kafka, { intervalMs: sampleInterval, windowMs: sampleWindow, inventory }, logs.logger("sampler"));
  const lag = new LagEngine(kafka, sampler, { ttlMs: cacheTtl, inventory });
  const lagHistory = new LagHistory(kafka, sampler, new LagHistoryStore(db), historyGroups, logs.logger("sampler"), inventory);
  return { inventory, sampler, lag, lagHistory };
}

/** What the background jobs run. */
interface BackgroundParts extends LagJobParts {
  audit: AuditService;
  auth: AuthService;
  logs: LogHub;
  counters: HttpCounters;
  streams: StreamRegistry;
  kafka: KafkaPool;
  processorEngine: ProcessorEngine;
  processors: ProcessorService;
  alerts: AlertParts;
  db: Db;
  /** Other instances share the store (PostgreSQL). */
  shared: boolean;
  ownerCheckMs: number;
}

/**
 * Loupe's background work, each job registered once, started in this order (after the app is
 * built, before it serves) and stopped in the reverse order:
 *  - audit-closing: entries a crash left PENDING are closed as UNKNOWN, before any request;
 *  - housekeeping: retention of audit entries and tokens, now (before serving) and hourly;
 *  - metrics-log: the periodic METRICS log line;
 *  - inventory: each cluster's topic and group listings every inventory.refreshInterval (0: per request);
 *  - offset-sampler: end offsets of every cluster every lag.sampleInterval (0: off);
 *  - lag-history: every group's committed offsets at each sample, stored;
 *  - lag-history-prune: drops stored lag history past its retention (a day of samples, 30 days of hours);
 *  - processor-engine: runs the store's processors here (processors.enabled);
 *  - processor-owners: pauses the processors whose owner lost the rights to run them;
 *  - alert-delivery, alert-evaluation, alert-retention: see alertJobs;
 *  - instance-events (a shared store only): the other instances' audit entries and notifications
 *    for this one's streams (registered by createParts).
 */
function backgroundJobs(config: Config, d: BackgroundParts): Background {
  const log = d.logs.logger("background");
  const interruptedBefore = pendingRule(d.shared);
  const background = new Background({
    log: {
      failed: (job, error) => log.warn("background job failed", { job, error: error instanceof Error ? error.message : String(error) }),
      recovered: (job, failedRuns) => log.info("background job works again", { job, failedRuns }),
      stopFailed: (job, error) => log.warn("background job did not stop cleanly", { job }, error),
    },
  });
  background.register({
    name: "audit-closing",
    // A store that cannot close them is this job's failure (in its status and /metrics); Loupe
    // serves on, as before: the entries stay PENDING until a start closes them.
    start: async (runs) => {
      try {
        await d.audit.closeInterrupted(interruptedBefore());
        runs.ran();
      } catch (e) {
        runs.failed(e);
      }
    },
    stop: () => {},
  });
  const housekeepingLog = d.logs.logger("housekeeping");
  background.register(
    periodicJob(
      "housekeeping",
      3_600_000,
      async () => {
        try {
          // A shared store: what an instance that crashed left PENDING is closed by the others.
          if (d.shared) await d.audit.closeInterrupted(interruptedBefore());
          await d.audit.prune({
            maxAgeMs: config.audit.maxAge,
            maxEntries: config.audit.maxEntries,
            maxBytes: config.audit.maxBytes,
            exportDir: config.audit.exportDir ?? join(config.dataDir, "audit-pruned"),
          });
          await d.auth.pruneTokens();
        } catch (e) {
          housekeepingLog.warn("housekeeping failed", {}, e);
          throw e;
        }
        // One instance of those sharing the store: two would export the same pruned entries twice.
      },
      { elected: electedOn(d.db, config)("housekeeping", 2 * 3_600_000) },
    ),
  );
  background.register(periodicJob("metrics-log", config.log.metricsInterval, metricsLine(config, d), { runAtStart: false }));
  lagJobs(background, config, d, electedOn(d.db, config));
  background.register({
    name: "processor-engine",
    enabled: config.processors.enabled,
    start: (runs) => d.processorEngine.start(runs),
    stop: () => d.processorEngine.stop(),
  });
  background.register(
    periodicJob("processor-owners", d.ownerCheckMs, () => d.processors.checkOwners("periodic check"), {
      enabled: config.processors.enabled,
      runAtStart: false,
    }),
  );
  alertJobs(background, config, d.alerts, d.db, d.audit);
  return background;
}

interface AlertParts {
  alertSettings: AlertSettings;
  notifications: NotificationService;
  alertOutbox: AlertOutbox;
  alertEvaluator: AlertEvaluator;
  /** What the probes and the proxies found of the Connect workers and registry hosts (1002, 1003). */
  hostHealth: ServiceHostHealth;
}

/** Alert settings, notifications, their outbox and the evaluation. */
function alertParts(config: Config, db: Db, d: { kafka: KafkaPool; lag: LagEngine; log: Logger }): AlertParts {
  const brokerMetrics = new BrokerMetrics(config.kafka.clusters, d.kafka, d.log);
  const alertSettings = new AlertSettings(db, { unavailable: (cluster, id) => brokerMetrics.unavailable(cluster, id) });
  const notifications = new NotificationService(db, d.log, { externalUrl: externalUrl(config) });
  const alertOutbox = new AlertOutbox(db, d.log, outboxOptions(config));
  notifications.attach(alertOutbox, alertSettings);
  const alertEvaluator = new AlertEvaluator({
    kafka: d.kafka,
    lag: d.lag,
    notifications,
    settings: alertSettings,
    deliveries: alertOutbox,
    log: d.log,
    brokerMetrics,
    controllerSilenceMs: config.alerts.controllerSilence,
  });
  return { alertSettings, notifications, alertOutbox, alertEvaluator, hostHealth: new ServiceHostHealth() };
}

/** The Connect proxy's clients, one per alias; the alert evaluation reads the connectors through it too. */
function connectService(config: Config, hosts: ServiceHostHealth, logs: LogHub): ConnectService {
  return new ConnectService(config.connect, {
    hosts,
    log: logs.logger("connect"),
    kafka: { default: defaultCluster(config).name, clusters: config.kafka.clusters },
  });
}

/**
 * The evaluation also watches Connect's connectors (and restarts failed ones when configured), the
 * processors, and probes the Connect workers and registry hosts (1003 on the default cluster).
 */
function watchFailures(
  config: Config,
  alerts: AlertParts,
  d: { connect: ConnectService; processors: ProcessorService; schemas: SchemaProxyService; audit: AuditService; log: Logger },
): void {
  const policy = config.alerts.connectorRestarts;
  const restarts = policy.enabled
    ? new ConnectorRestarts(
        { enabled: true, max: policy.max, windowMs: policy.window, connectors: policy.connectors },
        { connect: d.connect, audit: (rec) => d.audit.record(rec), log: d.log, now: Date.now },
      )
    : undefined;
  const hosts = {
    hosts: () => [...d.connect.serviceHosts(), ...d.schemas.serviceHosts(defaultCluster(config).name)],
    health: alerts.hostHealth,
  };
  alerts.alertEvaluator.watch({ connect: d.connect, processors: d.processors, hosts, ...(restarts ? { restarts } : {}) });
}

/**
 * The outbox's sender, the evaluation and the notifications' retention, each on one instance of
 * those sharing the store (a lease each): two senders would send twice, two evaluations raise
 * twice, two prunings export twice.
 */
function alertJobs(background: Background, config: Config, alerts: AlertParts, db: Db, audit: AuditService): void {
  const elected = electedOn(db, config);
  background.register({
    name: "alert-delivery",
    start: (runs) => alerts.alertOutbox.start(runs, elected("alert-delivery", 15_000)),
    stop: () => alerts.alertOutbox.stop(),
  });
  const evalMs = config.alerts.evaluationInterval;
  background.register(
    periodicJob("alert-evaluation", evalMs || 60_000, () => alerts.alertEvaluator.evaluate(), {
      enabled: evalMs > 0,
      runAtStart: false,
      elected: elected("alert-evaluation", Math.max(3 * evalMs, 5_000)),
    }),
  );
  const { retention } = config.alerts;
  const pruning = new NotificationRetention(db, audit, {
    maxAgeMs: retention.maxAge,
    maxEntries: retention.maxEntries,
    exportDir: retention.exportDir ?? join(config.dataDir, "notifications-pruned"),
  });
  background.register(
    periodicJob("alert-retention", 3_600_000, () => pruning.prune().then(() => {}), { elected: elected("alert-retention", 2 * 3_600_000) }),
  );
}

/**
 * `elected(name, ttlMs)`: a check that takes or renews the lease `name` on the store's clock for
 * this instance, true while it holds it. A job that must run on one instance of those sharing the
 * store asks it before each run; another instance takes over `ttlMs` after the holder stops.
 */
function electedOn(db: Db, config: Config): (name: string, ttlMs: number) => () => Promise<boolean> {
  const instance = instanceName(config);
  const leases = new Leases(db);
  return (name, ttlMs) => () => leases.acquire([name], instance, ttlMs).then((until) => until !== null);
}

/** This instance's name among those sharing the store (leases, runner slots, events). */
function instanceName(config: Config): string {
  return config.processors.instance ?? `${hostname()}:${config.server.port}`;
}

/**
 * On a store other instances share: the audit entries and alert notifications streamed here are
 * written for them, and theirs streamed here (src/db/instance-events.ts), so `/api/sse/audit` and
 * `/api/sse/alerts` show every instance's.
 */
function relayAcrossInstances(
  db: Db,
  instance: string,
  parts: { audit: AuditService; notifications: NotificationService },
  log: Logger,
): InstanceEvents {
  const events = new InstanceEvents(db, { instance, log });
  parts.audit.relayTo((entry) => void events.publish("audit", entry));
  parts.notifications.relayTo((notification) => void events.publish("alert", notification));
  events.on("audit", (body) => parts.audit.receive(body as AuditEntry));
  events.on("alert", (body) => parts.notifications.receive(body as AlertNotification));
  return events;
}

/** Where users open Loupe: the start of each notification's generatorURL. */
function externalUrl(config: Config): string {
  if (config.alerts.externalUrl) return config.alerts.externalUrl;
  const host = config.server.host === "0.0.0.0" || config.server.host === "::" ? hostname() : config.server.host;
  return `http://${host.includes(":") ? `[${host}]` : host}:${config.server.port}`;
}

function outboxOptions(config: Config): ConstructorParameters<typeof AlertOutbox>[2] {
  const a = config.alerts;
  return {
    alertmanagers: a.alertmanagers,
    webhooks: a.webhooks.map((w) => {
      const secret = w.secret ?? (w.secretFile ? readFileSync(w.secretFile, "utf8").replace(/\r?\n$/, "") : undefined);
      return { name: w.name, url: w.url, ...(secret ? { secret } : {}), ...(w.alerts ? { alerts: w.alerts } : {}) };
    }),
    resendIntervalMs: a.resendInterval,
    timeoutMs: a.timeout,
    initialBackoffMs: a.initialBackoff,
    maxBackoffMs: a.maxBackoff,
    giveUpAfterMs: a.giveUpAfter,
  };
}

/** What the lag jobs run: the inventory, the end-offset sampler and the lag history. */
type LagJobParts = { inventory: Inventory; sampler: OffsetSampler; lagHistory: LagHistory };

/**
 * The inventory's refresh (inventory.refreshInterval > 0). The end-offset sampler, the lag history
 * that follows its ticks, and the history's pruning: on together (lag.sampleInterval > 0). Every
 * instance samples (its pages read the samples); one of those sharing the store writes the
 * history and prunes it (a lease each).
 */
function lagJobs(
  background: Background,
  config: Config,
  d: LagJobParts,
  elected: (name: string, ttlMs: number) => () => Promise<boolean>,
): void {
  const every = config.inventory.refreshInterval;
  background.register(periodicJob("inventory", every, () => d.inventory.refreshAll(), { enabled: every > 0, runAtStart: false }));
  const { sampler, lagHistory } = d;
  const enabled = config.lag.sampleInterval > 0;
  const writer = elected("lag-history", Math.max(3 * config.lag.sampleInterval, 5_000));
  background.register({ name: "offset-sampler", enabled, start: (runs) => sampler.start(runs), stop: () => sampler.stop() });
  background.register({ name: "lag-history", enabled, start: (runs) => lagHistory.start(runs, writer), stop: () => lagHistory.stop() });
  // Not awaited before serving: after a long stop the first pass may delete a day of samples.
  background.register(
    periodicJob("lag-history-prune", 600_000, () => lagHistory.prune().then(() => {}), {
      enabled,
      runAtStart: false,
      elected: elected("lag-history-prune", 2 * 600_000),
    }),
  );
}

/** The periodic METRICS log line: requests (and since the last line), errors, latency, streams, memory, Kafka round trips. */
function metricsLine(config: Config, d: { logs: LogHub; counters: HttpCounters; streams: StreamRegistry; kafka: KafkaPool }): () => void {
  const metricsLog = d.logs.logger("metrics");
  let lastRequests = 0;
  return () => {
    const { counters } = d;
    const mem = process.memoryUsage();
    metricsLog.metrics(
      `requests=${counters.requests} (+${counters.requests - lastRequests}) errors=${counters.errors} ` +
        `avgMs=${counters.requests ? (counters.totalMs / counters.requests).toFixed(1) : "0"} ` +
        `openStreams=${d.streams.total} rssMb=${(mem.rss / 1048576).toFixed(1)} ` +
        `kafkaRttMs=${config.kafka.clusters.map((c) => `${c.name}:${d.kafka.get(c.name).lastRoundTripMs?.toFixed(1) ?? "-"}`).join(",")}`,
    );
    lastRequests = counters.requests;
  };
}

/** The query limits of the config's `sql` section, as SqlService takes them. */
function sqlLimits(c: Config["sql"]) {
  return {
    maxLimit: c.maxLimit,
    maxQueriesPerUser: c.maxQueriesPerUser,
    maxSizeBytes: c.maxSize,
    maxQueryTimeMs: c.maxQueryTime,
    maxQueryMemoryBytes: c.maxQueryMemory,
    clusterWaitMs: c.clusterWait,
  };
}
