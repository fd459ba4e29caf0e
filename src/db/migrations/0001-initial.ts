import { type Kysely, sql } from "kysely";
import { autoId, int64 } from "../dialect.ts";

export const name = "initial";

export async function up(db: Kysely<any>): Promise<void> {
  const i64 = int64(db);
  await db.schema
    .createTable("users")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("password_hash", "text", (c) => c.notNull())
    .addColumn("roles", "text", (c) => c.notNull())
    .addColumn("email", "text")
    .addColumn("created_at", i64, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("tokens")
    .addColumn("hash", "text", (c) => c.primaryKey())
    .addColumn("user_name", "text", (c) => c.notNull())
    .addColumn("roles", "text", (c) => c.notNull())
    .addColumn("source", "text", (c) => c.notNull())
    .addColumn("created_at", i64, (c) => c.notNull())
    .addColumn("last_used_at", i64, (c) => c.notNull())
    .addColumn("expires_at", i64, (c) => c.notNull())
    .addColumn("revoked_at", i64)
    .execute();
  await db.schema.createIndex("tokens_expires").on("tokens").column("expires_at").execute();
  await db.schema
    .createTable("audit")
    .addColumn("id", ...autoId(db))
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("change", "text", (c) => c.notNull())
    .addColumn("user_id", "text", (c) => c.notNull())
    .addColumn("timestamp", i64, (c) => c.notNull())
    .addColumn("content", "text", (c) => c.notNull())
    .addColumn("success", i64, (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema.createIndex("audit_timestamp").on("audit").column("timestamp").execute();
  await sql`CREATE INDEX audit_type_user ON audit(type, user_id)`.execute(db);
}
