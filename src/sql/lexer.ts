/**
 * The lexer turns query text into tokens on demand, one at a time, so that the
 * first problem reported is the first one in the text, whether it is a bad
 * character or a grammar mistake. Tokens keep source offsets only.
 *
 * Lexical grammar:
 *   Whitespace   : space, tab, line breaks, form feed, vertical tab, NBSP, BOM
 *   Comment      : "--" up to the end of the line | "/*" anything "*\/"
 *   Name         : [A-Za-z_][A-Za-z0-9_]*          (keywords are Names; see parser)
 *   QuotedName   : "`" ( any character but "`" or a line break | "``" )+ "`"
 *   String       : "'" ( any character but "'" or a line break | "''" )* "'"
 *                | '"' ( any character but '"' or a line break | '""' )* '"'
 *   Number       : [0-9]+ ( "." [0-9]+ )? ( [eE] [+-]? [0-9]+ )?
 *   Punctuator   : ( ) [ ] , . * ; = != <> < <= > >= + - / % ?
 *
 * Strings have no backslash escapes: a backslash is an ordinary character, which
 * leaves it free to act as the LIKE escape character.
 */
import { quote, type Span, syntaxError } from "./errors.ts";
import { QUERY_LIMITS } from "./limits.ts";

export const TokenKind = {
  EOF: "<EOF>",
  NAME: "Name",
  QUOTED_NAME: "QuotedName",
  STRING: "String",
  NUMBER: "Number",
  PAREN_L: "(",
  PAREN_R: ")",
  BRACKET_L: "[",
  BRACKET_R: "]",
  COMMA: ",",
  DOT: ".",
  STAR: "*",
  SEMICOLON: ";",
  EQUALS: "=",
  NOT_EQUALS: "!=",
  LESS_GREATER: "<>",
  LESS: "<",
  LESS_EQUALS: "<=",
  GREATER: ">",
  GREATER_EQUALS: ">=",
  PLUS: "+",
  MINUS: "-",
  SLASH: "/",
  PERCENT: "%",
  /** A placeholder of a prepared INSERT; no other statement accepts it. */
  QUESTION: "?",
} as const;

export type TokenKind = (typeof TokenKind)[keyof typeof TokenKind];

export interface Token extends Span {
  kind: TokenKind;
  /** Names and numbers: the raw text. Strings and quoted names: the unescaped content. */
  value: string;
  /** The token after this one, once it has been read. */
  next?: Token;
}

export interface LexerOptions {
  /** Tokens beyond this count are refused (default QUERY_LIMITS.tokens). */
  maxTokens?: number;
}

export class Lexer {
  readonly source: string;
  /** The current token. */
  token: Token;
  private readonly maxTokens: number;
  private count = 0;

  constructor(source: string, options: LexerOptions = {}) {
    this.source = source;
    this.maxTokens = options.maxTokens ?? QUERY_LIMITS.tokens;
    this.token = this.read(0);
  }

  /** Moves to the next token and returns it. */
  advance(): Token {
    this.token = this.lookahead();
    return this.token;
  }

  /** The token after `token` (the current one by default), without moving. */
  lookahead(token: Token = this.token): Token {
    if (token.kind === TokenKind.EOF) return token;
    token.next ??= this.read(token.end);
    return token.next;
  }

  private read(position: number): Token {
    const token = readToken(this.source, position);
    if (token.kind !== TokenKind.EOF && ++this.count > this.maxTokens) {
      throw syntaxError(this.source, token, "Too many tokens", `at most ${this.maxTokens} tokens`);
    }
    return token;
  }
}

