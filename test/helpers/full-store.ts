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
 * table (free pages), then by the smallest possible audit rows. SQLite writes a row into free
 * space inside a b-tree page without a new page, so only filling the audit table's own pages
 * makes every later audit insert fail; its rows are the smallest possible (empty texts), so any
 * real entry, larger in every b-tree, fails too. Answers a function that lifts the limit again.
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
  return () => {
    sqlite.exec("PRAGMA max_page_count = 1073741823");
    sqlite.exec("DROP TABLE scratch_fill");
    sqlite.exec("DELETE FROM audit WHERE type = ''");
  };
}
