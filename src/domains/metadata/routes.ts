import type { Context } from "hono";
import { z } from "zod";
import { AppError, badRequest } from "../../errors.ts";
import type { AppEnv } from "../../http/context.ts";
import { clusterOf, userOf } from "../../http/context.ts";
import { defineRoute, json, RouteGroup, text } from "../../http/route.ts";
import { topicName } from "../topics/names.ts";
import { topicFilterOf } from "../topics/scope-filter.ts";
import { DATA_TYPES, topicMetadata as metadata, storedMetadata } from "./schemas.ts";
import type { MetadataService } from "./service.ts";

const topicParam = z.object({ topicName });

/**
 * Types are checked by the service (case-insensitive, with the list of allowed values in the
 * error). Unknown parameters are refused by the handler (see `schemasOfQuery`), which also reads
 * the Go client's malformed schema parameters.
 */
export const metadataQuery = z
  .object({
    keyType: z
      .string()
      .min(1)
      .max(32)
      .describe(`one of ${DATA_TYPES.join(", ")} (any case)`),
    valueType: z
      .string()
      .min(1)
      .max(32)
      .describe(`one of ${DATA_TYPES.join(", ")} (any case)`),
    keySchema: z.string().max(1_000_000).optional(),
    valueSchema: z.string().max(1_000_000).optional(),
  })
  .loose();

const SCHEMA_PARAMS = ["keySchema", "valueSchema"] as const;
const MAX_SCHEMA = 1_000_000;

/** Percent-decoded when it is percent-encoded; the raw text when decoding fails (raw JSON with a `%`). */
function decodeLenient(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The schemas of a metadata request. The Go client appends them to the query without encoding
 * them, and writes the value schema with no `=` (`&valueSchema{"type":"record",...}`): such a
 * part is read as the schema it carries. Any other parameter than the four is refused, as before.
 */
export function schemasOfQuery(url: string, parsed: Record<string, unknown>): { keySchema?: string; valueSchema?: string } {
  const known = new Set<string>(["keyType", "valueType", ...SCHEMA_PARAMS]);
  const out: { keySchema?: string; valueSchema?: string } = {};
  const rawQuery = url.includes("?") ? url.slice(url.indexOf("?") + 1).split("#")[0]! : "";
  for (const part of rawQuery.split("&")) {
    const name = SCHEMA_PARAMS.find((p) => part.startsWith(p) && part[p.length] !== "=" && part.length > p.length);
    if (!name) continue;
    const schema = decodeLenient(part.slice(name.length));
    if (schema.length > MAX_SCHEMA) throw badRequest(`Invalid ${name}: longer than ${MAX_SCHEMA} characters`);
    out[name] = schema;
  }
  for (const key of Object.keys(parsed)) {
    if (known.has(key) || SCHEMA_PARAMS.some((p) => key.startsWith(p))) continue;
    throw new AppError("VALIDATION_FAILED", `Invalid query parameters: ${key}: unknown parameter`, {
      details: { errors: [{ field: key, message: "unknown parameter" }] },
    });
  }
  for (const name of SCHEMA_PARAMS) if (typeof parsed[name] === "string") out[name] ??= parsed[name] as string;
  return out;
}

const tags = ["topic metadata"];
const removal = (path: string) =>
  defineRoute({
    method: "DELETE",
    path,
    level: "write",
    summary: "Remove a topic's stored types",
    audit: { type: "TOPIC_METADATA", change: "REMOVE" },
    tags,
    request: { params: topicParam },
    responses: { 200: text("`Metadata for topic '<name>' removed`") },
  });

export const metadataApi = {
  list: defineRoute({
    method: "GET",
    path: "/api/metadata/topics",
    level: "nodata",
    summary: "Stored key and value types of topics",
    tags,
    responses: { 200: json(z.array(storedMetadata)) },
  }),
  get: defineRoute({
    method: "GET",
    path: "/api/metadata/topics/{topicName}",
    level: "nodata",
    summary: "Key and value types of a topic (stored or inferred)",
    tags,
    request: { params: topicParam },
    responses: { 200: json(metadata) },
  }),
  set: defineRoute({
    method: "POST",
    path: "/api/metadata/topics/{topicName}",
    level: "write",
    summary: "Set key and value types of a topic (no body: all in the query)",
    audit: { type: "TOPIC_METADATA", change: "UPDATE" },
    tags,
    request: { params: topicParam, query: metadataQuery },
    responses: { 200: json(metadata) },
  }),
  remove: removal("/api/metadata/topics/{topicName}"),
  /** The system path of the same removal, which clients use. */
  removeSystem: removal("/api/system/topics/metadata/{topicName}"),
};

export function metadataRoutes(service: MetadataService) {
  const app = new RouteGroup();

  app.handle(metadataApi.list, async (c) => {
    const visible = topicFilterOf(c);
    const stored = await service.list(clusterOf(c));
    return c.json((visible ? stored.filter((m) => visible(m.topicName)) : stored).map(({ inferred: _, ...m }) => m));
  });

  app.handle(metadataApi.get, async (c) => c.json(await service.get(clusterOf(c), c.req.valid("param").topicName)));

  app.handle(metadataApi.set, async (c) => {
    const { topicName: t } = c.req.valid("param");
    const q = c.req.valid("query");
    const schemas = schemasOfQuery(c.req.url, q);
    c.set("auditContent", { keyType: q.keyType, valueType: q.valueType });
    return c.json(await service.set(clusterOf(c), t, { keyType: q.keyType, valueType: q.valueType, ...schemas }, userOf(c)));
  });

  const remove = async (c: Context<AppEnv>, t: string) => {
    await service.delete(clusterOf(c), t);
    return c.text(`Metadata for topic '${t}' removed`, 200);
  };
  app.handle(metadataApi.remove, (c) => remove(c, c.req.valid("param").topicName));
  app.handle(metadataApi.removeSystem, (c) => remove(c, c.req.valid("param").topicName));
  return app;
}
