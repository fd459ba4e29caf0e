/**
 * Turns an analyzed query into a plan the consumer can run: what to read
 * (topic, partitions, offset and time ranges, limits) and two closures, the
 * filter and the projection.
 *
 * Push-down only narrows what is fetched. It looks at the conditions joined by
 * AND at the top of WHERE; the filter always applies the whole condition, so a
 * record fetched by a loose range is still tested exactly.
 */
import { type AnalyzedQuery, conjuncts, type SampleHint } from "./analyzer.ts";
import type { ComparisonOperator, ExpressionNode, FieldPathNode, MetaField, SelectItemNode } from "./ast.ts";
import {
  compileExpression,
  compileExpressionPart,
  type EvaluationContext,
  type Evaluator,
  evaluateConstant,
  isConstant,
  readMeta,
} from "./evaluator.ts";
import { QueryLimitError, startRecord } from "./limits.ts";
import type { RecordView } from "./record.ts";
import type { QuerySettings } from "./settings.ts";
import { recordText, toNumber, typedRecordText } from "./values.ts";

/**
 * One end of an offset range, inclusive. `absolute` is an offset; `fromEnd`
 * is counted back from the partition's end offset (the next offset to be
 * written): `{kind: 'fromEnd', n: 10}` as a lower bound means "the last 10".
 */
export type OffsetBound = { kind: "absolute"; value: number } | { kind: "fromEnd"; n: number };

export interface OffsetRange {
  from?: OffsetBound;
  to?: OffsetBound;
}

/** Inclusive bounds in epoch milliseconds. */
export interface TimeRange {
  fromMs?: number;
  toMs?: number;
}

/**
 * The value's JSON text at a path of field names, written with the type the decoder read it as
 * (an Avro double as `0.0`, a decimal with its scale); undefined when it has none for the path.
 */
export type TypedValueText = (path: readonly string[]) => string | undefined;

export interface QueryPlan {
  topic: string;
  /**
   * Set on the plan of a continuous query (a live subscription, see the executor's followPlan):
   * read from the end offsets on and never end but when aborted.
   */
  follow?: boolean;
  settings: QuerySettings;
  /** Most records to return, after clamping to the configured maximum. */
  limit: number;
  /** Matching records to pass over before returning any (`LIMIT skip, n`). */
  skip: number;
  /** True when the query asked for more than the maximum. */
  limitClamped: boolean;
  /** Partitions to read, ascending; null means all. Empty means none can match. */
  partitions: number[] | null;
  offsetRange: OffsetRange;
  timeRange: TimeRange;
  /** The whole WHERE condition: true only when it is exactly true. */
  filter: (record: RecordView) => boolean;
  /** The output value of a record: the value itself for `*`, else an object. */
  project: (record: RecordView) => unknown;
  /**
   * The projected record's JSON text, bounded by QUERY_LIMITS.projectedRecord (QueryLimitError
   * beyond). With `typedAt`, a column that is a plain path into the value is written as the
   * decoder's typed text of that path when it has one (TypedValueText).
   */
  projectText: (record: RecordView, typedAt?: TypedValueText) => string;
  projectionIsStar: boolean;
  /** Output field names in order, or null for `*`. */
  columns: string[] | null;
  /** False when there is no condition left (no WHERE, or only decoder choices and hints). */
  hasFilter: boolean;
  /** `_sample`/`_sampleWindow`: at most `records` matching records per `windowMs`; null: all. */
  sample: SampleHint | null;
}

export interface PlanOptions {
  /** Highest LIMIT, also the LIMIT when none is written (default 10 000). */
  maxLimit?: number;
  /** Epoch milliseconds NOW() stands for (default: when the plan is made). */
  now?: number;
}

export const DEFAULT_MAX_LIMIT = 10_000;

