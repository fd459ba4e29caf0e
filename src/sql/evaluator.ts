/**
 * Turns expression trees into closures over a RecordView. Nothing in a query
 * is ever run as code: every node maps to a fixed JavaScript function chosen
 * here, and literals stay data. Semantics of values are in values.ts.
 */
import type { CastType, ExpressionNode, MetaField } from "./ast.ts";
import { FUNCTIONS } from "./functions.ts";
import { likePatternTooLong, QUERY_LIMITS, QueryLimitError, spend, startRecord } from "./limits.ts";
import { lookup } from "./lookup.ts";
import type { RecordView } from "./record.ts";
import {
  and,
  codePointLength,
  compareValues,
  equalValues,
  getField,
  getIndex,
  isNull,
  LikePattern,
  likeText,
  not,
  or,
  toLogic,
  toNumber,
  toText,
} from "./values.ts";

export type Evaluator = (record: RecordView) => unknown;

export interface EvaluationContext {
  /** Epoch milliseconds that NOW() returns. */
  now: number;
}

const META: Readonly<Record<MetaField, (record: RecordView) => number>> = {
  offset: (r) => r.offset,
  partition: (r) => r.partition,
  timestamp: (r) => r.timestamp,
  __keysize: (r) => r.keySize,
  __valuesize: (r) => r.valueSize,
};

export function readMeta(field: MetaField, record: RecordView): number {
  return META[field](record);
}

/** True when the node reads nothing from the record, so it can be computed once. */
export function isConstant(node: ExpressionNode): boolean {
  switch (node.kind) {
    case "FieldPath":
    case "MetaField":
    case "DecoderType":
      return false;
    case "Call": {
      const definition = lookup(FUNCTIONS, node.name);
      return definition?.pure === true && node.args.every(isConstant);
    }
    case "Unary":
      return isConstant(node.operand);
    case "Binary":
      return isConstant(node.left) && isConstant(node.right);
    case "Like":
      return isConstant(node.subject) && isConstant(node.pattern);
    case "In":
      return isConstant(node.subject) && node.list.every(isConstant);
    case "Between":
      return isConstant(node.subject) && isConstant(node.low) && isConstant(node.high);
    case "IsNull":
      return isConstant(node.subject);
    case "Cast":
      return isConstant(node.expression);
    default:
      return true;
  }
}

/** A record for evaluating constants; reading from it is a bug. */
const NO_RECORD: RecordView = {
  key: null,
  value: null,
  partition: -1,
  offset: -1,
  timestamp: 0,
  keySize: 0,
  valueSize: 0,
  lastOffset: () => {
    throw new Error("a constant expression read the record");
  },
};

/** The value of a constant expression (see isConstant). */
export function evaluateConstant(node: ExpressionNode, context: EvaluationContext): unknown {
  return compileExpression(node, context)(NO_RECORD);
}

/**
 * Compiles an expression evaluated on its own: each call of the result is one
 * record's evaluation, with its own allowance of work (QUERY_LIMITS.recordWork).
 */
export function compileExpression(node: ExpressionNode, context: EvaluationContext): Evaluator {
  const evaluate = compile(node, context);
  return (record) => {
    startRecord();
    return evaluate(record);
  };
}

/**
 * Compiles one part of a record's evaluation (a column of a projection): the
 * caller calls startRecord() once per record, so the parts share the allowance.
 */
export function compileExpressionPart(node: ExpressionNode, context: EvaluationContext): Evaluator {
  return compile(node, context);
}

