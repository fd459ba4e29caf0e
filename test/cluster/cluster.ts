/**
 * The real test and development cluster: a Kafka broker (KRaft, broker and controller in one
 * JVM) and an Apicurio schema registry (two hosts), both run from jars fetched from Maven
 * Central, an OpenLDAP directory (Debian's slapd) seeded with a small organisation, a
 * Prometheus Alertmanager (Debian's prometheus-alertmanager) that Loupe delivers alerts to, and
 * a PostgreSQL server (Debian's postgresql) for the store several instances share.
 *
 * A second, secured broker (kafka-secure: SCRAM-SHA-512 over TLS, mutual TLS, an authorizer that
 * denies what no ACL allows) runs beside the open one, so the other tests keep their open broker.
 *
 * Everything binds to 127.0.0.1 on ports picked at run time, so several runs (a developer's
 * `cli.ts up` and a `bun test`) can share one machine. Each service is one detached Java
 * process with its own working directory and log file; stopping it kills its process group.
 *
 * Services are a list (SERVICES): later ones (Connect, Alertmanager) get the environment of
 * the ones before them, e.g. KAFKA_BOOTSTRAP, through StartContext.env.
 *
 * Kafka Connect runs as a distributed cluster of two workers (one JVM each, one group.id), and
 * the registry as two hosts sharing one store (a journal topic on the broker), so a test can
 * kill a worker or a host and see the other one serve.
 */

import { spawn, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { DownloadProgress, endPlan, planSteps, progress, stepLine } from "./fetch-progress.ts";

export const REPO_ROOT = resolve(import.meta.dir, "../..");
export const CACHE_DIR = join(REPO_ROOT, ".cache");
const POM = join(import.meta.dir, "pom.xml");
/** Connect's jars, fetched into their own directory so the broker's classpath stays as it is. */
const CONNECT_POM = join(import.meta.dir, "connect-pom.xml");

export type ServiceName = "kafka" | "kafka-secure" | "registry" | "ldap" | "connect" | "alertmanager" | "postgres";

/** A started service, as recorded in the CLI's state file. Plain data: it must survive JSON. */
export interface ServiceProcess {
  name: ServiceName;
  pid: number;
  /** Pid of the process that kills this service when its owner dies; absent for `cli.ts up`. */
  watchdogPid?: number;
  /** Working directory (data, config, log); removed when the service stops. */
  runDir: string;
  logFile: string;
  ports: Record<string, number>;
  /** What clients need, e.g. { KAFKA_BOOTSTRAP: "127.0.0.1:40123" }. */
  env: Record<string, string>;
  version: string;
  startMs: number;
  /** The command that runs it, for restartService (same directory, ports and data). */
  command?: string[];
  /** What stopService sends first (SIGTERM when absent). */
  stopSignal?: "SIGINT" | "SIGTERM";
  /** The owner its watchdog watches; a restarted service gets a watchdog for it again. */
  ownerPid?: number;
  /** Kafka's node id (1 for the first broker, which is also the controller). */
  nodeId?: number;
  /**
   * A service of several processes (Connect's workers, the registry's hosts): each one, with
   * its own URL in `env` (killService and restartService take one); the service's own pid is
   * the first one's and its `env` lists their URLs. Stopping the service stops them all.
   */
  workers?: ServiceProcess[];
}

export interface StartContext {
  /** Environment of the services started before this one. */
  env: Record<string, string>;
  /** Where the service keeps its data; created by the caller. */
  runDir: string;
  /** When set, a watchdog stops the service as soon as this process is gone. */
  ownerPid?: number;
  /** Extra JVM options, appended last (e.g. from LOUPE_CLUSTER_JVM_OPTS). */
  jvmOpts?: string[];
  timeoutMs?: number;
  /**
   * Kafka only: start a broker-only node with this id that joins the cluster of `join` (the
   * first broker, whose controller it uses) instead of a fresh single-node cluster.
   */
  join?: { node: ServiceProcess; nodeId: number };
  /** LDAP only: also serve ldaps:// (LDAPS_URL) and StartTLS with this certificate and key. */
  ldapTls?: LdapTls;
  /** Kafka only: server.properties that replace the tool's (`"authorizer.class.name": ""`: no authorizer). */
  kafkaProperties?: Record<string, string | number | boolean>;
  /** Kafka only: how many nodes the cluster will have (default 1), for its replication defaults. */
  kafkaBrokers?: number;
  /**
   * Kafka only: this node is one of a static controller quorum (`controller.quorum.voters`), every
   * node broker and controller, on these ports, formatted with this cluster id. See startControllerQuorum.
   */
  kafkaVoter?: { nodeId: number; port: number; controllerPort: number; voters: string; clusterId: string };
}

export interface LdapTls {
  /** PEM server certificate (its SAN must name 127.0.0.1), followed by any intermediates. */
  certFile: string;
  /** PEM private key of the certificate, unencrypted. */
  keyFile: string;
}

export interface ServiceDef {
  name: ServiceName;
  /** The environment variables the service publishes. */
  envKeys: string[];
  /** Services whose environment this one needs at start; they are started first. */
  needs: ServiceName[];
  /** Downloads what the service needs into .cache/, once. */
  fetch(): Promise<void>;
  /** What fetch() still has to download or make (FETCH_STEPS names), for the progress lines. */
  pendingFetch?(): string[];
  start(ctx: StartContext): Promise<ServiceProcess>;
  /** True when the service answers a real request. */
  probe(proc: ServiceProcess): Promise<boolean>;
}

// ---------------------------------------------------------------------------------------------
// Versions and downloads

export function versions(): { kafka: string; apicurio: string; log4j: string; jmxExporter: string } {
  const pom = readFileSync(POM, "utf8");
  const prop = (name: string) => {
    const m = new RegExp(`<${name.replace(".", "\\.")}>([^<]+)</`).exec(pom);
    if (!m?.[1]) throw new Error(`test/cluster/pom.xml has no <${name}>`);
    return m[1].trim();
  };
  return {
    kafka: prop("kafka.version"),
    apicurio: prop("apicurio.version"),
    log4j: prop("log4j.version"),
    jmxExporter: prop("jmx-exporter.version"),
  };
}

export function kafkaLibsDir(): string {
  return join(CACHE_DIR, `kafka-${versions().kafka}`, "libs");
}

export function apicurioDir(): string {
  return join(CACHE_DIR, `apicurio-${versions().apicurio}`, "dist");
}

export function jmxExporterDir(): string {
  return join(CACHE_DIR, `jmx-exporter-${versions().jmxExporter}`);
}

/** The rules Loupe ships for the brokers' JMX exporter (the series its alerts 1008-1012 read). */
export const JMX_EXPORTER_RULES = join(REPO_ROOT, "deploy", "jmx-exporter-kafka.yaml");

export function connectLibsDir(): string {
  return join(CACHE_DIR, `connect-${versions().kafka}`, "libs");
}

/**
 * Runs Maven in batch mode, following its "Downloaded from" lines to say how far the download
 * got (see fetch-progress.ts); its whole output is kept for the error when it fails.
 */
async function runMaven(args: string[], what: string, pom = POM): Promise<void> {
  const said = new DownloadProgress(what);
  const output: string[] = [];
  const code = await new Promise<number>((resolveExit, reject) => {
    const child = spawn("mvn", ["-B", "-f", pom, ...args], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let rest = "";
    const take = (chunk: Buffer) => {
      const lines = (rest + chunk.toString("utf8")).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) {
        output.push(line);
        said.line(line);
      }
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    child.on("error", (err) => reject(new Error(`could not run mvn to fetch ${what}: ${err.message}`)));
    child.on("close", (status) => resolveExit(status ?? 1));
  });
  if (code !== 0) throw new Error(`mvn failed to fetch ${what} (exit ${code}):\n${tail(output.join("\n"), 40)}`);
  said.done();
}

/**
 * Runs `fill(tmp)` and moves tmp to `dir` when it succeeds, so an interrupted download never
 * looks complete and two concurrent runs do not see each other's half-written directory.
 */
async function fetchOnce(dir: string, fill: (tmp: string) => Promise<void>): Promise<void> {
  const marker = join(dir, ".complete");
  if (existsSync(marker)) return;
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  try {
    await fill(tmp);
    writeFileSync(join(tmp, ".complete"), new Date().toISOString());
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    if (existsSync(marker)) return; // another run finished first
    throw err;
  }
}

const fetched = (dir: string) => existsSync(join(dir, ".complete"));

/** What each download is called in the progress lines (with its size, for what comes next). */
export const FETCH_STEPS = {
  kafka: () => `Kafka ${versions().kafka} jars (about 45 MB)`,
  apicurio: () => `Apicurio Registry ${versions().apicurio} (about 115 MB)`,
  connect: () => `Kafka Connect ${versions().kafka} jars (about 40 MB)`,
  classArchive: () => "the registry's class archive (one throwaway start, about 20 s)",
  jmxExporter: () => `Prometheus JMX exporter agent ${versions().jmxExporter} (about 3 MB)`,
};

export async function fetchKafka(): Promise<string> {
  const dir = kafkaLibsDir();
  await fetchOnce(dir, async (tmp) => {
    await runMaven(["dependency:copy-dependencies", `-DoutputDirectory=${tmp}`], FETCH_STEPS.kafka());
    if (!readdirSync(tmp).some((f) => f.startsWith("kafka_2.13-"))) throw new Error("mvn copied no Kafka jars");
  });
  return dir;
}

/** The JMX exporter's agent jar (io.prometheus.jmx:jmx_prometheus_javaagent), by coordinates. */
export async function fetchJmxExporter(): Promise<string> {
  const dir = jmxExporterDir();
  const version = versions().jmxExporter;
  const jar = `jmx_prometheus_javaagent-${version}.jar`;
  await fetchOnce(dir, async (tmp) => {
    await runMaven(
      [
        "org.apache.maven.plugins:maven-dependency-plugin:2.8:copy",
        `-Dartifact=io.prometheus.jmx:jmx_prometheus_javaagent:${version}`,
        `-DoutputDirectory=${tmp}`,
      ],
      FETCH_STEPS.jmxExporter(),
    );
    if (!existsSync(join(tmp, jar))) throw new Error(`mvn copied no ${jar}`);
  });
  return join(dir, jar);
}

export async function fetchConnect(): Promise<string> {
  const dir = connectLibsDir();
  const version = versions().kafka;
  await fetchOnce(dir, async (tmp) => {
    await runMaven(
      [`-Dkafka.version=${version}`, "dependency:copy-dependencies", `-DoutputDirectory=${tmp}`],
      FETCH_STEPS.connect(),
      CONNECT_POM,
    );
    if (!readdirSync(tmp).some((f) => f.startsWith("connect-runtime-"))) throw new Error("mvn copied no connect-runtime jar");
  });
  return dir;
}

export async function fetchApicurio(): Promise<string> {
  const dir = apicurioDir();
  const version = versions().apicurio;
  await fetchOnce(dir, async (tmp) => {
    await runMaven(
      [
        "org.apache.maven.plugins:maven-dependency-plugin:2.8:copy",
        `-Dartifact=io.apicurio:apicurio-registry-app:${version}:tar.gz:all`,
        `-DoutputDirectory=${tmp}`,
      ],
      FETCH_STEPS.apicurio(),
    );
    const archive = join(tmp, `apicurio-registry-app-${version}-all.tar.gz`);
    const res = spawnSync("tar", ["xzf", archive, "-C", tmp], { encoding: "utf8" });
    if (res.status !== 0) throw new Error(`tar failed on ${archive}: ${res.stderr}`);
    rmSync(archive);
  });
  return dir;
}

// ---------------------------------------------------------------------------------------------
// Processes

/** A free TCP port on 127.0.0.1, found by binding port 0 and closing again. */
export function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", fail);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => (port ? ok(port) : fail(new Error("no port"))));
    });
  });
}

export function javaBin(): string {
  return process.env.JAVA_HOME ? join(process.env.JAVA_HOME, "bin", "java") : "java";
}

/** Memory-lean JVM flags: the machine has 2 cores, and the JIT's second tier costs more than it saves here. */
const BASE_JVM_OPTS = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:+ExitOnOutOfMemoryError", "-Djava.awt.headless=true"];

export function jvmOptsFromEnv(): string[] {
  return (process.env.LOUPE_CLUSTER_JVM_OPTS ?? "").split(/\s+/).filter(Boolean);
}

/** Starts `cmd` detached (own process group, survives its parent) with output to `logFile`. */
function spawnDetached(cmd: string[], cwd: string, logFile: string): number {
  const fd = openSync(logFile, "a");
  try {
    const child = spawn(cmd[0]!, cmd.slice(1), { cwd, detached: true, stdio: ["ignore", fd, fd] });
    child.unref();
    if (!child.pid) throw new Error(`could not start ${cmd[0]}`);
    return child.pid;
  } finally {
    closeSync(fd);
  }
}