export function planQuery(query: AnalyzedQuery, options: PlanOptions = {}): QueryPlan {
  const context: EvaluationContext = { now: options.now ?? Date.now() };
  const maxLimit = options.maxLimit ?? DEFAULT_MAX_LIMIT;
  const limitNode = query.select.limit;
  const requested = limitNode === null ? maxLimit : limitNode.count.value;

  const where = query.where;
  let filter: (record: RecordView) => boolean = () => true;
  if (where !== null) {
    const condition = compileExpression(where, context);
    filter = (record) => condition(record) === true;
  }

  const pushDown = new PushDown(context);
  if (where !== null) for (const conjunct of conjuncts(where)) pushDown.add(conjunct);

  const projection = query.select.projection;
  let project: (record: RecordView) => unknown = (record) => record.value;
  let projectText = (record: RecordView, _typedAt?: TypedValueText) => recordText(project(record));
  let columns: string[] | null = null;
  if (projection.kind === "ProjectionList") {
    const compiled = compileProjection(projection.items, context, query.source);
    project = compiled.project;
    columns = compiled.columns;
    const { valuePaths } = compiled;
    const names = compiled.columns;
    if (valuePaths.some((p) => p !== null)) {
      projectText = (record, typedAt) => {
        const values = compiled.project(record);
        if (typedAt === undefined) return recordText(values);
        return typedRecordText(names, values, (i) => {
          const path = valuePaths[i];
          return path === null || path === undefined ? undefined : typedAt(path);
        });
      };
    }
  }

  return {
    topic: query.topic,
    settings: query.settings,
    limit: Math.min(requested, maxLimit),
    skip: limitNode?.skip?.value ?? 0,
    limitClamped: requested > maxLimit,
    partitions: pushDown.partitions === null ? null : [...pushDown.partitions].sort((a, b) => a - b),
    offsetRange: pushDown.offsets,
    timeRange: pushDown.time,
    filter,
    project,
    projectText,
    projectionIsStar: projection.kind === "Star",
    columns,
    hasFilter: where !== null,
    sample: query.sample,
  };
}

// ---------------------------------------------------------------- projection

/**
 * Output names: the alias; else for a path its last field name with any
 * indexes after it (`a.b[0]` -> `b[0]`), `_key` or `_value` for the whole key
 * or value, the metadata name for `_meta.x` (`offset`, `__keysize`); else the
 * expression as written, with runs of whitespace made single spaces. A name
 * already used gets `_2`, `_3`, ... appended.
 */
function compileProjection(
  items: SelectItemNode[],
  context: EvaluationContext,
  source: string,
): {
  project: (record: RecordView) => Record<string, unknown>;
  columns: string[];
  /** Per column, the field names of a plain path into the value (`a.b`, `_value`), else null. */
  valuePaths: (readonly string[] | null)[];
} {
  const used = new Set<string>();
  const unique = (name: string): string => {
    let candidate = name;
    for (let i = 2; used.has(candidate); i++) candidate = `${name}_${i}`;
    used.add(candidate);
    return candidate;
  };
  const outputs: { name: string; evaluate: Evaluator; valuePath: readonly string[] | null }[] = [];
  for (const item of items) {
    if (item.kind === "MetaStar") {
      for (const field of META_ORDER) {
        outputs.push({ name: unique(field), evaluate: (r) => readMeta(field, r), valuePath: null });
      }
      continue;
    }
    const expression = item.expression;
    const name = item.alias?.value ?? defaultName(expression, source);
    outputs.push({ name: unique(name), evaluate: compileExpressionPart(expression, context), valuePath: valuePathOf(expression) });
  }
  // The columns of one record share one allowance of work.
  const project = (record: RecordView): Record<string, unknown> => {
    startRecord();
    const out: Record<string, unknown> = {};
    for (const { name, evaluate } of outputs) {
      const value = evaluate(record);
      // defineProperty keeps a column named "__proto__" an ordinary field.
      Object.defineProperty(out, name, { value: value === undefined ? null : value, enumerable: true, writable: true, configurable: true });
    }
    return out;
  };
  return { project, columns: outputs.map((o) => o.name), valuePaths: outputs.map((o) => o.valuePath) };
}

