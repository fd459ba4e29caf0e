import type { Kysely } from "kysely";
import { int64 } from "../dialect.ts";

export const name = "masking";

/**
 * Data masking policies (src/domains/masking). Lists are JSON text: a policy is read and written
 * whole, never queried by its patterns. `masking_salt` holds one row, the install's salt of the
 * HASH method, made at its first use (a migration leaves the store empty, which migrate-store
 * needs): hashes stay equal across restarts and instances sharing the store, and a backup
 * carries it with the policies.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const i64 = int64(db);
  await db.schema
    .createTable("masking_policies")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("topics", "text", (c) => c.notNull())
    .addColumn("fields", "text", (c) => c.notNull())
    .addColumn("method", "text", (c) => c.notNull())
    .addColumn("replacement", "text")
    .addColumn("keep_last", i64)
    .addColumn("groups", "text", (c) => c.notNull())
    .addColumn("roles", "text", (c) => c.notNull())
    .addColumn("except_groups", "text", (c) => c.notNull())
    .addColumn("created_at", i64, (c) => c.notNull())
    .addColumn("updated_at", i64, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("masking_salt")
    .addColumn("id", i64, (c) => c.primaryKey())
    .addColumn("salt", "text", (c) => c.notNull())
    .execute();
}