function compile(node: ExpressionNode, context: EvaluationContext): Evaluator {
  switch (node.kind) {
    case "StringLiteral":
    case "NumberLiteral":
    case "BooleanLiteral": {
      const value = node.value;
      return () => value;
    }
    case "NullLiteral":
      return () => null;
    case "FieldPath":
      return compilePath(node.source, node.segments);
    case "MetaField":
      return META[node.field];
    case "DecoderType":
      // The analyzer removes or rejects these; reaching here is a bug.
      throw new Error("decoder choice left in an expression");
    case "Unary": {
      const operand = compile(node.operand, context);
      switch (node.operator) {
        case "NOT":
          return (r) => not(toLogic(operand(r)));
        case "-":
          return (r) => {
            const n = toNumber(operand(r));
            return n === null ? null : n === 0 ? 0 : -n;
          };
        case "+":
          return (r) => toNumber(operand(r));
      }
      break;
    }
    case "Binary": {
      const left = compile(node.left, context);
      const right = compile(node.right, context);
      switch (node.operator) {
        case "AND":
          // Short-circuit: a false left side decides.
          return (r) => {
            const a = toLogic(left(r));
            return a === false ? false : and(a, toLogic(right(r)));
          };
        case "OR":
          return (r) => {
            const a = toLogic(left(r));
            return a === true ? true : or(a, toLogic(right(r)));
          };
        case "=":
          return (r) => equalValues(left(r), right(r));
        case "!=":
          return (r) => not(equalValues(left(r), right(r)));
        case "<":
          return (r) => ordered(left(r), right(r), (c) => c < 0);
        case "<=":
          return (r) => ordered(left(r), right(r), (c) => c <= 0);
        case ">":
          return (r) => ordered(left(r), right(r), (c) => c > 0);
        case ">=":
          return (r) => ordered(left(r), right(r), (c) => c >= 0);
        default: {
          const op = ARITHMETIC[node.operator];
          return (r) => {
            const a = toNumber(left(r));
            const b = toNumber(right(r));
            if (a === null || b === null) return null;
            const result = op(a, b);
            return result === null || !Number.isFinite(result) ? null : result;
          };
        }
      }
    }
    case "Like": {
      const subject = compile(node.subject, context);
      const pattern = compileLikePattern(node.pattern, context);
      const negated = node.negated;
      return (r) => {
        const text = likeText(subject(r));
        if (text === null) return null;
        const like = pattern(r);
        if (like === null) return null;
        // Matching scans the text once per 32 code points of the longest middle segment.
        if (like.cost > 0) spend(text.length * like.cost, "LIKE");
        const result = like.matches(text);
        return negated ? not(result) : result;
      };
    }
    case "In": {
      const subject = compile(node.subject, context);
      const list = node.list.map((item) => compile(item, context));
      const negated = node.negated;
      return (r) => {
        const value = subject(r);
        if (isNull(value)) return null;
        // SQL: true on a match; otherwise unknown if any item was null, else false.
        let result: boolean | null = false;
        for (const item of list) {
          const equal = equalValues(value, item(r));
          if (equal === true) {
            result = true;
            break;
          }
          if (equal === null) result = null;
        }
        return negated ? not(result) : result;
      };
    }
    case "Between": {
      const subject = compile(node.subject, context);
      const low = compile(node.low, context);
      const high = compile(node.high, context);
      const negated = node.negated;
      return (r) => {
        const value = subject(r);
        const result = and(
          ordered(value, low(r), (c) => c >= 0),
          ordered(value, high(r), (c) => c <= 0),
        );
        return negated ? not(result) : result;
      };
    }
    case "IsNull": {
      const subject = compile(node.subject, context);
      const negated = node.negated;
      return (r) => isNull(subject(r)) !== negated;
    }
    case "Call": {
      const definition = lookup(FUNCTIONS, node.name);
      if (definition === undefined) throw new Error(`unknown function ${node.name} reached the evaluator`);
      const args = node.args.map((arg) => compile(arg, context));
      const now = context.now;
      return (record) =>
        definition.call(
          args.map((arg) => arg(record)),
          { record, now },
        );
    }
    case "Cast": {
      const inner = compile(node.expression, context);
      const convert = CASTS[node.type];
      return (r) => {
        const value = inner(r);
        return isNull(value) ? null : convert(value);
      };
    }
  }
  throw new Error(`unhandled expression node ${(node as ExpressionNode).kind}`);
}

