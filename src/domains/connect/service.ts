/**
 * The Kafka Connect clusters Loupe proxies: one failover client (src/proxy/upstream.ts) per
 * alias, built once, so that a worker found dead is skipped by every later request for the
 * grace period. Knows nothing of HTTP routes or roles.
 */
import type { ConnectConfig } from "../../config/schema.ts";
import { AppError, notFound } from "../../errors.ts";
import { basicAuthorization, tlsOptions, Upstream, type UpstreamAnswer, type UpstreamRequest } from "../../proxy/upstream.ts";
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

export interface ConnectClusterState {
  alias: string;
  workers: WorkerState[];
}

export class ConnectService {
  readonly #upstreams = new Map<string, Upstream>();
  readonly secrets: SecretKeys;
  readonly guardRails: ConnectConfig["guardRails"];

  constructor(config: ConnectConfig, opts: { now?: () => number; fetch?: typeof fetch } = {}) {
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
          ...opts,
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

  send(alias: string, req: UpstreamRequest): Promise<UpstreamAnswer> {
    return this.upstream(alias).send(req);
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
    const root = JSON.parse(new TextDecoder().decode(answer.body)) as { version?: string; commit?: string; kafka_cluster_id?: string };
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
