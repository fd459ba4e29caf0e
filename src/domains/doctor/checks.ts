/**
 * `loupe doctor`: what Loupe will meet when it starts, checked from the host it runs on with
 * its own configuration and its own clients (the Kafka client, the Connect and registry
 * upstreams, the LDAP directory), one line per check with what to fix. Nothing is written: the
 * store is opened read-only and never migrated, so the installer may run it as root.
 *
 * A check is `ok`, `warn` (works, but an operator should know) or `fail`; any `fail` makes the
 * exit status 1. Alertmanager is not checked: Loupe has no Alertmanager setting (it is the one
 * that scrapes or subscribes), so there is nothing of Loupe's to check there.
 */
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Config, StoreConfig } from "../../config/schema.ts";
import { inspectStore } from "../../db/inspect.ts";
import { MIGRATIONS } from "../../db/migrations/index.ts";
import { inspectPostgresStore, redactedUrl } from "../../db/postgres.ts";
import { AppError } from "../../errors.ts";
import { createKafkaPool, type KafkaCluster } from "../../kafka/index.ts";
import { LogHub } from "../../log/logger.ts";
import { basicAuthorization, tlsOptions, Upstream } from "../../proxy/upstream.ts";
import { LdapDirectory } from "../auth/ldap.ts";
import { ConnectService } from "../connect/service.ts";

export type CheckStatus = "ok" | "warn" | "fail";

export interface Check {
  status: CheckStatus;
  /** What was checked: `kafka 'prod'`, `connect 'main' http://w1:8083`. */
  what: string;
  /** What was found. */
  detail: string;
  /** What to do about it (warn and fail). */
  fix?: string;
}

/** How long one check may take: a host that does not answer is a finding, not a hang. */
const CHECK_TIMEOUT_MS = 5_000;

/** Every check of `config`, in a fixed order (config, store, Kafka, Connect, registry, LDAP). */
export async function runDoctor(config: Config, configPath: string | undefined): Promise<Check[]> {
  const checks: Check[] = [
    { status: "ok", what: "config", detail: `${configPath ?? "no file (defaults and LOUPE_* variables)"} is valid` },
    config.store.url ? await postgresStoreCheck(config.store) : storeCheck(config.dataDir),
  ];
  const kafka = createKafkaPool(
    config.kafka.clusters.map((c) => ({
      name: c.name,
      bootstrapServers: c.bootstrapServers,
      clientId: c.clientId,
      ...(c.sasl ? { sasl: c.sasl } : {}),
      ...(c.tls ? { tls: c.tls } : {}),
      connectTimeoutMs: CHECK_TIMEOUT_MS,
      requestTimeoutMs: CHECK_TIMEOUT_MS,
    })),
  );
  try {
    const found = await Promise.all([
      ...config.kafka.clusters.map((c) => kafkaChecks(kafka.get(c.name), c)),
      connectChecks(config),
      registryChecks(config),
      ldapChecks(config),
    ]);
    checks.push(...found.flat());
  } finally {
    await kafka.close();
  }
  return checks;
}

/** One line per check: `ok   what: detail`, then `fix: ...` on warn and fail. */
export function formatCheck(c: Check): string {
  const tag = { ok: "ok  ", warn: "warn", fail: "FAIL" }[c.status];
  return `${tag} ${c.what}: ${c.detail}${c.fix ? `. Fix: ${c.fix}` : ""}`;
}

/** The store, read-only: its schema version and SQLite's quick integrity check. */
function storeCheck(dataDir: string): Check {
  const what = "store";
  if (!existsSync(dataDir))
    return {
      status: "warn",
      what,
      detail: `${dataDir} does not exist`,
      fix: "create it (0700, owned by the user Loupe runs as) or let the first start create it",
    };
  if (!statSync(dataDir).isDirectory())
    return { status: "fail", what, detail: `${dataDir} is not a directory`, fix: "point dataDir at a directory" };
  const path = join(dataDir, "loupe.db");
  if (!existsSync(path)) return { status: "ok", what, detail: `no store in ${dataDir} yet: the first start creates ${path}` };
  try {
    const { integrity, version } = inspectStore(path);
    if (integrity !== "ok") return { status: "fail", what, detail: `${path}: ${integrity}`, fix: "restore the store from a backup" };
    return { status: "ok", what, detail: `${path}: schema version ${version}, integrity ok` };
  } catch (e) {
    return {
      status: "fail",
      what,
      detail: `${path}: ${(e as Error).message}`,
      fix: "check the file's owner and mode, or restore it from a backup",
    };
  }
}

