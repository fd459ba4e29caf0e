/**
 * The alerts on broker internals: what only a broker's JMX tells (1008 to 1012), read from each
 * broker's Prometheus endpoint (the JMX exporter agent with Loupe's rules,
 * `deploy/jmx-exporter-kafka.yaml`), and the brokers' disk usage (1013) from DescribeLogDirs,
 * which every broker answers (Kafka 3.3 and later give each log dir's size and free space):
 *
 * - 1008 several broker versions: `kafka_server_app_version{version}` of each broker;
 * - 1009 open file descriptors over a share of the maximum: `process_open_fds` / `process_max_fds`;
 * - 1010 request handler threads idle under a share of the time: the one-minute rate of
 *   `RequestHandlerAvgIdlePercent`;
 * - 1011 / 1012 failed fetch / produce requests (all topics) per minute between two passes,
 *   from their counters;
 * - 1013 a broker's log-dir disks fuller than the cluster's average by more than a margin.
 *
 * Each pass scrapes every broker's endpoint at once, each within the cluster's timeout. A broker
 * that does not answer is logged and its findings are left as they were, not guessed; so are a
 * broker's rates when its counters went back (a restart): the next pass has a new base.
 */
import type { ClusterConfig } from "../../config/schema.ts";
import type { BrokerInfo, KafkaPool } from "../../kafka/index.ts";
import type { Logger } from "../../log/logger.ts";
import type { RaiseNotification } from "./notifications.ts";

export type BrokerMetricsConfig = ClusterConfig["brokerMetrics"];

interface Finding {
  fingerprint: string;
  raise: RaiseNotification;
  holdMs: number;
}

/** The series Loupe reads, as deploy/jmx-exporter-kafka.yaml names them. */
export const SERIES = {
  openFds: "process_open_fds",
  maxFds: "process_max_fds",
  idle: "kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent",
  failedFetch: "kafka_server_brokertopicmetrics_failedfetchrequests_total",
  failedProduce: "kafka_server_brokertopicmetrics_failedproducerequests_total",
  version: "kafka_server_app_version",
} as const;

/** The alerts read from the brokers' endpoints: not available on a cluster without them. */
export const ENDPOINT_ALERTS = [1008, 1009, 1010, 1011, 1012] as const;
const DISK_ALERT = 1013;

// ---------------------------------------------------------------------------------------------
// The Prometheus text format (exposition format 0.0.4), as far as these series need it.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * The samples of the named series, from a scrape's text. Comments (`# HELP`, `# TYPE`) and other
 * series are skipped, and so is a line that does not parse.
 *
 *   line   = name [ "{" label { "," label } [ "," ] "}" ] value [ timestamp ]
 *   label  = name "=" '"' escaped-text '"'      (escapes: \\ \" \n)
 *   value  = a float, "NaN", "+Inf" or "-Inf"
 */
export function parseSamples(text: string, names: ReadonlySet<string>): Sample[] {
  const out: Sample[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const nameEnd = line.search(/[{\s]/);
    if (nameEnd <= 0 || !names.has(line.slice(0, nameEnd))) continue;
    let rest = line.slice(nameEnd);
    let labels: Record<string, string> = {};
    if (rest.startsWith("{")) {
      const parsed = parseLabels(rest);
      if (!parsed) continue;
      labels = parsed.labels;
      rest = rest.slice(parsed.end);
    }
    const value = sampleValue(rest.trim().split(/\s+/)[0] ?? "");
    if (value !== undefined) out.push({ name: line.slice(0, nameEnd), labels, value });
  }
  return out;
}

function sampleValue(text: string): number | undefined {
  if (text === "+Inf") return Number.POSITIVE_INFINITY;
  if (text === "-Inf") return Number.NEGATIVE_INFINITY;
  if (text === "NaN") return Number.NaN;
  const n = Number(text);
  return text !== "" && !Number.isNaN(n) ? n : undefined;
}

/** `{a="x",b="y"}` at the start of `text`: the labels and where the `}` ends; undefined when malformed. */
function parseLabels(text: string): { labels: Record<string, string>; end: number } | undefined {
  const labels: Record<string, string> = {};
  let i = 1;
  for (;;) {
    while (text[i] === " ") i++;
    if (text[i] === "}") return { labels, end: i + 1 };
    const eq = text.indexOf("=", i);
    if (eq < 0 || text[eq + 1] !== '"') return undefined;
    const name = text.slice(i, eq).trim();
    let value = "";
    let j = eq + 2;
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] !== "\\") value += text[j];
      else value += text[++j] === "n" ? "\n" : (text[j] ?? "");
    }
    if (j >= text.length || !/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(name)) return undefined;
    labels[name] = value;
    i = j + 1;
    while (text[i] === " ") i++;
    if (text[i] === ",") i++;
    else if (text[i] !== "}") return undefined;
  }
}

