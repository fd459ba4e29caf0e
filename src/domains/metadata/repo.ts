import type { Db } from "../../db/index.ts";
import type { DataType, TopicMetadata } from "./types.ts";

type Row = {
  topic: string;
  key_type: string;
  value_type: string;
  key_schema: string | null;
  value_schema: string | null;
};

function toMetadata(r: Row): TopicMetadata {
  return {
    topicName: r.topic,
    keyType: r.key_type as DataType,
    valueType: r.value_type as DataType,
    ...(r.key_schema !== null ? { keySchema: r.key_schema } : {}),
    ...(r.value_schema !== null ? { valueSchema: r.value_schema } : {}),
    inferred: false,
  };
}

/** Stored topic metadata, per cluster. */
export class MetadataRepo {
  constructor(private readonly db: Db) {}

  async list(cluster: string): Promise<TopicMetadata[]> {
    const rows = await this.db.selectFrom("topic_metadata").selectAll().where("cluster", "=", cluster).orderBy("topic").execute();
    return rows.map(toMetadata);
  }

  async get(cluster: string, topic: string): Promise<TopicMetadata | undefined> {
    const r = await this.db
      .selectFrom("topic_metadata")
      .selectAll()
      .where("cluster", "=", cluster)
      .where("topic", "=", topic)
      .executeTakeFirst();
    return r ? toMetadata(r) : undefined;
  }

  async put(cluster: string, m: Omit<TopicMetadata, "inferred">, user: string): Promise<void> {
    const values = {
      key_type: m.keyType,
      value_type: m.valueType,
      key_schema: m.keySchema ?? null,
      value_schema: m.valueSchema ?? null,
      updated_by: user,
      updated_at: Date.now(),
    };
    await this.db
      .insertInto("topic_metadata")
      .values({ cluster, topic: m.topicName, ...values })
      .onConflict((oc) => oc.columns(["cluster", "topic"]).doUpdateSet(values))
      .execute();
  }

  /** True when there was something to delete. */
  async delete(cluster: string, topic: string): Promise<boolean> {
    const res = await this.db.deleteFrom("topic_metadata").where("cluster", "=", cluster).where("topic", "=", topic).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }
}