/** The PostgreSQL store, read-only: it takes the login, and its schema version is one this binary knows. */
async function postgresStoreCheck(store: StoreConfig): Promise<Check> {
  const what = "store";
  const shown = redactedUrl(store.url!);
  try {
    const { version } = await inspectPostgresStore({ url: store.url!, passwordFile: store.passwordFile }, CHECK_TIMEOUT_MS);
    const known = Math.max(...MIGRATIONS.map((m) => m.version));
    if (version > known)
      return {
        status: "fail",
        what,
        detail: `${shown}: schema version ${version}, newer than this binary knows (${known})`,
        fix: "run a Loupe release at least as new as the one that last used this store",
      };
    if (version === 0)
      return { status: "ok", what, detail: `${shown} (PostgreSQL) answers; it holds no store yet: the first start creates it` };
    return { status: "ok", what, detail: `${shown} (PostgreSQL): schema version ${version}` };
  } catch (e) {
    return {
      status: "fail",
      what,
      detail: `${shown} (PostgreSQL): ${(e as Error).message}`,
      fix: "check store.url (host, port, database, user) and store.passwordFile, and that the server lets this host in (pg_hba.conf)",
    };
  }
}

type ClusterSettings = Config["kafka"]["clusters"][number];

/** What the connection failure says, and where in the configuration to fix it. */
function kafkaFix(name: string, c: ClusterSettings, error: string): string {
  const key = `kafka.clusters[${name}]`;
  if (/certificate|self[- ]signed|unable to verify|CERT_|issuer/i.test(error))
    return `set ${key}.tls.ca to the PEM file of the CA that signed the brokers' certificates`;
  if (/SASL|authenticat|credentials|password/i.test(error))
    return `check ${key}.sasl: the user, its password and the mechanism (${c.sasl?.mechanism ?? "none configured"}) the listener expects`;
  if (/TLS|SSL|handshake/i.test(error)) return `check ${key}.tls against the listener: TLS on both sides or on neither`;
  return `check ${key}.bootstrapServers (${c.bootstrapServers.join(",")}) and that this host reaches them (DNS, firewall, the listener's advertised address)`;
}

async function kafkaChecks(kafka: KafkaCluster, c: ClusterSettings): Promise<Check[]> {
  const what = `kafka '${c.name}'`;
  const health = await kafka.health(CHECK_TIMEOUT_MS);
  const how = [
    c.tls?.enabled === false || !c.tls ? "plain text" : "TLS",
    ...(c.sasl ? [`SASL ${c.sasl.mechanism} as ${c.sasl.username}`] : []),
  ].join(", ");
  if (!health.connected) {
    const error = health.error ?? "no answer";
    return [
      { status: "fail", what, detail: `bootstrap ${c.bootstrapServers.join(",")} (${how}): ${error}`, fix: kafkaFix(c.name, c, error) },
    ];
  }
  const connected: Check = {
    status: "ok",
    what,
    detail: `bootstrap ${c.bootstrapServers.join(",")} (${how}): ${health.brokers} broker(s), controller ${health.controllerId}, ${Math.round(health.latencyMs)} ms`,
  };
  return [connected, await authorizerCheck(kafka, c)];
}

/** Whether the brokers run an authorizer, and the ACLs of Loupe's own principal when it may read them. */
async function authorizerCheck(kafka: KafkaCluster, c: ClusterSettings): Promise<Check> {
  const what = `kafka '${c.name}' authorizer`;
  // The principal the brokers see: the SASL user; a client certificate's depends on the brokers' mapping rules.
  const principal = c.sasl ? `User:${c.sasl.username}` : c.tls?.cert ? null : "User:ANONYMOUS";
  try {
    const acls = await kafka.acls.describe(principal ? { principal } : {});
    const own = principal
      ? `${principal} has ${acls.length} ACL(s)`
      : `${acls.length} ACL(s) (Loupe's principal comes from its certificate)`;
    return {
      status: "ok",
      what,
      detail: `on; ${own}${principal && acls.length === 0 ? " (enough only for a super user, or where the brokers set allow.everyone.if.no.acl.found=true)" : ""}`,
    };
  } catch (e) {
    const err = e instanceof AppError ? e : undefined;
    if (err?.status === 400 && /SECURITY_DISABLED|security/i.test(`${err.message} ${JSON.stringify(err.details ?? {})}`))
      return {
        status: "warn",
        what,
        detail: "off: every client that reaches the brokers may do anything, and Loupe's ACL pages stay empty",
        fix: "set authorizer.class.name on the brokers (org.apache.kafka.metadata.authorizer.StandardAuthorizer)",
      };
    if (err?.status === 403)
      return {
        status: "ok",
        what,
        detail: `on; ${principal ?? "Loupe's principal"} may not read ACLs (DESCRIBE on the cluster), so its own are not shown`,
      };
    return {
      status: "fail",
      what,
      detail: `cannot list ACLs: ${(e as Error).message}`,
      fix: "check that the brokers answer DescribeAcls (Kafka 2.0 or later)",
    };
  }
}