/** What one scrape of a broker tells; a series the broker did not give is absent. */
export interface Reading {
  /** Epoch ms of the scrape. */
  at: number;
  openFds?: number;
  maxFds?: number;
  /** Share of the time the request handler threads are idle, 0 to 1. */
  idle?: number;
  failedFetch?: number;
  failedProduce?: number;
  version?: string;
}

export function readingOf(text: string, at: number): Reading {
  const samples = parseSamples(text, new Set(Object.values(SERIES)));
  const one = (name: string) => samples.find((s) => s.name === name && Number.isFinite(s.value))?.value;
  const reading: Reading = { at };
  const put = <K extends keyof Reading>(key: K, value: Reading[K] | undefined) => {
    if (value !== undefined) reading[key] = value;
  };
  put("openFds", one(SERIES.openFds));
  put("maxFds", one(SERIES.maxFds));
  put("idle", one(SERIES.idle));
  put("failedFetch", one(SERIES.failedFetch));
  put("failedProduce", one(SERIES.failedProduce));
  put("version", samples.find((s) => s.name === SERIES.version && s.labels.version)?.labels.version);
  return reading;
}

// ---------------------------------------------------------------------------------------------
// Findings

const percent = (n: number) => (Math.round(n * 10) / 10).toString();

type Thresholds = Pick<
  BrokerMetricsConfig,
  "openFilesPercent" | "requestHandlerIdlePercent" | "failedFetchPerMinute" | "failedProducePerMinute" | "diskAboveAveragePoints"
>;

/** 1009, 1010, 1011, 1012 of one broker: from its reading now and the one before (for the rates). */
export function brokerFindings(
  cluster: string,
  broker: number,
  now: Reading,
  before: Reading | undefined,
  t: Thresholds,
): Map<number, Finding | null> {
  const out = new Map<number, Finding | null>();
  const finding = (alertId: number, summary: string): Finding => ({
    fingerprint: `cond/${cluster}/${alertId}/${broker}`,
    holdMs: 0,
    raise: {
      cluster,
      alertId,
      category: "Infrastructure",
      source: "loupe",
      instance: `broker ${broker}`,
      summary,
      labels: { broker: String(broker) },
    },
  });
  if (now.openFds !== undefined && now.maxFds) {
    const share = (now.openFds * 100) / now.maxFds;
    out.set(
      1009,
      share > t.openFilesPercent
        ? finding(
            1009,
            `Broker ${broker} has ${now.openFds} of its ${now.maxFds} file descriptors open (${percent(share)} %, over ${t.openFilesPercent} %)`,
          )
        : null,
    );
  }
  // Exactly 0 is the meter before its first tick (its first 5 s): not yet measured.
  if (now.idle !== undefined && now.idle > 0) {
    const idle = Math.min(now.idle, 1) * 100;
    out.set(
      1010,
      idle < t.requestHandlerIdlePercent
        ? finding(
            1010,
            `Broker ${broker}'s request handler threads are idle ${percent(idle)} % of the time (one-minute average, under ${t.requestHandlerIdlePercent} %)`,
          )
        : null,
    );
  }
  const rate = (alertId: number, what: string, key: "failedFetch" | "failedProduce", perMinute: number) => {
    const [a, b] = [before?.[key], now[key]];
    if (a === undefined || b === undefined || b < a || !before || now.at <= before.at) return;
    const minutes = (now.at - before.at) / 60_000;
    const r = (b - a) / minutes;
    out.set(
      alertId,
      r > perMinute
        ? finding(
            alertId,
            `Broker ${broker} failed ${b - a} ${what} requests in ${Math.round(minutes * 60)} s (${percent(r)} a minute, over ${perMinute})`,
          )
        : null,
    );
  };
  rate(1011, "fetch", "failedFetch", t.failedFetchPerMinute);
  rate(1012, "produce", "failedProduce", t.failedProducePerMinute);
  return out;
}

