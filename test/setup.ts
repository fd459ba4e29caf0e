/**
 * Preloaded by `bun test` (bunfig.toml): starts ONE real Kafka broker, an Apicurio schema
 * registry (two hosts sharing one store on the broker), an OpenLDAP directory and a Kafka
 * Connect cluster (two workers) for the whole run and publishes them to the tests as
 * process.env.KAFKA_BOOTSTRAP, SCHEMA_REGISTRY_URL (both hosts, comma-separated; tests read it
 * with registryEnv()), LDAP_URL (with LDAP_BIND_DN, ...) and CONNECT_URL.
 *
 * - KAFKA_BOOTSTRAP / SCHEMA_REGISTRY_URL / LDAP_URL already set: that service is used, not started
 *   (SCHEMA_REGISTRY_URL may name one host or several of one registry).
 * - The registry and Connect start once the broker answers (on it, or on KAFKA_BOOTSTRAP's).
 * - LOUPE_TEST_REGISTRY=0: no registry (tests that need one fail, see requireEnv).
 * - LOUPE_TEST_LDAP=0, or no slapd installed: no directory (slapd starts in ~150 ms, so it is
 *   otherwise always started; the LDAP tests fail without it).
 * - LOUPE_TEST_CONNECT=0: no Connect workers (they start in parallel with the registry and
 *   LDAP, on this run's broker or KAFKA_BOOTSTRAP's); the Connect tests fail without them.
 * - LOUPE_TEST_CLUSTER=0: nothing is started (pure unit runs); Kafka tests then fail.
 *
 * The processes are stopped by a global afterAll, killed on SIGINT/SIGTERM/SIGHUP, and a
 * watchdog process kills them if this process dies any other way: no Java process outlives
 * the run, whatever the tests do.
 */

import { afterAll, setDefaultTimeout } from "bun:test";
import { type ServiceName, slapdInstalled, startCluster } from "./cluster/cluster.ts";

// Applies to the first test file only in Bun 1.4 (later files get Bun's 5 s default again);
// slow tests pass their own timeout.
setDefaultTimeout(20_000);

const wanted: ServiceName[] = [];
if (process.env.LOUPE_TEST_CLUSTER !== "0") {
  if (!process.env.KAFKA_BOOTSTRAP) wanted.push("kafka");
  if (!process.env.SCHEMA_REGISTRY_URL && process.env.LOUPE_TEST_REGISTRY !== "0") wanted.push("registry");
  if (!process.env.LDAP_URL && process.env.LOUPE_TEST_LDAP !== "0") {
    if (slapdInstalled()) wanted.push("ldap");
    else console.error("[test/setup] no slapd installed (apt-get install slapd ldap-utils): the LDAP tests will fail");
  }
  if (!process.env.CONNECT_URL && process.env.LOUPE_TEST_CONNECT !== "0") wanted.push("connect");
}

if (wanted.length > 0) {
  const t0 = performance.now();
  const cluster = await startCluster({ services: wanted, ownerPid: process.pid, given: { KAFKA_BOOTSTRAP: process.env.KAFKA_BOOTSTRAP } });
  Object.assign(process.env, cluster.env);
  // Tests may rely on what this run's own broker is configured with (its rack, for one).
  if (wanted.includes("kafka")) process.env.LOUPE_TEST_OWN_KAFKA = "1";
  const summary = cluster.services.map((s) => `${s.name} ${s.version} (${s.startMs} ms)`).join(", ");
  console.error(`[test/setup] started ${summary} in ${Math.round(performance.now() - t0)} ms: ${JSON.stringify(cluster.env)}`);

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
  // Bun's test runner does not emit "exit"; kept for runs that end another way.
  process.once("exit", killNow);
  afterAll(async () => {
    if (stopped) return;
    stopped = true;
    await cluster.stop({ graceMs: 2_000 });
  });
}