/** The field names of a path into the value made of field names only, else null. */
function valuePathOf(expression: ExpressionNode): readonly string[] | null {
  if (expression.kind !== "FieldPath" || expression.source !== "value") return null;
  const names: string[] = [];
  for (const s of expression.segments) {
    if (s.kind !== "Field") return null;
    names.push(s.name);
  }
  return names;
}

const META_ORDER: readonly MetaField[] = ["partition", "offset", "timestamp", "__keysize", "__valuesize"];

function defaultName(expression: ExpressionNode, source: string): string {
  if (expression.kind === "MetaField") return expression.field;
  if (expression.kind === "FieldPath") return pathName(expression);
  return source.slice(expression.loc.start, expression.loc.end).replace(/\s+/g, " ");
}

function pathName(path: FieldPathNode): string {
  let lastField = -1;
  path.segments.forEach((s, i) => {
    if (s.kind === "Field") lastField = i;
  });
  const root = path.source === "key" ? "_key" : "_value";
  const head = lastField < 0 ? root : (path.segments[lastField] as { name: string }).name;
  const indexes = path.segments
    .slice(lastField + 1)
    .map((s) => (s.kind === "Index" ? `[${s.index}]` : ""))
    .join("");
  return head + indexes;
}

// ----------------------------------------------------------------- push-down

const FLIP: Readonly<Record<ComparisonOperator, ComparisonOperator>> = {
  "=": "=",
  "!=": "!=",
  "<": ">",
  "<=": ">=",
  ">": "<",
  ">=": "<=",
};

class PushDown {
  partitions: Set<number> | null = null;
  readonly offsets: OffsetRange = {};
  readonly time: TimeRange = {};

  constructor(private readonly context: EvaluationContext) {}

  add(node: ExpressionNode): void {
    if (node.kind === "Binary") {
      if (node.operator === "AND" || node.operator === "OR" || !(node.operator in FLIP)) return;
      const op = node.operator as ComparisonOperator;
      if (node.left.kind === "MetaField") this.compare(node.left.field, op, node.right);
      else if (node.right.kind === "MetaField") this.compare(node.right.field, FLIP[op], node.left);
    } else if (node.kind === "Between" && !node.negated && node.subject.kind === "MetaField") {
      this.compare(node.subject.field, ">=", node.low);
      this.compare(node.subject.field, "<=", node.high);
    } else if (node.kind === "In" && !node.negated && node.subject.kind === "MetaField") {
      this.list(node.subject.field, node.list);
    }
  }

  /** A constant over a limit is not pushed down: the filter fails the records with that limit's error. */
  private constantNumber(node: ExpressionNode): number | null {
    if (!isConstant(node)) return null;
    try {
      return toNumber(evaluateConstant(node, this.context));
    } catch (error) {
      if (error instanceof QueryLimitError) return null;
      throw error;
    }
  }

  /** `LAST_OFFSET()`, `LAST_OFFSET() - n` or `LAST_OFFSET() + n` as n back from the end. */
  private fromEnd(node: ExpressionNode): number | null {
    if (isLastOffset(node)) return 0;
    if (node.kind === "Binary" && (node.operator === "-" || node.operator === "+") && isLastOffset(node.left)) {
      const n = this.constantNumber(node.right);
      if (n === null) return null;
      return node.operator === "-" ? n : -n;
    }
    return null;
  }