async function connectChecks(config: Config): Promise<Check[]> {
  if (config.connect.clusters.length === 0) return [];
  const service = new ConnectService(config.connect);
  const states = await service.clusters();
  return states.flatMap(({ alias, workers }) =>
    workers.map(
      (w): Check =>
        w.state === "UP"
          ? { status: "ok", what: `connect '${alias}' ${w.url}`, detail: `Kafka Connect ${w.version ?? "(version not given)"}` }
          : {
              status: "fail",
              what: `connect '${alias}' ${w.url}`,
              detail: w.error ?? "down",
              fix: `start the worker or correct connect.clusters[${alias}].urls (its REST listener, rest.advertised.host.name)`,
            },
    ),
  );
}

async function registryChecks(config: Config): Promise<Check[]> {
  const sr = config.schemaRegistry;
  if (!sr) return [];
  const upstream = new Upstream({
    name: "Schema registry",
    urls: sr.urls,
    authorization: basicAuthorization(sr.auth),
    tls: tlsOptions(sr.tls),
    timeoutMs: Math.min(sr.timeout, CHECK_TIMEOUT_MS),
    graceMs: sr.grace,
    maxBytes: sr.maxResponseSize,
    failoverOn5xx: true,
  });
  return Promise.all(
    upstream.urls.map(async (url): Promise<Check> => {
      const what = `registry ${url}`;
      try {
        const answer = await upstream.sendTo(url, { method: "GET", path: "/config", headers: { accept: "application/json" } });
        if (answer.status === 200) return { status: "ok", what, detail: "answers (GET /config)" };
        const fix =
          answer.status === 401 || answer.status === 403
            ? "check schemaRegistry.auth: the registry refused Loupe's credentials"
            : "check schemaRegistry.urls: the URL must end at the Confluent-compatible API (Apicurio: /apis/ccompat/v7)";
        return { status: "fail", what, detail: `HTTP ${answer.status}`, fix };
      } catch (e) {
        return {
          status: "fail",
          what,
          detail: (e as Error).message,
          fix: "start the registry host or correct schemaRegistry.urls; check the firewall and, for https, schemaRegistry.tls.ca",
        };
      }
    }),
  );
}

/** The service account's bind and a search under userBase, as every login does first. */
async function ldapChecks(config: Config): Promise<Check[]> {
  if (!config.ldap) return [];
  const reasons: string[] = [];
  const logs = new LogHub("warn", {
    write: (line) => {
      const rec = JSON.parse(line) as { msg: string; error?: string };
      reasons.push(rec.error ? `${rec.msg}: ${rec.error}` : rec.msg);
    },
  });
  const what = `ldap ${config.ldap.url.join(",")}`;
  let directory: LdapDirectory;
  try {
    directory = new LdapDirectory(config.ldap, logs.logger("ldap"));
  } catch (e) {
    return [{ status: "fail", what, detail: (e as Error).message, fix: "check ldap.bindPassword or ldap.bindPasswordFile" }];
  }
  try {
    await directory.lookup("loupe-doctor-check");
    return [{ status: "ok", what, detail: `bound as ${config.ldap.bindDn} and searched ${config.ldap.userBase}` }];
  } catch (e) {
    return [
      {
        status: "fail",
        what,
        detail: reasons.length ? reasons.join("; ") : (e as Error).message,
        fix: "check ldap.url, ldap.bindDn and its password, and for ldaps or startTls ldap.ca",
      },
    ];
  } finally {
    await directory.close();
  }
}
