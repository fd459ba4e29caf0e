/**
 * The services one test run shares (Kafka, a secured Kafka broker, the schema registry's two
 * hosts, OpenLDAP, two Kafka Connect workers, Alertmanager, PostgreSQL), started once: by test/run.ts for `npm test`, or
 * by the preload (test/setup.ts) when `bun test` runs without them. Published to the tests as
 * KAFKA_BOOTSTRAP, KAFKA_SASL_BOOTSTRAP (with KAFKA_MTLS_BOOTSTRAP, the CA and credentials),
 * SCHEMA_REGISTRY_URL, LDAP_URL (with LDAP_BIND_DN, ...), CONNECT_URL, ALERTMANAGER_URL, POSTGRES_URL and the topics' variables.
 *
 * - KAFKA_BOOTSTRAP / KAFKA_SASL_BOOTSTRAP / SCHEMA_REGISTRY_URL / LDAP_URL / CONNECT_URL / ALERTMANAGER_URL / POSTGRES_URL already
 *   set: that service is used, not started (KAFKA_SASL_BOOTSTRAP with all of its variables).
 * - LOUPE_TEST_SECURE_KAFKA=0, LOUPE_TEST_REGISTRY=0, LOUPE_TEST_LDAP=0 (or no slapd installed), LOUPE_TEST_CONNECT=0, LOUPE_TEST_ALERTMANAGER=0 (or none installed),
 *   LOUPE_TEST_POSTGRES=0 (or no PostgreSQL server installed): that
 *   service is not started (its tests fail, see requireEnv).
 * - LOUPE_TEST_CLUSTER=0: nothing is started (pure unit runs).
 */
import {
  alertmanagerInstalled,
  type Cluster,
  kafkaSecureService,
  postgresInstalled,
  type ServiceName,
  slapdInstalled,
  startCluster,
} from "./cluster.ts";

/** The variables the services publish; a run without services has none of them. */
export const SERVICE_ENV_KEYS = [
  "KAFKA_BOOTSTRAP",
  "KAFKA_METRICS_URLS",
  ...kafkaSecureService.envKeys,
  "SCHEMA_REGISTRY_URL",
  "SCHEMA_REGISTRY_TOPICS",
  "LDAP_URL",
  "LDAP_BASE_DN",
  "LDAP_BIND_DN",
  "LDAP_BIND_PASSWORD",
  "LDAP_ADMIN_DN",
  "LDAP_ADMIN_PASSWORD",
  "CONNECT_URL",
  "CONNECT_TOPICS",
  "ALERTMANAGER_URL",
  "POSTGRES_URL",
  "LOUPE_TEST_OWN_KAFKA",
];

/** The services to start for `env`: those neither given nor switched off. */
export function wantedServices(env: Record<string, string | undefined> = process.env): ServiceName[] {
  const wanted: ServiceName[] = [];
  if (env.LOUPE_TEST_CLUSTER === "0") return wanted;
  if (!env.KAFKA_BOOTSTRAP) wanted.push("kafka");
  if (!env.KAFKA_SASL_BOOTSTRAP && env.LOUPE_TEST_SECURE_KAFKA !== "0") wanted.push("kafka-secure");
  if (!env.SCHEMA_REGISTRY_URL && env.LOUPE_TEST_REGISTRY !== "0") wanted.push("registry");
  if (!env.LDAP_URL && env.LOUPE_TEST_LDAP !== "0") {
    if (slapdInstalled()) wanted.push("ldap");
    else console.error("[test] no slapd installed (apt-get install slapd ldap-utils): the LDAP tests will fail");
  }
  if (!env.CONNECT_URL && env.LOUPE_TEST_CONNECT !== "0") wanted.push("connect");
  if (!env.ALERTMANAGER_URL && env.LOUPE_TEST_ALERTMANAGER !== "0") {
    if (alertmanagerInstalled()) wanted.push("alertmanager");
    else
      console.error(
        "[test] no prometheus-alertmanager installed (apt-get install prometheus-alertmanager): the Alertmanager tests will fail",
      );
  }
  if (!env.POSTGRES_URL && env.LOUPE_TEST_POSTGRES !== "0") {
    if (postgresInstalled()) wanted.push("postgres");
    else console.error("[test] no PostgreSQL server installed (apt-get install postgresql): the PostgreSQL store tests will fail");
  }
  return wanted;
}

export interface TestServices {
  cluster: Cluster;
  /** What the tests read: the started services' variables and those given. */
  env: Record<string, string>;
  /** Stops the services once, however often it is called; killNow for signal handlers. */
  stop(): Promise<void>;
  killNow(): void;
}

/**
 * Starts `wanted` (on a given KAFKA_BOOTSTRAP's broker if there is one), owned by this process:
 * killed on SIGINT/SIGTERM/SIGHUP and at exit, and by the cluster's watchdog if this process
 * dies any other way, so no Java process outlives the run.
 */
export async function startTestServices(wanted: ServiceName[], tag: string): Promise<TestServices> {
  const t0 = performance.now();
  const cluster = await startCluster({ services: wanted, ownerPid: process.pid, given: { KAFKA_BOOTSTRAP: process.env.KAFKA_BOOTSTRAP } });
  const env: Record<string, string> = { ...cluster.env };
  // Tests may rely on what this run's own broker is configured with (its rack, for one).
  if (wanted.includes("kafka")) env.LOUPE_TEST_OWN_KAFKA = "1";
  const summary = cluster.services.map((s) => `${s.name} ${s.version} (${s.startMs} ms)`).join(", ");
  console.error(`[${tag}] started ${summary} in ${Math.round(performance.now() - t0)} ms: ${JSON.stringify(cluster.env)}`);
  let stopped = false;
  const killNow = () => {
    if (stopped) return;
    stopped = true;
    cluster.killSync();
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => {
      killNow();
      process.exit(130);
    });
  }
  process.once("exit", killNow);
  return {
    cluster,
    env,
    killNow,
    async stop() {
      if (stopped) return;
      stopped = true;
      await cluster.stop({ graceMs: 2_000 });
    },
  };
}
