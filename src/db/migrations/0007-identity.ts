import type { Kysely } from "kysely";
import { int64 } from "../dialect.ts";

export const name = "identity";

/**
 * Managed users gain groups and a disabled flag; service accounts get their table; a token
 * records the Loupe groups a directory (LDAP) login resolved, and when they were last read,
 * so a live directory token re-reads them at an interval without a login.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const i64 = int64(db);
  await db.schema
    .alterTable("users")
    .addColumn("groups", "text", (c) => c.notNull().defaultTo("[]"))
    .execute();
  await db.schema
    .alterTable("users")
    .addColumn("disabled", i64, (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable("users").addColumn("updated_at", i64).execute();
  await db.schema.alterTable("tokens").addColumn("groups", "text").execute();
  await db.schema.alterTable("tokens").addColumn("groups_at", i64).execute();
  await db.schema
    .createTable("service_accounts")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("secret_hash", "text", (c) => c.notNull())
    .addColumn("groups", "text", (c) => c.notNull())
    .addColumn("expires_at", i64)
    .addColumn("disabled", i64, (c) => c.notNull().defaultTo(0))
    .addColumn("created_by", "text", (c) => c.notNull())
    .addColumn("created_at", i64, (c) => c.notNull())
    .addColumn("updated_at", i64, (c) => c.notNull())
    .addColumn("last_used_at", i64)
    .execute();
}
