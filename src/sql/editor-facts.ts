/**
 * What the workbench's editor is told of a statement beside its validation (`GET
 * /api/sql/validation?editor=true`), read with the dialect's own lexer so that the browser needs
 * none: whether Run writes it (an INSERT), its leading SETs (where "Run again with" puts a
 * value), and how much of the text a problem covers (the token at its position, so `'LIIT'` is
 * underlined whole).
 */
import { insertKeyword, type LeadingSetting, leadingSettings } from "./leading-sets.ts";
import { Lexer, TokenKind } from "./lexer.ts";

export interface EditorFacts {
  /** After its leading SETs the statement starts with INSERT (it may still be invalid). */
  insert: boolean;
  /** Its leading SET statements, in order (see leading-sets.ts). */
  settings: LeadingSetting[];
  /** UTF-16 units from the problem's position that the editor marks; absent when valid. */
  problemLength?: number;
}

/** `problem`: the 1-based position validation reported, or null when the statement is valid. */
export function editorFacts(sql: string, problem: { line: number; column: number } | null): EditorFacts {
  const facts: EditorFacts = { insert: insertKeyword(sql) !== null, settings: leadingSettings(sql) };
  if (problem) facts.problemLength = tokenLengthAt(sql, problem.line, problem.column);
  return facts;
}

/**
 * The offset of a 1-based line and column, lines split as `getLocation` splits them; the line is
 * clamped to the text's, the column may run past its line (as an editor reads it too).
 */
function offsetOf(sql: string, line: number, column: number): number {
  let lineStart = 0;
  for (let at = 1, i = 0; at < line && i < sql.length; i++) {
    const code = sql.charCodeAt(i);
    if (code === 10 || (code === 13 && sql.charCodeAt(i + 1) !== 10)) {
      at++;
      lineStart = i + 1;
    }
  }
  return Math.min(lineStart + Math.max(column, 1) - 1, sql.length);
}

/**
 * How long the token starting at `line`, `column` is, as the lexer reads it; 1 when the lexer
 * refuses what is there (a stray character, an unterminated string); 0 at the end of the text.
 */
export function tokenLengthAt(sql: string, line: number, column: number): number {
  const from = offsetOf(sql, line, column);
  if (from >= sql.length) return 0;
  // A token never spans lines in this dialect: the rest of the line is enough to read it.
  const lineEnd = sql.slice(from).search(/[\r\n]/);
  const rest = lineEnd < 0 ? sql.slice(from) : sql.slice(from, from + lineEnd);
  try {
    const token = new Lexer(rest).token;
    if (token.kind !== TokenKind.EOF && token.start === 0 && token.end > 0) return token.end;
  } catch {
    // A character or an unterminated string the lexer refuses: mark where it is.
  }
  return 1;
}
