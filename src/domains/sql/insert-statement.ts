import { syntaxError } from "../../sql/errors.ts";
import { isStreamStatement, type SqlError } from "../../sql/index.ts";
import { insertKeyword } from "../../sql/insert.ts";

/**
 * A query route given an INSERT: an error at its INSERT keyword that names the route which
 * runs it (queries only read, and a read route must not write).
 */
export function insertNotHere(sql: string): SqlError {
  const at = insertKeyword(sql) ?? { start: 0, end: 0 };
  if (isStreamStatement(sql)) {
    return syntaxError(
      sql,
      at,
      "INSERT INTO ... SELECT is a stream processor, not a query",
      "a SELECT here; processors are created by POST /api/streams",
    );
  }
  return syntaxError(sql, at, "INSERT is not run as a query", "a SELECT here; INSERT statements are run by POST /api/jdbc/insert");
}
