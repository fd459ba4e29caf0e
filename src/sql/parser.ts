/**
 * Recursive-descent parser for the snapshot query dialect, the data INSERT and stream
 * programs (parse, parseInsert, parseStream). Each parse function carries the grammar rule it
 * implements.
 *
 * Error reporting: while the parser looks at a token it notes what it would have
 * accepted there. When nothing fits, the error names the token found and every
 * choice noted at that token, e.g.
 *   Unexpected 'LIIT' at line 4, column 1. Expected one of: LIMIT, WHERE, ';', end of input.
 * Operators are noted as one choice, "an operator", and the many ways to start an
 * expression as "an expression", to keep messages readable.
 *
 * Keywords are case-insensitive Names. Reserved words cannot be bare field or
 * topic names (write them in backticks); any Name may follow a ".".
 */
import type {
  CastType,
  CountStarCallNode,
  DocumentNode,
  DurationNode,
  ExpressionItemNode,
  ExpressionNode,
  FieldPathNode,
  GroupByNode,
  InsertColumnNode,
  InsertDocumentNode,
  InsertNode,
  InsertRowNode,
  InsertValueNode,
  LimitNode,
  MetaField,
  NameNode,
  NumberLiteralNode,
  PathSegment,
  ProjectionNode,
  SelectItemNode,
  SelectNode,
  SetStatementNode,
  SettingValueNode,
  StreamDocumentNode,
  StreamStatementNode,
  TopicNode,
  WindowNode,
} from "./ast.ts";
import { CAST_TYPES, META_FIELDS } from "./ast.ts";
import { describeChoices, type Span, syntaxError } from "./errors.ts";
import { describeToken, Lexer, type Token, TokenKind } from "./lexer.ts";
import { QUERY_LIMITS } from "./limits.ts";
import { lookup } from "./lookup.ts";
import { RESERVED_WORDS } from "./reserved.ts";

/** Overrides of QUERY_LIMITS for one parse (tests use smaller ones). */
export interface ParseOptions {
  /** Longest accepted query, in UTF-16 code units (default QUERY_LIMITS.queryLength). */
  maxQueryLength?: number;
  /** Most tokens in a query (default QUERY_LIMITS.tokens). */
  maxTokens?: number;
  /** Deepest nesting of parentheses, unary operators and calls (default QUERY_LIMITS.depth). */
  maxDepth?: number;
}

const LEGACY_META: Readonly<Record<string, MetaField>> = {
  _offset: "offset",
  _partition: "partition",
  _ts: "timestamp",
};

const OPERATOR = "an operator";
const EXPRESSION = "an expression";
const INTEGER = "a non-negative integer";

export function parse(source: string, options: ParseOptions = {}): DocumentNode {
  return new Parser(source, options).parseDocument();
}

/** Parses `SET ...; INSERT INTO ...`; `parse` keeps to queries. */
export function parseInsert(source: string, options: ParseOptions = {}): InsertDocumentNode {
  return new Parser(source, options).parseInsertDocument();
}

/** Parses `SET ...; INSERT INTO target SELECT [STREAM] ... FROM source ...`, a stream program. */
export function parseStream(source: string, options: ParseOptions = {}): StreamDocumentNode {
  return new Parser(source, options).parseStreamDocument();
}

/** Time units of windows, lower case, in milliseconds. */
export const TIME_UNITS: Readonly<Record<string, number>> = {
  ms: 1,
  millisecond: 1,
  milliseconds: 1,
  s: 1000,
  second: 1000,
  seconds: 1000,
  m: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
};

const TIME_UNIT = "a time unit (ms, s, m, h, d)";

/** Rank of a choice in "Expected" lists: words, then punctuation, then descriptions, then end of input. */
function choiceRank(choice: string): number {
  if (choice === "end of input") return 3;
  if (choice.startsWith("'")) return 1;
  if (/^(a|an|the) /.test(choice)) return 2;
  return 0;
}

