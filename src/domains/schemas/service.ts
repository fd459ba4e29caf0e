/**
 * The schema registry proxy's service: what goes upstream and what comes back, without HTTP
 * routing. Requests go through the registry's one `Upstream`, shared with the SQL decoders
 * (src/registry/client.ts), so both skip the same bad host for the same grace period.
 *
 * The registry's Confluent API is passed through: status and body as the registry answers,
 * with the few shapes the real clients need normalised by the routes (see routes.ts). Only the
 * content type and Accept of the caller go upstream, and only as one of the registry's media
 * types: Loupe's token, the caller's Authorization, Cookie, Host and X-Forwarded-* never leave;
 * upstream credentials come from the configuration.
 */

import { AppError, badRequest, notFound } from "../../errors.ts";
import { intSegment, nameSegment } from "../../proxy/paths.ts";
import type { Upstream, UpstreamAnswer, UrlState } from "../../proxy/upstream.ts";
import type { HostObserver, ServiceHost } from "../alerts/service-hosts.ts";
import { publicUrl } from "../server-info/service.ts";

/** What the registry speaks; the Go client sends the first, the Python client the last. */
export const REGISTRY_MEDIA_TYPES = [
  "application/vnd.schemaregistry.v1+json",
  "application/vnd.schemaregistry+json",
  "application/json",
] as const;
const DEFAULT_ACCEPT = REGISTRY_MEDIA_TYPES.join(", ");

export interface RegistryCall {
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** Upstream path, every segment already checked and encoded (see the segment helpers below). */
  path: string;
  query?: URLSearchParams;
  /** The caller's Content-Type and Accept headers, as sent. */
  contentType?: string | undefined;
  accept?: string | undefined;
  body?: string;
  signal?: AbortSignal;
}

export interface SchemaProxyOptions {
  /** Null when no registry is configured: every proxy route answers 404. */
  upstream: Upstream | null;
  /** `schemaRegistry.allowDelete`: deletes are refused whatever the role when off. */
  allowDelete: boolean;
  /** The registry hosts' health record, told what each call found of the hosts it tried (alert 1003). */
  hosts?: HostObserver;
  now?: () => number;
}

const mediaType = (value: string) => value.split(";")[0]!.trim().toLowerCase();
const isRegistryType = (value: string) => (REGISTRY_MEDIA_TYPES as readonly string[]).includes(mediaType(value));

/**
 * The Content-Type sent upstream: the caller's when it is one of the registry's media types
 * (even on a bodiless DELETE, as the Go client sends it); a body sent as anything else (some
 * clients label JSON text/plain) goes as the registry's own type, since it was read as JSON.
 */
export function upstreamContentType(given: string | undefined, hasBody: boolean): string | undefined {
  if (given !== undefined && isRegistryType(given)) return given.trim();
  return hasBody ? REGISTRY_MEDIA_TYPES[0] : undefined;
}

/**
 * The Accept sent upstream: the caller's registry media types, else all of them. A registry
 * answers 406 to an Accept it does not speak (`text/plain`, `text/event-stream`), and Loupe
 * never answers 406.
 */
export function upstreamAccept(given: string | undefined): string {
  const kept = (given ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "" && isRegistryType(s));
  return kept.length ? kept.join(", ") : DEFAULT_ACCEPT;
}

/** A subject as one encoded path segment (400 for `..`, control characters, empty...). */
export const subjectSegment = (subject: string): string => nameSegment("subject", subject);

/**
 * A version: `latest`, or 1 to 2^31-1 (SPEC, limits). `-1`, the Confluent API's alias of
 * `latest`, is accepted and sent as `latest`.
 */
export function versionSegment(version: string): string {
  if (version === "latest" || version === "-1") return "latest";
  if (!/^\d{1,10}$/.test(version)) throw badRequest(`The version '${version}' is neither 'latest' nor an integer from 1 to 2147483647`);
  return intSegment("version", version, 1);
}

/** A schema id: an integer from 1 to 2^31-1. */
export const schemaIdSegment = (id: string): string => intSegment("schema id", id, 1);

export class SchemaProxyService {
  readonly #opts: SchemaProxyOptions;
  readonly #now: () => number;

  constructor(opts: SchemaProxyOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
  }

  get allowDelete(): boolean {
    return this.#opts.allowDelete;
  }

  /** Each host and whether it is left out now (empty when no registry is configured). */
  hosts(): UrlState[] {
    return this.#opts.upstream?.states() ?? [];
  }

  /** FORBIDDEN unless deletes are turned on in the configuration. */
  requireDelete(): void {
    if (!this.#opts.allowDelete)
      throw new AppError("FORBIDDEN", "Deleting schemas is turned off in Loupe's configuration (schemaRegistry.allowDelete)");
  }

  /**
   * Sends one call to the first usable host (see Upstream for the failover); 503 when no host
   * answers. What the call found of each host it tried (dead, or answering again) goes to the
   * hosts' health record, which the alert evaluation reads at its next pass (alert 1003).
   */
  async send(call: RegistryCall): Promise<UpstreamAnswer> {
    const upstream = this.#opts.upstream;
    if (!upstream) throw notFound("No schema registry is configured (schemaRegistry.urls)");
    const headers: Record<string, string> = { accept: upstreamAccept(call.accept) };
    const contentType = upstreamContentType(call.contentType, call.body !== undefined);
    if (contentType) headers["content-type"] = contentType;
    const before = upstream.states().map((s) => s.badUntil);
    try {
      return await upstream.send({
        method: call.method,
        path: call.path,
        headers,
        ...(call.query && call.query.size > 0 ? { query: call.query } : {}),
        ...(call.body !== undefined ? { body: call.body } : {}),
        ...(call.signal ? { signal: call.signal } : {}),
      });
    } finally {
      upstream.states().forEach((s, i) => {
        if (s.badUntil !== before[i] && s.badUntil > this.#now())
          this.#opts.hosts?.observed(1003, publicUrl(s.url), s.lastError ?? "no answer");
        else if (s.badUntil === 0 && before[i] !== 0) this.#opts.hosts?.observed(1003, publicUrl(s.url), null);
      });
    }
  }

  /**
   * Each registry host, for the alert evaluation to probe at every pass (`GET /config`, the
   * registry's cheapest read), its alert raised on `cluster`. Down: no answer, or a 5xx (which
   * the proxy fails over on too); a 4xx is the registry's word, so its host is up.
   */
  serviceHosts(cluster: string): ServiceHost[] {
    const upstream = this.#opts.upstream;
    if (!upstream) return [];
    return upstream.urls.map((url) => ({
      alertId: 1003 as const,
      cluster,
      instance: publicUrl(url),
      what: `Schema registry host ${publicUrl(url)}`,
      probe: async (timeoutMs: number) => {
        const signal = AbortSignal.timeout(timeoutMs);
        try {
          const answer = await upstream.sendTo(url, { method: "GET", path: "/config", headers: { accept: DEFAULT_ACCEPT }, signal });
          return answer.status >= 500 ? `HTTP ${answer.status}` : null;
        } catch (e) {
          if (signal.aborted) return `no answer within ${timeoutMs} ms`;
          return e instanceof Error ? e.message.replace(`${upstream.name} at ${url}: `, "") : "no answer";
        }
      },
    }));
  }
}