function isNameStart(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

function isNameContinue(code: number): boolean {
  return isNameStart(code) || isDigit(code);
}

function isLineBreak(code: number): boolean {
  return code === 10 || code === 13;
}

function isWhitespace(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 13 || code === 11 || code === 12 || code === 0xa0 || code === 0xfeff;
}

function make(kind: TokenKind, start: number, end: number, value: string): Token {
  return { kind, start, end, value };
}

/** Reads the token that starts at or after `position`. */
function readToken(source: string, position: number): Token {
  const length = source.length;
  const pos = skipIgnored(source, position);
  if (pos >= length) return make(TokenKind.EOF, length, length, "");

  const code = source.charCodeAt(pos);
  const next = source.charCodeAt(pos + 1);
  const punct = (kind: TokenKind, size: number): Token => make(kind, pos, pos + size, kind);

  switch (code) {
    case 40:
      return punct(TokenKind.PAREN_L, 1); // (
    case 41:
      return punct(TokenKind.PAREN_R, 1); // )
    case 91:
      return punct(TokenKind.BRACKET_L, 1); // [
    case 93:
      return punct(TokenKind.BRACKET_R, 1); // ]
    case 44:
      return punct(TokenKind.COMMA, 1); // ,
    case 46:
      return punct(TokenKind.DOT, 1); // .
    case 42:
      return punct(TokenKind.STAR, 1); // *
    case 59:
      return punct(TokenKind.SEMICOLON, 1); // ;
    case 61:
      return punct(TokenKind.EQUALS, 1); // =
    case 43:
      return punct(TokenKind.PLUS, 1); // +
    case 45:
      return punct(TokenKind.MINUS, 1); // - ("--" was skipped as a comment)
    case 47:
      return punct(TokenKind.SLASH, 1); // / ("/*" was skipped as a comment)
    case 37:
      return punct(TokenKind.PERCENT, 1); // %
    case 63:
      return punct(TokenKind.QUESTION, 1); // ?
    case 33: // !
      if (next === 61) return punct(TokenKind.NOT_EQUALS, 2);
      break;
    case 60: // <
      if (next === 61) return punct(TokenKind.LESS_EQUALS, 2);
      if (next === 62) return punct(TokenKind.LESS_GREATER, 2);
      return punct(TokenKind.LESS, 1);
    case 62: // >
      if (next === 61) return punct(TokenKind.GREATER_EQUALS, 2);
      return punct(TokenKind.GREATER, 1);
    case 39: // '
    case 34: // "
      return readQuoted(source, pos, code, TokenKind.STRING);
    case 96: // `
      return readQuoted(source, pos, code, TokenKind.QUOTED_NAME);
  }

  if (isNameStart(code)) {
    let end = pos + 1;
    while (end < length && isNameContinue(source.charCodeAt(end))) end++;
    return make(TokenKind.NAME, pos, end, source.slice(pos, end));
  }
  if (isDigit(code)) return readNumber(source, pos);

  const char = String.fromCodePoint(source.codePointAt(pos) ?? code);
  throw syntaxError(source, { start: pos, end: pos + char.length }, `Unexpected character ${describeCharacter(char)}`);
}

function describeCharacter(char: string): string {
  const cp = char.codePointAt(0) ?? 0;
  if (cp < 0x20 || cp === 0x7f) return `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;
  return quote(char);
}

/** Skips whitespace and comments; returns the offset of the next token. */
function skipIgnored(source: string, position: number): number {
  const length = source.length;
  let pos = position;
  while (pos < length) {
    const code = source.charCodeAt(pos);
    if (isWhitespace(code)) {
      pos++;
    } else if (code === 45 && source.charCodeAt(pos + 1) === 45) {
      pos += 2;
      while (pos < length && !isLineBreak(source.charCodeAt(pos))) pos++;
    } else if (code === 47 && source.charCodeAt(pos + 1) === 42) {
      const close = source.indexOf("*/", pos + 2);
      if (close < 0) {
        throw syntaxError(source, { start: pos, end: pos + 2 }, "Unterminated comment", "'*/' before the end of input");
      }
      pos = close + 2;
    } else {
      break;
    }
  }
  return pos;
}

/** Strings and quoted names: the closing quote doubled stands for itself. */
function readQuoted(source: string, start: number, quoteCode: number, kind: TokenKind): Token {
  const length = source.length;
  let value = "";
  let chunkStart = start + 1;
  let pos = start + 1;
  while (pos < length) {
    const code = source.charCodeAt(pos);
    if (code === quoteCode) {
      value += source.slice(chunkStart, pos);
      if (source.charCodeAt(pos + 1) === quoteCode) {
        value += source[pos];
        pos += 2;
        chunkStart = pos;
        continue;
      }
      if (kind === TokenKind.QUOTED_NAME && value === "") {
        throw syntaxError(source, { start, end: pos + 1 }, "Empty quoted name", "a name between the backticks");
      }
      return make(kind, start, pos + 1, value);
    }
    if (isLineBreak(code)) break;
    pos++;
  }
  const quoteChar = String.fromCharCode(quoteCode);
  const what = kind === TokenKind.STRING ? "Unterminated string" : "Unterminated quoted name";
  throw syntaxError(source, { start, end: pos }, what, `a closing ${quoteChar} on the same line`);
}

function readNumber(source: string, start: number): Token {
  let pos = start;
  const digits = (): void => {
    while (isDigit(source.charCodeAt(pos))) pos++;
  };
  digits();
  if (source.charCodeAt(pos) === 46 && isDigit(source.charCodeAt(pos + 1))) {
    pos++;
    digits();
  }
  // An exponent only when digits follow, so that "5e" stays a number and a name.
  const e = source.charCodeAt(pos);
  if (e === 101 || e === 69) {
    const sign = source.charCodeAt(pos + 1);
    const first = sign === 43 || sign === 45 ? pos + 2 : pos + 1;
    if (isDigit(source.charCodeAt(first))) {
      pos = first;
      digits();
    }
  }
  return make(TokenKind.NUMBER, start, pos, source.slice(start, pos));
}

/** How a token is named in "Unexpected ..." messages. */
export function describeToken(token: Token, source: string): string {
  switch (token.kind) {
    case TokenKind.EOF:
      return "end of input";
    case TokenKind.STRING:
      return `string ${quote(token.value)}`;
    case TokenKind.QUOTED_NAME:
      return quote(source.slice(token.start, token.end));
    default:
      return quote(source.slice(token.start, token.end));
  }
}
