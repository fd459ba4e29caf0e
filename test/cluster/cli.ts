/**
 * The development cluster from the command line:
 *
 *   bun test/cluster/cli.ts up [--no-secure] [--no-registry] [--no-ldap] [--no-connect]
 *                              [--no-alertmanager] [--no-postgres]
 *                              [--services=kafka,kafka-secure,registry,ldap,connect,alertmanager,postgres]
 *                              [--brokers=N]
 *       starts the services in the background and prints KEY=VALUE lines
 *       (KAFKA_BOOTSTRAP=127.0.0.1:<port>,
 *       KAFKA_METRICS_URLS=1=http://127.0.0.1:<port>/metrics,...: each Kafka node's Prometheus JMX
 *       exporter (Loupe's rules, deploy/jmx-exporter-kafka.yaml), by node id,
 *       KAFKA_SASL_BOOTSTRAP=127.0.0.1:<port> (SCRAM-SHA-512 over TLS) and
 *       KAFKA_MTLS_BOOTSTRAP=127.0.0.1:<port> (TLS with client certificates): the secured broker,
 *       with KAFKA_SECURE_CA_FILE, KAFKA_SECURE_CLIENT_CERT/KEY, KAFKA_SECURE_ADMIN_USER/PASSWORD,
 *       KAFKA_SECURE_USERS (name:password,...), ...,
 *       SCHEMA_REGISTRY_URL=http://127.0.0.1:<port1>/apis/ccompat/v7,http://127.0.0.1:<port2>/apis/ccompat/v7:
 *       the two registry hosts, sharing one store on the broker,
 *       LDAP_URL=ldap://127.0.0.1:<port> with LDAP_BASE_DN, LDAP_BIND_DN, LDAP_BIND_PASSWORD, ...,
 *       CONNECT_URL=http://127.0.0.1:<port1>,http://127.0.0.1:<port2>: the two Connect workers,
 *       ALERTMANAGER_URL=http://127.0.0.1:<port>: Prometheus Alertmanager,
 *       POSTGRES_URL=postgres://loupe:<password>@127.0.0.1:<port>/postgres: PostgreSQL, its
 *       password made for this start);
 *       a running cluster that lacks an asked-for service gets it added;
 *       --brokers=N runs N Kafka nodes (node 1 broker and controller, the others brokers; three
 *       replicas and two in sync by default from three nodes on), KAFKA_BOOTSTRAP naming node 1
 *   bun test/cluster/cli.ts env      the same lines for a running cluster (eval "$(... env)")
 *   bun test/cluster/cli.ts status   what runs, with pids, ports, logs; exit 1 when something is down
 *   bun test/cluster/cli.ts down     stops everything and deletes the cluster's data (topics, records,
 *                                    groups, schemas, connectors): the next `up` starts empty
 *   bun test/cluster/cli.ts fetch    only downloads the jars into .cache/ (and makes the registry's
 *                                    class archive there, from a throwaway start)
 *
 * The state lives in .cache/cluster/state.json; data and logs in .cache/cluster/<service>/
 * (LOUPE_CLUSTER_DIR names another directory, for a second cluster beside the first).
 */

import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  alertmanagerInstalled,
  CACHE_DIR,
  fetchAll,
  isAlive,
  kafkaMetricsUrls,
  postgresInstalled,
  SERVICES,
  type ServiceName,
  type ServiceProcess,
  serviceByName,
  slapdInstalled,
  startCluster,
  stopService,
} from "./cluster.ts";

const STATE_DIR = process.env.LOUPE_CLUSTER_DIR || join(CACHE_DIR, "cluster");
const STATE_FILE = join(STATE_DIR, "state.json");

interface State {
  startedAt: string;
  services: ServiceProcess[];
}

function readState(): State | null {
  if (!existsSync(STATE_FILE)) return null;
  try {
    return JSON.parse(readFileSync(STATE_FILE, "utf8")) as State;
  } catch {
    return null;
  }
}

/** Each variable once, from the first service that has it (node 1 for KAFKA_BOOTSTRAP); KAFKA_METRICS_URLS of every node. */
function printEnv(services: ServiceProcess[]): void {
  const printed = new Set<string>();
  const metrics = kafkaMetricsUrls(services);
  if (metrics) {
    printed.add("KAFKA_METRICS_URLS");
    console.log(`KAFKA_METRICS_URLS=${metrics}`);
  }
  for (const s of services)
    for (const [k, v] of Object.entries(s.env)) {
      if (printed.has(k)) continue;
      printed.add(k);
      console.log(`${k}=${v}`);
    }
}

/** `--brokers=N`: Kafka nodes, 1 to 9. */
function parseBrokers(args: string[]): number {
  const given = args.find((a) => a.startsWith("--brokers="));
  if (!given) return 1;
  const n = Number(given.slice("--brokers=".length));
  if (!Number.isInteger(n) || n < 1 || n > 9) throw new Error(`--brokers takes a whole number from 1 to 9, not '${given.slice(10)}'`);
  return n;
}

