/**
 * What the write path asks the schema registry: the subjects it holds, and the latest schema of
 * a topic's key or value subject (`<topic>-key`, `<topic>-value`, the Confluent default naming).
 * Through the registry client's `request`, so failover between its URLs applies.
 */
import { AppError } from "../errors.ts";
import { referencesOf, registryJson, type SchemaReference, type SchemaRegistryClient } from "./client.ts";

export interface LatestSchema {
  id: number;
  schema: string;
  schemaType: string;
  /** What it imports (Protobuf), as the registry names them. */
  references: SchemaReference[];
}

export const subjectOf = (topic: string, side: "key" | "value") => `${topic}-${side}`;

/** The latest schema registered under the subject; null when the registry has no such subject. */
export async function latestSchema(registry: SchemaRegistryClient, subject: string, signal?: AbortSignal): Promise<LatestSchema | null> {
  const res = await registry.request(`/subjects/${encodeURIComponent(subject)}/versions/latest`, signal ? { signal } : {});
  if (res.status === 404) {
    await res.body?.cancel().catch(() => {});
    return null;
  }
  if (!res.ok) throw new AppError("BAD_GATEWAY", `Schema registry answered ${res.status} for subject '${subject}'`);
  const body = (await registryJson(res, `subject '${subject}'`)) as {
    id?: unknown;
    schema?: unknown;
    schemaType?: unknown;
    references?: unknown;
  } | null;
  if (typeof body?.id !== "number" || typeof body.schema !== "string")
    throw new AppError("BAD_GATEWAY", `Schema registry answer for subject '${subject}' has no id or schema`);
  return {
    id: body.id,
    schema: body.schema,
    schemaType: typeof body.schemaType === "string" ? body.schemaType : "AVRO",
    references: referencesOf(body, `subject '${subject}'`),
  };
}

/** Every subject of the registry. */
export async function listSubjects(registry: SchemaRegistryClient): Promise<Set<string>> {
  const res = await registry.request("/subjects");
  if (!res.ok) throw new AppError("BAD_GATEWAY", `Schema registry answered ${res.status} for its subjects`);
  const body = await registryJson(res, "its subjects");
  return new Set(Array.isArray(body) ? body.filter((s): s is string => typeof s === "string") : []);
}
