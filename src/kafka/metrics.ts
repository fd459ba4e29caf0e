/**
 * Counts the requests each cluster sends and times their round trips, for /metrics and the
 * benchmarks. The Kafka client publishes every request on a diagnostics channel; each client
 * Loupe creates carries its cluster's counter in its `context`, which the client hands on to
 * every connection it opens, so one subscriber attributes every request to its cluster. The
 * answers' throttle times say how long the brokers held Loupe's own clients back under quotas.
 */

import { connectionsApiChannel, connectionsConnectsChannel, protocolAPIsById } from "@platformatic/kafka";
import type { RequestStats } from "./types.ts";

const COUNTER = Symbol.for("loupe.kafka.requestCounter");

export class RequestCounter {
  requests = 0;
  errors = 0;
  lastRoundTripMs: number | null = null;
  /** The waits the brokers asked for under quotas (`throttle_time_ms` of their answers), summed. */
  throttleTimeMs = 0;
  /** Answers that carried a throttle time above 0. */
  throttled = 0;
  /** Requests per Kafka API name ("Metadata", "Fetch", ...). */
  readonly byApi = new Map<string, number>();
  /**
   * The last error a connected socket of the cluster met (a TLS alert, a reset), or the last
   * refusal of a connection (wrong credentials, a TLS mismatch), and when: requests on such a
   * connection fail with a bare "Connection closed", which does not say why.
   */
  lastSocketError: { error: unknown; at: number } | null = null;

  /** lastSocketError's error when it happened within `ms`. */
  recentSocketError(ms = 10_000): unknown {
    const last = this.lastSocketError;
    return last && performance.now() - last.at <= ms ? last.error : undefined;
  }

  snapshot(): RequestStats {
    return {
      requests: this.requests,
      lastRoundTripMs: this.lastRoundTripMs,
      errors: this.errors,
      throttleTimeMs: this.throttleTimeMs,
      throttled: this.throttled,
    };
  }
}

/** The `context` option to give every client of a cluster. */
export function counterContext(counter: RequestCounter): Record<symbol, RequestCounter> {
  return { [COUNTER]: counter };
}

interface ApiEvent {
  connection?: { context?: unknown; on?(event: "error", listener: (err: unknown) => void): unknown };
  error?: unknown;
  apiKey?: unknown;
  /** The parsed answer; most carry the broker's `throttleTimeMs` (a quota, or a broker's own request limits). */
  result?: { throttleTimeMs?: unknown };
}

function counterOf(event: unknown): RequestCounter | undefined {
  const ctx = (event as ApiEvent | null)?.connection?.context;
  if (ctx && typeof ctx === "object" && COUNTER in ctx) return (ctx as Record<symbol, RequestCounter>)[COUNTER];
  return undefined;
}

const sentAt = new WeakMap<object, number>();
let subscribed = false;

/** Subscribes once per process; cheap to call again. */
export function watchRequests(): void {
  if (subscribed) return;
  subscribed = true;
  connectionsApiChannel.start.subscribe((event: unknown) => {
    const counter = counterOf(event);
    if (!counter) return;
    counter.requests++;
    const api = protocolAPIsById[Number((event as ApiEvent).apiKey)] ?? `api-${String((event as ApiEvent).apiKey)}`;
    counter.byApi.set(api, (counter.byApi.get(api) ?? 0) + 1);
    sentAt.set(event as object, performance.now());
  });
  // asyncStart fires when the answer arrives, before the caller's callback runs.
  connectionsApiChannel.asyncStart.subscribe((event: unknown) => {
    const counter = counterOf(event);
    const t0 = sentAt.get(event as object);
    if (!counter || t0 === undefined) return;
    counter.lastRoundTripMs = Math.round((performance.now() - t0) * 1000) / 1000;
    const throttle = (event as ApiEvent).result?.throttleTimeMs;
    if (typeof throttle === "number" && throttle > 0) {
      counter.throttleTimeMs += throttle;
      counter.throttled++;
    }
  });
  connectionsApiChannel.error.subscribe((event: unknown) => {
    const counter = counterOf(event);
    if (counter) counter.errors++;
  });
  // A connection that connected reports later socket errors as its own 'error' event, wrapping
  // the socket's error as cause: kept on its cluster's counter (see lastSocketError).
  connectionsConnectsChannel.asyncStart.subscribe((event: unknown) => {
    const counter = counterOf(event);
    const e = event as ApiEvent;
    if (!counter || e.error !== undefined || typeof e.connection?.on !== "function") return;
    e.connection.on("error", (err: unknown) => {
      counter.lastSocketError = { error: err instanceof Error && err.cause !== undefined ? err.cause : err, at: performance.now() };
    });
  });
}
