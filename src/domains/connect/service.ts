/**
 * The Kafka Connect clusters Loupe proxies: one failover client (src/proxy/upstream.ts) per
 * alias, built once, so that a worker found dead is skipped by every later request for the
 * grace period. Knows nothing of HTTP routes or roles.
 */
import type { ConnectConfig } from "../../config/schema.ts";
import { AppError, notFound } from "../../errors.ts";
import type { Logger } from "../../log/logger.ts";
import { nameSegment } from "../../proxy/paths.ts";
import { basicAuthorization, tlsOptions, Upstream, type UpstreamAnswer, type UpstreamRequest } from "../../proxy/upstream.ts";
import { parseJson } from "../../util/json.ts";
import type { ConnectorHealth } from "../alerts/connect-failures.ts";
import { type HostObserver, PROBE_TIMEOUT_MS, type ServiceHost } from "../alerts/service-hosts.ts";
import { publicUrl } from "../server-info/service.ts";
import { pluginKey } from "./guard-rails.ts";
import { SecretKeys } from "./masking.ts";
import type { ConnectCluster, ConnectWorker } from "./schemas.ts";

/**
 * How long a read answered "not now" is asked again (see Upstream): while the workers rebalance,
 * Connect answers a connector's GET with 500 "Request cannot be completed because a rebalance is
 * expected" or a 409, for as long as the rebalances go on (a second or two after a change), and
 * forwarding to a leader that is leaving fails with 5xx.
 */
export const READ_RETRY = { statuses: [409, 500, 502, 503, 504], windowMs: 10_000 } as const;

/** A worker as the clusters answer shows it (its URL without credentials). */
export type WorkerState = ConnectWorker;

export interface ConnectServiceOptions {
  /**
   * Loupe's Kafka clusters: `default` is what an alias without `kafkaCluster` acts on; each
   * cluster's bootstrap servers let a connector config's `*bootstrap.servers` be matched to it.
   */
  kafka?: { default: string; clusters: readonly { name: string; bootstrapServers: readonly string[] }[] };
  now?: () => number;
  fetch?: typeof fetch;
  /** The workers' health record, told what each call found of the workers it tried (alert 1002). */
  hosts?: HostObserver;
  log?: Logger;
}

export type ConnectClusterState = ConnectCluster;

export class ConnectService {
  readonly #upstreams = new Map<string, Upstream>();
  readonly #kafkaClusters = new Map<string, string>();
  readonly secrets: SecretKeys;
  readonly guardRails: ConnectConfig["guardRails"];

  readonly #opts: ConnectServiceOptions;
  readonly #now: () => number;

