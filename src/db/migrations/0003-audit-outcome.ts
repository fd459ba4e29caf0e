import { type Kysely, sql } from "kysely";

export const name = "audit-outcome";

/**
 * An audited change is stored as an intent (PENDING) before it is made, and completed after.
 * The outcome gets its own column so that start-up can find the entries a crash left open
 * without reading every entry's content.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE audit ADD COLUMN outcome TEXT NOT NULL DEFAULT 'SUCCESS'`.execute(db);
  await sql`UPDATE audit SET outcome = 'FAILURE' WHERE success = 0`.execute(db);
  await sql`CREATE INDEX audit_pending ON audit(id) WHERE outcome = 'PENDING'`.execute(db);
}
