import type { Database as Sqlite } from "bun:sqlite";
import type { TopicFormat, TopicFormats } from "./service.ts";

/**
 * Key and value formats from the `topic_metadata` table (migration 0002), which the topic
 * metadata API writes. Read with plain SQL so queries keep working on a store that predates the
 * table: no table means no metadata, and records are inferred.
 */
export function storeTopicFormats(sqlite: Sqlite): TopicFormats {
  return {
    async get(cluster, topic) {
      try {
        const row = sqlite
          .query<{ key_type: string; value_type: string; key_schema: string | null; value_schema: string | null }, [string, string]>(
            "SELECT key_type, value_type, key_schema, value_schema FROM topic_metadata WHERE cluster = ? AND topic = ?",
          )
          .get(cluster, topic);
        if (!row) return null;
        const format: TopicFormat = {
          keyType: row.key_type,
          valueType: row.value_type,
          keySchema: row.key_schema,
          valueSchema: row.value_schema,
        };
        return format;
      } catch (err) {
        if (err instanceof Error && /no such table/i.test(err.message)) return null;
        throw err;
      }
    },
  };
}
