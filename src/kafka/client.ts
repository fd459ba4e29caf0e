/**
 * Options for the Kafka client's objects built from a cluster's config, and a way to send one
 * raw protocol request when the client's higher-level methods hide what Loupe needs (topic
 * ids and internal flags of Metadata, validateOnly of CreateTopics).
 */

import { readFileSync } from "node:fs";
import { type Base, type BaseOptions, type Broker, kGetApi, kGetBootstrapConnection, kGetConnection } from "@platformatic/kafka";
import { AppError } from "../errors.ts";
import { counterContext, type RequestCounter } from "./metrics.ts";
import type { KafkaClusterConfig } from "./types.ts";

/** PEM text stays as it is; anything else is the path of a PEM file. */
function pem(value: string | undefined, what: string, cluster: string): string | undefined {
  if (value === undefined || value.includes("-----BEGIN")) return value;
  try {
    return readFileSync(value, "utf8");
  } catch (err) {
    throw new AppError("INTERNAL", `Cluster '${cluster}': cannot read the TLS ${what} file ${value}`, { cause: err });
  }
}

export function clientOptions(cfg: KafkaClusterConfig, counter: RequestCounter): BaseOptions {
  const opts: BaseOptions = {
    clientId: cfg.clientId,
    bootstrapBrokers: cfg.bootstrapServers,
    connectTimeout: cfg.connectTimeoutMs ?? 5_000,
    requestTimeout: cfg.requestTimeoutMs ?? 30_000,
    // A few quick retries ride out leader moves and a coordinator that is still loading;
    // longer outages surface as UNAVAILABLE instead of hanging a request.
    retries: 3,
    retryDelay: 250,
    context: counterContext(counter),
  };
  if (cfg.sasl) opts.sasl = { mechanism: cfg.sasl.mechanism, username: cfg.sasl.username, password: cfg.sasl.password };
  if (cfg.tls?.enabled) {
    opts.tls = {
      ca: pem(cfg.tls.ca, "CA", cfg.name),
      cert: pem(cfg.tls.cert, "certificate", cfg.name),
      key: pem(cfg.tls.key, "key", cfg.name),
      rejectUnauthorized: cfg.tls.rejectUnauthorized ?? true,
    };
  }
  return opts;
}

type AnyCallback = (error: Error | null, result?: unknown) => void;

/**
 * Sends one request of the named API (at the newest version both sides speak) to `broker`,
 * or to any bootstrap broker when `broker` is null, and resolves with the parsed response.
 * The response parser throws a ResponseError when the answer carries error codes.
 */
export function callApi<R>(client: Base, apiName: string, broker: Broker | null, ...args: unknown[]): Promise<R> {
  return new Promise<R>((resolve, reject) => {
    const withConnection = (error: Error | null, connection: unknown) => {
      if (error) return reject(error);
      client[kGetApi](apiName, (apiError: Error | null, api: unknown) => {
        if (apiError) return reject(apiError);
        const send = api as (...a: unknown[]) => void;
        const done: AnyCallback = (err, res) => (err ? reject(err) : resolve(res as R));
        send(connection, ...args, done);
      });
    };
    if (broker) client[kGetConnection](broker, withConnection as never);
    else client[kGetBootstrapConnection](withConnection as never);
  });
}

/** Rejects with an AbortError-named error when `signal` aborts first. */
/**
 * `promise`, or an UNAVAILABLE error once `ms` pass without its answer (a request whose answer
 * the client lost would otherwise be waited for forever).
 */
export function answerWithin<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new AppError("UNAVAILABLE", `${what}: no answer within ${ms} ms`, { details: { retriable: true } })),
      ms,
    );
  });
  promise.catch(() => {});
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Rejects with a TimeoutError-named error after `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      const err = new Error(`no answer within ${ms} ms`);
      err.name = "TimeoutError";
      reject(err);
    }, ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/** Kafka's int64 values as numbers (exact below 2^53, which offsets and timestamps are). */
export const num = (v: bigint | number): number => Number(v);

/** References grouped by topic, in first-seen order: requests name each topic once. */
export function byTopic<T extends { topic: string }>(refs: T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of refs) out.set(r.topic, [...(out.get(r.topic) ?? []), r]);
  return out;
}
