/**
 * What is read of a statement without parsing it: its leading `SET key = value;` statements,
 * and whether INSERT follows them. Over the lexer alone, so that it is cheap enough to answer
 * with every validation of the editor (editor-facts.ts) and reads a statement the parser
 * refuses; the grammar is the parser's (`parseSetStatement`), and test/sql/leading-sets.test.ts
 * holds the two equal.
 *
 *   SetStatement : SET SettingName '=' SettingValue ';'
 *   SettingName  : Name ( '.' Name )* | QuotedName
 *   SettingValue : String | Number Name? | Name        (the Name after a Number touches it)
 */
import type { Span } from "./errors.ts";
import { Lexer, type Token, TokenKind } from "./lexer.ts";

export interface LeadingSetting {
  /** As written, dotted parts joined (`max.size`, or the content of a backquoted name). */
  key: string;
  /** Where its value is in the text (a string's quotes included). */
  value: Span;
}

const word = (token: Token) => (token.kind === TokenKind.NAME ? token.value.toUpperCase() : "");

/** Reads one SET statement at the lexer's token (SET itself); null at anything else. */
function readSet(lexer: Lexer): LeadingSetting | null {
  let token = lexer.advance();
  let key: string;
  if (token.kind === TokenKind.QUOTED_NAME) {
    key = token.value;
    token = lexer.advance();
  } else {
    if (token.kind !== TokenKind.NAME) return null;
    key = token.value;
    token = lexer.advance();
    while (token.kind === TokenKind.DOT) {
      token = lexer.advance();
      if (token.kind !== TokenKind.NAME) return null;
      key += `.${token.value}`;
      token = lexer.advance();
    }
  }
  if (token.kind !== TokenKind.EQUALS) return null;
  const first = lexer.advance();
  if (first.kind !== TokenKind.STRING && first.kind !== TokenKind.NAME && first.kind !== TokenKind.NUMBER) return null;
  let end = first.end;
  const after = lexer.advance();
  if (first.kind === TokenKind.NUMBER && after.kind === TokenKind.NAME && after.start === first.end) {
    end = after.end;
    lexer.advance();
  }
  if (lexer.token.kind !== TokenKind.SEMICOLON) return null;
  lexer.advance();
  return { key, value: { start: first.start, end } };
}

/**
 * The statement's leading SET statements, in order, up to the first that is not one (or is not
 * well formed); none when the text cannot be read as tokens.
 */
export function leadingSettings(sql: string): LeadingSetting[] {
  const out: LeadingSetting[] = [];
  try {
    const lexer = new Lexer(sql);
    while (word(lexer.token) === "SET") {
      const setting = readSet(lexer);
      if (!setting) break;
      out.push(setting);
    }
  } catch {
    // A character or an unterminated string the lexer refuses: what was read so far.
  }
  return out;
}

/** Where the statement's INSERT keyword is, after its SETs; null when it is no INSERT. */
export function insertKeyword(sql: string): Span | null {
  try {
    const lexer = new Lexer(sql);
    while (word(lexer.token) === "SET") {
      while (lexer.token.kind !== TokenKind.SEMICOLON && lexer.token.kind !== TokenKind.EOF) lexer.advance();
      lexer.advance();
    }
    return word(lexer.token) === "INSERT" ? { start: lexer.token.start, end: lexer.token.end } : null;
  } catch {
    return null;
  }
}

/** True when the statement, after its SETs, starts with INSERT (it may still be invalid). */
export function isInsertStatement(sql: string): boolean {
  return insertKeyword(sql) !== null;
}