function ordered(a: unknown, b: unknown, test: (order: number) => boolean): boolean | null {
  const order = compareValues(a, b);
  return order === null ? null : test(order);
}

const ARITHMETIC: Readonly<Record<"+" | "-" | "*" | "/" | "%", (a: number, b: number) => number | null>> = {
  "+": (a, b) => a + b,
  "-": (a, b) => a - b,
  "*": (a, b) => a * b,
  "/": (a, b) => (b === 0 ? null : a / b),
  "%": (a, b) => (b === 0 ? null : a % b),
};

/**
 * A literal pattern is compiled once; a computed one on each record where it
 * changes. A pattern over the limit fails the record's evaluation (the
 * analyzer refuses a literal one before that).
 */
function compileLikePattern(node: ExpressionNode, context: EvaluationContext): (record: RecordView) => LikePattern | null {
  if (isConstant(node)) {
    let constant: LikePattern | null;
    try {
      constant = toLikePattern(evaluateConstant(node, context));
    } catch (error) {
      // A constant over a limit fails the records, like a computed one.
      if (!(error instanceof QueryLimitError)) throw error;
      return () => {
        throw error;
      };
    }
    return () => constant;
  }
  const evaluate = compile(node, context);
  let lastSource: unknown = null;
  let last: LikePattern | null = null;
  return (r) => {
    const source = evaluate(r);
    if (source !== lastSource || last === null) {
      last = toLikePattern(source);
      lastSource = source;
    }
    return last;
  };
}

function toLikePattern(value: unknown): LikePattern | null {
  const source = likeText(value);
  if (source === null) return null;
  // Code points are at least one code unit: a short text needs no counting.
  if (source.length > QUERY_LIMITS.likePattern) {
    const length = codePointLength(source);
    if (length > QUERY_LIMITS.likePattern) throw likePatternTooLong(length);
  }
  const like = new LikePattern(source);
  // Compiling builds a mask of (pattern length / 32) words per distinct code point.
  spend(like.length * Math.max(1, like.cost), "LIKE");
  return like;
}

function compilePath(
  source: "key" | "value",
  segments: readonly ({ kind: "Field"; name: string } | { kind: "Index"; index: number })[],
): Evaluator {
  const steps = segments.map((s) => (s.kind === "Field" ? s.name : s.index));
  const root: Evaluator = source === "key" ? (r) => r.key : (r) => r.value;
  if (steps.length === 0) return root;
  return (r) => {
    let current = root(r);
    for (const step of steps) {
      if (isNull(current)) return undefined;
      current = typeof step === "number" ? getIndex(current, step) : getField(current, step);
    }
    return current;
  };
}

const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;

/**
 * CAST conversions; a value that cannot be converted gives null.
 * INT and LONG truncate toward zero; INT must fit 32 bits, LONG must be a safe
 * integer. FLOAT is the same as DOUBLE. BOOLEAN reads booleans, the strings
 * 'true'/'false' (any case) and numbers (0 is false).
 */
const CASTS: Readonly<Record<CastType, (value: unknown) => unknown>> = {
  STRING: (v) => toText(v, "CAST"),
  INT: (v) => {
    const n = toNumber(v);
    if (n === null) return null;
    const t = Math.trunc(n);
    return t < INT_MIN || t > INT_MAX ? null : t === 0 ? 0 : t;
  },
  LONG: (v) => {
    const n = toNumber(v);
    if (n === null) return null;
    const t = Math.trunc(n);
    return Number.isSafeInteger(t) ? (t === 0 ? 0 : t) : null;
  },
  DOUBLE: (v) => toNumber(v),
  FLOAT: (v) => toNumber(v),
  BOOLEAN: (v) => {
    if (typeof v === "boolean") return v;
    if (typeof v === "string") {
      const s = v.trim().toLowerCase();
      if (s === "true") return true;
      if (s === "false") return false;
    }
    const n = typeof v === "number" || typeof v === "bigint" ? toNumber(v) : null;
    return n === null ? null : n !== 0;
  },
};