function parseServices(args: string[]): ServiceName[] {
  const explicit = args.find((a) => a.startsWith("--services="));
  if (explicit)
    return explicit
      .slice("--services=".length)
      .split(",")
      .filter(Boolean)
      .map((n) => serviceByName(n).name);
  const noSecure = args.includes("--no-secure") || process.env.LOUPE_CLUSTER_SECURE === "0";
  const noRegistry = args.includes("--no-registry") || process.env.LOUPE_CLUSTER_REGISTRY === "0";
  const noConnect = args.includes("--no-connect") || process.env.LOUPE_CLUSTER_CONNECT === "0";
  let noLdap = args.includes("--no-ldap") || process.env.LOUPE_CLUSTER_LDAP === "0";
  // `npm run dev` works without slapd; asking for ldap by name still fails with what to install.
  if (!noLdap && !slapdInstalled()) {
    console.error("no slapd installed (apt-get install slapd ldap-utils): starting without the ldap service");
    noLdap = true;
  }
  let noAlertmanager = args.includes("--no-alertmanager") || process.env.LOUPE_CLUSTER_ALERTMANAGER === "0";
  if (!noAlertmanager && !alertmanagerInstalled()) {
    console.error(
      "no prometheus-alertmanager installed (apt-get install prometheus-alertmanager): starting without the alertmanager service",
    );
    noAlertmanager = true;
  }
  let noPostgres = args.includes("--no-postgres") || process.env.LOUPE_CLUSTER_POSTGRES === "0";
  if (!noPostgres && !postgresInstalled()) {
    console.error("no PostgreSQL server installed (apt-get install postgresql): starting without the postgres service");
    noPostgres = true;
  }
  return SERVICES.map((s) => s.name).filter(
    (n) =>
      !(noSecure && n === "kafka-secure") &&
      !(noRegistry && n === "registry") &&
      !(noLdap && n === "ldap") &&
      !(noConnect && n === "connect") &&
      !(noAlertmanager && n === "alertmanager") &&
      !(noPostgres && n === "postgres"),
  );
}

/** "kafka 4.3.1 up in 5200 ms (pid, log)", said as each service is up while the others still start. */
function said(verb: string): (s: ServiceProcess) => void {
  return (s) => console.error(`${s.name} ${s.version} ${verb} in ${s.startMs} ms (pid ${s.pid}, log ${s.logFile})`);
}

async function down(): Promise<void> {
  const state = readState();
  if (!state) {
    console.log("no cluster is running");
    return;
  }
  await Promise.all(state.services.map((s) => stopService(s)));
  rmSync(STATE_FILE, { force: true });
  for (const s of state.services) console.error(`stopped ${s.name} (pid ${s.pid})`);
}

async function up(args: string[]): Promise<number> {
  const state = readState();
  const names = parseServices(args);
  const brokers = parseBrokers(args);
  if (state) {
    if (state.services.every((s) => (s.workers ?? [s]).every((p) => isAlive(p.pid)))) {
      console.error(`cluster already running since ${state.startedAt}`);
      const running = state.services.filter((s) => s.name === "kafka").length;
      if (args.some((a) => a.startsWith("--brokers=")) && running !== brokers)
        console.error(`it runs ${running} Kafka node(s), not ${brokers}: 'down' first to change that`);
      // A cluster started before a service existed (or without it) gets it added, not restarted.
      const missing = names.filter((n) => !state.services.some((s) => s.name === n));
      if (missing.length > 0) {
        // On the running services: Connect added later joins the running broker.
        const given = Object.assign({}, ...state.services.map((s) => s.env));
        console.error(`adding ${missing.join(", ")} ...`);
        const added = await startCluster({ services: missing, baseDir: STATE_DIR, given, onStarted: said("added") });
        state.services.push(...added.services);
        writeFileSync(STATE_FILE, JSON.stringify(state, null, 2));
      }
      printEnv(state.services);
      return 0;
    }
    console.error("a previous cluster is partly down; restarting it");
    await down();
  }
  mkdirSync(STATE_DIR, { recursive: true });
  const t0 = performance.now();
  console.error(`starting ${names.join(", ")} (the broker first, then the others side by side) ...`);
  const cluster = await startCluster({ services: names, baseDir: STATE_DIR, onStarted: said("up"), kafkaBrokers: brokers });
  // Kafka's nodes after the first are services of their own in the state, so status and down see them.
  const services = [...cluster.services, ...cluster.brokers.slice(1)];
  writeFileSync(STATE_FILE, JSON.stringify({ startedAt: new Date().toISOString(), services } satisfies State, null, 2));
  console.error(`cluster up in ${Math.round(performance.now() - t0)} ms`);
  printEnv(services);
  return 0;
}

async function status(): Promise<number> {
  const state = readState();
  if (!state) {
    console.log("no cluster is running");
    return 1;
  }
  let ok = true;
  for (const s of state.services) {
    // Every process of the service: one of two registry hosts down is down.
    const alive = (s.workers ?? [s]).every((p) => isAlive(p.pid));
    const answers =
      alive &&
      (await serviceByName(s.name)
        .probe(s)
        .catch(() => false));
    ok &&= answers;
    const ports = Object.entries(s.ports)
      .map(([k, v]) => `${k}=${v}`)
      .join(" ");
    const name = s.nodeId && s.nodeId > 1 ? `${s.name}-${s.nodeId}` : s.name;
    console.log(
      `${name.padEnd(12)} ${answers ? "up" : alive ? "NOT ANSWERING" : "DOWN"}  pid=${s.pid} ${ports} version=${s.version} log=${s.logFile}`,
    );
  }
  printEnv(state.services);
  return ok ? 0 : 1;
}

async function main(argv: string[]): Promise<number> {
  const [cmd = "status", ...args] = argv;
  switch (cmd) {
    case "up":
      return up(args);
    case "down":
      await down();
      return 0;
    case "status":
      return status();
    case "env": {
      const state = readState();
      if (!state) {
        console.error("no cluster is running; start one with: bun test/cluster/cli.ts up");
        return 1;
      }
      printEnv(state.services);
      return 0;
    }
    case "fetch":
      await fetchAll(parseServices(args).map(serviceByName));
      return 0;
    default:
      console.error(
        "usage: bun test/cluster/cli.ts up [--no-secure] [--no-registry] [--no-ldap] [--no-connect] [--no-alertmanager] [--no-postgres] [--services=kafka,kafka-secure,registry,ldap,connect,alertmanager,postgres] [--brokers=N] | down | status | env | fetch",
      );
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
