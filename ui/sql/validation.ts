/**
 * Validation as you type: the server's `/api/sql/validation` (it knows the cluster's topics) is
 * asked once the text has rested for VALIDATION_DELAY_MS, and its error is underlined in the
 * editor and handed to the page for a line of text under it. An answer for text that has changed
 * since is dropped, and the request for it cancelled.
 */
import { type Diagnostic, linter } from "@codemirror/lint";
import { type EditorFacts, type ValidationResult, validateSql } from "../api/sql.ts";
import { problemRange } from "./problem-range.ts";

export const VALIDATION_DELAY_MS = 300;

export interface Problem {
  line: number;
  column: number;
  message: string;
  /** Offsets in the text of what is underlined (`from === to` at the end of the text). */
  from: number;
  to: number;
}

/**
 * What the page shows under the editor: nothing yet, a valid query, a problem, or why validation
 * failed. An answer carries the text it is for and what the server's lexer read of it (`facts`).
 */
export type ValidationState =
  | { kind: "none" }
  | { kind: "valid"; text: string; facts: EditorFacts }
  | { kind: "invalid"; text: string; facts: EditorFacts; problem: Problem }
  | { kind: "unavailable"; message: string };

/** The linter extension; `report` is told every answer that is still current. */
export function validation(report: (state: ValidationState) => void) {
  let inflight: AbortController | null = null;
  return linter(
    async (view): Promise<Diagnostic[]> => {
      const doc = view.state.doc;
      const text = doc.toString();
      inflight?.abort();
      if (text.trim() === "") {
        report({ kind: "none" });
        return [];
      }
      const controller = new AbortController();
      inflight = controller;
      let result: ValidationResult & { editor: EditorFacts };
      try {
        result = await validateSql(text, controller.signal);
      } catch (err) {
        if (!controller.signal.aborted && view.state.doc === doc)
          report({ kind: "unavailable", message: `The query could not be checked: ${err instanceof Error ? err.message : String(err)}` });
        return [];
      }
      // Stale: the text changed while the server answered (the newer text has its own request).
      if (controller.signal.aborted || view.state.doc !== doc) return [];
      if (result.isValid) {
        report({ kind: "valid", text, facts: result.editor });
        return [];
      }
      const message = result.message ?? "The query is not valid.";
      const range = problemRange(doc, result.line, result.column, result.editor.problemLength ?? 1);
      report({ kind: "invalid", text, facts: result.editor, problem: { line: result.line, column: result.column, message, ...range } });
      return [{ ...range, severity: "error", source: "Loupe", message }];
    },
    { delay: VALIDATION_DELAY_MS },
  );
}