  constructor(config: ConnectConfig, opts: ConnectServiceOptions = {}) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
    this.secrets = new SecretKeys(config.guardRails.secretKeys);
    this.guardRails = config.guardRails;
    for (const c of config.clusters) this.#kafkaClusters.set(c.alias, c.kafkaCluster ?? opts.kafka?.default ?? "");
    for (const c of config.clusters)
      this.#upstreams.set(
        c.alias,
        new Upstream({
          name: `Kafka Connect cluster '${c.alias}'`,
          urls: c.urls,
          authorization: basicAuthorization(c.auth),
          tls: tlsOptions(c.tls),
          timeoutMs: config.timeout,
          graceMs: config.grace,
          maxBytes: config.maxResponseSize,
          // Workers do not share a request's outcome: an answer to a change is Connect's word
          // (409 while it rebalances included), never a reason to send the change again.
          failoverOn5xx: false,
          // A read may be asked again: nothing changes, and the answer after the rebalance is the true one.
          retryReads: READ_RETRY,
          ...(opts.now ? { now: opts.now } : {}),
          ...(opts.fetch ? { fetch: opts.fetch } : {}),
        }),
      );
  }

  aliases(): string[] {
    return [...this.#upstreams.keys()];
  }

  /** The Kafka cluster an alias's connectors act on (`kafkaCluster`, else the default); undefined for an unknown alias. */
  kafkaClusterOf(alias: string): string | undefined {
    return this.#kafkaClusters.get(alias);
  }

  /**
   * Loupe's Kafka clusters that a connector config names by address in any `*bootstrap.servers`
   * key (MirrorMaker's `source.cluster.bootstrap.servers`, a client override): those whose
   * bootstrap servers share a `host:port` with it, compared ignoring case.
   */
  kafkaClustersNamedIn(config: Record<string, unknown>): string[] {
    const given = new Set<string>();
    for (const [k, v] of Object.entries(config))
      if (/bootstrap\.servers$/i.test(k) && typeof v === "string")
        for (const address of v.split(","))
          given.add(
            address
              .trim()
              .replace(/^[a-z_]+:\/\//i, "")
              .toLowerCase(),
          );
    return (this.#opts.kafka?.clusters ?? []).filter((c) => c.bootstrapServers.some((b) => given.has(b.toLowerCase()))).map((c) => c.name);
  }

  /**
   * The type Connect gives a connector class (`GET /connector-plugins`, asked each time: a
   * worker restart may change the list), matched as Connect matches names (the full class, the
   * simple name, the simple name without `Connector`); undefined when it has no such plugin.
   */
  async pluginType(alias: string, connectorClass: string, signal?: AbortSignal): Promise<"source" | "sink" | undefined> {
    const answer = await this.send(alias, {
      method: "GET",
      path: "/connector-plugins",
      query: new URLSearchParams({ connectorsOnly: "true" }),
      headers: { accept: "application/json" },
      ...(signal ? { signal } : {}),
    });
    if (answer.status !== 200) throw new AppError("BAD_GATEWAY", `Kafka Connect answered HTTP ${answer.status} to its plugin list`);
    let plugins: { class?: unknown; type?: unknown }[] = [];
    try {
      const body = parseJson(new TextDecoder().decode(answer.body));
      if (Array.isArray(body)) plugins = body;
    } catch {
      // Not Connect's list: no plugin is known.
    }
    const exact = plugins.find((p) => p.class === connectorClass.trim());
    const wanted = pluginKey(connectorClass);
    // By simple name, only when every plugin of that name has the same type.
    const types = new Set(plugins.filter((p) => typeof p.class === "string" && pluginKey(p.class) === wanted).map((p) => p.type));
    const type = exact ? exact.type : types.size === 1 ? [...types][0] : undefined;
    return type === "source" || type === "sink" ? type : undefined;
  }

  /** 404 naming the alias when it is not configured. */
  upstream(alias: string): Upstream {
    const u = this.#upstreams.get(alias);
    if (!u) throw notFound(`Kafka Connect cluster '${alias}' is not configured (known: ${this.aliases().join(", ") || "none"})`);
    return u;
  }

  /**
   * Sends one call to the alias's first usable worker (see Upstream for the failover). What the
   * call found of each worker it tried (dead, or answering again) goes to the workers' health
   * record, which the alert evaluation reads at its next pass (alert 1002).
   */
  async send(alias: string, req: UpstreamRequest): Promise<UpstreamAnswer> {
    const upstream = this.upstream(alias);
    const before = upstream.states().map((s) => s.badUntil);
    try {
      return await upstream.send(req);
    } finally {
      upstream.states().forEach((s, i) => {
        if (s.badUntil !== before[i] && s.badUntil > this.#now()) {
          const error = s.lastError ?? "no answer";
          this.#opts.log?.warn("a Kafka Connect worker does not answer", { alias, worker: publicUrl(s.url), error });
          this.#opts.hosts?.observed(1002, workerInstance(alias, s.url), error);
        } else if (s.badUntil === 0 && before[i] !== 0) this.#opts.hosts?.observed(1002, workerInstance(alias, s.url), null);
      });
    }
  }

  /** Each worker of each alias, for the alert evaluation to probe (`GET /`) at every pass. */
  serviceHosts(): ServiceHost[] {
    return [...this.#upstreams].flatMap(([alias, upstream]) =>
      upstream.urls.map((url) => ({
        alertId: 1002 as const,
        cluster: this.kafkaClusterOf(alias) ?? "",
        instance: workerInstance(alias, url),
        what: `Kafka Connect worker ${publicUrl(url)} of '${alias}'`,
        probe: async (timeoutMs: number) => {
          const state = await probe(upstream, url, timeoutMs);
          return state.state === "UP" ? null : (state.error ?? "no answer");
        },
      })),
    );
  }

  /**
   * Every connector of the alias with its own state and its tasks': one `GET
   * /connectors?expand=status` (Connect 2.3 and later), whatever the number of connectors.
   */
  async connectorStates(alias: string): Promise<ConnectorHealth[]> {
    const answer = await this.send(alias, {
      method: "GET",
      path: "/connectors",
      query: new URLSearchParams({ expand: "status" }),
      headers: { accept: "application/json" },
    });
    if (answer.status !== 200)
      throw new AppError("BAD_GATEWAY", `Kafka Connect cluster '${alias}' answered HTTP ${answer.status} to its connector list`);
    const body = parseJson(new TextDecoder().decode(answer.body));
    if (typeof body !== "object" || body === null || Array.isArray(body))
      throw new AppError("BAD_GATEWAY", `Kafka Connect cluster '${alias}' answered its connector list with no map of connectors`);
    const text = (v: unknown) => (typeof v === "string" ? v : undefined);
    return Object.entries(body as Record<string, { status?: Record<string, unknown> }>).map(([name, entry]) => {
      const status = entry?.status ?? {};
      const connector = (status.connector ?? {}) as Record<string, unknown>;
      const tasks = Array.isArray(status.tasks) ? (status.tasks as Record<string, unknown>[]) : [];
      const trace = text(connector.trace);
      return {
        name,
        state: text(connector.state) ?? "UNKNOWN",
        ...(trace ? { trace } : {}),
        tasks: tasks.map((t) => {
          const taskTrace = text(t.trace);
          return { id: Number(t.id), state: text(t.state) ?? "UNKNOWN", ...(taskTrace ? { trace: taskTrace } : {}) };
        }),
      };
    });
  }

  /** Restarts a connector's failed parts: `POST /connectors/{name}/restart?includeTasks=true&onlyFailed=true`. */
  async restartFailed(alias: string, name: string): Promise<void> {
    const answer = await this.send(alias, {
      method: "POST",
      path: `/connectors/${nameSegment("connector name", name)}/restart`,
      query: new URLSearchParams({ includeTasks: "true", onlyFailed: "true" }),
      headers: { accept: "application/json" },
    });
    if (answer.status >= 300)
      throw new AppError(
        "BAD_GATEWAY",
        `Kafka Connect cluster '${alias}' answered HTTP ${answer.status} to the restart of '${name}': ${new TextDecoder().decode(answer.body).slice(0, 200)}`,
      );
  }

  /** Every alias and each of its workers, asked `GET /` in parallel with a short timeout. */
  async clusters(): Promise<ConnectClusterState[]> {
    return Promise.all(
      [...this.#upstreams].map(async ([alias, upstream]) => ({
        alias,
        workers: await Promise.all(upstream.urls.map((url) => probe(upstream, url, PROBE_TIMEOUT_MS))),
      })),
    );
  }
}

