/**
 * A store that refuses writes as a full disk makes it refuse them, on either engine: SQLite really
 * filled (its file may not grow), PostgreSQL refusing every row written with its own error for a
 * full disk (SQLSTATE 53100, disk_full). Both answer a function that gives the room back.
 */
import type { Database } from "bun:sqlite";
import { sql } from "kysely";
import type { Store } from "../../src/db/index.ts";

export interface FillOptions {
  /**
   * SQLite: also pack the page holding the tokens, so that a token's row change (a revocation)
   * needs a page the store cannot have; without it only new rows fail. PostgreSQL refuses every
   * row change anyway: an UPDATE writes a new version of the row, as an INSERT writes a row.
   */
  tokenUpdates?: boolean;
}

/** Fills `store` until its writes fail as on a full disk; answers the function that lifts that. */
export async function fillStore(store: Store, opts: FillOptions = {}): Promise<() => Promise<void>> {
  if (store.kind === "postgres") return refuseWrites(store);
  const lift = opts.tokenUpdates ? fillTokenPage(store.sqlite) : fillSqlite(store.sqlite);
  return async () => lift();
}

function isFull(e: unknown): boolean {
  return (e as { code?: string }).code === "SQLITE_FULL";
}

/** Inserts rows of `size` bytes (then smaller ones) with `insert` until even one byte finds no room. */
function fillUntilFull(insert: (bytes: number) => void): void {
  for (let size = 64 * 1024; size >= 1; size = Math.floor(size / 4)) {
    for (;;) {
      try {
        insert(size);
      } catch (e) {
        if (isFull(e)) break;
        throw e;
      }
    }
  }
}

/**
 * Makes the store really full, as a full disk does: the file may not grow past the pages it has
 * now (`max_page_count`), and the free space left inside them is filled, first by a scratch
 * table (free pages), then by the smallest possible rows of the tables whose writes matter
 * (audit entries and tokens). SQLite writes a row into free space inside a b-tree page without
 * a new page, so only filling a table's own pages makes later writes to it fail; the filler
 * rows are as small as a row can be (empty texts, zeros), so a real row, larger in every
 * b-tree, fails too. Filler tokens are revoked and expired, so they never authenticate.
 * Answers a function that lifts the limit and removes the filler again.
 */
function fillSqlite(sqlite: Database): () => void {
  sqlite.exec("CREATE TABLE IF NOT EXISTS scratch_fill (b BLOB)");
  const { page_count } = sqlite.query("PRAGMA page_count").get() as { page_count: number };
  sqlite.exec(`PRAGMA max_page_count = ${page_count}`);
  const scratch = sqlite.query("INSERT INTO scratch_fill VALUES (zeroblob(?))");
  fillUntilFull((n) => scratch.run(n));
  const audit = sqlite.query(
    "INSERT INTO audit (type, change, user_id, timestamp, content, success, outcome) VALUES ('', '', '', 0, '', 0, '')",
  );
  fillUntilFull(() => audit.run());
  let n = 0;
  const token = sqlite.query(
    "INSERT INTO tokens (hash, user_name, roles, source, created_at, last_used_at, expires_at, revoked_at) VALUES (?, '', '', '', 0, 0, 0, 0)",
  );
  fillUntilFull(() => token.run(`~${(n++).toString(36)}`));
  return () => {
    sqlite.exec("PRAGMA max_page_count = 1073741823");
    sqlite.exec("DROP TABLE scratch_fill");
    sqlite.exec("DELETE FROM audit WHERE type = ''");
    sqlite.exec("DELETE FROM tokens WHERE hash LIKE '~%'");
  };
}

/**
 * Fills the store so that a token's row change fails: no page may be added (max_page_count pinned
 * at the current count), the free pages are used up by a scratch table, and the page holding the
 * tokens is packed by one filler token grown until it finds no room.
 */
function fillTokenPage(sqlite: Database): () => void {
  sqlite.run("CREATE TABLE IF NOT EXISTS scratch_fill (v BLOB)");
  sqlite.run(
    "INSERT INTO tokens (hash, user_name, roles, source, created_at, last_used_at, expires_at, revoked_at) VALUES ('fill', '', '[]', 'store', 0, 0, 0, 0)",
  );
  const pages = (sqlite.query("PRAGMA page_count").get() as { page_count: number }).page_count;
  sqlite.run(`PRAGMA max_page_count = ${pages}`);
  const full = (f: () => void) => {
    try {
      f();
      return false;
    } catch (e) {
      if (!isFull(e)) throw e;
      return true;
    }
  };
  for (const size of [4096, 512, 64, 8, 1]) while (!full(() => sqlite.run("INSERT INTO scratch_fill VALUES (?)", [new Uint8Array(size)])));
  for (const grow of [1024, 256, 64, 16, 4, 1])
    while (!full(() => sqlite.run("UPDATE tokens SET user_name = user_name || ? WHERE hash = 'fill'", ["x".repeat(grow)])));
  return () => {
    sqlite.run("PRAGMA max_page_count = 1073741823");
    sqlite.run("DROP TABLE scratch_fill");
    sqlite.run("DELETE FROM tokens WHERE hash = 'fill'");
  };
}

/** The name of the function that refuses rows, and of its trigger on each table. */
const REFUSE = "loupe_test_disk_full";

/**
 * PostgreSQL, whose disk a test cannot fill: a trigger on every table of the store refuses each
 * row inserted or updated with the error a full disk raises (SQLSTATE 53100, disk_full, "could
 * not extend file ... No space left on device"). Row triggers, so a statement that writes no row
 * passes, as on a full disk; deletes pass too (they free space). Lifting drops the function and,
 * with it, every trigger.
 */
async function refuseWrites(store: Store): Promise<() => Promise<void>> {
  await sql
    .raw(`CREATE FUNCTION ${REFUSE}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'could not extend file "base/%": No space left on device', TG_TABLE_NAME
    USING ERRCODE = 'disk_full', HINT = 'Check free disk space.';
END $$`)
    .execute(store.db);
  const tables = (
    await sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`.execute(store.db)
  ).rows;
  for (const { name } of tables)
    await sql
      .raw(`CREATE TRIGGER ${REFUSE} BEFORE INSERT OR UPDATE ON "${name}" FOR EACH ROW EXECUTE FUNCTION ${REFUSE}()`)
      .execute(store.db);
  return async () => {
    await sql.raw(`DROP FUNCTION IF EXISTS ${REFUSE}() CASCADE`).execute(store.db);
  };
}
