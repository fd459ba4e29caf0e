/**
 * The syntax tree of a snapshot query. Every node keeps the span of source it
 * came from, so that later stages (analyzer, planner) can point at it.
 */
import type { Span } from "./errors.ts";

export interface Node {
  readonly kind: string;
  readonly loc: Span;
}

/** SetStatement* SelectStatement */
export interface DocumentNode extends Node {
  kind: "Document";
  settings: SetStatementNode[];
  select: SelectNode;
}

export interface SetStatementNode extends Node {
  kind: "SetStatement";
  /** The key as written, e.g. "max.size". */
  key: string;
  keyLoc: Span;
  value: SettingValueNode;
}

export interface SettingValueNode extends Node {
  kind: "SettingValue";
  /** The value text: a string's content, or the bare text such as "1m" or "JSON". */
  text: string;
  quoted: boolean;
}

export interface SelectNode extends Node {
  kind: "Select";
  projection: ProjectionNode;
  from: TopicNode;
  where: ExpressionNode | null;
  limit: LimitNode | null;
}

export type ProjectionNode = StarNode | ProjectionListNode;

export interface StarNode extends Node {
  kind: "Star";
}

export interface ProjectionListNode extends Node {
  kind: "ProjectionList";
  items: SelectItemNode[];
}

export type SelectItemNode = ExpressionItemNode | MetaStarNode;

export interface ExpressionItemNode extends Node {
  kind: "ExpressionItem";
  expression: ExpressionNode;
  alias: NameNode | null;
}

/** `_meta.*`: every metadata field. */
export interface MetaStarNode extends Node {
  kind: "MetaStar";
}

export interface NameNode extends Node {
  kind: "Name";
  value: string;
}

export interface TopicNode extends Node {
  kind: "Topic";
  name: string;
  quoted: boolean;
}

export interface LimitNode extends Node {
  kind: "Limit";
  skip: NumberLiteralNode | null;
  count: NumberLiteralNode;
}

export type ExpressionNode =
  | StringLiteralNode
  | NumberLiteralNode
  | BooleanLiteralNode
  | NullLiteralNode
  | FieldPathNode
  | MetaFieldNode
  | DecoderTypeNode
  | UnaryNode
  | BinaryNode
  | LikeNode
  | InNode
  | BetweenNode
  | IsNullNode
  | CallNode
  | CastNode;

export interface StringLiteralNode extends Node {
  kind: "StringLiteral";
  value: string;
}

export interface NumberLiteralNode extends Node {
  kind: "NumberLiteral";
  value: number;
}

export interface BooleanLiteralNode extends Node {
  kind: "BooleanLiteral";
  value: boolean;
}

export interface NullLiteralNode extends Node {
  kind: "NullLiteral";
}

export type PathSegment = { kind: "Field"; name: string; loc: Span } | { kind: "Index"; index: number; loc: Span };

/**
 * A path into the decoded key or value: `_key.a`, `_value[0]`, or a bare
 * `a.b[0].c`, which means the value. `rooted` tells whether `_key`/`_value`
 * was written.
 */
export interface FieldPathNode extends Node {
  kind: "FieldPath";
  source: "key" | "value";
  rooted: boolean;
  segments: PathSegment[];
}

export const META_FIELDS = ["__keysize", "__valuesize", "offset", "partition", "timestamp"] as const;
export type MetaField = (typeof META_FIELDS)[number];

/** `_meta.offset` and friends; `legacy` marks the old `_offset`, `_partition`, `_ts`. */
export interface MetaFieldNode extends Node {
  kind: "MetaField";
  field: MetaField;
  legacy: boolean;
}

/** The old `_ktype` / `_vtype` pseudo-fields, which choose a decoder. */
export interface DecoderTypeNode extends Node {
  kind: "DecoderType";
  side: "key" | "value";
}

export type UnaryOperator = "-" | "+" | "NOT";

export interface UnaryNode extends Node {
  kind: "Unary";
  operator: UnaryOperator;
  operand: ExpressionNode;
}

export type ArithmeticOperator = "+" | "-" | "*" | "/" | "%";
export type ComparisonOperator = "=" | "!=" | "<" | "<=" | ">" | ">=";
export type LogicalOperator = "AND" | "OR";
export type BinaryOperator = ArithmeticOperator | ComparisonOperator | LogicalOperator;

export interface BinaryNode extends Node {
  kind: "Binary";
  operator: BinaryOperator;
  left: ExpressionNode;
  right: ExpressionNode;
}

export interface LikeNode extends Node {
  kind: "Like";
  negated: boolean;
  subject: ExpressionNode;
  pattern: ExpressionNode;
}

export interface InNode extends Node {
  kind: "In";
  negated: boolean;
  subject: ExpressionNode;
  list: ExpressionNode[];
}

export interface BetweenNode extends Node {
  kind: "Between";
  negated: boolean;
  subject: ExpressionNode;
  low: ExpressionNode;
  high: ExpressionNode;
}

export interface IsNullNode extends Node {
  kind: "IsNull";
  negated: boolean;
  subject: ExpressionNode;
}

export interface CallNode extends Node {
  kind: "Call";
  /** Upper-cased function name. */
  name: string;
  nameLoc: Span;
  args: ExpressionNode[];
}

export const CAST_TYPES = ["BOOLEAN", "DOUBLE", "FLOAT", "INT", "LONG", "STRING"] as const;
export type CastType = (typeof CAST_TYPES)[number];

