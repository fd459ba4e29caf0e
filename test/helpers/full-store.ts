import type { Database } from "bun:sqlite";

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
export function fillStore(sqlite: Database): () => void {
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
