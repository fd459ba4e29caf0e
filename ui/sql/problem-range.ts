import type { Text } from "@codemirror/state";
import { Lexer, TokenKind } from "../../src/sql/lexer.ts";

/**
 * The stretch of the text a problem at 1-based `line` and `column` covers: the token starting
 * there, as the dialect's lexer reads it, so `'LIIT'` is underlined whole; one character when the
 * lexer refuses what is there; a point at the end of the text.
 */
export function problemRange(doc: Text, line: number, column: number): { from: number; to: number } {
  const lineNo = Math.min(Math.max(line, 1), doc.lines);
  const at = doc.line(lineNo);
  const from = Math.min(at.from + Math.max(column, 1) - 1, doc.length);
  if (from >= doc.length) return { from: doc.length, to: doc.length };
  // A token never spans lines in this dialect: the rest of the line is enough to read it.
  const rest = doc.sliceString(from, doc.lineAt(from).to);
  try {
    const token = new Lexer(rest).token;
    if (token.kind !== TokenKind.EOF && token.start === 0 && token.end > 0) return { from, to: from + token.end };
  } catch {
    // A character or an unterminated string the lexer refuses: mark where it is.
  }
  return { from, to: Math.min(from + 1, doc.length) };
}
