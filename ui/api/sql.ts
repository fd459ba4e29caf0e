/**
 * The workbench's calls besides the query stream (ui/stream.ts): an INSERT is written through the
 * route the JDBC driver uses, which audits it (TOPIC_DATA INSERT) and answers where each record went.
 */
import { useMutation } from "@tanstack/react-query";
import type { InsertAnswer } from "../../src/domains/jdbc/schemas.ts";
import type { EditorFacts } from "../../src/sql/editor-facts.ts";
import type { ValidationResult } from "../../src/sql/index.ts";
import { api } from "../session.ts";

export type { EditorFacts, InsertAnswer, ValidationResult };

/**
 * Checks a query as it is typed; the answer is 200 whether it is valid or not. It carries what
 * the editor needs of the text and only the dialect's lexer can tell (`editor`), so the browser
 * carries no lexer.
 */
export const validateSql = (sql: string, signal?: AbortSignal) =>
  api<ValidationResult & { editor: EditorFacts }>(`/api/sql/validation?${new URLSearchParams({ sql, editor: "true" })}`, {
    ...(signal ? { signal } : {}),
  });

/** Runs an INSERT statement; answers once every record is acknowledged. */
export function runInsert(sql: string): Promise<InsertAnswer> {
  return api<InsertAnswer>("/api/jdbc/insert", {
    method: "POST",
    // Said, so the server does not read the text as ISO-8859-1 (what the driver sends).
    headers: { "content-type": "text/plain; charset=utf-8" },
    body: sql,
  });
}

export const useInsert = () => useMutation({ mutationFn: runInsert });