/**
 * A tiny shell loop that kills the service's process group (and removes its directory) once
 * `ownerPid` is gone, so a test run that crashes or is killed leaves no Java process behind.
 */
function spawnWatchdog(ownerPid: number, servicePid: number, runDir: string): number {
  const script = [
    `while kill -0 ${ownerPid} 2>/dev/null && kill -0 ${servicePid} 2>/dev/null; do sleep 1; done`,
    `kill -TERM -${servicePid} 2>/dev/null`,
    `for i in 1 2 3 4 5; do kill -0 ${servicePid} 2>/dev/null || break; sleep 1; done`,
    `kill -KILL -${servicePid} 2>/dev/null`,
    `rm -rf ${shellQuote(runDir)}`,
    // The temp directory that held it, once its last service is gone.
    `rmdir ${shellQuote(dirname(runDir))} 2>/dev/null`,
  ].join("; ");
  const child = spawn("sh", ["-c", script], { detached: true, stdio: "ignore" });
  child.unref();
  return child.pid ?? 0;
}

function shellQuote(s: string): string {
  return `'${s.replaceAll("'", "'\\''")}'`;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; removes the run directory. Never throws. */
export async function stopService(proc: ServiceProcess, opts: { graceMs?: number; keepDir?: boolean } = {}): Promise<void> {
  if (proc.workers) await Promise.all(proc.workers.map((w) => stopService(w, { ...opts, keepDir: true })));
  const graceMs = opts.graceMs ?? 10_000;
  if (proc.watchdogPid) signalGroup(proc.watchdogPid, "SIGKILL");
  if (isAlive(proc.pid)) {
    signalGroup(proc.pid, proc.stopSignal ?? "SIGTERM");
    const deadline = Date.now() + graceMs;
    while (isAlive(proc.pid) && Date.now() < deadline) await Bun.sleep(50);
    if (isAlive(proc.pid)) {
      signalGroup(proc.pid, "SIGKILL");
      const killDeadline = Date.now() + 5_000;
      while (isAlive(proc.pid) && Date.now() < killDeadline) await Bun.sleep(20);
    }
  }
  if (!opts.keepDir) rmSync(proc.runDir, { recursive: true, force: true });
}

/** For signal handlers, where nothing asynchronous runs any more. */
export function killServiceSync(proc: ServiceProcess): void {
  for (const w of proc.workers ?? []) killServiceSync(w);
  if (proc.watchdogPid) signalGroup(proc.watchdogPid, "SIGKILL");
  signalGroup(proc.pid, "SIGKILL");
  rmSync(proc.runDir, { recursive: true, force: true });
}

/**
 * SIGKILL, as a crash: no shutdown, the data directory kept (its watchdog, which would remove
 * it, goes first). restartService brings it back on the same ports and data.
 */
export async function killService(proc: ServiceProcess): Promise<void> {
  if (proc.workers) throw new Error(`${proc.name} has ${proc.workers.length} processes: kill one of them`);
  if (proc.watchdogPid) signalGroup(proc.watchdogPid, "SIGKILL");
  proc.watchdogPid = undefined;
  signalGroup(proc.pid, "SIGKILL");
  const deadline = Date.now() + 10_000;
  while (isAlive(proc.pid) && Date.now() < deadline) await Bun.sleep(20);
  if (isAlive(proc.pid)) throw new Error(`${proc.name} (pid ${proc.pid}) survived SIGKILL`);
}

/**
 * Freezes a service (SIGSTOP): its sockets stay open and nothing answers, as with a broker
 * stalled by a long pause. thawService (SIGCONT) lets it go on where it was.
 */
export function freezeService(proc: ServiceProcess): void {
  signalGroup(proc.pid, "SIGSTOP");
  // A stop reaches each thread when it next runs: on a busy machine a thread may still answer a
  // request for a moment after kill() returns. Frozen means every thread of the group stopped.
  const deadline = Date.now() + 5_000;
  while (!groupStopped(proc.pid)) {
    if (Date.now() > deadline) throw new Error(`${proc.name} (pid ${proc.pid}) did not stop within 5 s of SIGSTOP`);
    Bun.sleepSync(1);
  }
}

/** Whether every thread of every process in the group `pgid` is stopped (state T or t). */
function groupStopped(pgid: number): boolean {
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue;
    }
    // Fields after the command's closing parenthesis: state, ppid, pgrp, ...
    const [, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(pgrp) !== pgid) continue;
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      try {
        const s = readFileSync(`/proc/${pid}/task/${task}/stat`, "utf8");
        const state = s.slice(s.lastIndexOf(")") + 2, s.lastIndexOf(")") + 3);
        if (state !== "T" && state !== "t" && state !== "Z" && state !== "X") return false;
      } catch {
        /* the thread ended */
      }
    }
  }
  return true;
}

export function thawService(proc: ServiceProcess): void {
  signalGroup(proc.pid, "SIGCONT");
}

/**
 * Starts a killed (or stopped with keepDir) Kafka, LDAP, Connect worker or registry host process
 * again with the same command, ports and data directory; updates `proc` in place (new pid and
 * watchdog), so whoever stops it later stops the new process.
 */
export async function restartService(proc: ServiceProcess, opts: { timeoutMs?: number } = {}): Promise<ServiceProcess> {
  if (proc.workers) throw new Error(`${proc.name} has ${proc.workers.length} processes: restart one of them`);
  if (!proc.command) throw new Error(`${proc.name} cannot be restarted (no command recorded)`);
  if (isAlive(proc.pid)) throw new Error(`${proc.name} (pid ${proc.pid}) is still running`);
  const t0 = performance.now();
  const logFrom = existsSync(proc.logFile) ? readFileSync(proc.logFile).length : 0;
  proc.pid = spawnDetached(proc.command, proc.runDir, proc.logFile);
  if (proc.ownerPid) proc.watchdogPid = spawnWatchdog(proc.ownerPid, proc.pid, proc.runDir);
  // The same ports: one may still be held briefly by the killed process's sockets.
  if (proc.name === "ldap") {
    await waitUntil(proc, () => ldapService.probe(proc), opts.timeoutMs ?? 60_000, `OpenLDAP slapd ${proc.version} (restart)`, 20);
  } else if (proc.name === "alertmanager") {
    await waitUntil(proc, () => alertmanagerService.probe(proc), opts.timeoutMs ?? 60_000, `Alertmanager ${proc.version} (restart)`, 20);
  } else if (proc.name === "postgres") {
    await waitUntil(proc, () => postgresService.probe(proc), opts.timeoutMs ?? 60_000, `PostgreSQL ${proc.version} (restart)`, 50);
  } else if (proc.name === "connect" || proc.name === "registry") {
    const kind = REPLICATED[proc.name];
    const url = proc.env[kind.envKey]!;
    await waitUntil(proc, () => kind.ready(url), opts.timeoutMs ?? 60_000, `${kind.title(proc.version)} ${kind.role} ${url} (restart)`);
  } else {
    await waitUntil(proc, () => kafkaStarted(proc, logFrom), opts.timeoutMs ?? 60_000, `Kafka ${proc.version} (restart)`);
  }
  proc.startMs = Math.round(performance.now() - t0);
  return proc;
}

export function tail(text: string, lines: number): string {
  return text.split("\n").slice(-lines).join("\n");
}

export function logTail(logFile: string, lines = 40): string {
  try {
    return tail(readFileSync(logFile, "utf8"), lines);
  } catch {
    return "(no log)";
  }
}

/**
 * Polls `ready` until it answers true. Fails early, with the log tail, when the process dies,
 * and kills it when the deadline passes.
 */
async function waitUntil(
  proc: ServiceProcess,
  ready: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
  pollMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!isAlive(proc.pid)) {
      await stopService(proc, { graceMs: 0, keepDir: true });
      throw new Error(`${what} exited during start-up; log ${proc.logFile}:\n${logTail(proc.logFile)}`);
    }
    if (await ready().catch(() => false)) return;
    if (Date.now() > deadline) {
      const log = logTail(proc.logFile);
      await stopService(proc, { graceMs: 0, keepDir: true });
      throw new Error(`${what} did not start within ${timeoutMs} ms; log ${proc.logFile}:\n${log}`);
    }
    await Bun.sleep(pollMs);
  }
}

// ---------------------------------------------------------------------------------------------
// Kafka

/** Formats a KRaft node's storage (`kafka-storage format`) with the cluster id and the given extra arguments. */
function formatKraftStorage(jvm: string[], classpath: string, propsFile: string, clusterId: string, cwd: string, extra: string[]): void {
  const args = [...jvm.slice(1), "-Xmx128m", "-cp", classpath, "kafka.tools.StorageTool", "format", "--config", propsFile];
  const format = spawnSync(jvm[0]!, [...args, "--cluster-id", clusterId, ...extra], { encoding: "utf8", cwd });
  if (format.status !== 0) {
    throw new Error(
      `kafka-storage format of ${propsFile} failed (exit ${format.status}):\n${tail(`${format.stdout}\n${format.stderr}`, 30)}`,
    );
  }
}

/** Kafka's cluster ids are 16 random bytes in unpadded base64url. */
/** A random cluster id. Like Kafka's own Uuid.randomUuid(), never one that starts with '-': the
 * storage tool would read it as an option (and fail one start in 64). */
function kafkaClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString("base64url");
    if (!id.startsWith("-")) return id;
  }
}

/**
 * Replication that suits a cluster of `brokers` nodes: three replicas (fewer when there are
 * fewer nodes), and with three or more, two in sync to take a write, as production clusters
 * run, so one node down leaves every partition writable and under-replicated.
 */
export function replicationDefaults(brokers: number): Record<string, number> {
  const rf = Math.max(1, Math.min(3, brokers));
  const minIsr = rf >= 3 ? 2 : 1;
  return {
    "default.replication.factor": rf,
    "min.insync.replicas": minIsr,
    "offsets.topic.replication.factor": rf,
    "transaction.state.log.replication.factor": rf,
    "transaction.state.log.min.isr": minIsr,
    "share.coordinator.state.topic.replication.factor": rf,
    "share.coordinator.state.topic.min.isr": minIsr,
  };
}

function brokerProperties(
  dataDir: string,
  port: number,
  controllerPort: number,
  nodeId = 1,
  overrides: Record<string, string | number | boolean> = {},
  brokers = 1,
  voters?: string,
): string {
  // Node 1 is broker and controller; further nodes are brokers that use its controller. In a
  // static quorum (`voters`) every node is both.
  const controller = nodeId === 1 || voters !== undefined;
  const props: Record<string, string | number | boolean> = {
    "process.roles": controller ? "broker,controller" : "broker",
    "node.id": nodeId,
    ...(voters ? { "controller.quorum.voters": voters } : { "controller.quorum.bootstrap.servers": `127.0.0.1:${controllerPort}` }),
    listeners: controller ? `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}` : `PLAINTEXT://127.0.0.1:${port}`,
    "advertised.listeners": `PLAINTEXT://127.0.0.1:${port}`,
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "PLAINTEXT",
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    "log.dirs": dataDir,
    // A rack per node, so what Loupe reports of racks (a group coordinator's) is seen non-null.
    "broker.rack": `rack-${nodeId}`,
    // An authorizer, so ACL admin requests work; everyone connects as User:ANONYMOUS, a super
    // user, so no ACL a test creates can lock the tests out.
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "super.users": "User:ANONYMOUS",
    "allow.everyone.if.no.acl.found": true,
    // One broker: every replication factor is 1; more: see replicationDefaults.
    "num.partitions": 1,
    ...replicationDefaults(brokers),
    // Fast: small internal topics, no rebalance delay, short group timeouts allowed.
    "offsets.topic.num.partitions": 1,
    "transaction.state.log.num.partitions": 1,
    "share.coordinator.state.topic.num.partitions": 1,
    "group.initial.rebalance.delay.ms": 0,
    "group.min.session.timeout.ms": 500,
    "group.consumer.min.session.timeout.ms": 1000,
    "group.consumer.min.heartbeat.interval.ms": 500,
    "file.delete.delay.ms": 1000,
    // Tests and benchmarks write records stamped years back (windows at fixed minutes), which
    // time-based retention (7 days, the default the config tests expect) would delete at the
    // next retention check, by default every 5 minutes, under a running test: checked daily.
    "log.retention.check.interval.ms": 24 * 60 * 60 * 1000,
    // ... and the first check, 30 s after the broker starts (Kafka's internal initial task
    // delay, KAFKA-16552), deleted such records a file had written just before (a browser test's
    // 2024-stamped topic was found empty in a fresh-clone run): a day too. It also delays the
    // first checkpoints and the removal of deleted topics' files, which no test waits for.
    "log.initial.task.delay.ms": 24 * 60 * 60 * 1000,
    "log.cleaner.dedupe.buffer.size": 16 * 1024 * 1024,
    "num.network.threads": 2,
    "num.io.threads": 2,
    "num.recovery.threads.per.data.dir": 1,
    "background.threads": 2,
    "auto.create.topics.enable": false,
    "delete.topic.enable": true,
    ...overrides,
  };
  return Object.entries(props)
    .map(([k, v]) => `${k}=${v}`)
    .join("\n")
    .concat("\n");
}

