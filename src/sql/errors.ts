/**
 * Every problem with a query, lexical, syntactic or semantic, is reported as one
 * SqlError whose message follows one pattern:
 *
 *   <what happened> at line <L>, column <C>.[ Expected <what would have been accepted>.]
 *
 * Positions are kept as offsets into the source; line and column are computed only
 * when an error is built. Lines are 1-based and split at "\n", "\r\n" or a lone
 * "\r"; columns are 1-based and count UTF-16 code units (what browser editors use).
 */

/** A stretch of the source, as offsets; `end` is exclusive. */
export interface Span {
  start: number;
  end: number;
}

export interface SourceLocation {
  line: number;
  column: number;
}

export function getLocation(source: string, position: number): SourceLocation {
  let line = 1;
  let lineStart = 0;
  const stop = Math.min(position, source.length);
  for (let i = 0; i < stop; i++) {
    const code = source.charCodeAt(i);
    // "\r\n" counts once, at its "\n".
    if (code === 10 || (code === 13 && source.charCodeAt(i + 1) !== 10)) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: position - lineStart + 1 };
}

export class SqlError extends Error {
  override readonly name = "SqlError";
  /** 1-based line and column of the first character of the offending token. */
  readonly line: number;
  readonly column: number;
  /** 1-based line and column just after the offending token (exclusive end). */
  readonly endLine: number;
  readonly endColumn: number;
  /** The same positions as source offsets. */
  readonly position: number;
  readonly endPosition: number;

  constructor(message: string, source: string, span: Span) {
    super(message);
    const start = getLocation(source, span.start);
    const end = getLocation(source, span.end);
    this.line = start.line;
    this.column = start.column;
    this.endLine = end.line;
    this.endColumn = end.column;
    this.position = span.start;
    this.endPosition = span.end;
  }
}

/**
 * Builds the error for a problem found at `at` (an offset or a span).
 * `what` names what was found ("Unexpected 'LIIT'", "Unknown topic 'foo'");
 * `expected`, when given, says what would have been accepted, without the
 * leading "Expected" and the final period.
 */
export function syntaxError(source: string, at: number | Span, what: string, expected?: string): SqlError {
  const span = typeof at === "number" ? { start: at, end: at } : at;
  const { line, column } = getLocation(source, span.start);
  const tail = expected === undefined ? "" : ` Expected ${expected}.`;
  return new SqlError(`${what} at line ${line}, column ${column}.${tail}`, source, span);
}

/** "X", or "one of: A, B, C" when there are several choices. */
export function describeChoices(choices: readonly string[]): string {
  if (choices.length === 1) return choices[0] ?? "";
  return `one of: ${choices.join(", ")}`;
}

/** Shows user text inside a message: quoted, shortened when long. */
export function quote(text: string): string {
  const shown = text.length > 40 ? `${text.slice(0, 40)}...` : text;
  return `'${shown.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)}'`;
}

/** The validation answer of the API: where the first problem is, or valid. */
export interface ValidationResult {
  isValid: boolean;
  /** 1-based position of the problem; 0 when valid. */
  line: number;
  column: number;
  message: string | null;
}