/** 1008: one finding for the cluster when its brokers run more than one version. */
export function versionFindings(cluster: string, versions: Map<number, string>): Finding[] {
  const byVersion = new Map<string, number[]>();
  for (const [broker, version] of [...versions].sort((a, b) => a[0] - b[0]))
    byVersion.set(version, [...(byVersion.get(version) ?? []), broker]);
  if (byVersion.size < 2) return [];
  const list = [...byVersion]
    .sort((a, b) => (a[0] < b[0] ? -1 : 1))
    .map(([v, ids]) => `${v} (broker${ids.length === 1 ? "" : "s"} ${ids.join(", ")})`)
    .join(", ");
  return [
    {
      fingerprint: `cond/${cluster}/1008/cluster`,
      holdMs: 0,
      raise: {
        cluster,
        alertId: 1008,
        category: "Infrastructure",
        source: "loupe",
        instance: cluster,
        summary: `The brokers run ${byVersion.size} Kafka versions: ${list}`,
      },
    },
  ];
}

/**
 * 1013: each broker whose log-dir disks (online dirs whose size the broker tells) are fuller than
 * the average of the cluster's brokers by more than `points` percentage points. A cluster with
 * fewer than two such brokers has no average to compare with.
 */
export function diskFindings(
  cluster: string,
  brokers: { brokerId: number; dirs: { totalBytes: number | null; usableBytes: number | null; error: string | null }[] }[],
  points: number,
): Finding[] {
  const used = brokers.flatMap((b) => {
    const dirs = b.dirs.filter((d) => d.error === null && d.totalBytes && d.usableBytes !== null);
    const total = dirs.reduce((n, d) => n + d.totalBytes!, 0);
    const free = dirs.reduce((n, d) => n + d.usableBytes!, 0);
    return total > 0 ? [{ broker: b.brokerId, share: ((total - free) * 100) / total }] : [];
  });
  if (used.length < 2) return [];
  const average = used.reduce((n, u) => n + u.share, 0) / used.length;
  return used
    .filter((u) => u.share - average > points)
    .map((u) => ({
      fingerprint: `cond/${cluster}/${DISK_ALERT}/${u.broker}`,
      holdMs: 0,
      raise: {
        cluster,
        alertId: DISK_ALERT,
        category: "Infrastructure",
        source: "loupe",
        instance: `broker ${u.broker}`,
        summary: `Broker ${u.broker}'s log-dir disks are ${percent(u.share)} % full, ${percent(u.share - average)} points over the cluster's average of ${percent(average)} % (more than ${points})`,
        labels: { broker: String(u.broker) },
      },
    }));
}

// ---------------------------------------------------------------------------------------------
// The passes

/** The endpoint of each broker of the metadata that has one. */
export function endpoints(config: BrokerMetricsConfig, brokers: Pick<BrokerInfo, "id" | "host">[]): Map<number, string> {
  const out = new Map<number, string>();
  for (const b of brokers) {
    const url = config.urls
      ? config.urls[String(b.id)]
      : config.template?.replaceAll("{host}", b.host.includes(":") ? `[${b.host}]` : b.host).replaceAll("{id}", String(b.id));
    if (url) out.set(b.id, url);
  }
  return out;
}

export class BrokerMetrics {
  readonly #configs: Map<string, BrokerMetricsConfig>;
  readonly #kafka: KafkaPool;
  readonly #log: Logger;
  readonly #now: () => number;
  /** The last reading of each broker, by cluster. */
  readonly #readings = new Map<string, Map<number, Reading>>();
  /** The findings last made, by `cluster/alert/broker` (null: none): what a broker that does not answer keeps. */
  readonly #made = new Map<string, Finding | null>();
  /** 1013's findings of the last pass that read the disks, by cluster. */
  readonly #disk = new Map<string, Finding[]>();

  constructor(clusters: readonly ClusterConfig[], kafka: KafkaPool, log: Logger, opts: { now?: () => number } = {}) {
    this.#configs = new Map(clusters.map((c) => [c.name, c.brokerMetrics]));
    this.#kafka = kafka;
    this.#log = log;
    this.#now = opts.now ?? Date.now;
  }

