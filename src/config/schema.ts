import { z } from "zod";
import { groupSchema, ROLES } from "./groups.ts";
import { ldapSchema } from "./ldap.ts";
import { byteSize, duration } from "./values.ts";

export type { GroupConfig, Role } from "./groups.ts";
export { groupSchema, ROLES } from "./groups.ts";

/**
 * An entry of `server.allowedHosts`: `*`, a host name, or `.domain` for the domain and its
 * subdomains. No scheme, port or path: the port of a Host header is not compared.
 */
const allowedHost = z
  .string()
  .regex(
    /^(\*|\.?[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*)$/,
    "a host name (or '.domain', or '*') without scheme, port or path",
  );

const saslSchema = z
  .object({
    /** SASL towards the brokers: PLAIN or SCRAM. */
    mechanism: z.enum(["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]),
    /** The SASL user. */
    username: z.string().min(1),
    /** The SASL password. */
    password: z.string(),
  })
  .strict();

const tlsSchema = z
  .object({
    /** TLS towards the brokers (`false` keeps the section but connects in plain text). */
    enabled: z.boolean().default(true),
    /** PEM file of the CA that signed the brokers' certificates; the system CAs when absent. */
    ca: z.string().optional(),
    /** PEM file of the client certificate, for mutual TLS. */
    cert: z.string().optional(),
    /** PEM file of the client certificate's key. */
    key: z.string().optional(),
    /** `false` accepts any certificate: encrypted, but open to a man in the middle. */
    rejectUnauthorized: z.boolean().default(true),
  })
  .strict();

/**
 * What the brokers' authorizer is set to where Kafka does not disclose it: `super.users` and
 * `allow.everyone.if.no.acl.found` are hidden from DescribeConfigs. Used only to explain
 * decisions (`GET /api/acl/explain`); the brokers' own settings decide.
 */
const authorizerSchema = z
  .object({
    /** The brokers' `super.users`, e.g. `["User:admin"]`: Kafka does not disclose them, so ACL explanations count them only when named here. */
    superUsers: z.array(z.string().regex(/^[^:\s]+:\S.*$/, "a principal, e.g. User:admin")).optional(),
    /** The brokers' `allow.everyone.if.no.acl.found`, which Kafka does not disclose once set (brokers that leave it unset mean false). */
    allowEveryoneIfNoAclFound: z.boolean().optional(),
  })
  .strict();

/** The thresholds of the alerts on broker internals, and the scrape timeout, when the file names none. */
const BROKER_METRICS_DEFAULTS = {
  timeout: 5_000,
  openFilesPercent: 80,
  requestHandlerIdlePercent: 20,
  failedFetchPerMinute: 5,
  failedProducePerMinute: 5,
  diskAboveAveragePoints: 10,
};

export const clusterSchema = z
  .object({
    /** The cluster's name in the API (`x-service-cluster`) and the UI (`?cluster=`). */
    name: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, "letters, digits, '.', '_' or '-', at most 64"),
    /** `host:port` of one or more brokers: a list, or one string `a:9092,b:9092`. */
    bootstrapServers: z
      .union([z.string(), z.array(z.string())])
      .transform((v) => (Array.isArray(v) ? v : v.split(",")).map((s) => s.trim()).filter(Boolean))
      .pipe(z.array(z.string().regex(/^[^\s:]+:\d{1,5}$/, "expected host:port")).min(1)),
    /** The client id Loupe's connections give the brokers. */
    clientId: z.string().min(1).default("loupe"),
    /** The cluster API paths act on without `x-service-cluster`; the first cluster when none is marked. */
    default: z.boolean().default(false),
    sasl: saslSchema.optional(),
    tls: tlsSchema.optional(),
    authorizer: authorizerSchema.optional(),
    /**
     * The brokers' Prometheus endpoints (the JMX exporter agent with Loupe's rules,
     * `deploy/jmx-exporter-kafka.yaml`), which alerts 1008 to 1012 read, and the thresholds of the
     * alerts on broker internals (1009 to 1013). Without `urls` or `template`, 1008 to 1012 are not
     * available on this cluster.
     */
    brokerMetrics: z
      .object({
        /** Each broker's endpoint by node id: `{ "1" = "http://10.0.0.1:7071/metrics" }`, or one string `1=http://...,2=http://...`. */
        urls: z
          .union([z.record(z.string(), z.string()), z.string()])
          .transform((v) =>
            typeof v === "string"
              ? Object.fromEntries(
                  v
                    .split(",")
                    .map((pair) => pair.trim())
                    .filter(Boolean)
                    .map((pair) => [pair.slice(0, pair.indexOf("=")).trim(), pair.slice(pair.indexOf("=") + 1).trim()]),
                )
              : v,
          )
          .pipe(
            z
              .record(
                z.string(),
                z
                  .string()
                  .url()
                  .regex(/^https?:\/\//i, "expected an http:// or https:// URL"),
              )
              .refine((m) => Object.keys(m).length > 0, "at least one broker")
              .refine((m) => Object.keys(m).every((k) => /^\d{1,9}$/.test(k)), 'each key is a broker\'s node id, e.g. "1"'),
          )
          .optional(),
        /** One endpoint for every broker: `{host}` its host in the cluster's metadata, `{id}` its node id, e.g. `http://{host}:7071/metrics`. */
        template: z
          .string()
          .regex(/^https?:\/\/\S*\{(host|id)\}/i, "an http:// or https:// URL naming {host} or {id}, e.g. http://{host}:7071/metrics")
          .optional(),
        /** How long one broker's scrape may take; one that does not answer in time is logged and its alerts left as they were. */
        timeout: duration.pipe(z.number().min(100, "at least 100ms").max(60_000, "at most 60s")).default(5_000),
        /** 1009: raised when a broker's open file descriptors are over this percent of its maximum. */
        openFilesPercent: z.number().int().min(0).max(100).default(80),
        /** 1010: raised when a broker's request handler threads are idle less than this percent of the time (one-minute average). */
        requestHandlerIdlePercent: z.number().int().min(0).max(100).default(20),
        /** 1011: raised when a broker's failed fetch requests (all topics) per minute, between two evaluations, are over this (0: any). */
        failedFetchPerMinute: z.number().int().min(0).default(5),
        /** 1012: raised when a broker's failed produce requests (all topics) per minute, between two evaluations, are over this (0: any). */
        failedProducePerMinute: z.number().int().min(0).default(5),
        /** 1013: raised when a broker's log-dir disks are fuller than the cluster's average by more than this many percentage points. */
        diskAboveAveragePoints: z.number().int().min(0).max(100).default(10),
      })
      .strict()
      .refine((m) => !(m.urls && m.template), "set urls or template, not both")
      .default(BROKER_METRICS_DEFAULTS),
  })
  .strict();
export type ClusterConfig = z.infer<typeof clusterSchema>;

/** One URL or several (a list, or one string of comma-separated URLs), each http:// or https://. */
const httpUrls = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (Array.isArray(v) ? v : v.split(",")).map((s) => s.trim().replace(/\/+$/, "")).filter(Boolean))
  .pipe(
    z
      .array(
        z
          .string()
          .url()
          .regex(/^https?:\/\//i, "expected an http:// or https:// URL"),
      )
      .min(1, "at least one URL")
      .max(16, "at most 16 URLs"),
  );

/** Basic auth towards a backend; the password in the file or (better) in a file of its own. */
const httpAuthSchema = z
  .object({
    /** Basic auth user. */
    username: z.string().min(1),
    /** Basic auth password (or `passwordFile`, exactly one of the two). */
    password: z.string().min(1).optional(),
    /** A file holding the password (trailing newline ignored), to keep it out of the config file. */
    passwordFile: z.string().min(1).optional(),
  })
  .strict()
  .refine((a) => (a.password === undefined) !== (a.passwordFile === undefined), "set exactly one of password and passwordFile");
export type HttpAuthConfig = z.infer<typeof httpAuthSchema>;

/**
 * Where Loupe keeps its state (users, tokens, audit, processors, alerts): SQLite in `dataDir`
 * unless `url` names a PostgreSQL database, which several Loupe instances may share.
 */
const storeSchema = z
  .object({
    /**
     * `postgres://user@host:5432/database` (or `postgresql://`, with libpq's `?sslmode=...`): the
     * PostgreSQL store. Absent: SQLite in `dataDir`. Its password belongs in `passwordFile`.
     */
    url: z
      .string()
      .regex(/^postgres(ql)?:\/\/[^/]/i, "expected a postgres:// URL")
      .refine((u) => URL.canParse(u), "not a URL")
      .optional(),
    /** A file holding the database password (trailing newline ignored), to keep it out of the file and the URL. */
    passwordFile: z.string().min(1).optional(),
    /** Connections to PostgreSQL this instance keeps at most. */
    poolSize: z.number().int().min(1).max(100).default(10),
  })
  .strict()
  .refine((s) => s.passwordFile === undefined || s.url !== undefined, "passwordFile is the PostgreSQL store's: set url too");
export type StoreConfig = z.infer<typeof storeSchema>;

/** TLS towards a backend: PEM files of the CA and, for mutual TLS, the client's certificate and key. */
const httpTlsSchema = z
  .object({
    /** PEM file of the CA that signed the backend's certificate; the system CAs when absent. */
    ca: z.string().min(1).optional(),
    /** PEM file of the client certificate, for mutual TLS (with its key). */
    cert: z.string().min(1).optional(),
    /** PEM file of the client certificate's key. */
    key: z.string().min(1).optional(),
    /** `false` accepts any certificate: encrypted, but open to a man in the middle. */
    rejectUnauthorized: z.boolean().default(true),
  })
  .strict()
  .refine((t) => (t.cert === undefined) === (t.key === undefined), "a client certificate needs its key, and a key its certificate");
export type HttpTlsConfig = z.infer<typeof httpTlsSchema>;

/** A webhook that gets notifications as JSON POSTs (a chat tool's incoming webhook, a relay). */
const webhookSchema = z
  .object({
    /** Its name in the delivery state (`webhook:<name>`). */
    name: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, "letters, digits, '.', '_' or '-', at most 64"),
    /** Where each notification is POSTed as JSON. */
    url: z
      .string()
      .url()
      .regex(/^https?:\/\//i, "expected an http:// or https:// URL"),
    /** Signs each body: `X-Loupe-Signature: sha256=<hex HMAC-SHA256 of the body>` (or `secretFile`). */
    secret: z.string().min(16, "a webhook secret has at least 16 characters").optional(),
    /** A file holding the secret (trailing newline ignored). */
    secretFile: z.string().min(1).optional(),
    /** The alert settings (ids) it gets; every one when absent. */
    alerts: z.array(z.number().int().positive()).min(1).optional(),
  })
  .strict()
  .refine((w) => w.secret === undefined || w.secretFile === undefined, "set at most one of secret and secretFile");

/** One Kafka Connect cluster: its alias (the path's `{clusterAlias}`) and the URLs of its workers. */
export const connectClusterSchema = z
  .object({
    /** The cluster's alias: `{clusterAlias}` in the Connect routes' paths. */
    alias: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, "letters, digits, '.', '_' or '-', at most 64"),
    /** The workers, tried in turn when one does not answer (any worker forwards to the leader). */
    urls: httpUrls,
    auth: httpAuthSchema.optional(),
    tls: httpTlsSchema.optional(),
    /**
     * The Kafka cluster (a `kafka.clusters[].name`) whose topics the connectors read and write:
     * the requests of this alias act on it (roles, topic scopes, alerts). The default cluster when absent.
     */
    kafkaCluster: z.string().min(1).optional(),
    /** The cluster's internal topics, as `GET /api/config` reports them (Connect's defaults when absent). */
    topics: z
      .object({
        /** Connect's `config.storage.topic`. */
        configs: z.string().min(1).default("connect-configs"),
        /** Connect's `offset.storage.topic`. */
        offsets: z.string().min(1).default("connect-offsets"),
        /** Connect's `status.storage.topic`. */
        statuses: z.string().min(1).default("connect-status"),
      })
      .strict()
      .default({ configs: "connect-configs", offsets: "connect-offsets", statuses: "connect-status" }),
  })
  .strict();

/** Connector classes refused to non-admins by default: they read or write files on the workers' hosts. */
export const DEFAULT_DENIED_PLUGINS = [
  "org.apache.kafka.connect.file.FileStreamSourceConnector",
  "org.apache.kafka.connect.file.FileStreamSinkConnector",
];

const connectDefaults = () => ({
  clusters: [],
  timeout: 30_000,
  grace: 10_000,
  maxResponseSize: 8 * 1024 * 1024,
  guardRails: { enabled: true, deniedPlugins: [...DEFAULT_DENIED_PLUGINS], secretKeys: [] },
});

export const connectSchema = z
  .object({
    clusters: z.array(connectClusterSchema).default([]),
    /** Per worker request (its whole answer); a worker that does not answer in time is skipped for the next. */
    timeout: duration.default(30_000),
    /** A worker that could not be reached is tried after the others for this long. */
    grace: duration.default(10_000),
    /** Larger answers of a worker are refused (502). */
    maxResponseSize: byteSize.default(8 * 1024 * 1024),
    guardRails: z
      .object({
        /** Refuse (403) to non-admins connector configs that override security settings, use config providers or a denied plugin. */
        enabled: z.boolean().default(true),
        /** Connector classes (full names, or the simple name) only admins may create. */
        deniedPlugins: z.array(z.string().min(1)).default([...DEFAULT_DENIED_PLUGINS]),
        /** Config keys masked beyond the built-in ones (password, secret, token, jaas, key): exact names or `*` globs. */
        secretKeys: z.array(z.string().min(1)).default([]),
      })
      .strict()
      .default({ enabled: true, deniedPlugins: [...DEFAULT_DENIED_PLUGINS], secretKeys: [] }),
  })
  .strict()
  .default(connectDefaults());
export type ConnectConfig = z.infer<typeof connectSchema>;

/** The schema registry (Confluent-compatible API): the SQL decoders and the registry proxy use this one section. */
export const schemaRegistrySchema = z
  .object({
    /** Hosts of one registry sharing one store, tried in order. */
    urls: httpUrls,
    auth: httpAuthSchema.optional(),
    tls: httpTlsSchema.optional(),
    /** Per host request (its whole answer). */
    timeout: duration.default(10_000),
    /** A host that refused, timed out or answered 5xx is tried after the others for this long. */
    grace: duration.default(30_000),
    /** Whether subjects and versions may be deleted through Loupe (`schemaRegistryDelete` of the login answer). */
    allowDelete: z.boolean().default(false),
    /** Larger answers of a host are refused (502). */
    maxResponseSize: byteSize.default(8 * 1024 * 1024),
    /**
     * The registry's storage topics, internal (only an admin without limits reads or writes their
     * records), beside the defaults that always are: `_schemas` (Confluent), `kafkasql-journal`,
     * `kafkasql-snapshots` and `registry-events` (Apicurio).
     */
    topics: z.array(z.string().min(1).max(249)).max(64).default([]),
  })
  .strict();

export const userSchema = z
  .object({
    /** The login name, compared without case. */
    name: z.string().regex(/^[A-Za-z0-9._@-]{1,128}$/, "letters, digits, '.', '_', '@' or '-'"),
    /** argon2id hash as printed by `loupe hash-password`. */
    passwordHash: z.string().startsWith("$argon2id$", "expected an argon2id hash from `loupe hash-password`"),
    /** Roles on every cluster and topic, as before groups existed; a user's rights are these plus its groups'. */
    roles: z.array(z.enum(ROLES)).default([]),
    /** Groups (of this file or the store) whose rights the user has. */
    groups: z.array(z.string().min(1).max(100)).max(100).default([]),
    /** The user's email address, as `GET /api/users` lists it. */
    email: z.string().email().nullable().optional(),
  })
  .strict();
export type UserConfig = z.infer<typeof userSchema>;

export const configSchema = z
  .object({
    server: z
      .object({
        /** Address to listen on: `0.0.0.0` for every interface. */
        host: z.string().min(1).default("127.0.0.1"),
        /** Port of the UI and the API. */
        port: z.coerce.number().int().min(0).max(65535).default(9991),
        /** Largest request body accepted, in bytes. */
        bodyLimit: z.number().int().positive().default(1_048_576),
        /**
         * Host names a request's Host may name besides those always accepted (IP addresses,
         * `localhost`, the listen host, this machine's name): see src/http/host-check.ts. `*`
         * turns the check off; `.example.com` takes the domain and its subdomains.
         */
        allowedHosts: z
          .union([z.string(), z.array(z.string())])
          .transform((v) => (Array.isArray(v) ? v : v.split(",")).map((s) => s.trim().toLowerCase().replace(/\.$/, "")).filter(Boolean))
          .pipe(z.array(allowedHost).max(100, "at most 100 host names"))
          .default([]),
        /** Also check every name of X-Forwarded-Host (set by a reverse proxy from the browser's Host). */
        checkForwardedHost: z.boolean().default(false),
        /**
         * HTTPS on `port` (TLS 1.2 and 1.3 only). SIGHUP reads the files again: new connections get
         * the new certificate, open ones (event streams included) go on with the old one.
         */
        tls: z
          .object({
            /** PEM file of the certificate, followed by its chain (the intermediate certificates). */
            cert: z.string().min(1),
            /** PEM file of the certificate's private key (not encrypted; readable by Loupe only). */
            key: z.string().min(1),
            /** max-age of the Strict-Transport-Security header on every answer; 0 sends none. */
            hstsMaxAge: duration.default(365 * 86_400_000),
            /** Port of a plain HTTP listener that answers every request with a 308 to the same path over HTTPS. None when absent. */
            redirectPort: z.coerce.number().int().min(1).max(65535).optional(),
          })
          .strict()
          .optional(),
      })
      .strict()
      .default({ host: "127.0.0.1", port: 9991, bodyLimit: 1_048_576, allowedHosts: [], checkForwardedHost: false }),
    /** Where the SQLite store `loupe.db` lives (and what Loupe writes beside it: pruned audit exports). */
    dataDir: z.string().min(1).default("./.loupe"),
    store: storeSchema.default({ poolSize: 10 }),
    log: z
      .object({
        /** Lines below this level are not written. */
        level: z.enum(["debug", "info", "warn", "error"]).default("info"),
        /** How often a METRICS summary line is written. */
        metricsInterval: duration.default(60_000),
        /** Lines kept in memory for GET /api/logs/{INFO,METRICS}, per kind (at most 512). */
        maxLines: z.number().int().min(1).max(512).default(512),
        /** Lines older than this are no longer answered there. 0 keeps them until pushed out. */
        maxAge: duration.default(24 * 3_600_000),
      })
      .strict()
      .default({ level: "info", metricsInterval: 60_000, maxLines: 512, maxAge: 24 * 3_600_000 }),
    auth: z
      .object({
        /** Absolute lifetime of a token from login. */
        tokenLifetime: duration.default(8 * 3_600_000),
        /** A token unused for this long stops working. */
        idleTimeout: duration.default(30 * 60_000),
        /** Failed logins of one account from one client address before 429; an attacked account is slowed, never locked. */
        maxFailedLogins: z.number().int().positive().default(5),
        /** Window over which failed logins are counted. */
        failedLoginWindow: duration.default(300_000),
        /** Open SSE streams per user. */
        maxStreamsPerUser: z.number().int().positive().default(8),
      })
      .strict()
      .default({
        tokenLifetime: 8 * 3_600_000,
        idleTimeout: 30 * 60_000,
        maxFailedLogins: 5,
        failedLoginWindow: 300_000,
        maxStreamsPerUser: 8,
      }),
    users: z.array(userSchema).default([]),
    /** Groups defined here are read-only through the API and win over a stored group of the same name. */
    groups: z.array(groupSchema).default([]),
    ldap: ldapSchema.optional(),
    kafka: z
      .object({ clusters: z.array(clusterSchema).min(1, "at least one cluster is required") })
      .strict()
      .default({
        clusters: [
          {
            name: "default",
            bootstrapServers: ["127.0.0.1:9092"],
            clientId: "loupe",
            default: true,
            brokerMetrics: BROKER_METRICS_DEFAULTS,
          },
        ],
      }),
    audit: z
      .object({
        /** Entries older than this are removed. 0 keeps them forever. */
        maxAge: duration.default(90 * 86_400_000),
        /** At most this many entries are kept. 0 means no limit. */
        maxEntries: z.number().int().nonnegative().default(1_000_000),
        /** The newest entries are kept up to this many bytes of content (e.g. `512MB`). 0 means no limit. */
        maxBytes: z.union([z.literal(0), byteSize]).default(0),
        /**
         * Directory where the hourly pruning appends each entry it removes, as a JSON line, before it
         * removes it (one file a day, `audit-pruned-YYYY-MM-DD.jsonl`). Default: `audit-pruned` in `dataDir`.
         */
        exportDir: z.string().min(1).optional(),
      })
      .strict()
      .default({ maxAge: 90 * 86_400_000, maxEntries: 1_000_000, maxBytes: 0 }),
    // SQL over topic data (GET /api/sql/data)
    sql: z
      .object({
        /** Highest LIMIT of a query, and the LIMIT of a query without one. */
        maxLimit: z.number().int().positive().default(10_000),
        /** Queries one user may run at once (429 beyond). */
        maxQueriesPerUser: z.number().int().positive().default(4),
        /** Highest max.size a query may SET (bytes read, and bytes of the answer); a larger one is lowered to it. */
        maxSize: byteSize.default(256 * 1024 * 1024),
        /** Highest max.query.time a query may SET; a longer one is lowered to it. */
        maxQueryTime: duration.default(3_600_000),
        /** Most memory one query may hold at once (its pending answer and the values at hand); beyond it the query ends with an error. */
        maxQueryMemory: byteSize.default(64 * 1024 * 1024),
        /**
         * How long a query (also a live subscription, a JDBC select) waits for a cluster that does
         * not answer before its read begins; then it ends with UNAVAILABLE naming the cluster.
         */
        clusterWait: duration.pipe(z.number().min(1_000, "at least 1s")).default(30_000),
        /** Deprecated: the top-level `schemaRegistry` section (this key is read as `schemaRegistry.urls` when that is absent). */
        schemaRegistry: z
          .object({ urls: z.array(z.string().url()).min(1) })
          .strict()
          .optional(),
      })
      .strict()
      .default({
        maxLimit: 10_000,
        maxQueriesPerUser: 4,
        maxSize: 256 * 1024 * 1024,
        maxQueryTime: 3_600_000,
        maxQueryMemory: 64 * 1024 * 1024,
        clusterWait: 30_000,
      }),
    connect: connectSchema,
    schemaRegistry: schemaRegistrySchema.optional(),
    /**
     * Stream processors (INSERT INTO ... SELECT STREAM), run inside Loupe (IN_PROC). Instances
     * sharing one store split the runners between them through leases in the store.
     */
    processors: z
      .object({
        /** `false`: no processor runs on this instance, and none can be created. */
        enabled: z.boolean().default(true),
        /** Prefix of each processor's consumer group, transactional ids and internal topics: `<prefix>-<id>`. */
        prefix: z
          .string()
          .regex(/^[A-Za-z0-9._-]{1,64}$/, "letters, digits, '.', '_' or '-', at most 64")
          .default("loupe-processor"),
        /** This instance's name in the runners' leases (`worker`); default: host name and port. */
        instance: z.string().min(1).max(200).optional(),
        /** Most runners of one processor. */
        maxRunners: z.number().int().positive().max(256).default(32),
        /** Most processors one user owns (all clusters); more are refused with 429. */
        maxPerUser: z.number().int().positive().max(10_000).default(20),
        /**
         * Most state one processor's aggregation holds on this instance, in approximate bytes (its
         * groups and open windows, over all its runners here); past it the processor FAILS, not the
         * instance. Size the unit's MemoryMax to about the processors you run times this, plus 1 GiB.
         */
        maxStateBytes: byteSize.default(64 * 1024 * 1024),
        /** How long a runner keeps retrying a failure (with backoff) before it is FAILED. */
        failAfter: duration.default(300_000),
        /** How long a runner's lease lasts without renewal; another instance takes the slot after it. */
        lease: duration.default(10_000),
      })
      .strict()
      .default({
        enabled: true,
        prefix: "loupe-processor",
        maxRunners: 32,
        maxPerUser: 20,
        maxStateBytes: 64 * 1024 * 1024,
        failAfter: 300_000,
        lease: 10_000,
      }),
    /**
     * GET /metrics. Public by default (the SPEC's, for operators' Prometheus): it names every
     * consumer group and topic whatever any user's scope. `enabled: false` answers 404; a
     * `token` makes it answer only `Authorization: Bearer <token>` (Prometheus `authorization`).
     */
    metrics: z
      .object({
        /** `false`: `/metrics` answers 404. */
        enabled: z.boolean().default(true),
        /** `/metrics` answers only `Authorization: Bearer <token>` (16 to 512 characters). */
        token: z.string().min(16, "a metrics token has at least 16 characters").max(512).optional(),
      })
      .strict()
      .default({ enabled: true }),
    /**
     * Alerting: where notifications are delivered (Prometheus Alertmanagers, webhooks), how often
     * conditions are evaluated, and how deliveries are retried. Every delivery goes through an
     * outbox in the store, so a channel that is down gets everything once it answers again.
     */
    alerts: z
      .object({
        /** Alertmanager base URLs (`http://am:9093`); each gets every notification through its v2 API, on its own. */
        alertmanagers: z
          .array(
            z
              .string()
              .url()
              .regex(/^https?:\/\//i, "expected an http:// or https:// URL")
              .transform((u) => u.replace(/\/+$/, "")),
          )
          .max(16, "at most 16 Alertmanagers")
          .default([]),
        /** Plain webhooks (a JSON POST per notification and per resolution), for chat tools. */
        webhooks: z.array(webhookSchema).max(32, "at most 32 webhooks").default([]),
        /** Loupe's address as its users open it: the start of each notification's generatorURL. Default: `http://<server.host>:<server.port>`. */
        externalUrl: z
          .string()
          .url()
          .regex(/^https?:\/\//i, "expected an http:// or https:// URL")
          .transform((u) => u.replace(/\/+$/, ""))
          .optional(),
        /** How often the conditions (brokers, partitions, consumer lag) are evaluated; 0 turns the evaluation off. */
        evaluationInterval: duration.default(30_000),
        /** A controller of the KRaft quorum that has not fetched from its leader for this long is down (1001). */
        controllerSilence: duration.pipe(z.number().min(1_000, "at least 1s")).default(30_000),
        /** How often a condition that still holds is sent to the Alertmanagers again (they resolve an alert not re-sent). */
        resendInterval: duration.pipe(z.number().min(1_000, "at least 1s")).default(60_000),
        /** How long one delivery may take before it counts as failed. */
        timeout: duration.pipe(z.number().min(100, "at least 100ms")).default(10_000),
        /** First wait before a failed delivery is tried again; doubled each time up to `maxBackoff`. */
        initialBackoff: duration.pipe(z.number().min(10, "at least 10ms")).default(1_000),
        /** Longest wait between two attempts of one delivery. */
        maxBackoff: duration.pipe(z.number().min(10, "at least 10ms")).default(60_000),
        /** A delivery still failing this long after it was due is given up (shown as GAVE_UP). */
        giveUpAfter: duration.pipe(z.number().min(1_000, "at least 1s")).default(86_400_000),
        /** Failed connectors (or tasks) the evaluation restarts by itself: off unless enabled; each restart audited. */
        connectorRestarts: z
          .object({
            /** Restarts failed connectors by itself (`POST .../restart?includeTasks=true&onlyFailed=true`); off by default. */
            enabled: z.boolean().default(false),
            /** Restarts of one connector within `window`, at most; then it stays FAILED (and alerted) until the window moves on. */
            max: z.number().int().min(1).max(100).default(3),
            /** The window over which `max` counts a connector's restarts. */
            window: duration.pipe(z.number().min(1_000, "at least 1s")).default(3_600_000),
            /** The connectors restarted, by name (`*` any characters, `?` one); every one by default. */
            connectors: z.array(z.string().min(1).max(256)).min(1).max(100).default(["*"]),
          })
          .strict()
          .default({ enabled: false, max: 3, window: 3_600_000, connectors: ["*"] }),
        /**
         * Retention of the notifications, pruned hourly with their deliveries, oldest first: never one
         * still to deliver, nor the active one of a condition that holds.
         */
        retention: z
          .object({
            /** Notifications that ended (an event: started) longer ago are removed. 0 keeps them whatever their age. */
            maxAge: duration.default(90 * 86_400_000),
            /** At most this many notifications are kept, the newest. 0 means no limit. */
            maxEntries: z.number().int().nonnegative().default(100_000),
            /**
             * Directory where the pruning appends each notification it removes, with its deliveries, as a JSON
             * line, before it removes it (one file a day, `notifications-pruned-YYYY-MM-DD.jsonl`). Default:
             * `notifications-pruned` in `dataDir`.
             */
            exportDir: z.string().min(1).optional(),
          })
          .strict()
          .default({ maxAge: 90 * 86_400_000, maxEntries: 100_000 }),
      })
      .strict()
      .default({
        alertmanagers: [],
        webhooks: [],
        evaluationInterval: 30_000,
        controllerSilence: 30_000,
        resendInterval: 60_000,
        timeout: 10_000,
        initialBackoff: 1_000,
        maxBackoff: 60_000,
        giveUpAfter: 86_400_000,
        connectorRestarts: { enabled: false, max: 3, window: 3_600_000, connectors: ["*"] },
        retention: { maxAge: 90 * 86_400_000, maxEntries: 100_000 },
      }),
    lag: z
      .object({
        /** Consumer lag figures are reused for this long by every caller (/metrics, topics, groups). */
        cacheTtl: duration.default(5_000),
        /** How often the background sampler reads every partition's end offset (messages per second). */
        sampleInterval: duration.default(15_000),
        /** How far back the sampler keeps end offsets: the window of rates and lag-in-seconds estimates. */
        sampleWindow: duration.default(600_000),
        /** Groups per cluster whose lag history is stored at each sample (the most lagging first); the store's size grows with it. */
        historyGroups: z.number().int().min(1).max(100_000).default(2_000),
      })
      .strict()
      .default({ cacheTtl: 5_000, sampleInterval: 15_000, sampleWindow: 600_000, historyGroups: 2_000 }),
    inventory: z
      .object({
        /** How often each cluster's topic and consumer-group listings are refreshed in the background; 0 lists on every request. */
        refreshInterval: duration.default(5_000),
      })
      .strict()
      .default({ refreshInterval: 5_000 }),
  })
  .strict()
  .superRefine((cfg, ctx) => {
    const names = new Set<string>();
    cfg.kafka.clusters.forEach((c, i) => {
      if (names.has(c.name))
        ctx.addIssue({ code: "custom", path: ["kafka", "clusters", i, "name"], message: `duplicate cluster name '${c.name}'` });
      names.add(c.name);
    });
    const defaults = cfg.kafka.clusters.filter((c) => c.default).length;
    if (defaults > 1) ctx.addIssue({ code: "custom", path: ["kafka", "clusters"], message: "only one cluster may be the default" });
    // Names are compared without case: `Carol` and `carol` would be one identity's name.
    const users = new Map<string, string>();
    cfg.users.forEach((u, i) => {
      const other = users.get(u.name.toLowerCase());
      if (other !== undefined)
        ctx.addIssue({
          code: "custom",
          path: ["users", i, "name"],
          message: other === u.name ? `duplicate user '${u.name}'` : `user '${u.name}' is user '${other}' but for case`,
        });
      users.set(u.name.toLowerCase(), u.name);
    });
    const groups = new Set<string>();
    cfg.groups.forEach((g, i) => {
      if (groups.has(g.name)) ctx.addIssue({ code: "custom", path: ["groups", i, "name"], message: `duplicate group '${g.name}'` });
      groups.add(g.name);
    });
    const aliases = new Set<string>();
    cfg.connect.clusters.forEach((c, i) => {
      if (aliases.has(c.alias))
        ctx.addIssue({ code: "custom", path: ["connect", "clusters", i, "alias"], message: `duplicate Connect alias '${c.alias}'` });
      aliases.add(c.alias);
      if (c.kafkaCluster !== undefined && !names.has(c.kafkaCluster))
        ctx.addIssue({
          code: "custom",
          path: ["connect", "clusters", i, "kafkaCluster"],
          message: `unknown Kafka cluster '${c.kafkaCluster}' (known: ${[...names].join(", ")})`,
        });
    });
  })
  // The registry section moved from `sql.schemaRegistry` to the top level; the old key still works.
  .transform((cfg) =>
    cfg.schemaRegistry || !cfg.sql.schemaRegistry
      ? cfg
      : { ...cfg, schemaRegistry: schemaRegistrySchema.parse({ urls: cfg.sql.schemaRegistry.urls }) },
  );

export type Config = z.infer<typeof configSchema>;

/** The default cluster: the one marked `default`, else the first. */
export function defaultCluster(cfg: Config): ClusterConfig {
  return cfg.kafka.clusters.find((c) => c.default) ?? cfg.kafka.clusters[0]!;
}

/** Lines for the log about keys that still work but have moved. */
export function deprecations(cfg: Config): string[] {
  const out: string[] = [];
  if (cfg.sql.schemaRegistry)
    out.push(
      cfg.schemaRegistry && cfg.schemaRegistry.urls.join() !== cfg.sql.schemaRegistry.urls.join()
        ? "sql.schemaRegistry is deprecated and ignored: the top-level schemaRegistry section is set"
        : "sql.schemaRegistry is deprecated: move it to the top-level schemaRegistry section",
    );
  return out;
}

/**
 * Lines for the log about backend URLs that carry credentials as user info
 * (`http://user:pass@host`): they still work (sent as basic auth), but belong in the section's
 * `auth` (with `passwordFile`), where no message, answer or log line can show them. Names the
 * key and the URL without its user info.
 */
export function credentialWarnings(cfg: Config): string[] {
  const out: string[] = [];
  const check = (key: string, urls: readonly string[]) =>
    urls.forEach((raw, i) => {
      let u: URL;
      try {
        u = new URL(raw);
      } catch {
        return;
      }
      if (!u.username && !u.password) return;
      u.username = "";
      u.password = "";
      out.push(
        `${key}[${i}] (${u.toString().replace(/\/$/, "")}) carries credentials in the URL: move them to auth (passwordFile); they are sent as basic auth and never shown`,
      );
    });
  if (cfg.store.url && URL.canParse(cfg.store.url) && new URL(cfg.store.url).password)
    out.push("store.url carries a password: move it to store.passwordFile; it is used, and never shown");
  for (const c of cfg.connect.clusters) check(`connect.clusters[${c.alias}].urls`, c.urls);
  if (cfg.schemaRegistry) check("schemaRegistry.urls", cfg.schemaRegistry.urls);
  if (cfg.sql.schemaRegistry) check("sql.schemaRegistry.urls", cfg.sql.schemaRegistry.urls);
  return out;
}
