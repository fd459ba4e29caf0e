import type { Context } from "hono";
import { z } from "zod";
import { AppError, badRequest } from "../../errors.ts";
import type { AppEnv } from "../../http/context.ts";
import { clusterOf, userOf } from "../../http/context.ts";
import { defineRoute, json, RouteGroup, text } from "../../http/route.ts";
import { jsonBody } from "../../http/validate.ts";
import { topicName } from "../topics/names.ts";
import { topicFilterOf } from "../topics/scope-filter.ts";
import { DATA_TYPES, descriptorBody, descriptorStored, topicMetadata as metadata, storedMetadata } from "./schemas.ts";
import type { MetadataService } from "./service.ts";

const topicParam = z.object({ topicName });
const sideParam = z.object({ topicName, side: z.enum(["key", "value"]) });
const descriptorQuery = z.object({
  messageType: z.string().min(1).max(512).optional().describe("the message the records hold, for a binary body"),
});

const BINARY = /^application\/octet-stream\b/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The descriptor set of an upload: the binary FileDescriptorSet as the body
 * (`application/octet-stream`, the message in `?messageType=`), or JSON
 * `{messageType, descriptorSet}` with the set in base64.
 */
async function descriptorUpload(c: Context<AppEnv>, query: { messageType?: string | undefined }) {
  if (BINARY.test(c.req.header("content-type") ?? "")) {
    if (!query.messageType) throw badRequest("Invalid query parameters: messageType: required with a binary descriptor set");
    return { messageType: query.messageType, descriptorSet: new Uint8Array(await c.req.arrayBuffer()) };
  }
  const body = await jsonBody(c, descriptorBody);
  const compact = body.descriptorSet.replace(/\s+/g, "");
  if (compact.length % 4 !== 0 || !BASE64.test(compact))
    throw badRequest("Invalid request body: descriptorSet: not base64 text", {
      errors: [{ field: "descriptorSet", message: "not base64" }],
    });
  return { messageType: body.messageType, descriptorSet: new Uint8Array(Buffer.from(compact, "base64")) };
}

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
  setProtobuf: defineRoute({
    method: "PUT",
    path: "/api/metadata/topics/{topicName}/protobuf/{side}",
    level: "write",
    summary:
      "Store a descriptor set (FileDescriptorSet: a binary body, or JSON {messageType, descriptorSet} in base64) and the message the key or value holds: that side becomes PROTOBUF",
    // The intent keeps the message, not the set (up to 512 KiB of base64).
    audit: { type: "TOPIC_METADATA", change: "UPDATE", request: (fields) => ({ messageType: fields.messageType }) },
    tags,
    request: { params: sideParam, query: descriptorQuery },
    responses: { 200: json(descriptorStored) },
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

  app.handle(metadataApi.setProtobuf, async (c) => {
    const { topicName: t, side } = c.req.valid("param");
    const upload = await descriptorUpload(c, c.req.valid("query"));
    c.set("auditContent", { side, messageType: upload.messageType, descriptorBytes: upload.descriptorSet.byteLength });
    return c.json(await service.setDescriptor(clusterOf(c), t, { side, ...upload }, userOf(c)));
  });

  const remove = async (c: Context<AppEnv>, t: string) => {
    await service.delete(clusterOf(c), t);
    return c.text(`Metadata for topic '${t}' removed`, 200);
  };
  app.handle(metadataApi.remove, (c) => remove(c, c.req.valid("param").topicName));
  app.handle(metadataApi.removeSystem, (c) => remove(c, c.req.valid("param").topicName));
  return app;
}