  private compare(field: MetaField, op: ComparisonOperator, other: ExpressionNode): void {
    if (op === "!=") return;
    if (field === "partition") {
      const n = this.constantNumber(other);
      if (op === "=" && n !== null) this.restrictPartitions([n]);
      return;
    }
    if (field === "offset") {
      const n = this.constantNumber(other);
      if (n !== null) {
        if (op !== "<" && op !== "<=") this.offsetFrom({ kind: "absolute", value: op === ">" ? Math.floor(n) + 1 : Math.ceil(n) });
        if (op !== ">" && op !== ">=") this.offsetTo({ kind: "absolute", value: op === "<" ? Math.ceil(n) - 1 : Math.floor(n) });
        return;
      }
      // offset >= end - n  <=>  offset >= end - floor(n), since offsets are integers.
      const back = this.fromEnd(other);
      if (back !== null) {
        if (op !== "<" && op !== "<=") this.offsetFrom({ kind: "fromEnd", n: op === ">" ? Math.ceil(back) - 1 : Math.floor(back) });
        if (op !== ">" && op !== ">=") this.offsetTo({ kind: "fromEnd", n: op === "<" ? Math.floor(back) + 1 : Math.ceil(back) });
      }
      return;
    }
    if (field === "timestamp") {
      const n = this.constantNumber(other);
      if (n === null) return;
      if (op !== "<" && op !== "<=") this.timeFrom(op === ">" ? Math.floor(n) + 1 : Math.ceil(n));
      if (op !== ">" && op !== ">=") this.timeTo(op === "<" ? Math.ceil(n) - 1 : Math.floor(n));
    }
  }

  private list(field: MetaField, items: ExpressionNode[]): void {
    const values: number[] = [];
    for (const item of items) {
      const n = this.constantNumber(item);
      if (n === null) return; // an item that is not a known number: no push-down
      values.push(n);
    }
    if (field === "partition") {
      this.restrictPartitions(values);
    } else if (field === "offset" || field === "timestamp") {
      const low = Math.min(...values);
      const high = Math.max(...values);
      this.compare(field, ">=", { kind: "NumberLiteral", value: low, loc: { start: 0, end: 0 } });
      this.compare(field, "<=", { kind: "NumberLiteral", value: high, loc: { start: 0, end: 0 } });
    }
  }

  private restrictPartitions(values: number[]): void {
    const wanted = new Set(values.filter((v) => Number.isInteger(v) && v >= 0));
    this.partitions = this.partitions === null ? wanted : new Set([...this.partitions].filter((p) => wanted.has(p)));
  }

  /** Keeps the tighter bound when both are of one kind; else the first one. */
  private offsetFrom(bound: OffsetBound): void {
    const current = this.offsets.from;
    if (current === undefined) this.offsets.from = bound;
    else if (current.kind === "absolute" && bound.kind === "absolute") current.value = Math.max(current.value, bound.value);
    else if (current.kind === "fromEnd" && bound.kind === "fromEnd") current.n = Math.min(current.n, bound.n);
  }

  private offsetTo(bound: OffsetBound): void {
    const current = this.offsets.to;
    if (current === undefined) this.offsets.to = bound;
    else if (current.kind === "absolute" && bound.kind === "absolute") current.value = Math.min(current.value, bound.value);
    else if (current.kind === "fromEnd" && bound.kind === "fromEnd") current.n = Math.max(current.n, bound.n);
  }

  private timeFrom(ms: number): void {
    this.time.fromMs = this.time.fromMs === undefined ? ms : Math.max(this.time.fromMs, ms);
  }

  private timeTo(ms: number): void {
    this.time.toMs = this.time.toMs === undefined ? ms : Math.min(this.time.toMs, ms);
  }
}

function isLastOffset(node: ExpressionNode): boolean {
  return node.kind === "Call" && node.name === "LAST_OFFSET" && node.args.length === 0;
}

/**
 * The offsets to read in one partition whose records span [begin, end):
 * `from` inclusive, `to` exclusive; empty when from >= to.
 */
export function resolveOffsetRange(range: OffsetRange, begin: number, end: number): { from: number; to: number } {
  const at = (bound: OffsetBound): number => (bound.kind === "absolute" ? bound.value : end - bound.n);
  const from = Math.max(begin, range.from === undefined ? begin : at(range.from));
  const to = Math.min(end, range.to === undefined ? end : at(range.to) + 1);
  return { from, to: Math.max(from, to) };
}
