import type { Kysely } from "kysely";
import { int64 } from "../dialect.ts";

export const name = "leases";

/**
 * Named leases (src/db/lease.ts): which instance sharing the store runs a job, until when (epoch
 * milliseconds on the store's clock). A processor's runner slots keep their own leases in their
 * rows (`processor_runners.instance`, `lease_until`), taken and renewed the same way.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const i64 = int64(db);
  await db.schema
    .createTable("leases")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("holder", "text")
    .addColumn("lease_until", i64, (c) => c.notNull().defaultTo(0))
    .execute();
}