/** The broker logs at WARN, except the lines that tell it started or stopped. */
const KAFKA_LOG4J = `status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.out.ref = OUT
logger.raft.name = kafka.server.KafkaRaftServer
logger.raft.level = INFO
logger.broker.name = kafka.server.BrokerServer
logger.broker.level = INFO
`;

/**
 * A real round trip: ApiVersions v0, the one request every broker answers before anything else.
 *   Request  => size:int32 api_key:int16(18) api_version:int16(0) correlation_id:int32 client_id:string
 *   Response => size:int32 correlation_id:int32 error_code:int16 ...
 */
export function kafkaApiVersionsProbe(
  host: string,
  port: number,
  timeoutMs = 2000,
  tls?: { ca: Buffer; cert: Buffer; key: Buffer },
): Promise<boolean> {
  return new Promise((ok) => {
    const clientId = Buffer.from("loupe-probe");
    const req = Buffer.alloc(4 + 2 + 2 + 4 + 2 + clientId.length);
    let o = req.writeInt32BE(req.length - 4, 0);
    o = req.writeInt16BE(18, o);
    o = req.writeInt16BE(0, o);
    o = req.writeInt32BE(7, o);
    o = req.writeInt16BE(clientId.length, o);
    clientId.copy(req, o);
    let buf = Buffer.alloc(0);
    const sock = tls ? tlsConnect({ host, port, ...tls }) : connect({ host, port });
    const done = (result: boolean) => {
      clearTimeout(timer);
      sock.destroy();
      ok(result);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    sock.on(tls ? "secureConnect" : "connect", () => sock.write(req));
    sock.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length >= 10) done(buf.readInt32BE(4) === 7 && buf.readInt16BE(8) === 0);
    });
    sock.on("error", () => done(false));
    sock.on("close", () => done(false));
  });
}

/** The cluster id a node was formatted with (its meta.properties). */
function kafkaClusterIdOf(node: ServiceProcess): string {
  const meta = readFileSync(join(node.runDir, "data", "meta.properties"), "utf8");
  const id = /^cluster\.id=(.+)$/m.exec(meta)?.[1]?.trim();
  if (!id) throw new Error(`no cluster.id in ${node.runDir}/data/meta.properties`);
  return id;
}

/** Started: the log says so past `logFrom` (a restart appends to the same log), and it answers. */
async function kafkaStarted(proc: ServiceProcess, logFrom: number): Promise<boolean> {
  return readFileSync(proc.logFile).subarray(logFrom).includes("Kafka Server started") && (await serviceByName(proc.name).probe(proc));
}

/**
 * KAFKA_METRICS_URLS of several Kafka nodes: each node publishes its own `id=url`; a cluster's
 * is theirs joined, node 1 first: the text `kafka.clusters[].brokerMetrics.urls` takes as it is.
 */
export function kafkaMetricsUrls(nodes: ServiceProcess[]): string {
  return nodes
    .filter((n) => n.name === "kafka" && n.env.KAFKA_METRICS_URLS)
    .sort((a, b) => (a.nodeId ?? 1) - (b.nodeId ?? 1))
    .map((n) => n.env.KAFKA_METRICS_URLS)
    .join(",");
}

export const kafkaService: ServiceDef = {
  name: "kafka",
  // KAFKA_BOOTSTRAP alone says the broker is given: a shared one started before the exporter had none.
  envKeys: ["KAFKA_BOOTSTRAP"],
  needs: [],
  async fetch() {
    await fetchKafka();
    await fetchJmxExporter();
  },
  pendingFetch: () => [
    ...(fetched(kafkaLibsDir()) ? [] : [FETCH_STEPS.kafka()]),
    ...(fetched(jmxExporterDir()) ? [] : [FETCH_STEPS.jmxExporter()]),
  ],
  async start(ctx) {
    const t0 = performance.now();
    const libs = await fetchKafka();
    const voter = ctx.kafkaVoter;
    const nodeId = voter?.nodeId ?? ctx.join?.nodeId ?? 1;
    const port = voter?.port ?? (await freePort());
    // Every node runs the Prometheus JMX exporter with Loupe's rules (alerts 1008-1012); it
    // costs about 0.1 s of CPU and 4 MB at start, lost in the broker's own start.
    const metricsPort = await freePort();
    const agent = `-javaagent:${await fetchJmxExporter()}=127.0.0.1:${metricsPort}:${JMX_EXPORTER_RULES}`;
    const controllerPort = voter?.controllerPort ?? (ctx.join ? ctx.join.node.ports.controller! : await freePort());
    const dataDir = join(ctx.runDir, "data");
    const propsFile = join(ctx.runDir, "server.properties");
    const log4jFile = join(ctx.runDir, "log4j2.properties");
    const logFile = join(ctx.runDir, "kafka.log");
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(propsFile, brokerProperties(dataDir, port, controllerPort, nodeId, ctx.kafkaProperties, ctx.kafkaBrokers, voter?.voters));
    writeFileSync(log4jFile, KAFKA_LOG4J);
    const classpath = `${libs}/*`;
    const jvm = [javaBin(), ...BASE_JVM_OPTS, `-Dlog4j2.configurationFile=${log4jFile}`];

    // Formats the single-node KRaft quorum (a dynamic quorum of one voter: --standalone); a
    // joining broker formats with the cluster id of the node it joins; a node of a static quorum
    // with the quorum's.
    const clusterId = voter?.clusterId ?? (ctx.join ? kafkaClusterIdOf(ctx.join.node) : kafkaClusterId());
    const standalone = ctx.join || voter ? [] : ["--standalone"];
    formatKraftStorage(jvm, classpath, propsFile, clusterId, ctx.runDir, [...standalone, "--ignore-formatted"]);

    const command = [...jvm, "-Xms64m", "-Xmx512m", agent, ...(ctx.jvmOpts ?? []), "-cp", classpath, "kafka.Kafka", propsFile];
    const pid = spawnDetached(command, ctx.runDir, logFile);
    const proc: ServiceProcess = {
      name: "kafka",
      pid,
      runDir: ctx.runDir,
      logFile,
      ports: { broker: port, controller: controllerPort, metrics: metricsPort },
      env: { KAFKA_BOOTSTRAP: `127.0.0.1:${port}`, KAFKA_METRICS_URLS: `${nodeId}=http://127.0.0.1:${metricsPort}/metrics` },
      version: versions().kafka,
      startMs: 0,
      command,
      nodeId,
      ...(ctx.ownerPid ? { ownerPid: ctx.ownerPid } : {}),
    };
    if (ctx.ownerPid) proc.watchdogPid = spawnWatchdog(ctx.ownerPid, pid, ctx.runDir);
    await waitUntil(proc, () => kafkaStarted(proc, 0), ctx.timeoutMs ?? 60_000, `Kafka ${proc.version}`);
    proc.startMs = Math.round(performance.now() - t0);
    return proc;
  },
  probe(proc) {
    return kafkaApiVersionsProbe("127.0.0.1", proc.ports.broker!);
  },
};

// ---------------------------------------------------------------------------------------------
// Secured Kafka: a broker of its own (the open one stays as it is for the other tests) that
// authenticates every client and authorizes every request, as production clusters do.
//
//   SASL_SSL  SCRAM-SHA-512 over TLS (KAFKA_SASL_BOOTSTRAP); users created at format time
//   MTLS      TLS with a client certificate required (KAFKA_MTLS_BOOTSTRAP); the principal is
//             the certificate's CN, so `alice` is the same User:alice on both listeners
//   CONTROLLER TLS with client certificates too: the node talks to its own controller as
//             User:broker, a super user, so nothing reaches the controller unauthenticated
//
// StandardAuthorizer with allow.everyone.if.no.acl.found=false: the test users may log in and
// do nothing until an ACL allows it. The certificates come from a CA made here with openssl.

/** Loupe's own account on the secured broker: a super user, on both listeners (SCRAM and CN). */
export const SECURE_KAFKA_ADMIN = { user: "loupe-admin", password: "loupe-admin-secret" } as const;
/** Users with no ACLs: they authenticate and are denied everything until an ACL allows it. */
export const SECURE_KAFKA_USERS = [
  { user: "alice", password: "alice-secret" },
  { user: "bob", password: "bob-secret" },
] as const;
/** The broker's own principal (its certificate's CN), for the controller and inter-broker links. */
const SECURE_BROKER_PRINCIPAL = "broker";

/** Runs openssl with `args` in `dir`; throws with its output when it fails. */
function openssl(dir: string, args: string[]): void {
  const res = spawnSync("openssl", args, { cwd: dir, encoding: "utf8" });
  if (res.error) throw new Error(`could not run openssl (is it installed?): ${res.error.message}`);
  if (res.status !== 0) throw new Error(`openssl ${args.join(" ")} failed (exit ${res.status}):\n${res.stderr}`);
}

