/**
 * `loupe migrate-store` (src/db/migrate-store.ts): a SQLite store holding a row of every kind
 * copied into an empty PostgreSQL store on the run's server, verified table by table, through
 * the command line as an operator runs it; a target that holds data is refused.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { sql } from "kysely";
import { openStore } from "../../src/db/index.ts";
import { migrateStore } from "../../src/db/migrate-store.ts";
import { openPostgresStore } from "../../src/db/postgres.ts";
import { freshDatabase, rowsOf, type TestDatabase } from "../helpers/store.ts";

const ROOT = resolve(import.meta.dir, "../..");
const dir = mkdtempSync(join(tmpdir(), "loupe-migrate-"));
const databases: TestDatabase[] = [];
afterAll(async () => {
  for (const d of databases) await d.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** A SQLite store with at least one row in every table, values past 32 bits among them. */
async function storeOfEveryKind(dataDir: string): Promise<string[]> {
  const store = await openStore(dataDir);
  const db = store.db;
  const t = Date.parse("2026-11-27T12:00:00Z");
  await db
    .insertInto("users")
    .values({
      name: "ann",
      password_hash: "h",
      roles: '["admin"]',
      email: "a@x",
      created_at: t,
      groups: '["g"]',
      disabled: 0,
      updated_at: t,
    })
    .execute();
  await db
    .insertInto("tokens")
    .values({
      hash: "th",
      user_name: "ann",
      roles: "[]",
      source: "local",
      created_at: t,
      last_used_at: t,
      expires_at: t + 1,
      revoked_at: null,
      groups: null,
      groups_at: null,
    })
    .execute();
  // More rows than one batch of the copy, ids with a gap.
  const entries = Array.from({ length: 1_200 }, (_, i) => ({
    type: "TOPIC",
    change: "ADD",
    user_id: "ann",
    timestamp: t + i,
    content: JSON.stringify({ i, name: `tëst-${i}` }),
    success: 1,
    outcome: "SUCCESS",
  }));
  await db.insertInto("audit").values(entries).execute();
  await db.deleteFrom("audit").where("id", "<", 5).execute();
  await db
    .insertInto("topic_metadata")
    .values({
      cluster: "c",
      topic: "orders",
      key_type: "STRING",
      value_type: "AVRO",
      key_schema: null,
      value_schema: "{}",
      updated_by: "ann",
      updated_at: t,
    })
    .execute();
  const { id: notification } = await db
    .insertInto("alert_notifications")
    .values({
      alert_id: 1001,
      cluster: "c",
      labels: '{"category":"KAFKA"}',
      annotations: "{}",
      starts_at: t,
      ends_at: null,
      generator_url: "http://x",
      uid: "u1",
      fingerprint: "cond/x",
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  await db.insertInto("alert_settings").values({ cluster: "c", alert_id: 1001, enabled: 1, updated_by: "ann", updated_at: t }).execute();
  await db
    .insertInto("alert_conditions")
    .values({ id: "cond-1", cluster: "c", alert_id: 2001, expression: "lag > 10", updated_by: "ann", updated_at: t })
    .execute();
  await db
    .insertInto("alert_deliveries")
    .values({
      notification_id: notification,
      channel: "webhook:w",
      version: 2,
      sent_version: 1,
      attempts: 3,
      next_attempt_at: t,
      first_pending_at: t,
      last_error: "503",
      sent_at: t,
      given_up_version: null,
    })
    .execute();
  await db.insertInto("user_profile").values({ user_name: "ann", property: "topics", value: "orders", created_at: t }).execute();
  await db
    .insertInto("sql_history")
    .values({ user_name: "ann", cluster: "c", text: "SELECT 1", ran_at: t, rows: 1, stop_reason: "END" })
    .execute();
  await db.insertInto("sql_saved").values({ user_name: "ann", name: "q", text: "SELECT 2", created_at: t, updated_at: t }).execute();
  await db
    .insertInto("groups")
    .values({ name: "g", roles: '["read"]', clusters: '["*"]', topics_allow: '["*"]', topics_deny: "[]", created_at: t, updated_at: t })
    .execute();
  await db
    .insertInto("service_accounts")
    .values({
      name: "svc",
      secret_hash: "s",
      groups: "[]",
      expires_at: null,
      disabled: 0,
      created_by: "ann",
      created_at: t,
      updated_at: t,
      last_used_at: null,
    })
    .execute();
  await db
    .insertInto("processors")
    .values({
      id: "lsql_1",
      name: "p",
      cluster: "c",
      sql: "INSERT INTO b SELECT STREAM * FROM a",
      runners: 1,
      desired: "RUNNING",
      owner: "ann",
      source_topic: "a",
      target_topic: "b",
      created_at: t,
      updated_at: t,
    })
    .execute();
  await db
    .insertInto("processor_runners")
    .values({ processor_id: "lsql_1", runner: 0, instance: "i", lease_until: t, state: "RUNNING", figures: "{}", updated_at: t })
    .execute();
  await db.insertInto("leases").values({ name: "alert-evaluation", holder: "i", lease_until: t }).execute();
  await db.insertInto("instance_events").values({ at: t, instance: "i", kind: "audit", body: "{}" }).execute();
  const { id: series } = await db
    .insertInto("lag_series")
    .values({ cluster: "c", group_name: "g", topic: "orders" })
    .returning("id")
    .executeTakeFirstOrThrow();
  // Lags past 32 bits, as a backlog of billions of records is.
  await db.insertInto("lag_points").values({ series_id: series, t, lag: 5_000_000_000, lag_ms: null }).execute();
  await db
    .insertInto("lag_hours")
    .values({ series_id: series, t, lag_min: 1, lag_max: 5_000_000_000, lag_ms_max: 60_000, samples: 12 })
    .execute();
  await db
    .insertInto("masking_policies")
    .values({
      name: "pii",
      topics: '["pay*"]',
      fields: '["ssn"]',
      method: "KEEP_LAST_N",
      replacement: null,
      keep_last: 4,
      groups: '["analysts"]',
      roles: "[]",
      except_groups: "[]",
      created_at: t,
      updated_at: t,
    })
    .execute();
  await db
    .insertInto("masking_salt")
    .values({ id: 1, salt: "ab".repeat(32) })
    .execute();
  const empty: string[] = [];
  for (const { name } of await rowsOf<{ name: string }>(
    store,
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
  )) {
    const [{ n }] = (await rowsOf<{ n: number }>(store, `SELECT count(*) AS n FROM "${name}"`)) as [{ n: number }];
    if (n === 0) empty.push(name);
  }
  await store.close();
  return empty;
}

describe("28: migrate-store", () => {
  test("28: a SQLite store with data of every kind is copied through the command line, verified, ids and 64-bit values kept", async () => {
    const dataDir = join(dir, "data");
    // A table added later must get a row here, so that the copy is tested on every kind of data.
    expect(await storeOfEveryKind(dataDir)).toEqual([]);
    const target = await freshDatabase(dir);
    databases.push(target);
    const proc = Bun.spawn(
      [
        process.execPath,
        "src/main.ts",
        "migrate-store",
        "--from",
        `sqlite:${join(dataDir, "loupe.db")}`,
        "--to",
        target.url,
        "--password-file",
        target.passwordFile,
      ],
      { cwd: ROOT, stdout: "pipe", stderr: "pipe" },
    );
    const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    expect({ code, err }).toEqual({ code: 0, err: "" });
    expect(out).toContain("audit: 1196 rows, checksum ");
    expect(out).toContain("lag_points: 1 rows, checksum ");
    expect(out).toMatch(/copied and verified \d+ tables, \d+ rows: counts and checksums match\n$/);
    const pg = await openPostgresStore({ url: target.url, passwordFile: target.passwordFile });
    try {
      expect(await pg.db.selectFrom("lag_hours").select(["lag_max", "samples"]).execute()).toEqual([
        { lag_max: 5_000_000_000, samples: 12 },
      ]);
      expect(await rowsOf(pg, "SELECT min(id) AS lo, max(id) AS hi FROM audit")).toEqual([{ lo: 5, hi: 1200 }]);
      // Ids go on after the highest copied.
      const { id } = await pg.db
        .insertInto("audit")
        .values({ type: "TOPIC", change: "ADD", user_id: "ann", timestamp: 1, content: "{}", success: 1 })
        .returning("id")
        .executeTakeFirstOrThrow();
      expect(id).toBe(1201);
      // The source is untouched: the copy was taken from a snapshot.
      const again = await openStore(dataDir);
      expect(await rowsOf(again, "SELECT count(*) AS n FROM audit")).toEqual([{ n: 1196 }]);
      await again.close();
    } finally {
      await pg.close();
    }
    // Into a store that holds data: refused, nothing added.
    const refused = await migrateStore({
      from: `sqlite:${join(dataDir, "loupe.db")}`,
      to: target.url,
      passwordFile: target.passwordFile,
    }).catch((e: unknown) => (e as Error).message);
    expect(refused).toContain("holds data (table alert_conditions): migrate-store copies into an empty store only");
    const after = await openPostgresStore({ url: target.url, passwordFile: target.passwordFile });
    expect(await sql<{ n: number }>`SELECT count(*) AS n FROM audit`.execute(after.db).then((r) => r.rows)).toEqual([{ n: 1197 }]);
    await after.close();
  }, 30_000);
});
