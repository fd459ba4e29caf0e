import type { Kysely } from "kysely";

export const name = "processor-guards";

/**
 * What keeps one processor from harming the instance, kept across restarts:
 * - `owner_kind`: where the owner's identity comes from (local, ldap, service), so its rights are
 *   resolved again as a login would resolve them (null for processors created before: every
 *   source is tried, as a login does);
 * - `paused_reason`: why Loupe itself paused the processor (its owner lost access, its runner was
 *   in a risky phase when an instance died); null when a user paused it or it runs;
 * - `risk` of a runner slot: written before a phase that may take the instance's memory
 *   (restoring a large state, a state past half its budget) and cleared after it; an instance
 *   that takes a slot still marked, from a holder that never released it, pauses the processor
 *   instead of running it again.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("processors").addColumn("owner_kind", "text").execute();
  await db.schema.alterTable("processors").addColumn("paused_reason", "text").execute();
  await db.schema.alterTable("processor_runners").addColumn("risk", "text").execute();
}