/** A self-signed CA (P-256 key) in `<name>.pem` / `<name>-key.pem`. */
function makeCa(dir: string, name: string, cn: string): void {
  openssl(dir, ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", `${name}-key.pem`]);
  openssl(dir, [
    "req",
    "-x509",
    "-new",
    "-key",
    `${name}-key.pem`,
    "-subj",
    `/O=Loupe Test/CN=${cn}`,
    "-days",
    "30",
    "-out",
    `${name}.pem`,
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  ]);
}

/**
 * A certificate for `cn` signed by CA `ca`, in `<name>.pem` (certificate) / `<name>-key.pem`
 * (PKCS#8 key, as Kafka's PEM key store wants it). `san` makes it a server certificate too.
 */
function makeCert(dir: string, ca: string, name: string, cn: string, san?: string): void {
  openssl(dir, ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", `${name}-key.pem`]);
  openssl(dir, ["req", "-new", "-key", `${name}-key.pem`, "-subj", `/O=Loupe Test/CN=${cn}`, "-out", `${name}.csr`]);
  const ext = [
    "basicConstraints=CA:FALSE",
    "keyUsage=critical,digitalSignature,keyEncipherment",
    // The broker's certificate is also its client certificate towards its own controller.
    `extendedKeyUsage=${san ? "serverAuth,clientAuth" : "clientAuth"}`,
    ...(san ? [`subjectAltName=${san}`] : []),
  ];
  writeFileSync(join(dir, `${name}.ext`), `${ext.join("\n")}\n`);
  openssl(dir, [
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    `${ca}.pem`,
    "-CAkey",
    `${ca}-key.pem`,
    "-CAcreateserial",
    "-days",
    "30",
    "-extfile",
    `${name}.ext`,
    "-out",
    `${name}.pem`,
  ]);
  // Kafka's PEM key store: the key, then the certificate chain, in one file.
  writeFileSync(
    join(dir, `${name}-keystore.pem`),
    readFileSync(join(dir, `${name}-key.pem`), "utf8") + readFileSync(join(dir, `${name}.pem`), "utf8"),
  );
}

/** The files of the secured broker's TLS, all PEM, made fresh for each start. */
export interface SecureKafkaTls {
  caFile: string;
  /** Loupe's client certificate and key (CN loupe-admin, a super user). */
  clientCertFile: string;
  clientKeyFile: string;
  /** alice's client certificate and key (CN alice, no ACLs). */
  userCertFile: string;
  userKeyFile: string;
  /** A CA that signed nothing the broker has, and a client certificate it signed. */
  untrustedCaFile: string;
  untrustedCertFile: string;
  untrustedKeyFile: string;
}

function makeSecureKafkaTls(dir: string): SecureKafkaTls & { brokerKeystore: string } {
  mkdirSync(dir, { recursive: true });
  makeCa(dir, "ca", "Loupe Test CA");
  makeCert(dir, "ca", "broker", SECURE_BROKER_PRINCIPAL, "IP:127.0.0.1,DNS:localhost");
  makeCert(dir, "ca", "loupe-admin", SECURE_KAFKA_ADMIN.user);
  makeCert(dir, "ca", "alice", "alice");
  makeCa(dir, "untrusted-ca", "Untrusted Test CA");
  makeCert(dir, "untrusted-ca", "untrusted-client", SECURE_KAFKA_ADMIN.user);
  const f = (name: string) => join(dir, name);
  return {
    caFile: f("ca.pem"),
    brokerKeystore: f("broker-keystore.pem"),
    clientCertFile: f("loupe-admin.pem"),
    clientKeyFile: f("loupe-admin-key.pem"),
    userCertFile: f("alice.pem"),
    userKeyFile: f("alice-key.pem"),
    untrustedCaFile: f("untrusted-ca.pem"),
    untrustedCertFile: f("untrusted-client.pem"),
    untrustedKeyFile: f("untrusted-client-key.pem"),
  };
}

function secureBrokerProperties(
  dataDir: string,
  ports: { sasl: number; mtls: number; controller: number },
  keystore: string,
  ca: string,
): string {
  const props: Record<string, string | number | boolean> = {
    "process.roles": "broker,controller",
    "node.id": 1,
    "controller.quorum.bootstrap.servers": `127.0.0.1:${ports.controller}`,
    listeners: `SASL_SSL://127.0.0.1:${ports.sasl},MTLS://127.0.0.1:${ports.mtls},CONTROLLER://127.0.0.1:${ports.controller}`,
    "advertised.listeners": `SASL_SSL://127.0.0.1:${ports.sasl},MTLS://127.0.0.1:${ports.mtls}`,
    "listener.security.protocol.map": "SASL_SSL:SASL_SSL,MTLS:SSL,CONTROLLER:SSL",
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "MTLS",
    "sasl.enabled.mechanisms": "SCRAM-SHA-512",
    "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required;",
    // One key store (the broker's certificate) and trust store (the test CA) for every listener.
    "ssl.keystore.type": "PEM",
    "ssl.keystore.location": keystore,
    "ssl.truststore.type": "PEM",
    "ssl.truststore.location": ca,
    // Applies to the SSL listeners (MTLS, CONTROLLER) only; the SASL_SSL one asks for none.
    "ssl.client.auth": "required",
    "ssl.endpoint.identification.algorithm": "https",
    // User:<CN> for a certificate, as for a SCRAM user of that name.
    "ssl.principal.mapping.rules": "RULE:^.*CN=([^,]+).*$/$1/,DEFAULT",
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "allow.everyone.if.no.acl.found": false,
    "super.users": `User:${SECURE_BROKER_PRINCIPAL};User:${SECURE_KAFKA_ADMIN.user}`,
    "log.dirs": dataDir,
    "num.partitions": 1,
    "default.replication.factor": 1,
    "min.insync.replicas": 1,
    "offsets.topic.replication.factor": 1,
    "offsets.topic.num.partitions": 1,
    "transaction.state.log.replication.factor": 1,
    "transaction.state.log.min.isr": 1,
    "transaction.state.log.num.partitions": 1,
    "share.coordinator.state.topic.replication.factor": 1,
    "share.coordinator.state.topic.min.isr": 1,
    "share.coordinator.state.topic.num.partitions": 1,
    "group.initial.rebalance.delay.ms": 0,
    "num.network.threads": 2,
    "num.io.threads": 2,
    "num.recovery.threads.per.data.dir": 1,
    "background.threads": 2,
    "auto.create.topics.enable": false,
  };
  return Object.entries(props)
    .map(([k, v]) => `${k}=${v}`)
    .join("\n")
    .concat("\n");
}

/**
 * ApiVersions over TLS with Loupe's client certificate, on the mTLS listener: the broker
 * answers once it serves, and only a certificate it trusts gets that far.
 */
function secureKafkaProbe(proc: ServiceProcess, timeoutMs = 2000): Promise<boolean> {
  const env = proc.env;
  return kafkaApiVersionsProbe("127.0.0.1", proc.ports.mtls!, timeoutMs, {
    ca: readFileSync(env.KAFKA_SECURE_CA_FILE!),
    cert: readFileSync(env.KAFKA_SECURE_CLIENT_CERT!),
    key: readFileSync(env.KAFKA_SECURE_CLIENT_KEY!),
  });
}

export const kafkaSecureService: ServiceDef = {
  name: "kafka-secure",
  envKeys: [
    "KAFKA_SASL_BOOTSTRAP",
    "KAFKA_MTLS_BOOTSTRAP",
    "KAFKA_SECURE_CA_FILE",
    "KAFKA_SECURE_ADMIN_USER",
    "KAFKA_SECURE_ADMIN_PASSWORD",
    "KAFKA_SECURE_CLIENT_CERT",
    "KAFKA_SECURE_CLIENT_KEY",
    "KAFKA_SECURE_USERS",
    "KAFKA_SECURE_USER_CERT",
    "KAFKA_SECURE_USER_KEY",
    "KAFKA_SECURE_UNTRUSTED_CA_FILE",
    "KAFKA_SECURE_UNTRUSTED_CERT",
    "KAFKA_SECURE_UNTRUSTED_KEY",
  ],
  needs: [],
  async fetch() {
    await fetchKafka();
  },
  pendingFetch: () => (fetched(kafkaLibsDir()) ? [] : [FETCH_STEPS.kafka()]),
  async start(ctx) {
    const t0 = performance.now();
    const libs = await fetchKafka();
    const ports = { sasl: await freePort(), mtls: await freePort(), controller: await freePort() };
    const tls = makeSecureKafkaTls(join(ctx.runDir, "tls"));
    const dataDir = join(ctx.runDir, "data");
    const propsFile = join(ctx.runDir, "server.properties");
    const log4jFile = join(ctx.runDir, "log4j2.properties");
    const logFile = join(ctx.runDir, "kafka.log");
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(propsFile, secureBrokerProperties(dataDir, ports, tls.brokerKeystore, tls.caFile));
    writeFileSync(log4jFile, KAFKA_LOG4J);
    const classpath = `${libs}/*`;
    const jvm = [javaBin(), ...BASE_JVM_OPTS, `-Dlog4j2.configurationFile=${log4jFile}`];
    const scram = [SECURE_KAFKA_ADMIN, ...SECURE_KAFKA_USERS].flatMap((u) => [
      "--add-scram",
      `SCRAM-SHA-512=[name=${u.user},password=${u.password}]`,
    ]);
    formatKraftStorage(jvm, classpath, propsFile, kafkaClusterId(), ctx.runDir, ["--standalone", ...scram]);
    const command = [...jvm, "-Xms64m", "-Xmx384m", ...(ctx.jvmOpts ?? []), "-cp", classpath, "kafka.Kafka", propsFile];
    const pid = spawnDetached(command, ctx.runDir, logFile);
    const proc: ServiceProcess = {
      name: "kafka-secure",
      pid,
      runDir: ctx.runDir,
      logFile,
      ports: { sasl: ports.sasl, mtls: ports.mtls, controller: ports.controller },
      env: {
        KAFKA_SASL_BOOTSTRAP: `127.0.0.1:${ports.sasl}`,
        KAFKA_MTLS_BOOTSTRAP: `127.0.0.1:${ports.mtls}`,
        KAFKA_SECURE_CA_FILE: tls.caFile,
        KAFKA_SECURE_ADMIN_USER: SECURE_KAFKA_ADMIN.user,
        KAFKA_SECURE_ADMIN_PASSWORD: SECURE_KAFKA_ADMIN.password,
        KAFKA_SECURE_CLIENT_CERT: tls.clientCertFile,
        KAFKA_SECURE_CLIENT_KEY: tls.clientKeyFile,
        KAFKA_SECURE_USERS: SECURE_KAFKA_USERS.map((u) => `${u.user}:${u.password}`).join(","),
        KAFKA_SECURE_USER_CERT: tls.userCertFile,
        KAFKA_SECURE_USER_KEY: tls.userKeyFile,
        KAFKA_SECURE_UNTRUSTED_CA_FILE: tls.untrustedCaFile,
        KAFKA_SECURE_UNTRUSTED_CERT: tls.untrustedCertFile,
        KAFKA_SECURE_UNTRUSTED_KEY: tls.untrustedKeyFile,
      },
      version: versions().kafka,
      startMs: 0,
      command,
      ...(ctx.ownerPid ? { ownerPid: ctx.ownerPid } : {}),
    };
    if (ctx.ownerPid) proc.watchdogPid = spawnWatchdog(ctx.ownerPid, pid, ctx.runDir);
    await waitUntil(proc, () => kafkaStarted(proc, 0), ctx.timeoutMs ?? 60_000, `Kafka ${proc.version} (secured)`);
    proc.startMs = Math.round(performance.now() - t0);
    return proc;
  },
  probe(proc) {
    return secureKafkaProbe(proc);
  },
};

// ---------------------------------------------------------------------------------------------
// Services of several processes (Connect's workers, the registry's hosts)

/** What a service of several processes is, for starting each of them and restarting one. */
interface Replicated {
  /** The variable each process publishes (its URL); the service publishes theirs comma-separated. */
  envKey: string;
  /** What one process is called in messages and in its directory's name (`worker-1`). */
  role: string;
  title(version: string): string;
  /** True once the process at `url` serves. */
  ready(url: string): Promise<boolean>;
}

interface ReplicatedStart {
  count: number;
  version: string;
  /** The log file's name in each process's directory. */
  logName: string;
  url(port: number): string;
  /** The command of process `i` (from 1), whose own files go in `runDir`. */
  command(i: number, runDir: string, port: number): string[];
  timeoutMs: number;
  /** More lines of the service's environment (beside its URLs). */
  env?: Record<string, string>;
}

/**
 * Starts the processes of one service at once (one JVM each, in `<runDir>/<role>-<i>`) and waits
 * until each serves; one that fails takes the others down with it.
 */
async function startReplicated(name: keyof typeof REPLICATED, ctx: StartContext, spec: ReplicatedStart): Promise<ServiceProcess> {
  const t0 = performance.now();
  const kind = REPLICATED[name];
  const workers: ServiceProcess[] = [];
  for (let i = 1; i <= spec.count; i++) {
    const runDir = join(ctx.runDir, `${kind.role}-${i}`);
    mkdirSync(runDir, { recursive: true });
    const port = await freePort();
    const command = spec.command(i, runDir, port);
    const logFile = join(runDir, spec.logName);
    const pid = spawnDetached(command, runDir, logFile);
    const worker: ServiceProcess = {
      name,
      pid,
      runDir,
      logFile,
      ports: { http: port },
      env: { [kind.envKey]: spec.url(port) },
      version: spec.version,
      startMs: 0,
      command,
      ...(ctx.ownerPid ? { ownerPid: ctx.ownerPid } : {}),
    };
    if (ctx.ownerPid) worker.watchdogPid = spawnWatchdog(ctx.ownerPid, pid, runDir);
    workers.push(worker);
  }
  const first = workers[0]!;
  const proc: ServiceProcess = {
    name,
    pid: first.pid,
    runDir: ctx.runDir,
    logFile: first.logFile,
    ports: Object.fromEntries(workers.map((w, i) => [`${kind.role}${i + 1}`, w.ports.http!])),
    env: { [kind.envKey]: workers.map((w) => w.env[kind.envKey]).join(","), ...spec.env },
    version: spec.version,
    startMs: 0,
    workers,
  };
  const what = kind.title(spec.version);
  const results = await Promise.allSettled(
    workers.map((w, i) => {
      const url = w.env[kind.envKey]!;
      return waitUntil(w, () => kind.ready(url), spec.timeoutMs, `${what} ${kind.role} ${i + 1} (${url})`);
    }),
  );
  const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) {
    await stopService(proc, { graceMs: 0, keepDir: true });
    throw failed.reason;
  }
  proc.startMs = Math.round(performance.now() - t0);
  for (const w of workers) w.startMs = proc.startMs;
  return proc;
}

/** True when every process of the service (its URLs in `envKey`, comma-separated) answers `check`. */
async function allAnswer(proc: ServiceProcess, envKey: string, check: (url: string) => Promise<boolean>): Promise<boolean> {
  const urls = (proc.env[envKey] ?? "").split(",").filter(Boolean);
  const answers = await Promise.all(urls.map((u) => check(u).catch(() => false)));
  return urls.length > 0 && answers.every(Boolean);
}

// ---------------------------------------------------------------------------------------------
// Schema registry (Apicurio, speaking the Confluent API under /apis/ccompat/v7): two hosts that
// share one store, Apicurio's Kafka-backed storage (kafkasql) on the cluster's broker. Each host
// replays the journal topic into its own in-memory database at start and follows it after, so
// what one host registers the other serves a moment later, and a killed host loses nothing.

const REGISTRY_HOSTS = 2;

/** The props of one host; `store` names this registry's topics, so runs sharing a broker do not meet. */
function registryHostProperties(
  bootstrap: string,
  store: string,
  host: number,
  runDir: string,
  port: number,
): Record<string, string | number | boolean> {
  return {
    "quarkus.http.host": "127.0.0.1",
    "quarkus.http.port": port,
    "apicurio.storage.kind": "kafkasql",
    "apicurio.kafkasql.bootstrap.servers": bootstrap,
    // Created by the host that starts first (auto-create is on by default: naming it would pass
    // it on as a topic config), with a replication factor of min(3, brokers): 1 on one broker.
    "apicurio.kafkasql.topic": `${store}-journal`,
    "apicurio.kafkasql.snapshots.topic": `${store}-snapshots`,
    "apicurio.events.kafka.topic": `${store}-events`,
    // Each start is a consumer group of its own (prefix + a random id) that reads the journal
    // from the beginning; committing nothing, the groups vanish with the host.
    "apicurio.kafkasql.consumer.group-prefix": `${store}-host-${host}-`,
    "apicurio.kafkasql.consumer.enable.auto.commit": false,
    // At start a host polls the (always empty) snapshots topic once for this long: 5 s by default.
    "apicurio.kafkasql.consumer.poll.timeout": 500,
    "apicurio.storage.snapshot.location": runDir,
    // Deletes are off by default in Apicurio 3; the Confluent API (and Loupe) need them.
    "apicurio.rest.deletion.group.enabled": true,
    "apicurio.rest.deletion.artifact.enabled": true,
    "apicurio.rest.deletion.artifact-version.enabled": true,
    "quarkus.http.access-log.enabled": false,
    "quarkus.log.level": "INFO",
    // The Kafka clients' INFO lines (every config, every rebalance) would fill the log.
    'quarkus.log.category."org.apache.kafka".level': "WARN",
  };
}

/** The registry's own readiness (its storage has caught up with the journal), then the Confluent API. */
export async function registryHostReady(url: string): Promise<boolean> {
  const health = await fetch(`${new URL(url).origin}/health/ready`, { signal: AbortSignal.timeout(2000) });
  await health.arrayBuffer();
  if (health.status !== 200) return false;
  return registrySubjectsAnswer(url);
}

async function registrySubjectsAnswer(url: string): Promise<boolean> {
  const res = await fetch(`${url}/subjects`, { signal: AbortSignal.timeout(2000) });
  await res.arrayBuffer();
  return res.status === 200;
}

/** The runner jar, by its real path: a class archive only serves the class path it was made with. */
async function apicurioJar(): Promise<string> {
  const dist = realpathSync(await fetchApicurio());
  const runner = readdirSync(dist).find((f) => f.endsWith("-runner.jar"));
  if (!runner) throw new Error(`no *-runner.jar in ${dist}`);
  return join(dist, runner);
}

/**
 * An application class-data archive (AppCDS) of Apicurio for this JDK, made once into .cache/ by
 * a throwaway start (in-memory storage) that dumps the classes it loaded when it stops. Hosts
 * started with it spend about half the CPU getting ready, and map the archive's pages
 * (shared between the hosts) instead of each parsing the classes. Undefined when it cannot be
 * made: the hosts then start without it, as a JVM does with an archive it cannot use.
 */
async function apicurioClassArchive(jar: string): Promise<string | undefined> {
  const file = classArchiveFile(jar);
  if (file === undefined) return undefined;
  if (existsSync(file)) return file;
  const what = FETCH_STEPS.classArchive();
  const began = Date.now();
  progress(stepLine(what));
  try {
    return await makeClassArchive(jar, file);
  } finally {
    progress(`  ${what}: done in ${Math.round((Date.now() - began) / 1000)} s`);
  }
}

/** Where the class archive of `jar` for this JDK lives; undefined without a JDK to ask. */
function classArchiveFile(jar: string): string | undefined {
  const jdk = spawnSync(javaBin(), ["-version"], { encoding: "utf8" });
  if (jdk.status !== 0) return undefined;
  const id = createHash("sha256").update(`${jar}\n${jdk.stderr}`).digest("hex").slice(0, 12);
  return join(dirname(dirname(jar)), `classes-${id}.jsa`);
}

async function makeClassArchive(jar: string, file: string): Promise<string | undefined> {
  const runDir = mkdtempSync(join(tmpdir(), "loupe-apicurio-cds-"));
  // Beside the archive, so the rename is atomic; each maker its own, so runs at once do not meet.
  const tmp = `${file}.tmp-${process.pid}`;
  const port = await freePort();
  const proc: ServiceProcess = {
    name: "registry",
    pid: 0,
    runDir,
    logFile: join(runDir, "registry.log"),
    ports: { http: port },
    env: {},
    version: versions().apicurio,
    startMs: 0,
  };
  try {
    proc.pid = spawnDetached(
      [
        javaBin(),
        ...BASE_JVM_OPTS,
        "-Xmx256m",
        `-XX:ArchiveClassesAtExit=${tmp}`,
        "-Dquarkus.http.host=127.0.0.1",
        `-Dquarkus.http.port=${port}`,
        "-Dapicurio.storage.kind=sql",
        "-Dapicurio.storage.sql.kind=h2",
        "-Dquarkus.http.access-log.enabled=false",
        "-jar",
        jar,
      ],
      runDir,
      proc.logFile,
    );
    proc.watchdogPid = spawnWatchdog(process.pid, proc.pid, runDir);
    await waitUntil(proc, () => registrySubjectsAnswer(`http://127.0.0.1:${port}/apis/ccompat/v7`), 120_000, "Apicurio (class archive)");
    // The archive is written as the JVM exits after SIGTERM.
    signalGroup(proc.watchdogPid, "SIGKILL");
    signalGroup(proc.pid, "SIGTERM");
    const deadline = Date.now() + 60_000;
    while (isAlive(proc.pid) && Date.now() < deadline) await Bun.sleep(100);
    if (isAlive(proc.pid) || !existsSync(tmp)) return undefined;
    renameSync(tmp, file);
    return file;
  } catch {
    return undefined;
  } finally {
    // pid 0 (nothing started) would be this process's own group to stopService.
    if (proc.pid) await stopService(proc, { graceMs: 0 });
    rmSync(runDir, { recursive: true, force: true });
    rmSync(tmp, { force: true });
  }
}

export const registryService: ServiceDef = {
  name: "registry",
  envKeys: ["SCHEMA_REGISTRY_URL", "SCHEMA_REGISTRY_TOPICS"],
  needs: ["kafka"],
  async fetch() {
    await apicurioClassArchive(await apicurioJar());
  },
  pendingFetch() {
    if (!fetched(apicurioDir())) return [FETCH_STEPS.apicurio(), FETCH_STEPS.classArchive()];
    const runner = readdirSync(apicurioDir()).find((f) => f.endsWith("-runner.jar"));
    const file = runner ? classArchiveFile(join(realpathSync(apicurioDir()), runner)) : undefined;
    return file !== undefined && !existsSync(file) ? [FETCH_STEPS.classArchive()] : [];
  },
  async start(ctx) {
    const jar = await apicurioJar();
    const classArchive = await apicurioClassArchive(jar);
    const bootstrap = ctx.env.KAFKA_BOOTSTRAP;
    if (!bootstrap) throw new Error("registry needs KAFKA_BOOTSTRAP (the kafka service)");
    const store = `loupe-registry-${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
    return startReplicated("registry", ctx, {
      count: REGISTRY_HOSTS,
      version: versions().apicurio,
      logName: "registry.log",
      // Loupe is told the registry's storage topics: they are internal (written by admins only).
      env: { SCHEMA_REGISTRY_TOPICS: [`${store}-journal`, `${store}-snapshots`, `${store}-events`].join(",") },
      url: (port) => `http://127.0.0.1:${port}/apis/ccompat/v7`,
      command: (host, runDir, port) => [
        javaBin(),
        ...BASE_JVM_OPTS,
        "-Xms32m",
        "-Xmx256m",
        ...(classArchive ? [`-XX:SharedArchiveFile=${classArchive}`] : []),
        ...Object.entries(registryHostProperties(bootstrap, store, host, runDir, port)).map(([k, v]) => `-D${k}=${v}`),
        ...(ctx.jvmOpts ?? []),
        "-jar",
        jar,
      ],
      timeoutMs: ctx.timeoutMs ?? 90_000,
    });
  },
  probe(proc) {
    return allAnswer(proc, "SCHEMA_REGISTRY_URL", registrySubjectsAnswer);
  },
};

