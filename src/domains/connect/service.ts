/**
 * The Kafka Connect clusters Loupe proxies: one failover client (src/proxy/upstream.ts) per
 * alias, built once, so that a worker found dead is skipped by every later request for the
 * grace period. Knows nothing of HTTP routes or roles.
 */
import type { ConnectConfig } from "../../config/schema.ts";
import { AppError, notFound } from "../../errors.ts";
import type { Logger } from "../../log/logger.ts";
import { basicAuthorization, tlsOptions, Upstream, type UpstreamAnswer, type UpstreamRequest } from "../../proxy/upstream.ts";
import { parseJson } from "../../util/json.ts";
import type { NotificationService } from "../alerts/notifications.ts";
import { publicUrl } from "../server-info/service.ts";
import { SecretKeys } from "./masking.ts";

/** How long `GET /` of one worker may take when the clusters' page asks whether it is up. */
const PROBE_TIMEOUT_MS = 3_000;

export interface WorkerState {
  /** Without credentials. */
  url: string;
  state: "UP" | "DOWN";
  version?: string;
  commit?: string;
  kafkaClusterId?: string;
  error?: string;
}

/** The alert a worker that stops answering raises (SPEC, alert identifiers). */
export const WORKER_DOWN_ALERT = { id: 1002, summary: "Connector worker is down" } as const;

export interface ConnectServiceOptions {
  now?: () => number;
  fetch?: typeof fetch;
  /** Where alert 1002 goes; none: no alert. */
  notifications?: NotificationService;
  log?: Logger;
}

export interface ConnectClusterState {
  alias: string;
  workers: WorkerState[];
}

export class ConnectService {
  readonly #upstreams = new Map<string, Upstream>();
  readonly secrets: SecretKeys;
  readonly guardRails: ConnectConfig["guardRails"];

  readonly #opts: ConnectServiceOptions;
  readonly #now: () => number;
  readonly #graceMs: number;
  /** When alert 1002 was last raised for an alias's worker; one per worker per grace period. */
  readonly #alertedAt = new Map<string, number>();

  constructor(config: ConnectConfig, opts: ConnectServiceOptions = {}) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
    this.#graceMs = config.grace;
    this.secrets = new SecretKeys(config.guardRails.secretKeys);
    this.guardRails = config.guardRails;
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
          // Workers do not share a request's outcome: an HTTP answer of any status is Connect's word
          // (409 while it rebalances included), never a reason to ask another worker.
          failoverOn5xx: false,
          ...(opts.now ? { now: opts.now } : {}),
          ...(opts.fetch ? { fetch: opts.fetch } : {}),
        }),
      );
  }

  aliases(): string[] {
    return [...this.#upstreams.keys()];
  }

  /** 404 naming the alias when it is not configured. */
  upstream(alias: string): Upstream {
    const u = this.#upstreams.get(alias);
    if (!u) throw notFound(`Kafka Connect cluster '${alias}' is not configured (known: ${this.aliases().join(", ") || "none"})`);
    return u;
  }

  /**
   * Sends one call to the alias's first usable worker (see Upstream for the failover). A worker
   * this call found dead raises alert 1002 on `cluster` (the request's Kafka cluster), at most
   * once per worker per grace period, whether or not another worker then answered.
   */
  async send(alias: string, req: UpstreamRequest, cluster = ""): Promise<UpstreamAnswer> {
    const upstream = this.upstream(alias);
    const before = upstream.states().map((s) => s.badUntil);
    try {
      return await upstream.send(req);
    } finally {
      upstream.states().forEach((s, i) => {
        if (s.badUntil !== before[i] && s.badUntil > this.#now()) this.#workerDown(alias, s.url, s.lastError ?? "no answer", cluster);
      });
    }
  }

  #workerDown(alias: string, url: string, why: string, cluster: string): void {
    const now = this.#now();
    const key = `${alias} ${url}`;
    if (now - (this.#alertedAt.get(key) ?? Number.NEGATIVE_INFINITY) < this.#graceMs) return;
    this.#alertedAt.set(key, now);
    this.#opts.log?.warn("a Kafka Connect worker does not answer", { alias, worker: publicUrl(url), error: why });
    this.#opts.notifications
      ?.raise({
        alertId: WORKER_DOWN_ALERT.id,
        cluster,
        summary: WORKER_DOWN_ALERT.summary,
        severity: "HIGH",
        category: "Infrastructure",
        instance: `${alias} ${publicUrl(url)}`,
        source: "loupe",
      })
      .catch((err) => this.#opts.log?.warn("could not raise the Connect worker alert", {}, err));
  }

  /** Every alias and each of its workers, asked `GET /` in parallel with a short timeout. */
  async clusters(): Promise<ConnectClusterState[]> {
    return Promise.all(
      [...this.#upstreams].map(async ([alias, upstream]) => ({
        alias,
        workers: await Promise.all(upstream.urls.map((url) => probe(upstream, url))),
      })),
    );
  }
}

async function probe(upstream: Upstream, url: string): Promise<WorkerState> {
  const shown = publicUrl(url);
  const signal = AbortSignal.timeout(PROBE_TIMEOUT_MS);
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
      ? `no answer within ${PROBE_TIMEOUT_MS} ms`
      : e instanceof AppError
        ? e.message.replaceAll(url, shown)
        : "not a Connect worker answer";
    return { url: shown, state: "DOWN", error };
  }
}
