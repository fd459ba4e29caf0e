import { type Kysely, sql } from "kysely";

export const name = "initial";

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("users")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("password_hash", "text", (c) => c.notNull())
    .addColumn("roles", "text", (c) => c.notNull())
    .addColumn("email", "text")
    .addColumn("created_at", "integer", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("tokens")
    .addColumn("hash", "text", (c) => c.primaryKey())
    .addColumn("user_name", "text", (c) => c.notNull())
    .addColumn("roles", "text", (c) => c.notNull())
    .addColumn("source", "text", (c) => c.notNull())
    .addColumn("created_at", "integer", (c) => c.notNull())
    .addColumn("last_used_at", "integer", (c) => c.notNull())
    .addColumn("expires_at", "integer", (c) => c.notNull())
    .addColumn("revoked_at", "integer")
    .execute();
  await db.schema.createIndex("tokens_expires").on("tokens").column("expires_at").execute();
  await db.schema
    .createTable("audit")
    .addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("change", "text", (c) => c.notNull())
    .addColumn("user_id", "text", (c) => c.notNull())
    .addColumn("timestamp", "integer", (c) => c.notNull())
    .addColumn("content", "text", (c) => c.notNull())
    .addColumn("success", "integer", (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema.createIndex("audit_timestamp").on("audit").column("timestamp").execute();
  await sql`CREATE INDEX audit_type_user ON audit(type, user_id)`.execute(db);
}