// ---------------------------------------------------------------------------------------------
// LDAP directory (OpenLDAP's slapd from Debian, seeded with a small organisation)

export const LDAP_BASE_DN = "dc=loupe,dc=test";
/** Full rights (slapd's rootdn): tests use it to change the directory, never to log in. */
export const LDAP_ADMIN = { dn: `cn=admin,${LDAP_BASE_DN}`, password: "loupe-admin-pass" } as const;
/** What Loupe binds as to look users up: may read the tree, but no password. */
export const LDAP_SERVICE_ACCOUNT = { dn: `cn=loupe-svc,ou=services,${LDAP_BASE_DN}`, password: "loupe-svc-pass" } as const;
export const LDAP_PEOPLE_DN = `ou=people,${LDAP_BASE_DN}`;
export const LDAP_GROUPS_DN = `ou=groups,${LDAP_BASE_DN}`;

export interface LdapSeedUser {
  uid: string;
  cn: string;
  sn: string;
  mail: string;
  password: string;
  /** The cn of each groupOfNames the user is a member of. */
  groups: string[];
}

/**
 * The organisation every started directory holds (described in the README). Test fixtures,
 * not secrets. erin is in no group; dave's cn has an apostrophe.
 */
export const LDAP_USERS: readonly LdapSeedUser[] = [
  {
    uid: "alice",
    cn: "Alice Archer",
    sn: "Archer",
    mail: "alice@loupe.test",
    password: "alice-ldap-pass",
    groups: ["platform-admins", "payments-team"],
  },
  { uid: "bob", cn: "Bob Baker", sn: "Baker", mail: "bob@loupe.test", password: "bob-ldap-pass", groups: ["payments-team"] },
  { uid: "carol", cn: "Carol Chen", sn: "Chen", mail: "carol@loupe.test", password: "carol-ldap-pass", groups: ["analytics-readers"] },
  {
    uid: "dave",
    cn: "Dave O'Neil",
    sn: "O'Neil",
    mail: "dave@loupe.test",
    password: "dave-ldap-pass",
    groups: ["payments-team", "analytics-readers"],
  },
  { uid: "erin", cn: "Erin Evans", sn: "Evans", mail: "erin@loupe.test", password: "erin-ldap-pass", groups: [] },
];

export const LDAP_GROUPS = ["platform-admins", "payments-team", "analytics-readers"] as const;

export const ldapUserDn = (uid: string): string => `uid=${uid},${LDAP_PEOPLE_DN}`;
export const ldapGroupDn = (cn: string): string => `cn=${cn},${LDAP_GROUPS_DN}`;

const SLAPD = process.env.LOUPE_SLAPD ?? "/usr/sbin/slapd";
const SLAPD_MODULES = "/usr/lib/ldap";
const SLAPD_SCHEMA = "/etc/ldap/schema";

export const slapdInstalled = (): boolean => existsSync(SLAPD);

/** RFC 2307 {SSHA}: salted SHA-1, the hash slappasswd makes by default. */
function sshaHash(password: string): string {
  const salt = randomBytes(8);
  const digest = createHash("sha1").update(password).update(salt).digest();
  return `{SSHA}${Buffer.concat([digest, salt]).toString("base64")}`;
}

/** A quoted slapd.conf argument (paths may hold spaces). */
const confQuote = (s: string): string => `"${s.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;

function slapdConf(runDir: string, tls?: LdapTls): string {
  return `# Written by test/cluster/cluster.ts for this run only.
include ${confQuote(join(SLAPD_SCHEMA, "core.schema"))}
include ${confQuote(join(SLAPD_SCHEMA, "cosine.schema"))}
include ${confQuote(join(SLAPD_SCHEMA, "inetorgperson.schema"))}
modulepath ${confQuote(SLAPD_MODULES)}
moduleload back_mdb
moduleload memberof
moduleload refint
pidfile ${confQuote(join(runDir, "slapd.pid"))}
argsfile ${confQuote(join(runDir, "slapd.args"))}

# A DN with an empty password binds as anonymous and succeeds, as Active Directory and many
# directories answer: so a login that forgets to refuse empty passwords is caught by the tests.
allow bind_anon_dn
${tls ? `TLSCertificateFile ${confQuote(tls.certFile)}\nTLSCertificateKeyFile ${confQuote(tls.keyFile)}\n` : ""}
database mdb
maxsize 16777216
suffix "${LDAP_BASE_DN}"
rootdn "${LDAP_ADMIN.dn}"
rootpw ${sshaHash(LDAP_ADMIN.password)}
directory ${confQuote(join(runDir, "data"))}
index objectClass eq
index uid,cn,mail eq
index member,memberOf eq

