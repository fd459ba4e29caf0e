/**
 * One cluster's connections, shared by every operation on it (topics.ts, offsets.ts, ...): the
 * admin and producer clients, opened on first use, so creating a cluster touches no network
 * and Loupe starts while a cluster is down. Also what belongs to the cluster as a whole: the
 * request statistics, the health probe, API support, and closing.
 */

import { Admin, kGetApi, type metadataV12, Producer, UnsupportedApiError } from "@platformatic/kafka";
import { AppError } from "../errors.ts";
import { callApi, clientOptions, withTimeout } from "./client.ts";
import { type ConnectionFacts, isRefusal, toAppError } from "./errors.ts";
import { RequestCounter, watchRequests } from "./metrics.ts";
import type { ClusterStats, Health, KafkaClusterConfig } from "./types.ts";

export type MetadataResponse = metadataV12.MetadataResponse;

export class KafkaConnection {
  readonly name: string;
  readonly config: KafkaClusterConfig;
  /** Counts the requests of every client opened to this cluster (reads included). */
  readonly counter = new RequestCounter();
  /** Reads whose connections are still open (reads.ts keeps it). */
  openReads = 0;
  #admin: Admin | null = null;
  #producer: Producer | null = null;
  #closed = false;

  constructor(config: KafkaClusterConfig) {
    this.name = config.name;
    this.config = config;
    watchRequests();
  }

  get admin(): Admin {
    this.checkOpen();
    this.#admin ??= new Admin(clientOptions(this.config, this.counter));
    return this.#admin;
  }

  get producer(): Producer {
    this.checkOpen();
    // Idempotent: the client resends a whole Produce request when one partition of it fails
    // (a fresh topic whose partitions are not all led yet); without sequence numbers the
    // partitions that had succeeded would get their records twice.
    this.#producer ??= new Producer({ ...clientOptions(this.config, this.counter), acks: -1, idempotent: true });
    return this.#producer;
  }

  checkOpen(): void {
    if (this.#closed) throw new AppError("UNAVAILABLE", `Kafka cluster '${this.name}' is closed`);
  }

  /** Runs `fn`, turning whatever the client throws into an AppError naming `context`. */
  async call<T>(context: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw this.failure(err, context);
    }
  }

  /** The AppError for `err`; a refusal is kept to tell the bare "Connection closed" that may follow it. */
  failure(err: unknown, context: string): AppError {
    const facts = this.facts();
    if (isRefusal(err, facts)) this.counter.lastSocketError = { error: err, at: performance.now() };
    return toAppError(err, context, this.name, facts);
  }

  /** What toAppError needs to know of this cluster's connections to say why one failed. */
  facts(): ConnectionFacts {
    return {
      recentSocketError: this.counter.recentSocketError(),
      clientCertificate: Boolean(this.config.tls?.enabled && this.config.tls.cert),
    };
  }

  /** Metadata of the named topics (null: all, []: none, only brokers and controller). */
  metadata(topics: string[] | null): Promise<MetadataResponse> {
    return callApi<MetadataResponse>(this.admin, "Metadata", null, topics, false, false);
  }

  /** Requests sent to this cluster so far, by every connection Loupe opened to it. */
  requestCount(): number {
    return this.counter.requests;
  }

  /** Round trip of the last answered request in ms; null before the first. */
  get lastRoundTripMs(): number | null {
    return this.counter.lastRoundTripMs;
  }

  stats(): ClusterStats {
    return { ...this.counter.snapshot(), openReads: this.openReads, byApi: Object.fromEntries(this.counter.byApi) };
  }

  /** One cheap Metadata round trip; never throws. */
  async health(timeoutMs = 3_000): Promise<Health> {
    const t0 = performance.now();
    const latency = () => Math.round((performance.now() - t0) * 100) / 100;
    try {
      const md = await withTimeout(this.metadata([]), timeoutMs);
      return { connected: true, brokers: md.brokers.length, controllerId: md.controllerId, latencyMs: latency() };
    } catch (err) {
      const error = this.failure(err, `Kafka cluster '${this.name}'`).message;
      return { connected: false, brokers: 0, controllerId: null, latencyMs: latency(), error };
    }
  }

  /**
   * Whether the brokers speak the named Kafka API ("DeleteRecords" needs 0.11 or later). Sends
   * at most one ApiVersions request, whose answer the client keeps.
   */
  supportsApi(apiName: string): Promise<boolean> {
    return this.call(`Cannot check support of ${apiName}`, () => {
      const admin = this.admin;
      return new Promise<boolean>((resolve, reject) =>
        admin[kGetApi](apiName, (err: Error | null) => {
          if (!err) resolve(true);
          else if (err instanceof UnsupportedApiError) resolve(false);
          else reject(err);
        }),
      );
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    const closing: Promise<unknown>[] = [];
    if (this.#admin) closing.push(this.#admin.close());
    if (this.#producer) closing.push(this.#producer.close(true));
    this.#admin = null;
    this.#producer = null;
    await Promise.race([Promise.allSettled(closing), Bun.sleep(2_000)]);
  }
}