/** The fingerprint's and instance's name of a worker (kept as 1002 has always named it). */
const workerInstance = (alias: string, url: string) => `${alias} ${publicUrl(url)}`;

/** `GET /` of one worker within `timeoutMs` (and the alias's own timeout): its state and version. */
async function probe(upstream: Upstream, url: string, timeoutMs: number): Promise<WorkerState> {
  const shown = publicUrl(url);
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const answer = await upstream.sendTo(url, { method: "GET", path: "/", headers: { accept: "application/json" }, signal });
    if (answer.status !== 200) return { url: shown, state: "DOWN", error: `HTTP ${answer.status}` };
    const root = parseJson(new TextDecoder().decode(answer.body)) as { version?: string; commit?: string; kafka_cluster_id?: string };
    return {
      url: shown,
      state: "UP",
      ...(root.version ? { version: root.version } : {}),
      ...(root.commit ? { commit: root.commit } : {}),
      ...(root.kafka_cluster_id ? { kafkaClusterId: root.kafka_cluster_id } : {}),
    };
  } catch (e) {
    const error = signal.aborted
      ? `no answer within ${timeoutMs} ms`
      : e instanceof AppError
        ? e.message.replace(`${upstream.name} at ${url}: `, "").replaceAll(url, shown)
        : "not a Connect worker answer";
    return { url: shown, state: "DOWN", error };
  }
}