# Users carry memberOf, kept up to date as groups change, and deleting a user takes it out of
# its groups.
overlay memberof
memberof-group-oc groupOfNames
memberof-member-ad member
memberof-memberof-ad memberOf
memberof-refint TRUE
overlay refint
refint_attributes member

# Passwords serve binds only; the service account and bound users read the tree; anonymous
# sees nothing under the suffix (only the root DSE).
access to dn.base="" by * read
access to attrs=userPassword
  by self write
  by anonymous auth
  by * none
access to dn.subtree="${LDAP_BASE_DN}"
  by dn.exact="${LDAP_SERVICE_ACCOUNT.dn}" read
  by self read
  by users read
  by * none
`;
}

type LdapEntry = { dn: string; attributes: Record<string, string | string[]> };

function ldapSeed(): LdapEntry[] {
  const entries: LdapEntry[] = [
    { dn: LDAP_BASE_DN, attributes: { objectClass: ["dcObject", "organization"], dc: "loupe", o: "Loupe Test" } },
    { dn: LDAP_PEOPLE_DN, attributes: { objectClass: "organizationalUnit", ou: "people" } },
    { dn: LDAP_GROUPS_DN, attributes: { objectClass: "organizationalUnit", ou: "groups" } },
    { dn: `ou=services,${LDAP_BASE_DN}`, attributes: { objectClass: "organizationalUnit", ou: "services" } },
    {
      dn: LDAP_SERVICE_ACCOUNT.dn,
      attributes: {
        objectClass: ["organizationalRole", "simpleSecurityObject"],
        cn: "loupe-svc",
        description: "Loupe looks users and groups up as this account",
        userPassword: sshaHash(LDAP_SERVICE_ACCOUNT.password),
      },
    },
  ];
  for (const u of LDAP_USERS) {
    entries.push({
      dn: ldapUserDn(u.uid),
      attributes: { objectClass: "inetOrgPerson", uid: u.uid, cn: u.cn, sn: u.sn, mail: u.mail, userPassword: sshaHash(u.password) },
    });
  }
  // Groups after their members: the memberof overlay writes memberOf into existing entries.
  for (const g of LDAP_GROUPS) {
    const members = LDAP_USERS.filter((u) => u.groups.includes(g)).map((u) => ldapUserDn(u.uid));
    entries.push({ dn: ldapGroupDn(g), attributes: { objectClass: "groupOfNames", cn: g, member: members } });
  }
  return entries;
}

/** Runs `fn` with an ldapts client bound as `dn`; loaded on use, so runs without LDAP never load it. */
async function withLdap<T>(url: string, dn: string, password: string, fn: (client: import("ldapts").Client) => Promise<T>): Promise<T> {
  const { Client } = await import("ldapts");
  const client = new Client({ url, timeout: 2000, connectTimeout: 2000 });
  try {
    await client.bind(dn, password);
    return await fn(client);
  } finally {
    await client.unbind().catch(() => {});
  }
}

function slapdVersion(): string {
  const res = spawnSync(SLAPD, ["-VV"], { encoding: "utf8" });
  return /slapd ([\w.+~-]+)/.exec(`${res.stdout}${res.stderr}`)?.[1] ?? "unknown";
}

export const ldapService: ServiceDef = {
  name: "ldap",
  envKeys: ["LDAP_URL", "LDAP_BASE_DN", "LDAP_BIND_DN", "LDAP_BIND_PASSWORD", "LDAP_ADMIN_DN", "LDAP_ADMIN_PASSWORD"],
  needs: [],
  async fetch() {
    if (!slapdInstalled()) {
      throw new Error(
        `${SLAPD} is missing: the ldap service runs Debian's OpenLDAP (apt-get install slapd ldap-utils; .ci/run does it), ` +
          "or leave it out (cli.ts up --no-ldap, LOUPE_TEST_LDAP=0)",
      );
    }
  },
  async start(ctx) {
    const t0 = performance.now();
    const port = await freePort();
    const url = `ldap://127.0.0.1:${port}`;
    const tlsPort = ctx.ldapTls ? await freePort() : undefined;
    const ldapsUrl = tlsPort ? `ldaps://127.0.0.1:${tlsPort}` : undefined;
    const confFile = join(ctx.runDir, "slapd.conf");
    const logFile = join(ctx.runDir, "slapd.log");
    mkdirSync(join(ctx.runDir, "data"), { recursive: true });
    writeFileSync(confFile, slapdConf(ctx.runDir, ctx.ldapTls));
    // `-d none`: in the foreground (so it is our child and its group is ours to kill), logging
    // only start, stop and errors such as a taken port.
    const listeners = [`${url}/`, ...(ldapsUrl ? [`${ldapsUrl}/`] : [])].join(" ");
    const command = [SLAPD, "-d", "none", "-h", listeners, "-f", confFile];
    const pid = spawnDetached(command, ctx.runDir, logFile);
    const proc: ServiceProcess = {
      name: "ldap",
      pid,
      runDir: ctx.runDir,
      logFile,
      ports: { ldap: port, ...(tlsPort ? { ldaps: tlsPort } : {}) },
      env: {
        LDAP_URL: url,
        ...(ldapsUrl ? { LDAPS_URL: ldapsUrl } : {}),
        LDAP_BASE_DN,
        LDAP_BIND_DN: LDAP_SERVICE_ACCOUNT.dn,
        LDAP_BIND_PASSWORD: LDAP_SERVICE_ACCOUNT.password,
        LDAP_ADMIN_DN: LDAP_ADMIN.dn,
        LDAP_ADMIN_PASSWORD: LDAP_ADMIN.password,
      },
      version: slapdVersion(),
      startMs: 0,
      command,
      ...(ctx.ownerPid ? { ownerPid: ctx.ownerPid } : {}),
    };
    if (ctx.ownerPid) proc.watchdogPid = spawnWatchdog(ctx.ownerPid, pid, ctx.runDir);
    const what = `OpenLDAP slapd ${proc.version}`;
    // The rootdn binds as soon as slapd listens, before the tree exists.
    await waitUntil(proc, () => withLdap(url, LDAP_ADMIN.dn, LDAP_ADMIN.password, async () => true), ctx.timeoutMs ?? 60_000, what, 20);
    try {
      await withLdap(url, LDAP_ADMIN.dn, LDAP_ADMIN.password, async (client) => {
        for (const e of ldapSeed()) await client.add(e.dn, e.attributes);
      });
    } catch (err) {
      await stopService(proc, { graceMs: 0, keepDir: true });
      throw new Error(`${what} did not take its seed data: ${(err as Error).message}; log ${logFile}:\n${logTail(logFile)}`);
    }
    proc.startMs = Math.round(performance.now() - t0);
    return proc;
  },
  async probe(proc) {
    const env = proc.env;
    return withLdap(env.LDAP_URL!, env.LDAP_BIND_DN!, env.LDAP_BIND_PASSWORD!, async (client) => {
      const { searchEntries } = await client.search(LDAP_PEOPLE_DN, { filter: "(uid=alice)", attributes: ["uid"] });
      return searchEntries.length === 1;
    });
  },
};

// ---------------------------------------------------------------------------------------------
// Kafka Connect (distributed mode, two workers with the file, JSON and MirrorMaker plugins)

/** The plugins every worker must list before it counts as started. */
export const CONNECT_PLUGINS = [
  "org.apache.kafka.connect.file.FileStreamSourceConnector",
  "org.apache.kafka.connect.file.FileStreamSinkConnector",
  "org.apache.kafka.connect.mirror.MirrorSourceConnector",
] as const;

const CONNECT_WORKERS = 2;

function connectWorkerProperties(bootstrap: string, groupId: string, port: number): string {
  const props: Record<string, string | number | boolean> = {
    "bootstrap.servers": bootstrap,
    "group.id": groupId,
    // Topics of this Connect cluster only, so runs against a shared broker do not meet.
    "config.storage.topic": `${groupId}-configs`,
    "offset.storage.topic": `${groupId}-offsets`,
    "status.storage.topic": `${groupId}-status`,
    "config.storage.replication.factor": 1,
    "offset.storage.replication.factor": 1,
    "status.storage.replication.factor": 1,
    "offset.storage.partitions": 1,
    "status.storage.partitions": 1,
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    listeners: `http://127.0.0.1:${port}`,
    // Requests a worker forwards to the leader go to this address.
    "rest.advertised.host.name": "127.0.0.1",
    "rest.advertised.port": port,
    "rest.advertised.listener": "http",
    // The plugins are on the classpath with service manifests: no scan of every jar.
    "plugin.discovery": "service_load",
    "offset.flush.interval.ms": 1000,
    // A dead worker's connectors and tasks move to the other one within seconds, not minutes.
    "scheduled.rebalance.max.delay.ms": 5000,
    "session.timeout.ms": 6000,
    "heartbeat.interval.ms": 1000,
  };
  return Object.entries(props)
    .map(([k, v]) => `${k}=${v}`)
    .join("\n")
    .concat("\n");
}

/** Connect logs at WARN, except the lines that tell it started or stopped. */
const CONNECT_LOG4J = `status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.out.ref = OUT
logger.connect.name = org.apache.kafka.connect.runtime.Connect
logger.connect.level = INFO
`;

/** A worker is started when it answers `GET /` and lists the plugins the tests use. */
export async function connectWorkerReady(url: string): Promise<boolean> {
  const root = await fetch(`${url}/`, { signal: AbortSignal.timeout(2000) });
  await root.arrayBuffer();
  if (root.status !== 200) return false;
  const res = await fetch(`${url}/connector-plugins`, { signal: AbortSignal.timeout(2000) });
  if (res.status !== 200) return false;
  const classes = new Set(((await res.json()) as { class: string }[]).map((p) => p.class));
  return CONNECT_PLUGINS.every((c) => classes.has(c));
}

export const connectService: ServiceDef = {
  name: "connect",
  envKeys: ["CONNECT_URL", "CONNECT_TOPICS"],
  needs: ["kafka"],
  async fetch() {
    await fetchConnect();
  },
  pendingFetch: () => (fetched(connectLibsDir()) ? [] : [FETCH_STEPS.connect()]),
  async start(ctx) {
    const libs = await fetchConnect();
    const bootstrap = ctx.env.KAFKA_BOOTSTRAP;
    if (!bootstrap) throw new Error("connect needs KAFKA_BOOTSTRAP (the kafka service)");
    const groupId = `loupe-connect-${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
    const log4jFile = join(ctx.runDir, "log4j2.properties");
    writeFileSync(log4jFile, CONNECT_LOG4J);
    return startReplicated("connect", ctx, {
      count: CONNECT_WORKERS,
      version: versions().kafka,
      logName: "connect.log",
      // Loupe is told Connect's storage topics (configs, offsets, statuses): they are internal.
      env: { CONNECT_TOPICS: [`${groupId}-configs`, `${groupId}-offsets`, `${groupId}-status`].join(",") },
      url: (port) => `http://127.0.0.1:${port}`,
      command: (_worker, runDir, port) => {
        const propsFile = join(runDir, "worker.properties");
        writeFileSync(propsFile, connectWorkerProperties(bootstrap, groupId, port));
        return [
          javaBin(),
          ...BASE_JVM_OPTS,
          "-Xms32m",
          "-Xmx256m",
          `-Dlog4j2.configurationFile=${log4jFile}`,
          ...(ctx.jvmOpts ?? []),
          "-cp",
          `${libs}/*`,
          "org.apache.kafka.connect.cli.ConnectDistributed",
          propsFile,
        ];
      },
      timeoutMs: ctx.timeoutMs ?? 90_000,
    });
  },
  probe(proc) {
    return allAnswer(proc, "CONNECT_URL", connectWorkerReady);
  },
};

/** Connect's workers and the registry's hosts: how each is called, and when it serves. */
const REPLICATED = {
  connect: { envKey: "CONNECT_URL", role: "worker", title: (v) => `Kafka Connect ${v}`, ready: connectWorkerReady },
  registry: { envKey: "SCHEMA_REGISTRY_URL", role: "host", title: (v) => `Apicurio Registry ${v}`, ready: registryHostReady },
} satisfies Partial<Record<ServiceName, Replicated>>;

// ---------------------------------------------------------------------------------------------
// Prometheus Alertmanager (Debian's prometheus-alertmanager): where Loupe delivers its alerts

const ALERTMANAGER = process.env.LOUPE_ALERTMANAGER ?? "/usr/bin/prometheus-alertmanager";

export const alertmanagerInstalled = (): boolean => existsSync(ALERTMANAGER);

/**
 * One receiver that sends nowhere: the tests read what Alertmanager holds through its own
 * `GET /api/v2/alerts`. Grouping waits are short so a test never waits on a notification.
 */
const ALERTMANAGER_CONFIG = `route:
  receiver: "null"
  group_by: ["alertname"]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: "null"
`;

