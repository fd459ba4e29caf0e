/**
 * The JDBC driver's table listing: every topic (Kafka's own included) with the types its key
 * and value are written in, and the Avro schema text the driver builds its columns from.
 * The types are those an INSERT without SET would use (see insert/service.ts), so what the
 * driver lists is what its inserts write.
 */
import type { KafkaPool } from "../../kafka/index.ts";
import type { Logger } from "../../log/logger.ts";
import { latestSchema, listSubjects, subjectOf } from "../../registry/subjects.ts";
import type { Scope } from "../access/scope.ts";
import type { InsertService } from "../insert/service.ts";
import type { MetadataService } from "../metadata/service.ts";
import type { JdbcTable } from "./schemas.ts";

/** One table as the driver decodes it: the two types are required non-null strings. */
export type { JdbcTable };

/** Registry lookups at once while listing: one per topic with a subject. */
const CONCURRENCY = 8;

export async function listTables(
  deps: { pool: KafkaPool; metadata: MetadataService; inserts: InsertService; log: Logger },
  cluster: string,
  /** Whose listing it is: the topics out of its scope are left out. Absent: every topic. */
  scope?: Scope,
): Promise<JdbcTable[]> {
  const listed = await deps.pool.get(cluster).topics.list({ includeInternal: true });
  // Before any registry lookup: nothing is asked about a topic the caller may not see.
  const visible =
    scope && !scope.everyTopic(cluster, "read", "metadata")
      ? new Set(
          scope.filterTopics(
            cluster,
            listed.map((t) => t.name),
            "read",
            "metadata",
          ),
        )
      : null;
  const topics = visible ? listed.filter((t) => visible.has(t.name)) : listed;
  const stored = new Map((await deps.metadata.list(cluster)).map((m) => [m.topicName, m]));
  const registry = deps.inserts.registry;
  let subjects = new Set<string>();
  if (registry) {
    try {
      subjects = await listSubjects(registry);
    } catch (err) {
      // The listing stays useful without schemas; the driver then sees the types only.
      deps.log.warn("schema registry subjects unavailable for the JDBC table listing", { cluster }, err);
    }
  }
  /** The subject's latest schema: Avro text (what the driver builds columns from), or only its type. */
  const schemaOf = async (topic: string, side: "key" | "value"): Promise<{ type: string; avro?: string } | undefined> => {
    if (!registry || !subjects.has(subjectOf(topic, side))) return undefined;
    try {
      const s = await latestSchema(registry, subjectOf(topic, side));
      const type = s?.schemaType.toUpperCase();
      if (type === "AVRO") return { type, avro: s!.schema };
      return type === "PROTOBUF" ? { type } : undefined;
    } catch {
      return undefined;
    }
  };

  const sorted = [...topics].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const out: JdbcTable[] = new Array(sorted.length);
  let next = 0;
  const worker = async () => {
    while (next < sorted.length) {
      const i = next++;
      const topic = sorted[i]!;
      const meta = stored.get(topic.name);
      const [keyRegistered, valueRegistered] = await Promise.all([schemaOf(topic.name, "key"), schemaOf(topic.name, "value")]);
      const type = (side: "key" | "value", registered: { type: string } | undefined): string => {
        const kept = side === "key" ? meta?.keyType : meta?.valueType;
        if (kept) return kept;
        if (topic.internal) return "BYTES";
        if (registered) return registered.type;
        return side === "key" ? "STRING" : "JSON";
      };
      const keyType = type("key", keyRegistered);
      const valueType = type("value", valueRegistered);
      const keyText = keyRegistered?.avro ?? (keyType === "AVRO" ? meta?.keySchema : undefined);
      const valueText = valueRegistered?.avro ?? (valueType === "AVRO" ? meta?.valueSchema : undefined);
      out[i] = {
        name: topic.name,
        keyType,
        valueType,
        ...(keyText ? { keySchema: keyText } : {}),
        ...(valueText ? { valueSchema: valueText } : {}),
      };
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, sorted.length) }, worker));
  return out;
}
