/**
 * A small client of a Confluent-compatible schema registry (Confluent, Apicurio's ccompat API,
 * Karapace): what the query decoders and the INSERT encoders need, nothing more.
 *
 * Requests go through the registry's one `Upstream` (src/proxy/upstream.ts), the same instance
 * the registry proxy uses: a host that refused, timed out or answered 5xx is left out for the
 * grace period by both, so the decoders and the proxy agree on which host is bad. A 4xx answer
 * is the registry's word and is not retried elsewhere.
 *
 * Schemas by id never change (ids are immutable in the registry), so they are cached for the
 * life of the process; a failed lookup is not cached and is retried on the next call.
 */

import { AppError } from "../errors.ts";
import { Upstream } from "../proxy/upstream.ts";
import { parseJson } from "../util/json.ts";

export interface RegistrySchema {
  id: number;
  /** The schema text as registered (Avro JSON, Protobuf IDL, JSON Schema). */
  schema: string;
  /** AVRO when the registry leaves it out, as the Confluent API does for Avro. */
  schemaType: "AVRO" | "PROTOBUF" | "JSON" | (string & {});
  /** The schemas this one imports (a Protobuf `import`): the name it imports, and where that is registered. */
  references: SchemaReference[];
}

export interface SchemaReference {
  name: string;
  subject: string;
  version: number;
}

/** The references of a registry answer; malformed entries are the registry's fault (502). */
export function referencesOf(body: { references?: unknown }, what: string): SchemaReference[] {
  if (body.references === undefined || body.references === null) return [];
  const list = body.references;
  const ok =
    Array.isArray(list) &&
    list.every(
      (r) =>
        typeof r === "object" &&
        r !== null &&
        typeof (r as SchemaReference).name === "string" &&
        typeof (r as SchemaReference).subject === "string" &&
        Number.isInteger((r as SchemaReference).version),
    );
  if (!ok) throw new AppError("BAD_GATEWAY", `Schema registry answer for ${what} has malformed references`);
  return (list as SchemaReference[]).map((r) => ({ name: r.name, subject: r.subject, version: r.version }));
}

export type SchemaRegistryOptions =
  | { upstream: Upstream }
  | {
      urls: string[];
      /** Per request, default 10 s. */
      timeoutMs?: number;
      /** How long a failed URL is left out, default 30 s. */
      graceMs?: number;
      fetch?: typeof fetch;
    };

const ACCEPT = "application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json, application/json";

/** The answers the decoders read are small; the proxy's configured cap applies when it is shared. */
const DEFAULT_MAX_BYTES = 8 * 1024 * 1024;

/**
 * A registry answer's JSON, parsed with the nesting bound of util/json.ts: one that is no JSON,
 * or nested too deeply, is the registry's fault (502) naming `what` was asked.
 */
export async function registryJson(res: Response, what: string): Promise<unknown> {
  const text = await res.text();
  try {
    return parseJson(text);
  } catch (e) {
    throw new AppError("BAD_GATEWAY", `Schema registry answered for ${what} with ${(e as Error).message}`);
  }
}

export class SchemaRegistryClient {
  readonly upstream: Upstream;
  readonly #byId = new Map<number, Promise<RegistrySchema>>();
  readonly #resolved = new Map<number, RegistrySchema>();
  readonly #byVersion = new Map<string, Promise<RegistrySchema>>();

  constructor(opts: SchemaRegistryOptions) {
    this.upstream =
      "upstream" in opts
        ? opts.upstream
        : new Upstream({
            name: "Schema registry",
            urls: opts.urls,
            timeoutMs: opts.timeoutMs ?? 10_000,
            graceMs: opts.graceMs ?? 30_000,
            maxBytes: DEFAULT_MAX_BYTES,
            failoverOn5xx: true,
            ...(opts.fetch ? { fetch: opts.fetch } : {}),
          });
  }

  get urls(): string[] {
    return this.upstream.urls;
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
      const body = (await registryJson(res, `schema id ${id}`)) as { schema?: unknown; schemaType?: unknown; references?: unknown } | null;
      if (typeof body?.schema !== "string") throw new AppError("BAD_GATEWAY", `Schema registry answer for id ${id} has no schema`);
      const schema: RegistrySchema = {
        id,
        schema: body.schema,
        schemaType: typeof body.schemaType === "string" ? body.schemaType : "AVRO",
        references: referencesOf(body, `schema id ${id}`),
      };
      this.#resolved.set(id, schema);
      return schema;
    });
    this.#byId.set(id, loading);
    loading.catch(() => this.#byId.delete(id));
    return loading;
  }

  /**
   * A version of a subject (what a reference names): fetched once, then from the cache, as a
   * registered version never changes. NOT_FOUND when the registry has no such version.
   */
  schemaByVersion(subject: string, version: number): Promise<RegistrySchema> {
    const key = `${version}\u0000${subject}`;
    const known = this.#byVersion.get(key);
    if (known) return known;
    const what = `subject '${subject}' version ${version}`;
    const loading = this.request(`/subjects/${encodeURIComponent(subject)}/versions/${version}`).then(async (res) => {
      if (res.status === 404) throw new AppError("NOT_FOUND", `The schema registry has no ${what}`);
      if (!res.ok) throw new AppError("BAD_GATEWAY", `Schema registry answered ${res.status} for ${what}`);
      const body = (await registryJson(res, what)) as { id?: unknown; schema?: unknown; schemaType?: unknown; references?: unknown } | null;
      if (typeof body?.schema !== "string" || typeof body.id !== "number")
        throw new AppError("BAD_GATEWAY", `Schema registry answer for ${what} has no id or schema`);
      return {
        id: body.id,
        schema: body.schema,
        schemaType: typeof body.schemaType === "string" ? body.schemaType : "AVRO",
        references: referencesOf(body, what),
      };
    });
    this.#byVersion.set(key, loading);
    loading.catch(() => this.#byVersion.delete(key));
    return loading;
  }

  /**
   * Sends one GET (or `init.method`) through the shared upstream. When no host answers, the
   * decoders see BAD_GATEWAY naming every URL tried (what they reported before the proxy
   * shared this failover), not the proxy's 503.
   */
  async request(path: string, init: { method?: string; signal?: AbortSignal } = {}): Promise<Response> {
    try {
      const answer = await this.upstream.send({
        method: init.method ?? "GET",
        path,
        headers: { accept: ACCEPT },
        ...(init.signal ? { signal: init.signal } : {}),
      });
      return new Response(answer.body.byteLength === 0 ? null : answer.body, {
        status: answer.status,
        headers: answer.contentType ? { "content-type": answer.contentType } : {},
      });
    } catch (e) {
      if (e instanceof AppError && e.code === "UNAVAILABLE") throw new AppError("BAD_GATEWAY", e.message, { cause: e });
      throw e;
    }
  }
}