function alertmanagerVersion(): string {
  const res = spawnSync(ALERTMANAGER, ["--version"], { encoding: "utf8" });
  return /version ([\w.+~-]+)/.exec(`${res.stdout}${res.stderr}`)?.[1] ?? "unknown";
}

export const alertmanagerService: ServiceDef = {
  name: "alertmanager",
  envKeys: ["ALERTMANAGER_URL"],
  needs: [],
  async fetch() {
    if (!alertmanagerInstalled()) {
      throw new Error(
        `${ALERTMANAGER} is missing: the alertmanager service runs Debian's prometheus-alertmanager ` +
          "(apt-get install prometheus-alertmanager; .ci/run does it), or leave it out (cli.ts up --no-alertmanager, LOUPE_TEST_ALERTMANAGER=0)",
      );
    }
  },
  async start(ctx) {
    const t0 = performance.now();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const configFile = join(ctx.runDir, "alertmanager.yml");
    const logFile = join(ctx.runDir, "alertmanager.log");
    mkdirSync(join(ctx.runDir, "data"), { recursive: true });
    writeFileSync(configFile, ALERTMANAGER_CONFIG);
    // No gossip (`--cluster.listen-address=`): a single instance, with no second port to take.
    const command = [
      ALERTMANAGER,
      `--config.file=${configFile}`,
      `--storage.path=${join(ctx.runDir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--cluster.listen-address=",
      "--log.level=warn",
    ];
    const pid = spawnDetached(command, ctx.runDir, logFile);
    const proc: ServiceProcess = {
      name: "alertmanager",
      pid,
      runDir: ctx.runDir,
      logFile,
      ports: { http: port },
      env: { ALERTMANAGER_URL: url },
      version: alertmanagerVersion(),
      startMs: 0,
      command,
      ...(ctx.ownerPid ? { ownerPid: ctx.ownerPid } : {}),
    };
    if (ctx.ownerPid) proc.watchdogPid = spawnWatchdog(ctx.ownerPid, pid, ctx.runDir);
    await waitUntil(proc, () => alertmanagerService.probe(proc), ctx.timeoutMs ?? 60_000, `Alertmanager ${proc.version}`, 20);
    proc.startMs = Math.round(performance.now() - t0);
    return proc;
  },
  async probe(proc) {
    try {
      const res = await fetch(`${proc.env.ALERTMANAGER_URL}/-/ready`, { signal: AbortSignal.timeout(2_000) });
      return res.ok;
    } catch {
      return false;
    }
  },
};

// ---------------------------------------------------------------------------------------------
// PostgreSQL (Debian's postgresql): the store several Loupe instances share

/** The server's binaries: LOUPE_POSTGRES_BIN, else Debian's newest /usr/lib/postgresql/<major>/bin. */
export function postgresBin(): string | null {
  const given = process.env.LOUPE_POSTGRES_BIN;
  if (given) return existsSync(join(given, "postgres")) ? given : null;
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const majors = readdirSync(root)
    .filter((v) => /^\d+$/.test(v) && existsSync(join(root, v, "bin", "postgres")))
    .sort((a, b) => Number(b) - Number(a));
  return majors[0] ? join(root, majors[0], "bin") : null;
}

export const postgresInstalled = (): boolean => postgresBin() !== null;

/** The role Loupe's tests log in as; its password is made for each start. */
const POSTGRES_ROLE = "loupe";

/**
 * Who runs the server. PostgreSQL refuses to run as root: a root run uses Debian's `postgres`
 * account (the package makes it), else `nobody`, through setpriv (which execs, so the pid
 * recorded is the postmaster's own). Anyone else runs it as themselves.
 */
function postgresAccount(): { uid: number; gid: number; prefix: string[] } | null {
  if (process.getuid?.() !== 0) return null;
  const passwd = readFileSync("/etc/passwd", "utf8").split("\n");
  for (const name of ["postgres", "nobody"]) {
    const fields = passwd.find((l) => l.startsWith(`${name}:`))?.split(":");
    if (!fields) continue;
    const uid = Number(fields[2]);
    const gid = Number(fields[3]);
    return { uid, gid, prefix: ["setpriv", `--reuid=${uid}`, `--regid=${gid}`, "--clear-groups", "--"] };
  }
  throw new Error("running as root, and neither a postgres nor a nobody account exists to run PostgreSQL as");
}

/** Runs a command to its end; its output goes into the error when it fails. */
function runToEnd(cmd: string[], cwd: string, what: string): Promise<void> {
  return new Promise((ok, fail) => {
    const child = spawn(cmd[0]!, cmd.slice(1), { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (out += c.toString("utf8")));
    child.on("error", (err) => fail(new Error(`${what}: ${err.message}`)));
    child.on("close", (code) => (code === 0 ? ok() : fail(new Error(`${what} failed (exit ${code}):\n${tail(out, 30)}`))));
  });
}

function postgresVersion(bin: string): string {
  const res = spawnSync(join(bin, "postgres"), ["--version"], { encoding: "utf8" });
  return /PostgreSQL\)? ([\w.]+)/.exec(res.stdout ?? "")?.[1] ?? "unknown";
}

/** True when `url` takes a login and answers a query. */
export async function postgresAnswers(url: string): Promise<boolean> {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    const r = await client.query<{ one: number }>("SELECT 1 AS one");
    return r.rows[0]?.one === 1;
  } finally {
    await client.end().catch(() => {});
  }
}

export const postgresService: ServiceDef = {
  name: "postgres",
  envKeys: ["POSTGRES_URL"],
  needs: [],
  async fetch() {
    if (!postgresInstalled()) {
      throw new Error(
        "no PostgreSQL server in /usr/lib/postgresql/*/bin (or LOUPE_POSTGRES_BIN): the postgres service runs Debian's " +
          "(apt-get install postgresql; .ci/run does it), or leave it out (cli.ts up --no-postgres, LOUPE_TEST_POSTGRES=0)",
      );
    }
  },
  async start(ctx) {
    const t0 = performance.now();
    const bin = postgresBin()!;
    const port = await freePort();
    const password = randomBytes(18).toString("base64url");
    const data = join(ctx.runDir, "data");
    const logFile = join(ctx.runDir, "postgres.log");
    const account = postgresAccount();
    const as = account?.prefix ?? [];
    const pwfile = join(ctx.runDir, "pwfile");
    writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
    if (account) {
      // The run directory is the account's; the one holding it (a 0700 temp directory) lets it through.
      chownSync(ctx.runDir, account.uid, account.gid);
      chownSync(pwfile, account.uid, account.gid);
      const parent = dirname(ctx.runDir);
      chmodSync(parent, statSync(parent).mode | 0o011);
    }
    // Password logins only (scram-sha-256), over TCP on 127.0.0.1 only: no Unix socket.
    const initdb = [
      ...as,
      join(bin, "initdb"),
      "-D",
      data,
      "-U",
      POSTGRES_ROLE,
      `--pwfile=${pwfile}`,
      "--auth=scram-sha-256",
      "-E",
      "UTF8",
      "--locale=C",
      "--no-sync",
      "--no-instructions",
    ];
    try {
      await runToEnd(initdb, ctx.runDir, `initdb of ${data}`);
    } finally {
      rmSync(pwfile, { force: true });
    }
    // A test store: durability traded for speed (no fsync), enough connections for parallel test files.
    const settings = {
      listen_addresses: "127.0.0.1",
      unix_socket_directories: "",
      fsync: "off",
      synchronous_commit: "off",
      full_page_writes: "off",
      max_connections: "200",
      shared_buffers: "32MB",
      log_min_messages: "warning",
    };
    const command = [
      ...as,
      join(bin, "postgres"),
      "-D",
      data,
      "-p",
      String(port),
      ...Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`]),
    ];
    const pid = spawnDetached(command, ctx.runDir, logFile);
    const url = `postgres://${POSTGRES_ROLE}:${password}@127.0.0.1:${port}/postgres`;
    const proc: ServiceProcess = {
      name: "postgres",
      pid,
      runDir: ctx.runDir,
      logFile,
      ports: { postgres: port },
      env: { POSTGRES_URL: url },
      version: postgresVersion(bin),
      startMs: 0,
      command,
      // SIGTERM is a smart shutdown, which waits for every client to leave; SIGINT ends their sessions.
      stopSignal: "SIGINT",
      ...(ctx.ownerPid ? { ownerPid: ctx.ownerPid } : {}),
    };
    if (ctx.ownerPid) proc.watchdogPid = spawnWatchdog(ctx.ownerPid, pid, ctx.runDir);
    await waitUntil(proc, () => postgresAnswers(url), ctx.timeoutMs ?? 60_000, `PostgreSQL ${proc.version}`, 50);
    proc.startMs = Math.round(performance.now() - t0);
    return proc;
  },
  probe(proc) {
    return postgresAnswers(proc.env.POSTGRES_URL!).catch(() => false);
  },
};

/** In start order: a service may use the environment of those before it. */
export const SERVICES: readonly ServiceDef[] = [
  kafkaService,
  kafkaSecureService,
  registryService,
  ldapService,
  connectService,
  alertmanagerService,
  postgresService,
];

export function serviceByName(name: string): ServiceDef {
  const def = SERVICES.find((s) => s.name === name);
  if (!def) throw new Error(`unknown service '${name}' (known: ${SERVICES.map((s) => s.name).join(", ")})`);
  return def;
}

// ---------------------------------------------------------------------------------------------
// A running cluster

export interface Cluster {
  services: ServiceProcess[];
  /** Every Kafka node, node 1 (broker and controller) first; more with `kafkaBrokers`. */
  brokers: ServiceProcess[];
  /** The Connect workers (for killService and restartService), when connect was started. */
  connectWorkers: ServiceProcess[];
  /** The registry's hosts (for killService, freezeService and restartService), when started. */
  registryHosts: ServiceProcess[];
  /** Union of the services' environments: KAFKA_BOOTSTRAP, SCHEMA_REGISTRY_URL, ... */
  env: Record<string, string>;
  stop(opts?: { graceMs?: number }): Promise<void>;
  /** SIGKILL and cleanup without awaiting anything, for signal handlers. */
  killSync(): void;
}

export interface StartClusterOptions {
  services?: ServiceName[];
  /** Parent directory of the services' run directories; a fresh temp dir when absent. */
  baseDir?: string;
  ownerPid?: number;
  jvmOpts?: string[];
  /**
   * Kafka nodes (default 1): node 1 is broker and controller, nodes 2.. are brokers that use its
   * controller, started side by side. Replication defaults suit the count (replicationDefaults).
   * KAFKA_BOOTSTRAP names node 1, the one node a cluster of this tool cannot lose (its only
   * controller); clients find the others through it.
   */
  kafkaBrokers?: number;
  /** The ldap service also serves TLS (ldaps:// and StartTLS) with this certificate. */
  ldapTls?: LdapTls;
  /** The kafka service's server.properties that replace the tool's (a broker without an authorizer). */
  kafkaProperties?: Record<string, string | number | boolean>;
  /**
   * Services running elsewhere, e.g. { KAFKA_BOOTSTRAP } of a shared broker: a needed service
   * whose variables are all here is used, not started (Connect on the run's broker).
   */
  given?: Record<string, string | undefined>;
  /** Told as each service is up (the CLI says so while the others still start). */
  onStarted?(proc: ServiceProcess): void;
}

/** Runs the services' fetches, numbered as one plan of the steps still to do. */
export async function fetchAll(defs: ServiceDef[]): Promise<void> {
  const steps = defs.flatMap((d) => d.pendingFetch?.() ?? []);
  if (steps.length > 0) progress(`first start: ${steps.length} downloads and builds into .cache/ (kept for the next starts)`);
  planSteps(steps);
  try {
    for (const def of defs) await def.fetch();
  } finally {
    endPlan();
  }
}

/**
 * A Kafka cluster of `nodes` nodes that are each broker and controller, in a static quorum
 * (`controller.quorum.voters`): what 1001 (a controller down) and 1007 (a leader change) need,
 * which the tool's own clusters, with one controller, cannot show. The nodes start together (a
 * quorum needs a majority up) and are stopped with `stop()` (or by their watchdogs when
 * `ownerPid` is gone).
 */
export async function startControllerQuorum(
  nodes: number,
  opts: { ownerPid?: number; baseDir?: string } = {},
): Promise<{ nodes: ServiceProcess[]; bootstrap: string; stop(): Promise<void> }> {
  await fetchAll([kafkaService]);
  // Ports are picked free, but another process may take one before a JVM binds it: start again on others.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startQuorumOnce(nodes, opts);
    } catch (err) {
      if (attempt >= 3 || !/Address already in use|BindException/.test(String(err))) throw err;
    }
  }
}

