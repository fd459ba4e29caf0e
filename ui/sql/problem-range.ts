import type { Text } from "@codemirror/state";

/**
 * The stretch of the text a problem at 1-based `line` and `column` covers: `length` units from
 * there, the length of the token the server's lexer reads at that position (`problemLength`), so
 * `'LIIT'` is underlined whole; a point at the end of the text.
 */
export function problemRange(doc: Text, line: number, column: number, length: number): { from: number; to: number } {
  const lineNo = Math.min(Math.max(line, 1), doc.lines);
  const from = Math.min(doc.line(lineNo).from + Math.max(column, 1) - 1, doc.length);
  return { from, to: Math.min(from + Math.max(length, 0), doc.length) };
}