export interface CastNode extends Node {
  kind: "Cast";
  expression: ExpressionNode;
  type: CastType;
  typeLoc: Span;
}

export function isComparisonOperator(op: string): op is ComparisonOperator {
  return op === "=" || op === "!=" || op === "<" || op === "<=" || op === ">" || op === ">=";
}

/** The direct sub-expressions of a node, in source order. */
export function childExpressions(node: ExpressionNode): ExpressionNode[] {
  switch (node.kind) {
    case "Unary":
      return [node.operand];
    case "Binary":
      return [node.left, node.right];
    case "Like":
      return [node.subject, node.pattern];
    case "In":
      return [node.subject, ...node.list];
    case "Between":
      return [node.subject, node.low, node.high];
    case "IsNull":
      return [node.subject];
    case "Call":
      return node.args;
    case "Cast":
      return [node.expression];
    default:
      return [];
  }
}

/**
 * Rebuilds an expression bottom-up: `fn` sees each node after its children have
 * been rewritten, and returns the node to keep.
 */
export function mapExpression(node: ExpressionNode, fn: (node: ExpressionNode) => ExpressionNode): ExpressionNode {
  const map = (child: ExpressionNode): ExpressionNode => mapExpression(child, fn);
  switch (node.kind) {
    case "Unary":
      return fn({ ...node, operand: map(node.operand) });
    case "Binary":
      return fn({ ...node, left: map(node.left), right: map(node.right) });
    case "Like":
      return fn({ ...node, subject: map(node.subject), pattern: map(node.pattern) });
    case "In":
      return fn({ ...node, subject: map(node.subject), list: node.list.map(map) });
    case "Between":
      return fn({ ...node, subject: map(node.subject), low: map(node.low), high: map(node.high) });
    case "IsNull":
      return fn({ ...node, subject: map(node.subject) });
    case "Call":
      return fn({ ...node, args: node.args.map(map) });
    case "Cast":
      return fn({ ...node, expression: map(node.expression) });
    default:
      return fn(node);
  }
}

/** Visits every expression node, parents before children, in source order. */
export function walkExpression(node: ExpressionNode, visit: (node: ExpressionNode) => void): void {
  visit(node);
  for (const child of childExpressions(node)) walkExpression(child, visit);
}

/** SetStatement* InsertStatement: the statement that writes records (see insert.ts). */
export interface InsertDocumentNode extends Node {
  kind: "InsertDocument";
  settings: SetStatementNode[];
  insert: InsertNode;
}

export interface InsertNode extends Node {
  kind: "Insert";
  topic: TopicNode;
  columns: InsertColumnNode[];
  rows: InsertRowNode[];
}

/**
 * A column of an INSERT: `_key`, `_key.a`, `_value`, `_value.a` or a bare `a.b`, which is a
 * field of the value. `segments` are the names after the root (none for a whole `_key`).
 */
export interface InsertColumnNode extends Node {
  kind: "InsertColumn";
  target: "key" | "value";
  /** Whether `_key`/`_value` was written. */
  rooted: boolean;
  segments: { name: string; loc: Span }[];
}

export interface InsertRowNode extends Node {
  kind: "InsertRow";
  values: InsertValueNode[];
}

/**
 * A literal of a VALUES row, or a `?` placeholder of a prepared statement. `text` keeps what
 * was written (a number's digits, with its sign), so that a LONG keeps all 64 bits.
 */
export interface InsertValueNode extends Node {
  kind: "InsertValue";
  type: "string" | "number" | "boolean" | "null" | "placeholder";
  text: string;
}

/**
 * SetStatement* StreamStatement: a stream program, which runs until stopped and writes every
 * result to its target topic (see stream.ts).
 */
export interface StreamDocumentNode extends Node {
  kind: "StreamDocument";
  settings: SetStatementNode[];
  statement: StreamStatementNode;
}

export interface StreamStatementNode extends Node {
  kind: "StreamStatement";
  target: TopicNode;
  /** Whether SELECT STREAM was written (older clients leave it out). */
  stream: boolean;
  projection: ProjectionNode;
  from: TopicNode;
  where: ExpressionNode | null;
  groupBy: GroupByNode | null;
  /** Parsed so that the checks can refuse it at its position: a program has no end. */
  limit: LimitNode | null;
}

/** `GROUP BY [window,] fields` or `WINDOW BY window GROUP BY fields`. */
export interface GroupByNode extends Node {
  kind: "GroupBy";
  /** Where GROUP BY is written, for problems of the clause as a whole. */
  keywordLoc: Span;
  window: WindowNode | null;
  fields: ExpressionNode[];
}

/** `TUMBLE(1, m)`, `HOP(5, m, 1, m)`, `TUMBLE 1m`, `HOP 5m, 1m`. */
export interface WindowNode extends Node {
  kind: "Window";
  type: "tumble" | "hop";
  size: DurationNode;
  /** HOP only. */
  advance: DurationNode | null;
}

/** An amount and a time unit as written; checked (whole, positive) by the stream checks. */
export interface DurationNode extends Node {
  kind: "Duration";
  amount: number;
  amountText: string;
  amountLoc: Span;
  /** The unit in milliseconds. */
  unitMs: number;
}

/**
 * `COUNT(*)` in a stream program: a Call named COUNT with no arguments and `star` set. The snapshot
 * dialect has no aggregates and never builds one.
 */
export interface CountStarCallNode extends CallNode {
  star: true;
}