async function startQuorumOnce(
  nodes: number,
  opts: { ownerPid?: number; baseDir?: string },
): Promise<{ nodes: ServiceProcess[]; bootstrap: string; stop(): Promise<void> }> {
  const base = opts.baseDir ? join(opts.baseDir, `try-${Date.now().toString(36)}`) : mkdtempSync(join(tmpdir(), "loupe-quorum-"));
  const ports = await Promise.all(
    Array.from({ length: nodes }, async () => ({ port: await freePort(), controllerPort: await freePort() })),
  );
  const voters = ports.map((p, i) => `${i + 1}@127.0.0.1:${p.controllerPort}`).join(",");
  const clusterId = kafkaClusterId();
  const started = await Promise.allSettled(
    ports.map((p, i) => {
      const runDir = join(base, `kafka-${i + 1}`);
      mkdirSync(runDir, { recursive: true });
      return kafkaService.start({
        env: {},
        runDir,
        ...(opts.ownerPid ? { ownerPid: opts.ownerPid } : {}),
        kafkaBrokers: nodes,
        kafkaVoter: { nodeId: i + 1, ...p, voters, clusterId },
      });
    }),
  );
  const up = started.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  const stop = async () => {
    await Promise.all(up.map((n) => stopService(n)));
    rmSync(base, { recursive: true, force: true });
  };
  const failed = started.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) {
    await stop();
    throw failed.reason;
  }
  return { nodes: up, bootstrap: up.map((n) => n.env.KAFKA_BOOTSTRAP).join(","), stop };
}

/**
 * Starts the named services (and those they need), in parallel, each once its needs are up.
 */
export async function startCluster(opts: StartClusterOptions = {}): Promise<Cluster> {
  const wanted = new Set<ServiceName>(opts.services ?? ["kafka"]);
  const given: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.given ?? {})) if (v) given[k] = v;
  const isGiven = (n: ServiceName) => serviceByName(n).envKeys.every((k) => given[k]);
  for (const def of SERVICES) if (wanted.has(def.name)) for (const n of def.needs) if (!isGiven(n)) wanted.add(n);
  const defs = SERVICES.filter((s) => wanted.has(s.name));
  const base = opts.baseDir ?? mkdtempSync(join(tmpdir(), "loupe-cluster-"));
  const ownsBase = !opts.baseDir;
  const started: ServiceProcess[] = [];
  const env: Record<string, string> = { ...given };
  const stop = async (stopOpts: { graceMs?: number; keepDir?: boolean } = {}) => {
    await Promise.all(started.map((p) => stopService(p, stopOpts)));
    if (ownsBase && !stopOpts.keepDir) rmSync(base, { recursive: true, force: true });
  };
  try {
    // Fetch one after another: two mvn runs at once would contend for ~/.m2. Each step with
    // work to do says so (which of how many, how far, what next); cached ones are silent.
    await fetchAll(defs);
    // Each service starts as soon as the ones it needs are up (Connect and the registry once the
    // broker is, side by side), so the slowest chain sets the start time.
    const starting = new Map<ServiceName, Promise<void>>();
    for (const def of defs) {
      const needs = def.needs.filter((n) => !isGiven(n)).map((n) => starting.get(n));
      if (needs.some((p) => !p)) throw new Error(`${def.name} needs a service listed after it in SERVICES`);
      starting.set(
        def.name,
        Promise.all(needs).then(async () => {
          const runDir = join(base, def.name);
          // Ports are picked free, but another process may take one before the JVM binds it.
          for (let attempt = 1; ; attempt++) {
            rmSync(runDir, { recursive: true, force: true });
            mkdirSync(runDir, { recursive: true });
            try {
              const proc = await def.start({
                env: { ...env },
                runDir,
                ownerPid: opts.ownerPid,
                jvmOpts: opts.jvmOpts ?? jvmOptsFromEnv(),
                ...(opts.ldapTls ? { ldapTls: opts.ldapTls } : {}),
                ...(opts.kafkaProperties ? { kafkaProperties: opts.kafkaProperties } : {}),
                ...(opts.kafkaBrokers ? { kafkaBrokers: opts.kafkaBrokers } : {}),
              });
              started.push(proc);
              Object.assign(env, proc.env);
              opts.onStarted?.(proc);
              return;
            } catch (err) {
              if (attempt >= 3 || !/Address already in use|BindException/.test(String(err))) throw err;
            }
          }
        }),
      );
    }
    const results = await Promise.allSettled(starting.values());
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) throw failed.reason;
    const first = started.find((p) => p.name === "kafka");
    const nodes = first ? Math.max(1, opts.kafkaBrokers ?? 1) : 1;
    // The other nodes side by side: each is a broker of node 1's quorum, with its own port.
    const joined = await Promise.allSettled(
      Array.from({ length: nodes - 1 }, async (_, i) => {
        const nodeId = i + 2;
        const runDir = join(base, `kafka-${nodeId}`);
        mkdirSync(runDir, { recursive: true });
        const node = await kafkaService.start({
          env: { ...env },
          runDir,
          ownerPid: opts.ownerPid,
          jvmOpts: opts.jvmOpts ?? jvmOptsFromEnv(),
          join: { node: first!, nodeId },
          kafkaBrokers: nodes,
        });
        started.push(node);
        opts.onStarted?.(node);
        return node;
      }),
    );
    const notJoined = joined.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (notJoined) throw notJoined.reason;
    if (nodes > 1) env.KAFKA_METRICS_URLS = kafkaMetricsUrls(started);
  } catch (err) {
    // A temp directory goes; a given one (the CLI's) keeps the logs of what failed.
    await stop({ graceMs: 0, keepDir: !ownsBase });
    if (ownsBase) rmSync(base, { recursive: true, force: true });
    throw err;
  }
  const ordered = defs.map((d) => started.find((p) => p.name === d.name)!);
  const killSync = () => {
    for (const p of started) killServiceSync(p);
    if (ownsBase) rmSync(base, { recursive: true, force: true });
  };
  const brokers = started.filter((p) => p.name === "kafka").sort((a, b) => (a.nodeId ?? 1) - (b.nodeId ?? 1));
  const connectWorkers = started.find((p) => p.name === "connect")?.workers ?? [];
  const registryHosts = started.find((p) => p.name === "registry")?.workers ?? [];
  return { services: ordered, brokers, connectWorkers, registryHosts, env, stop, killSync };
}

/** A topic name no other test (or earlier run) uses: prefix, time, randomness. */
export function uniqueTopic(prefix = "t"): string {
  const safe = prefix.replace(/[^a-zA-Z0-9._-]/g, "-");
  return `${safe}-${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
}

/**
 * The value of a variable test/setup.ts publishes; throws when it is missing, so a test that
 * cannot reach its dependency fails instead of passing without checking anything.
 */
export function requireEnv(name: "KAFKA_BOOTSTRAP" | "SCHEMA_REGISTRY_URL" | (string & {})): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(
      `${name} is not set: test/setup.ts starts the service unless LOUPE_TEST_CLUSTER=0 ` +
        `(or LOUPE_TEST_SECURE_KAFKA=0 for the secured broker, LOUPE_TEST_REGISTRY=0 for the registry, LOUPE_TEST_LDAP=0 or no /usr/sbin/slapd for LDAP, ` +
        `LOUPE_TEST_CONNECT=0 for Connect, LOUPE_TEST_ALERTMANAGER=0 or no prometheus-alertmanager for Alertmanager, ` +
        `LOUPE_TEST_POSTGRES=0 or no PostgreSQL server for PostgreSQL); ` +
        `or point ${name} at a running one (bun test/cluster/cli.ts up)`,
    );
  }
  return value;
}

export const kafkaBootstrap = (): string => requireEnv("KAFKA_BOOTSTRAP");
/** The first registry host's URL (SCHEMA_REGISTRY_URL lists them all), for calling the registry directly. */
export const schemaRegistryUrl = (): string => registryEnv().urls[0]!;

/**
 * The schema registry test/setup.ts publishes (SCHEMA_REGISTRY_URL): its hosts' URLs, in order,
 * all of one store; Loupe is given them all.
 */
export function registryEnv(): { urls: string[]; topics: string[] } {
  return {
    urls: requireEnv("SCHEMA_REGISTRY_URL").split(",").filter(Boolean),
    topics: (process.env.SCHEMA_REGISTRY_TOPICS ?? "").split(",").filter(Boolean),
  };
}

/** The Connect cluster test/setup.ts publishes (CONNECT_URL): its workers' URLs, in order. */
export function connectEnv(): { urls: string[]; topics?: { configs: string; offsets: string; statuses: string } } {
  const [configs, offsets, statuses] = (process.env.CONNECT_TOPICS ?? "").split(",");
  return {
    urls: requireEnv("CONNECT_URL").split(",").filter(Boolean),
    ...(configs && offsets && statuses ? { topics: { configs, offsets, statuses } } : {}),
  };
}

/** The directory test/setup.ts publishes: its URL, base, and the service and admin accounts. */
export function ldapEnv(): { url: string; baseDn: string; bindDn: string; bindPassword: string; adminDn: string; adminPassword: string } {
  return {
    url: requireEnv("LDAP_URL"),
    baseDn: requireEnv("LDAP_BASE_DN"),
    bindDn: requireEnv("LDAP_BIND_DN"),
    bindPassword: requireEnv("LDAP_BIND_PASSWORD"),
    adminDn: requireEnv("LDAP_ADMIN_DN"),
    adminPassword: requireEnv("LDAP_ADMIN_PASSWORD"),
  };
}

/** The secured broker test/setup.ts publishes (KAFKA_SASL_BOOTSTRAP, ...): its listeners, TLS files and users. */
export interface SecureKafkaEnv {
  /** SCRAM-SHA-512 over TLS. */
  saslBootstrap: string;
  /** TLS with a client certificate required; the principal is the certificate's CN. */
  mtlsBootstrap: string;
  /** PEM file of the CA that signed the broker's and the clients' certificates. */
  caFile: string;
  /** Loupe's account, a super user: SCRAM credentials and a client certificate of the same name. */
  admin: { user: string; password: string; certFile: string; keyFile: string };
  /** Users without ACLs, by name (alice, bob): denied everything until an ACL allows it. */
  users: Record<string, string>;
  /** alice's client certificate (User:alice on the mTLS listener). */
  userCert: { user: string; certFile: string; keyFile: string };
  /** A CA the broker does not trust, and a client certificate it signed (CN of the admin). */
  untrusted: { caFile: string; certFile: string; keyFile: string };
}

export function secureKafkaEnv(): SecureKafkaEnv {
  const users = Object.fromEntries(
    requireEnv("KAFKA_SECURE_USERS")
      .split(",")
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf(":")), pair.slice(pair.indexOf(":") + 1)]),
  );
  return {
    saslBootstrap: requireEnv("KAFKA_SASL_BOOTSTRAP"),
    mtlsBootstrap: requireEnv("KAFKA_MTLS_BOOTSTRAP"),
    caFile: requireEnv("KAFKA_SECURE_CA_FILE"),
    admin: {
      user: requireEnv("KAFKA_SECURE_ADMIN_USER"),
      password: requireEnv("KAFKA_SECURE_ADMIN_PASSWORD"),
      certFile: requireEnv("KAFKA_SECURE_CLIENT_CERT"),
      keyFile: requireEnv("KAFKA_SECURE_CLIENT_KEY"),
    },
    users,
    userCert: { user: "alice", certFile: requireEnv("KAFKA_SECURE_USER_CERT"), keyFile: requireEnv("KAFKA_SECURE_USER_KEY") },
    untrusted: {
      caFile: requireEnv("KAFKA_SECURE_UNTRUSTED_CA_FILE"),
      certFile: requireEnv("KAFKA_SECURE_UNTRUSTED_CERT"),
      keyFile: requireEnv("KAFKA_SECURE_UNTRUSTED_KEY"),
    },
  };
}

/**
 * For scripts (benchmarks, screenshots): the broker of KAFKA_BOOTSTRAP, else one started for
 * this process and named in KAFKA_BOOTSTRAP, so servers the script starts use it too. `stop`
 * stops only a broker started here.
 */
export async function scriptBroker(log: (...a: unknown[]) => void): Promise<{ bootstrap: string; stop: () => Promise<void> }> {
  const given = process.env.KAFKA_BOOTSTRAP;
  if (given) return { bootstrap: given, stop: async () => {} };
  log("KAFKA_BOOTSTRAP not set: starting a broker");
  const cluster = await startCluster({ services: ["kafka"], ownerPid: process.pid });
  const bootstrap = cluster.env.KAFKA_BOOTSTRAP!;
  process.env.KAFKA_BOOTSTRAP = bootstrap;
  return { bootstrap, stop: () => cluster.stop() };
}
