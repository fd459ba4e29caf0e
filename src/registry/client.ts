/**
 * A small client of a Confluent-compatible schema registry (Confluent, Apicurio's ccompat API,
 * Karapace): what the query decoders and the registry proxy need, nothing more.
 *
 * Several URLs may be configured for one registry (its replicas). A request goes to the URL that
 * last answered and moves on to the next one when a URL cannot be reached or answers 5xx; a 4xx
 * answer is the registry's word and is not retried elsewhere.
 *
 * Schemas by id never change (ids are immutable in the registry), so they are cached for the
 * life of the process; a failed lookup is not cached and is retried on the next call.
 */

import { AppError } from "../errors.ts";

export interface RegistrySchema {
  id: number;
  /** The schema text as registered (Avro JSON, Protobuf IDL, JSON Schema). */
  schema: string;
  /** AVRO when the registry leaves it out, as the Confluent API does for Avro. */
  schemaType: "AVRO" | "PROTOBUF" | "JSON" | (string & {});
}

export interface SchemaRegistryOptions {
  urls: string[];
  /** Per request, default 10 s. */
  timeoutMs?: number;
  /** Extra headers on every request (e.g. Authorization). */
  headers?: Record<string, string>;
  fetch?: typeof fetch;
}

const ACCEPT = "application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json, application/json";

export class SchemaRegistryClient {
  readonly urls: string[];
  readonly #timeoutMs: number;
  readonly #headers: Record<string, string>;
  readonly #fetch: typeof fetch;
  /** Index into urls of the URL that answered last. */
  #current = 0;
  readonly #byId = new Map<number, Promise<RegistrySchema>>();
  readonly #resolved = new Map<number, RegistrySchema>();

  constructor(opts: SchemaRegistryOptions) {
    if (opts.urls.length === 0) throw new Error("a schema registry needs at least one URL");
    this.urls = opts.urls.map((u) => u.replace(/\/+$/, ""));
    this.#timeoutMs = opts.timeoutMs ?? 10_000;
    this.#headers = opts.headers ?? {};
    this.#fetch = opts.fetch ?? fetch;
  }

  /** The schema already fetched for `id`, without I/O; undefined when not (yet) known. */
  cached(id: number): RegistrySchema | undefined {
    return this.#resolved.get(id);
  }

  /** The schema registered under `id`: fetched once, then from the cache. NOT_FOUND when the id is unknown. */
  schemaById(id: number): Promise<RegistrySchema> {
    const known = this.#byId.get(id);
    if (known) return known;
    const loading = this.request(`/schemas/ids/${id}`).then(async (res) => {
      if (res.status === 404) throw new AppError("NOT_FOUND", `Schema id ${id} is not in the schema registry`);
      if (!res.ok) throw new AppError("BAD_GATEWAY", `Schema registry answered ${res.status} for schema id ${id}`);
      const body = (await res.json()) as { schema?: unknown; schemaType?: unknown };
      if (typeof body.schema !== "string") throw new AppError("BAD_GATEWAY", `Schema registry answer for id ${id} has no schema`);
      const schema: RegistrySchema = {
        id,
        schema: body.schema,
        schemaType: typeof body.schemaType === "string" ? body.schemaType : "AVRO",
      };
      this.#resolved.set(id, schema);
      return schema;
    });
    this.#byId.set(id, loading);
    loading.catch(() => this.#byId.delete(id));
    return loading;
  }

  /**
   * Sends one request, trying each URL in turn from the one that answered last. Network
   * failures, timeouts and 5xx move on to the next URL; when all fail, BAD_GATEWAY (or
   * GATEWAY_TIMEOUT when the last one timed out) names every URL tried.
   */
  async request(path: string, init: RequestInit = {}): Promise<Response> {
    const failures: string[] = [];
    let timedOut = false;
    for (let i = 0; i < this.urls.length; i++) {
      const index = (this.#current + i) % this.urls.length;
      const base = this.urls[index]!;
      const signal = init.signal
        ? AbortSignal.any([init.signal, AbortSignal.timeout(this.#timeoutMs)])
        : AbortSignal.timeout(this.#timeoutMs);
      try {
        const res = await this.#fetch(base + path, {
          ...init,
          signal,
          headers: { accept: ACCEPT, ...this.#headers, ...(init.headers as Record<string, string> | undefined) },
        });
        if (res.status >= 500) {
          failures.push(`${base}: HTTP ${res.status}`);
          await res.body?.cancel().catch(() => {});
          continue;
        }
        this.#current = index;
        return res;
      } catch (err) {
        if (init.signal?.aborted) throw err;
        timedOut = (err as Error).name === "TimeoutError";
        failures.push(`${base}: ${timedOut ? "timed out" : (err as Error).message}`);
      }
    }
    throw new AppError(timedOut ? "GATEWAY_TIMEOUT" : "BAD_GATEWAY", `Schema registry is unreachable (${failures.join("; ")})`);
  }
}
