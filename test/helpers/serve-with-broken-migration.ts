/**
 * `loupe serve` as a release whose newest migration is broken: today's command line with one
 * more migration after every real one, which creates a table and then fails. The upgrade tests
 * run it on a store of the previous release, as a process (its exit status and message are the
 * operator's).
 *
 *   bun test/helpers/serve-with-broken-migration.ts serve --config FILE
 *
 * Never import it: it changes the migration list of the process that loads it.
 */
import { sql } from "kysely";
import { MIGRATIONS } from "../../src/db/migrations/index.ts";

MIGRATIONS.push({
  version: 9_999,
  name: "deliberately-broken",
  up: async (db) => {
    await sql`CREATE TABLE made_by_broken (x INTEGER)`.execute(db);
    throw new Error("deliberately broken");
  },
});

await import("../../src/main.ts");