  /** Why the setting cannot be evaluated on the cluster; undefined when it can. */
  unavailable(cluster: string, alertId: number): string | undefined {
    if (!(ENDPOINT_ALERTS as readonly number[]).includes(alertId)) return undefined;
    const c = this.#configs.get(cluster);
    if (c?.urls || c?.template) return undefined;
    return `needs the brokers' Prometheus endpoints (the JMX exporter with deploy/jmx-exporter-kafka.yaml), which cluster '${cluster}' does not name: set kafka.clusters[].brokerMetrics.urls or .template`;
  }

  /** What one pass finds on the cluster, per alert; an alert that is off (`enabled` false) costs no request. */
  async findings(
    cluster: string,
    brokers: Pick<BrokerInfo, "id" | "host">[],
    enabled: (alertId: number) => Promise<boolean>,
  ): Promise<{ alertId: number; findings: Finding[] }[]> {
    const wanted = new Set<number>();
    for (const id of [...ENDPOINT_ALERTS, DISK_ALERT]) if (await enabled(id)) wanted.add(id);
    const out: { alertId: number; findings: Finding[] }[] = ENDPOINT_ALERTS.map((alertId) => ({ alertId, findings: [] }));
    const config = this.#configs.get(cluster);
    if (config && this.unavailable(cluster, 1009) === undefined && ENDPOINT_ALERTS.some((id) => wanted.has(id))) {
      const found = await this.#scrapeAll(cluster, config, brokers);
      for (const o of out) o.findings = found.get(o.alertId) ?? [];
    }
    out.push({ alertId: DISK_ALERT, findings: wanted.has(DISK_ALERT) ? await this.#diskPass(cluster) : [] });
    return out;
  }

  /** Every broker's endpoint at once; the findings of those that answer, and the kept ones of those that do not. */
  async #scrapeAll(
    cluster: string,
    config: BrokerMetricsConfig,
    brokers: Pick<BrokerInfo, "id" | "host">[],
  ): Promise<Map<number, Finding[]>> {
    const readings = this.#readings.get(cluster) ?? new Map<number, Reading>();
    this.#readings.set(cluster, readings);
    const urls = endpoints(config, brokers);
    const scraped = await Promise.all(
      [...urls].map(async ([id, url]) => [id, await this.#scrape(cluster, id, url, config.timeout)] as const),
    );
    const out = new Map<number, Finding[]>(ENDPOINT_ALERTS.map((a) => [a, []]));
    for (const [broker, reading] of scraped) {
      const made = reading ? brokerFindings(cluster, broker, reading, readings.get(broker), config) : new Map<number, Finding | null>();
      if (reading) readings.set(broker, reading);
      for (const alertId of [1009, 1010, 1011, 1012]) {
        const key = `${cluster}/${alertId}/${broker}`;
        // Not measured this pass (no answer, no base for a rate): as it was.
        const finding = made.has(alertId) ? made.get(alertId)! : (this.#made.get(key) ?? null);
        this.#made.set(key, finding);
        if (finding) out.get(alertId)!.push(finding);
      }
    }
    for (const id of readings.keys()) if (!urls.has(id)) readings.delete(id);
    const versions = new Map([...readings].flatMap(([id, r]) => (r.version ? [[id, r.version] as const] : [])));
    out.set(1008, versionFindings(cluster, versions));
    return out;
  }

  async #scrape(cluster: string, broker: number, url: string, timeout: number): Promise<Reading | undefined> {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(timeout), headers: { accept: "text/plain" } });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      return readingOf(await res.text(), this.#now());
    } catch (e) {
      const why =
        e instanceof Error && e.name === "TimeoutError" ? `no answer within ${timeout} ms` : String(e instanceof Error ? e.message : e);
      this.#log.warn("a broker's metrics endpoint did not answer; its alerts stay as they were", { cluster, broker, url, error: why });
      return undefined;
    }
  }

  /** 1013 from one DescribeLogDirs per broker naming no partition; a failure leaves it as it was. */
  async #diskPass(cluster: string): Promise<Finding[]> {
    try {
      const dirs = await this.#kafka.get(cluster).logDirs.brokerDirs({ partitions: false });
      const found = diskFindings(cluster, dirs, this.#configs.get(cluster)?.diskAboveAveragePoints ?? 10);
      this.#disk.set(cluster, found);
      return found;
    } catch (e) {
      this.#log.warn("the brokers' log dirs could not be described; 1013 stays as it was", { cluster }, e);
      return this.#disk.get(cluster) ?? [];
    }
  }
}
