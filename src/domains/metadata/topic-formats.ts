import type { Db } from "../../db/index.ts";
import type { TopicFormats } from "../sql/service.ts";
import { MetadataRepo } from "./repo.ts";

/**
 * Key and value formats from the stored topic metadata (the `topic_metadata` table, which the
 * topic metadata API writes), read through its repo. A topic without metadata has no formats,
 * and its records are inferred.
 */
export function storeTopicFormats(db: Db): TopicFormats {
  const repo = new MetadataRepo(db);
  return {
    async get(cluster, topic) {
      const stored = await repo.get(cluster, topic);
      if (!stored) return null;
      return {
        keyType: stored.keyType,
        valueType: stored.valueType,
        keySchema: stored.keySchema ?? null,
        valueSchema: stored.valueSchema ?? null,
      };
    },
  };
}