function sortChoices(choices: Iterable<string>): string[] {
  return [...choices].sort((a, b) => choiceRank(a) - choiceRank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

function kindLabel(kind: TokenKind): string {
  return kind === TokenKind.EOF ? "end of input" : `'${kind}'`;
}

export class Parser {
  private readonly source: string;
  private readonly lexer: Lexer;
  private readonly maxDepth: number;
  private depth = 0;
  /** Choices noted at `expectedAt`; reset when the parser looks at another token. */
  private expected = new Set<string>();
  private expectedAt: Token | null = null;
  /** `COUNT(*)` is read only in stream programs, the one place aggregates exist. */
  private countStar = false;

  constructor(source: string, options: ParseOptions = {}) {
    const maxLength = options.maxQueryLength ?? QUERY_LIMITS.queryLength;
    if (source.length > maxLength) {
      throw syntaxError(
        source,
        { start: maxLength, end: source.length },
        "Query too long",
        `at most ${maxLength} characters, found ${source.length}`,
      );
    }
    this.source = source;
    this.maxDepth = options.maxDepth ?? QUERY_LIMITS.depth;
    this.lexer = new Lexer(source, { maxTokens: options.maxTokens });
  }

  // ---------------------------------------------------------------- statements

  /**
   * Document : SetStatement* SelectStatement ';'? <EOF>
   */
  parseDocument(): DocumentNode {
    const { start, settings, body: select } = this.parseWithSettings("SELECT", () => this.parseSelect());
    return { kind: "Document", settings, select, loc: { start, end: select.loc.end } };
  }

  /** SetStatement* <statement starting with `keyword`> ';'? <EOF>: the frame every document shares. */
  private parseWithSettings<T>(keyword: string, body: () => T): { start: number; settings: SetStatementNode[]; body: T } {
    const start = this.lexer.token.start;
    const settings: SetStatementNode[] = [];
    while (this.peekKeyword("SET")) settings.push(this.parseSetStatement());
    if (!this.peekKeyword(keyword)) throw this.unexpected();
    const parsed = body();
    this.skip(TokenKind.SEMICOLON);
    this.expect(TokenKind.EOF);
    return { start, settings, body: parsed };
  }

  /**
   * InsertDocument : SetStatement* InsertStatement ';'? <EOF>
   */
  parseInsertDocument(): InsertDocumentNode {
    const { start, settings, body: insert } = this.parseWithSettings("INSERT", () => this.parseInsertStatement());
    return { kind: "InsertDocument", settings, insert, loc: { start, end: insert.loc.end } };
  }

  /**
   * StreamDocument : SetStatement* StreamStatement ';'? <EOF>
   */
  parseStreamDocument(): StreamDocumentNode {
    this.countStar = true;
    const { start, settings, body: statement } = this.parseWithSettings("INSERT", () => this.parseStreamStatement());
    return { kind: "StreamDocument", settings, statement, loc: { start, end: statement.loc.end } };
  }

  /**
   * StreamStatement :
   *   INSERT INTO Topic SELECT STREAM? Projection FROM Topic ( WHERE Expression )?
   *   ( GroupByClause | WindowByClause )? LimitClause?
   *
   * LIMIT is read only to be refused at its position by the checks, and is not offered in
   * "Expected" lists.
   */
  parseStreamStatement(): StreamStatementNode {
    const start = this.expectKeyword("INSERT").start;
    this.expectKeyword("INTO");
    const target = this.parseTopic();
    this.expectKeyword("SELECT");
    const stream = this.skipStreamKeyword();
    const projection = this.parseProjection();
    this.expectKeyword("FROM");
    const from = this.parseTopic();
    let end = from.loc.end;
    let where: ExpressionNode | null = null;
    if (this.skipKeyword("WHERE")) {
      where = this.parseExpression();
      end = where.loc.end;
    }
    let groupBy: GroupByNode | null = null;
    if (this.peekKeyword("WINDOW")) groupBy = this.parseWindowBy();
    else if (this.peekKeyword("GROUP")) groupBy = this.parseGroupBy(null);
    if (groupBy !== null) end = groupBy.loc.end;
    let limit: LimitNode | null = null;
    if (isKeyword(this.lexer.token, "LIMIT")) {
      limit = this.parseLimit();
      end = limit.loc.end;
    }
    return { kind: "StreamStatement", target, stream, projection, from, where, groupBy, limit, loc: { start, end } };
  }

  /**
   * STREAM is a keyword after SELECT when what follows can start a projection; otherwise
   * (`SELECT stream FROM t`, `SELECT stream, a FROM t`) it is a field.
   */
  private skipStreamKeyword(): boolean {
    const token = this.lexer.token;
    if (!isKeyword(token, "STREAM")) {
      this.note("STREAM");
      return false;
    }
    const next = this.lexer.lookahead(token);
    const startsProjection =
      next.kind === TokenKind.STAR ||
      next.kind === TokenKind.QUOTED_NAME ||
      next.kind === TokenKind.STRING ||
      next.kind === TokenKind.NUMBER ||
      next.kind === TokenKind.PAREN_L ||
      next.kind === TokenKind.MINUS ||
      next.kind === TokenKind.PLUS ||
      (next.kind === TokenKind.NAME && (!isReserved(next) || ["TRUE", "FALSE", "NULL", "NOT"].includes(next.value.toUpperCase())));
    if (!startsProjection) return false;
    this.lexer.advance();
    return true;
  }

  /**
   * WindowByClause : WINDOW BY ShortWindow GROUP BY GroupItem ( ',' GroupItem )*
   */
  parseWindowBy(): GroupByNode {
    const start = this.expectKeyword("WINDOW").start;
    this.expectKeyword("BY");
    const window = this.parseShortWindow();
    const group = this.parseGroupBy(window);
    return { ...group, loc: { start, end: group.loc.end } };
  }

  /**
   * GroupByClause : GROUP BY GroupItem ( ',' GroupItem )*
   * GroupItem : WindowCall | Expression
   *
   * At most one window, in either form.
   */
  parseGroupBy(shortWindow: WindowNode | null): GroupByNode {
    const keyword = this.expectKeyword("GROUP");
    this.expectKeyword("BY");
    let window = shortWindow;
    const fields: ExpressionNode[] = [];
    let end: number;
    do {
      const token = this.lexer.token;
      const word = token.kind === TokenKind.NAME ? token.value.toUpperCase() : "";
      if ((word === "TUMBLE" || word === "HOP") && this.lexer.lookahead(token).kind === TokenKind.PAREN_L) {
        const parsed = this.parseWindowCall();
        if (window !== null) throw syntaxError(this.source, parsed.loc, "A second window", "one window per program");
        window = parsed;
        end = parsed.loc.end;
      } else {
        const field = this.parseExpression();
        fields.push(field);
        end = field.loc.end;
      }
    } while (this.skip(TokenKind.COMMA));
    return { kind: "GroupBy", keywordLoc: span(keyword), window, fields, loc: { start: keyword.start, end } };
  }

  /**
   * WindowCall : TUMBLE '(' Number ',' TimeUnit ')' | HOP '(' Number ',' TimeUnit ',' Number ',' TimeUnit ')'
   */
  parseWindowCall(): WindowNode {
    const name = this.lexer.token;
    const type = name.value.toUpperCase() === "HOP" ? "hop" : "tumble";
    this.lexer.advance();
    this.expect(TokenKind.PAREN_L);
    const size = this.parseDuration(true);
    let advance: DurationNode | null = null;
    if (type === "hop") {
      this.expect(TokenKind.COMMA);
      advance = this.parseDuration(true);
    }
    const end = this.expect(TokenKind.PAREN_R).end;
    return { kind: "Window", type, size, advance, loc: { start: name.start, end } };
  }

  /**
   * ShortWindow : TUMBLE Number TimeUnit | HOP Number TimeUnit ',' Number TimeUnit
   *
   * The unit may touch the number (`1m`) or not (`1 m`).
   */
  parseShortWindow(): WindowNode {
    const name = this.lexer.token;
    const isTumble = this.peekKeyword("TUMBLE");
    if (!isTumble && !this.peekKeyword("HOP")) throw this.unexpected();
    this.lexer.advance();
    const size = this.parseDuration(false);
    let advance: DurationNode | null = null;
    if (!isTumble) {
      this.expect(TokenKind.COMMA);
      advance = this.parseDuration(false);
    }
    const end = (advance ?? size).loc.end;
    return { kind: "Window", type: isTumble ? "tumble" : "hop", size, advance, loc: { start: name.start, end } };
  }

  /**
   * Duration : Number ','? TimeUnit     (the comma in the call form only)
   * TimeUnit : ms | s | m | h | d | MILLISECOND(S) | SECOND(S) | MINUTE(S) | HOUR(S) | DAY(S)
   */
  private parseDuration(comma: boolean): DurationNode {
    const amount = this.expect(TokenKind.NUMBER, "a number");
    if (comma) this.expect(TokenKind.COMMA);
    const unit = this.lexer.token;
    const unitMs = unit.kind === TokenKind.NAME ? lookup(TIME_UNITS, unit.value.toLowerCase()) : undefined;
    if (unitMs === undefined) {
      this.note(TIME_UNIT);
      throw this.unexpected();
    }
    this.lexer.advance();
    return {
      kind: "Duration",
      amount: Number(amount.value),
      amountText: amount.value,
      amountLoc: span(amount),
      unitMs,
      loc: { start: amount.start, end: unit.end },
    };
  }

  /**
   * InsertStatement : INSERT INTO Topic '(' InsertColumn ( ',' InsertColumn )* ')' VALUES InsertRow ( ',' InsertRow )*
   */
  parseInsertStatement(): InsertNode {
    const start = this.expectKeyword("INSERT").start;
    this.expectKeyword("INTO");
    const topic = this.parseTopic();
    this.expect(TokenKind.PAREN_L);
    const columns = [this.parseInsertColumn()];
    while (this.skip(TokenKind.COMMA)) columns.push(this.parseInsertColumn());
    this.expect(TokenKind.PAREN_R);
    this.expectKeyword("VALUES");
    const rows = [this.parseInsertRow()];
    while (this.skip(TokenKind.COMMA)) rows.push(this.parseInsertRow());
    return { kind: "Insert", topic, columns, rows, loc: { start, end: rows[rows.length - 1]!.loc.end } };
  }

  /**
   * InsertColumn : ColumnName ( '.' ColumnName )*
   * ColumnName : Name | QuotedName
   *
   * An unquoted `_key` or `_value` first names the key or the whole value; anything else is a
   * field of the value. Reserved words are accepted: a column list holds names only. Each field
   * is a level of the record written (built and serialised recursively): at most maxDepth.
   */
  parseInsertColumn(): InsertColumnNode {
    const first = this.lexer.token;
    if (first.kind !== TokenKind.NAME && first.kind !== TokenKind.QUOTED_NAME) {
      this.note("a column name");
      throw this.unexpected();
    }
    this.lexer.advance();
    const root = first.kind === TokenKind.NAME ? first.value.toLowerCase() : "";
    const rooted = root === "_key" || root === "_value";
    const segments: InsertColumnNode["segments"] = rooted ? [] : [{ name: first.value, loc: span(first) }];
    let end = first.end;
    while (this.skip(TokenKind.DOT)) {
      const name = this.lexer.token;
      if (name.kind !== TokenKind.NAME && name.kind !== TokenKind.QUOTED_NAME) {
        this.note("a field name");
        throw this.unexpected();
      }
      if (segments.length >= this.maxDepth)
        throw syntaxError(this.source, span(name), "Column path nested too deeply", `at most ${this.maxDepth} fields in one column path`);
      this.lexer.advance();
      segments.push({ name: name.value, loc: span(name) });
      end = name.end;
    }
    return { kind: "InsertColumn", target: root === "_key" ? "key" : "value", rooted, segments, loc: { start: first.start, end } };
  }

  /**
   * InsertRow : '(' InsertValue ( ',' InsertValue )* ')'
   */
  parseInsertRow(): InsertRowNode {
    const start = this.expect(TokenKind.PAREN_L).start;
    const values = [this.parseInsertValue()];
    while (this.skip(TokenKind.COMMA)) values.push(this.parseInsertValue());
    const end = this.expect(TokenKind.PAREN_R).end;
    return { kind: "InsertRow", values, loc: { start, end } };
  }

  /**
   * InsertValue : String | ( '-' | '+' )? Number | TRUE | FALSE | NULL | '?'
   */
  parseInsertValue(): InsertValueNode {
    const token = this.lexer.token;
    const value = (type: InsertValueNode["type"], text: string, end = token.end): InsertValueNode => {
      this.lexer.advance();
      return { kind: "InsertValue", type, text, loc: { start: token.start, end } };
    };
    switch (token.kind) {
      case TokenKind.STRING:
        return value("string", token.value);
      case TokenKind.NUMBER:
        return value("number", token.value);
      case TokenKind.QUESTION:
        return value("placeholder", "?");
      case TokenKind.MINUS:
      case TokenKind.PLUS: {
        const number = this.lexer.lookahead(token);
        if (number.kind === TokenKind.NUMBER) {
          this.lexer.advance();
          return value("number", (token.kind === TokenKind.MINUS ? "-" : "") + number.value, number.end);
        }
        this.lexer.advance();
        this.note("a number");
        throw this.unexpected();
      }
      case TokenKind.NAME: {
        const word = token.value.toUpperCase();
        if (word === "TRUE" || word === "FALSE") return value("boolean", word.toLowerCase());
        if (word === "NULL") return value("null", "null");
        break;
      }
    }
    this.note("a literal value");
    this.note("'?'");
    throw this.unexpected();
  }

  /**
   * SetStatement : SET SettingName '=' SettingValue ';'
   * SettingName : Name ( '.' Name )* | QuotedName
   *
   * A backquoted name is the whole dotted name (`` SET `max.time` = 5000; ``, as the older
   * clients write it); what it holds is checked like any setting name.
   */
  parseSetStatement(): SetStatementNode {
    const start = this.expectKeyword("SET").start;
    if (this.lexer.token.kind === TokenKind.QUOTED_NAME) {
      const quoted = this.lexer.token;
      this.lexer.advance();
      this.expect(TokenKind.EQUALS);
      const value = this.parseSettingValue();
      const end = this.expect(TokenKind.SEMICOLON).end;
      return { kind: "SetStatement", key: quoted.value, keyLoc: span(quoted), value, loc: { start, end } };
    }
    const first = this.expect(TokenKind.NAME, "a setting name");
    let key = first.value;
    let keyEnd = first.end;
    while (this.skip(TokenKind.DOT)) {
      const part = this.expect(TokenKind.NAME, "a setting name");
      key += `.${part.value}`;
      keyEnd = part.end;
    }
    this.expect(TokenKind.EQUALS);
    const value = this.parseSettingValue();
    const end = this.expect(TokenKind.SEMICOLON).end;
    return { kind: "SetStatement", key, keyLoc: { start: first.start, end: keyEnd }, value, loc: { start, end } };
  }

  /**
   * SettingValue : String | Number Name? | Name
   *
   * The Name after a Number must touch it: `1m`, `30s`, `500kb`.
   */
  parseSettingValue(): SettingValueNode {
    const token = this.lexer.token;
    if (token.kind === TokenKind.STRING) {
      this.lexer.advance();
      return { kind: "SettingValue", text: token.value, quoted: true, loc: span(token) };
    }
    if (token.kind === TokenKind.NUMBER) {
      const unit = this.lexer.advance();
      if (unit.kind === TokenKind.NAME && unit.start === token.end) {
        this.lexer.advance();
        return { kind: "SettingValue", text: token.value + unit.value, quoted: false, loc: { start: token.start, end: unit.end } };
      }
      return { kind: "SettingValue", text: token.value, quoted: false, loc: span(token) };
    }
    if (token.kind === TokenKind.NAME) {
      this.lexer.advance();
      return { kind: "SettingValue", text: token.value, quoted: false, loc: span(token) };
    }
    this.note("a setting value");
    throw this.unexpected();
  }

  /**
   * SelectStatement : SELECT Projection FROM Topic ( WHERE Expression )? LimitClause?
   */
  parseSelect(): SelectNode {
    const start = this.expectKeyword("SELECT").start;
    const projection = this.parseProjection();
    this.expectKeyword("FROM");
    const from = this.parseTopic();
    let end = from.loc.end;
    let where: ExpressionNode | null = null;
    if (this.skipKeyword("WHERE")) {
      where = this.parseExpression();
      end = where.loc.end;
    }
    let limit: LimitNode | null = null;
    if (this.peekKeyword("LIMIT")) {
      limit = this.parseLimit();
      end = limit.loc.end;
    }
    return { kind: "Select", projection, from, where, limit, loc: { start, end } };
  }

  /**
   * Projection : '*' | SelectItem ( ',' SelectItem )*
   *
   * At most QUERY_LIMITS.projections output columns, `_meta.*` counting as 5:
   * each column is computed and written for every record returned.
   */
  parseProjection(): ProjectionNode {
    const token = this.lexer.token;
    if (this.skip(TokenKind.STAR)) return { kind: "Star", loc: span(token) };
    const items: SelectItemNode[] = [];
    let columns = 0;
    let last: SelectItemNode;
    do {
      last = this.parseSelectItem();
      columns += last.kind === "MetaStar" ? META_FIELDS.length : 1;
      if (columns > QUERY_LIMITS.projections) {
        throw syntaxError(
          this.source,
          last.loc,
          "Too many columns",
          `at most ${QUERY_LIMITS.projections} columns (_meta.* counts as ${META_FIELDS.length})`,
        );
      }
      items.push(last);
    } while (this.skip(TokenKind.COMMA));
    return { kind: "ProjectionList", items, loc: { start: token.start, end: last.loc.end } };
  }

  /**
   * SelectItem : '_meta' '.' '*' | Expression ( AS Alias )?
   * Alias : Name | QuotedName
   */
  parseSelectItem(): SelectItemNode {
    const token = this.lexer.token;
    if (token.kind === TokenKind.NAME && token.value.toLowerCase() === "_meta") {
      const dot = this.lexer.lookahead(token);
      const star = this.lexer.lookahead(dot);
      if (dot.kind === TokenKind.DOT && star.kind === TokenKind.STAR) {
        this.lexer.advance();
        this.lexer.advance();
        this.lexer.advance();
        return { kind: "MetaStar", loc: { start: token.start, end: star.end } };
      }
    }
    const expression = this.parseExpression();
    let alias: NameNode | null = null;
    if (this.skipKeyword("AS")) alias = this.parseIdentifier("an alias");
    const item: ExpressionItemNode = {
      kind: "ExpressionItem",
      expression,
      alias,
      loc: { start: expression.loc.start, end: alias?.loc.end ?? expression.loc.end },
    };
    return item;
  }

  /**
   * Topic : Name | QuotedName
   */
  parseTopic(): TopicNode {
    const token = this.lexer.token;
    if (token.kind === TokenKind.QUOTED_NAME) {
      this.lexer.advance();
      return { kind: "Topic", name: token.value, quoted: true, loc: span(token) };
    }
    if (token.kind === TokenKind.NAME && !isReserved(token)) {
      this.lexer.advance();
      return { kind: "Topic", name: token.value, quoted: false, loc: span(token) };
    }
    this.note("a topic name");
    throw this.unexpected();
  }

  /**
   * LimitClause : LIMIT Integer ( ',' Integer )?
   *
   * With two numbers the first is how many matching records to skip.
   */
  parseLimit(): LimitNode {
    const start = this.expectKeyword("LIMIT").start;
    const first = this.parseInteger();
    if (this.skip(TokenKind.COMMA)) {
      const count = this.parseInteger();
      return { kind: "Limit", skip: first, count, loc: { start, end: count.loc.end } };
    }
    return { kind: "Limit", skip: null, count: first, loc: { start, end: first.loc.end } };
  }

  /**
   * Integer : Number (without fraction or exponent, at most 2^53 - 1)
   */
  parseInteger(): NumberLiteralNode {
    const token = this.lexer.token;
    if (token.kind === TokenKind.NUMBER && /^[0-9]+$/.test(token.value)) {
      const value = Number(token.value);
      if (Number.isSafeInteger(value)) {
        this.lexer.advance();
        return { kind: "NumberLiteral", value, loc: span(token) };
      }
    }
    this.note(INTEGER);
    throw this.unexpected();
  }

  // --------------------------------------------------------------- expressions

  /**
   * Expression : OrExpression
   * OrExpression : AndExpression ( OR AndExpression )*
   */
  parseExpression(): ExpressionNode {
    this.enter();
    let left = this.parseAnd();
    while (this.skipOperatorKeyword("OR")) {
      const right = this.parseAnd();
      left = { kind: "Binary", operator: "OR", left, right, loc: join(left, right) };
    }
    this.leave();
    return left;
  }

  /**
   * AndExpression : NotExpression ( AND NotExpression )*
   */
  parseAnd(): ExpressionNode {
    let left = this.parseNot();
    while (this.skipOperatorKeyword("AND")) {
      const right = this.parseNot();
      left = { kind: "Binary", operator: "AND", left, right, loc: join(left, right) };
    }
    return left;
  }

  /**
   * NotExpression : NOT NotExpression | Predicate
   */
  parseNot(): ExpressionNode {
    const token = this.lexer.token;
    if (isKeyword(token, "NOT")) {
      this.lexer.advance();
      this.enter();
      const operand = this.parseNot();
      this.leave();
      return { kind: "Unary", operator: "NOT", operand, loc: { start: token.start, end: operand.loc.end } };
    }
    return this.parsePredicate();
  }

  /**
   * Predicate :
   *   - Additive CompareOperator Additive
   *   - Additive IS NOT? NULL
   *   - Additive NOT? LIKE Additive
   *   - Additive NOT? IN '(' Expression ( ',' Expression )* ')'   (at most QUERY_LIMITS.inListItems)
   *   - Additive NOT? BETWEEN Additive AND Additive
   *   - Additive
   * CompareOperator : '=' | '!=' | '<>' | '<' | '<=' | '>' | '>='
   */
  parsePredicate(): ExpressionNode {
    const subject = this.parseAdditive();
    const token = this.lexer.token;
    const comparison = COMPARISONS[token.kind];
    this.note(OPERATOR);
    if (comparison !== undefined) {
      this.lexer.advance();
      const right = this.parseAdditive();
      return { kind: "Binary", operator: comparison, left: subject, right, loc: join(subject, right) };
    }
    if (isKeyword(token, "IS")) {
      this.lexer.advance();
      const negated = this.skipKeyword("NOT");
      const end = this.expectKeyword("NULL").end;
      return { kind: "IsNull", negated, subject, loc: { start: subject.loc.start, end } };
    }
    let negated = false;
    if (isKeyword(token, "NOT")) {
      this.lexer.advance();
      negated = true;
    }
    if (this.skipOperatorKeyword("LIKE", negated)) {
      const pattern = this.parseAdditive();
      return { kind: "Like", negated, subject, pattern, loc: join(subject, pattern) };
    }
    if (this.skipOperatorKeyword("IN", negated)) {
      this.expect(TokenKind.PAREN_L);
      const list = [this.parseExpression()];
      while (this.skip(TokenKind.COMMA)) {
        const item = this.parseExpression();
        // Every item is compared with every record.
        if (list.length === QUERY_LIMITS.inListItems) {
          throw syntaxError(this.source, item.loc, "Too many items in the IN list", `at most ${QUERY_LIMITS.inListItems} items`);
        }
        list.push(item);
      }
      const end = this.expect(TokenKind.PAREN_R).end;
      return { kind: "In", negated, subject, list, loc: { start: subject.loc.start, end } };
    }
    if (this.skipOperatorKeyword("BETWEEN", negated)) {
      const low = this.parseAdditive();
      this.expectKeyword("AND");
      const high = this.parseAdditive();
      return { kind: "Between", negated, subject, low, high, loc: join(subject, high) };
    }
    if (negated) throw this.unexpected();
    return subject;
  }

  /**
   * Additive : Multiplicative ( ( '+' | '-' ) Multiplicative )*
   */
  parseAdditive(): ExpressionNode {
    let left = this.parseMultiplicative();
    for (;;) {
      this.note(OPERATOR);
      const kind = this.lexer.token.kind;
      if (kind !== TokenKind.PLUS && kind !== TokenKind.MINUS) return left;
      this.lexer.advance();
      const right = this.parseMultiplicative();
      left = { kind: "Binary", operator: kind, left, right, loc: join(left, right) };
    }
  }

  /**
   * Multiplicative : Unary ( ( '*' | '/' | '%' ) Unary )*
   */
  parseMultiplicative(): ExpressionNode {
    let left = this.parseUnary();
    for (;;) {
      this.note(OPERATOR);
      const kind = this.lexer.token.kind;
      if (kind !== TokenKind.STAR && kind !== TokenKind.SLASH && kind !== TokenKind.PERCENT) return left;
      this.lexer.advance();
      const right = this.parseUnary();
      left = { kind: "Binary", operator: kind, left, right, loc: join(left, right) };
    }
  }

  /**
   * Unary : ( '-' | '+' ) Unary | Primary
   */
  parseUnary(): ExpressionNode {
    const token = this.lexer.token;
    if (token.kind === TokenKind.MINUS || token.kind === TokenKind.PLUS) {
      this.lexer.advance();
      this.enter();
      const operand = this.parseUnary();
      this.leave();
      return { kind: "Unary", operator: token.kind, operand, loc: { start: token.start, end: operand.loc.end } };
    }
    return this.parsePrimary();
  }

  /**
   * Primary :
   *   - String | Number | TRUE | FALSE | NULL
   *   - '(' Expression ')'
   *   - CAST '(' Expression AS CastType ')'
   *   - Name '(' ( Expression ( ',' Expression )* )? ')'
   *   - Path
   */
  parsePrimary(): ExpressionNode {
    const token = this.lexer.token;
    const loc = span(token);
    switch (token.kind) {
      case TokenKind.STRING:
        this.lexer.advance();
        return { kind: "StringLiteral", value: token.value, loc };
      case TokenKind.NUMBER:
        this.lexer.advance();
        return { kind: "NumberLiteral", value: Number(token.value), loc };
      case TokenKind.PAREN_L: {
        this.lexer.advance();
        const inner = this.parseExpression();
        const end = this.expect(TokenKind.PAREN_R).end;
        // The parentheses belong to the node's span so errors and names cover them.
        return { ...inner, loc: { start: token.start, end } };
      }
      case TokenKind.QUOTED_NAME:
        return this.parsePath();
      case TokenKind.NAME: {
        const word = token.value.toUpperCase();
        if (word === "TRUE" || word === "FALSE") {
          this.lexer.advance();
          return { kind: "BooleanLiteral", value: word === "TRUE", loc };
        }
        if (word === "NULL") {
          this.lexer.advance();
          return { kind: "NullLiteral", loc };
        }
        if (RESERVED_WORDS.has(word)) break;
        if (this.lexer.lookahead(token).kind === TokenKind.PAREN_L) {
          return word === "CAST" ? this.parseCast() : this.parseCall();
        }
        return this.parsePath();
      }
    }
    this.note(EXPRESSION);
    throw this.unexpected();
  }

  /**
   * Call : Name '(' ( Expression ( ',' Expression )* )? ')'
   *      | COUNT '(' '*' ')'      (stream programs only)
   */
  parseCall(): ExpressionNode {
    const name = this.lexer.token;
    this.lexer.advance();
    this.expect(TokenKind.PAREN_L);
    if (this.countStar && name.value.toUpperCase() === "COUNT" && this.skip(TokenKind.STAR)) {
      const end = this.expect(TokenKind.PAREN_R).end;
      const call: CountStarCallNode = {
        kind: "Call",
        name: "COUNT",
        nameLoc: span(name),
        args: [],
        star: true,
        loc: { start: name.start, end },
      };
      return call;
    }
    const args: ExpressionNode[] = [];
    this.enter();
    if (this.lexer.token.kind !== TokenKind.PAREN_R) {
      this.note("')'");
      args.push(this.parseExpression());
      while (this.skip(TokenKind.COMMA)) args.push(this.parseExpression());
    }
    this.leave();
    const end = this.expect(TokenKind.PAREN_R).end;
    return { kind: "Call", name: name.value.toUpperCase(), nameLoc: span(name), args, loc: { start: name.start, end } };
  }

  /**
   * Cast : CAST '(' Expression AS CastType ')'
   * CastType : BOOLEAN | DOUBLE | FLOAT | INT | LONG | STRING
   */
  parseCast(): ExpressionNode {
    const start = this.lexer.token.start;
    this.lexer.advance();
    this.expect(TokenKind.PAREN_L);
    const expression = this.parseExpression();
    this.expectKeyword("AS");
    const typeToken = this.lexer.token;
    const type = typeToken.kind === TokenKind.NAME ? typeToken.value.toUpperCase() : "";
    if (!(CAST_TYPES as readonly string[]).includes(type)) {
      for (const choice of CAST_TYPES) this.note(choice);
      throw this.unexpected();
    }
    this.lexer.advance();
    const end = this.expect(TokenKind.PAREN_R).end;
    return { kind: "Cast", expression, type: type as CastType, typeLoc: span(typeToken), loc: { start, end } };
  }

  /**
   * Path :
   *   - '_meta' '.' MetaField
   *   - '_offset' | '_partition' | '_ts' | '_ktype' | '_vtype'
   *   - ( '_key' | '_value' | Identifier ) Accessor*
   * Accessor : '.' ( Name | QuotedName ) | '[' Integer ']'
   * MetaField : offset | partition | timestamp | __keysize | __valuesize
   * Identifier : Name (not reserved) | QuotedName
   *
   * The special names are recognised unquoted only, in any case: a quoted
   * `_key` is a value field of that name.
   */
  parsePath(): ExpressionNode {
    const token = this.lexer.token;
    this.lexer.advance();
    if (token.kind === TokenKind.NAME) {
      const special = token.value.toLowerCase();
      if (special === "_meta") {
        this.expect(TokenKind.DOT);
        const fieldToken = this.lexer.token;
        const field = fieldToken.kind === TokenKind.NAME ? fieldToken.value.toLowerCase() : "";
        if (!(META_FIELDS as readonly string[]).includes(field)) {
          for (const choice of META_FIELDS) this.note(choice);
          throw this.unexpected();
        }
        this.lexer.advance();
        return { kind: "MetaField", field: field as MetaField, legacy: false, loc: { start: token.start, end: fieldToken.end } };
      }
      const legacy = lookup(LEGACY_META, special);
      if (legacy !== undefined) return { kind: "MetaField", field: legacy, legacy: true, loc: span(token) };
      if (special === "_ktype" || special === "_vtype") {
        return { kind: "DecoderType", side: special === "_ktype" ? "key" : "value", loc: span(token) };
      }
      if (special === "_key" || special === "_value") {
        return this.parseAccessors(token, special === "_key" ? "key" : "value", true, []);
      }
    }
    return this.parseAccessors(token, "value", false, [{ kind: "Field", name: token.value, loc: span(token) }]);
  }

  /**
   * Accessor* : ( '.' ( Name | QuotedName ) | '[' Integer ']' )*
   */
  private parseAccessors(first: Token, source: "key" | "value", rooted: boolean, segments: PathSegment[]): FieldPathNode {
    let end = first.end;
    for (;;) {
      const token = this.lexer.token;
      if (token.kind === TokenKind.DOT) {
        this.lexer.advance();
        const name = this.lexer.token;
        if (name.kind !== TokenKind.NAME && name.kind !== TokenKind.QUOTED_NAME) {
          this.note("a field name");
          throw this.unexpected();
        }
        this.lexer.advance();
        segments.push({ kind: "Field", name: name.value, loc: span(name) });
        end = name.end;
      } else if (token.kind === TokenKind.BRACKET_L) {
        this.lexer.advance();
        const index = this.parseInteger();
        end = this.expect(TokenKind.BRACKET_R).end;
        segments.push({ kind: "Index", index: index.value, loc: { start: token.start, end } });
      } else {
        return { kind: "FieldPath", source, rooted, segments, loc: { start: first.start, end } };
      }
    }
  }

  /**
   * Identifier : Name (not reserved) | QuotedName
   */
  parseIdentifier(label: string): NameNode {
    const token = this.lexer.token;
    if (token.kind === TokenKind.QUOTED_NAME || (token.kind === TokenKind.NAME && !isReserved(token))) {
      this.lexer.advance();
      return { kind: "Name", value: token.value, loc: span(token) };
    }
    this.note(label);
    throw this.unexpected();
  }

  // ------------------------------------------------------------------ helpers

  private enter(): void {
    if (++this.depth > this.maxDepth) {
      throw syntaxError(this.source, span(this.lexer.token), "Expression nested too deeply", `at most ${this.maxDepth} levels of nesting`);
    }
  }

  private leave(): void {
    this.depth--;
  }

  /** Notes a choice that the current token could have been. */
  private note(choice: string): void {
    if (this.expectedAt !== this.lexer.token) {
      this.expected = new Set();
      this.expectedAt = this.lexer.token;
    }
    this.expected.add(choice);
  }

  private peek(kind: TokenKind, label = kindLabel(kind)): boolean {
    this.note(label);
    return this.lexer.token.kind === kind;
  }

  private peekKeyword(word: string): boolean {
    this.note(word);
    return isKeyword(this.lexer.token, word);
  }

  private skip(kind: TokenKind): boolean {
    if (!this.peek(kind)) return false;
    this.lexer.advance();
    return true;
  }

  private skipKeyword(word: string): boolean {
    if (!this.peekKeyword(word)) return false;
    this.lexer.advance();
    return true;
  }

  /**
   * An operator written as a keyword. Noted as "an operator", except right after
   * NOT, where only LIKE, IN and BETWEEN can follow and are named one by one.
   */
  private skipOperatorKeyword(word: string, afterNot = false): boolean {
    this.note(afterNot ? word : OPERATOR);
    if (!isKeyword(this.lexer.token, word)) return false;
    this.lexer.advance();
    return true;
  }

  private expect(kind: TokenKind, label?: string): Token {
    const token = this.lexer.token;
    if (!this.peek(kind, label)) throw this.unexpected();
    this.lexer.advance();
    return token;
  }

  private expectKeyword(word: string): Token {
    const token = this.lexer.token;
    if (!this.peekKeyword(word)) throw this.unexpected();
    this.lexer.advance();
    return token;
  }

  /** The error for the current token, listing every choice noted at it. */
  private unexpected(): Error {
    const token = this.lexer.token;
    const choices = this.expectedAt === token ? sortChoices(this.expected) : [];
    return syntaxError(
      this.source,
      span(token),
      `Unexpected ${describeToken(token, this.source)}`,
      choices.length > 0 ? describeChoices(choices) : undefined,
    );
  }
}

const COMPARISONS: Partial<Record<TokenKind, "=" | "!=" | "<" | "<=" | ">" | ">=">> = {
  [TokenKind.EQUALS]: "=",
  [TokenKind.NOT_EQUALS]: "!=",
  [TokenKind.LESS_GREATER]: "!=",
  [TokenKind.LESS]: "<",
  [TokenKind.LESS_EQUALS]: "<=",
  [TokenKind.GREATER]: ">",
  [TokenKind.GREATER_EQUALS]: ">=",
};

function isKeyword(token: Token, word: string): boolean {
  return token.kind === TokenKind.NAME && token.value.toUpperCase() === word;
}

function isReserved(token: Token): boolean {
  return token.kind === TokenKind.NAME && RESERVED_WORDS.has(token.value.toUpperCase());
}

function span(token: Token): Span {
  return { start: token.start, end: token.end };
}

function join(left: { loc: Span }, right: { loc: Span }): Span {
  return { start: left.loc.start, end: right.loc.end };
}
