/**
 * Semantic checks of a stream program. What a program shares with a query (the source topic and
 * its access, known fields, functions, decoder choices in WHERE and SET, timestamps compared
 * with strings) is checked by the query analyzer itself, on a query made of the program's
 * parts; this file checks what only programs have: the target, settings, aggregates, GROUP BY
 * and windows.
 *
 * Aggregates are handed to the query analyzer as COALESCE calls over their argument (COUNT(*)
 * over NULL), so that their arguments are checked like any expression; the calls keep an
 * `aggregateIndex` that survives the analyzer's rewriting, and are found again afterwards.
 *
 * As with queries, every problem is collected and the one that starts first in the text is
 * thrown.
 */
import { type AnalyzedQuery, analyze, type Catalog, type TopicAllowed, topicRefusal } from "./analyzer.ts";
import {
  type CallNode,
  childExpressions,
  type DocumentNode,
  type DurationNode,
  type ExpressionItemNode,
  type ExpressionNode,
  type ProjectionListNode,
  type SelectItemNode,
  type SelectNode,
  type SetStatementNode,
  type StreamDocumentNode,
  type WindowNode,
  walkExpression,
} from "./ast.ts";
import { describeChoices, quote, type Span, SqlError, syntaxError } from "./errors.ts";
import { STREAM_LIMITS } from "./limits.ts";
import {
  applyProgramSetting,
  classifyProgramSetting,
  DEFAULT_PROGRAM_SETTINGS,
  PROGRAM_SETTING_NAMES,
  type ProgramSettings,
} from "./stream-settings.ts";

export const AGGREGATE_FUNCTIONS = ["AVG", "COUNT", "MAX", "MIN", "SUM"] as const;
export type AggregateFunction = (typeof AGGREGATE_FUNCTIONS)[number];

const AGGREGATE_CHOICES = "COUNT(*), COUNT, SUM, AVG, MIN or MAX in the projection";

export function isAggregateCall(node: ExpressionNode): node is CallNode {
  return node.kind === "Call" && (AGGREGATE_FUNCTIONS as readonly string[]).includes(node.name);
}

/** An aggregate placeholder after analysis: COALESCE over the resolved argument. */
export type Placeholder = CallNode & { aggregateIndex: number };

export function placeholderIndex(node: ExpressionNode): number | null {
  const index = (node as Partial<Placeholder>).aggregateIndex;
  return node.kind === "Call" && typeof index === "number" ? index : null;
}

export interface AggregateUse {
  fn: AggregateFunction;
  /** COUNT(*). */
  star: boolean;
  /** The resolved argument; null for COUNT(*). */
  arg: ExpressionNode | null;
}

export interface AnalyzedWindow {
  kind: "tumble" | "hop";
  sizeMs: number;
  advanceMs: number;
}

export interface AnalyzedStream {
  sql: string;
  source: string;
  target: string;
  program: ProgramSettings;
  /** The query the program's filter and projection are planned from (the `AS _key` item left out). */
  query: AnalyzedQuery;
  /** The resolved `AS _key` expression, or null: the output keeps the input record's key. */
  keyItem: ExpressionNode | null;
  /** Null: no GROUP BY. */
  groupBy: { window: AnalyzedWindow | null; fields: ExpressionNode[] } | null;
  /** Every aggregate of the projection, in source order; their placeholders carry the index. */
  aggregates: AggregateUse[];
}

/**
 * How the target's records come back to the source through other programs: the chain
 * ("'b' -> 'a' (processor 'p')"), or null when they never do. Writing such a target closes a
 * cycle in which every record is copied round forever.
 */
export type TargetLoop = (target: string, source: string) => string | null;

/**
 * Whether a topic is compacted (its cleanup.policy has `compact`); undefined where it is not
 * known. Absent: nothing is known of topics' policies beyond what the catalog says.
 */
export type TopicCompacted = (topic: string) => boolean | undefined;

export function analyzeStream(
  sql: string,
  document: StreamDocumentNode,
  catalog: Catalog | null,
  allowed?: TopicAllowed,
  loop?: TargetLoop,
  compacted?: TopicCompacted,
): AnalyzedStream {
  return new StreamAnalyzer(sql, catalog, allowed, loop, compacted).run(document);
}

class StreamAnalyzer {
  private readonly problems: SqlError[] = [];

  constructor(
    private readonly sql: string,
    private readonly catalog: Catalog | null,
    private readonly allowed?: TopicAllowed,
    private readonly loop?: TargetLoop,
    private readonly compacted?: TopicCompacted,
  ) {}

  private fail(at: Span, what: string, expected?: string): void {
    this.problems.push(syntaxError(this.sql, at, what, expected));
  }

  run(document: StreamDocumentNode): AnalyzedStream {
    const statement = document.statement;
    const { program, decoders } = this.applySettings(document.settings);
    if (statement.limit !== null) {
      this.fail(statement.limit.loc, "LIMIT in a stream program", "no LIMIT: a program runs until it is stopped");
    }
    this.checkTarget(statement.target.name, statement.target.loc, statement.from.name, statement.from.loc, program.autoCreate);

    // The projection: the `AS _key` item apart, aggregates found and replaced by placeholders.
    const projection = statement.projection;
    const rawItems: SelectItemNode[] = projection.kind === "Star" ? [] : projection.items;
    let keyIndex = -1;
    rawItems.forEach((item, i) => {
      if (item.kind !== "ExpressionItem" || !this.isKeyAlias(item)) return;
      if (keyIndex >= 0) this.fail(item.alias!.loc, "Duplicate _key", "one item AS _key");
      else keyIndex = i;
    });
    const aggregateNodes: CallNode[] = [];
    const withPlaceholders = rawItems.map((item) =>
      item.kind === "MetaStar" ? item : { ...item, expression: this.replaceAggregates(item.expression, aggregateNodes) },
    );
    if (statement.where !== null) {
      this.refuseAggregates(statement.where, (name) => `Aggregate ${name} in WHERE`, "conditions on each record, without aggregates");
    }

    // GROUP BY: aliases of the projection resolved, the window checked.
    const groupBy = statement.groupBy;
    const groupFields: ExpressionNode[] = [];
    let window: AnalyzedWindow | null = null;
    if (groupBy !== null) {
      for (const field of groupBy.fields) groupFields.push(this.resolveAlias(field, rawItems));
      if (groupBy.window !== null) window = this.checkWindow(groupBy.window);
      this.checkGrouping(statement.projection, rawItems, keyIndex, groupFields, groupBy, aggregateNodes.length > 0);
    } else {
      const first = aggregateNodes[0];
      if (first !== undefined) {
        this.fail(first.nameLoc, `Aggregate ${first.name} without GROUP BY`, "GROUP BY with the fields to aggregate by");
      }
    }

    this.checkKeyForCompaction(statement.target.name, program.autoCreate, rawItems, keyIndex, groupBy, groupFields);

    for (const item of rawItems) if (item.kind === "ExpressionItem") this.refuseSnapshotOnly(item.expression);
    if (statement.where !== null) this.refuseSnapshotOnly(statement.where);
    for (const field of groupBy?.fields ?? []) this.refuseSnapshotOnly(field);

    // What a query shares: handed to the query analyzer, group fields appended as items.
    const extra: ExpressionItemNode[] = groupFields.map((expression) => ({
      kind: "ExpressionItem",
      expression,
      alias: null,
      loc: expression.loc,
    }));
    const items = [...withPlaceholders, ...extra];
    const select: SelectNode = {
      kind: "Select",
      projection: projection.kind === "Star" ? projection : ({ ...projection, items } satisfies ProjectionListNode),
      from: statement.from,
      where: statement.where,
      limit: null,
      loc: statement.loc,
    };
    const queryDocument: DocumentNode = { kind: "Document", settings: decoders, select, loc: document.loc };
    let analyzed: AnalyzedQuery | null = null;
    try {
      analyzed = analyze(this.sql, queryDocument, this.catalog, this.allowed);
    } catch (error) {
      if (!(error instanceof SqlError)) throw error;
      this.problems.push(error);
    }

    let first: SqlError | undefined;
    for (const problem of this.problems) if (first === undefined || problem.position < first.position) first = problem;
    if (first !== undefined) throw first;
    const query = analyzed as AnalyzedQuery;

    // Back from the analyzer: resolved items, split into the key, the value items and the group fields.
    const resolved = query.select.projection.kind === "Star" ? [] : query.select.projection.items;
    const resolvedItems = resolved.slice(0, rawItems.length);
    const resolvedFields = resolved.slice(rawItems.length).map((item) => (item as ExpressionItemNode).expression);
    const aggregates: AggregateUse[] = aggregateNodes.map((node) => ({
      fn: node.name as AggregateFunction,
      star: node.args.length === 0,
      arg: null,
    }));
    for (const item of resolvedItems) {
      if (item.kind === "MetaStar") continue;
      walkExpression(item.expression, (node) => {
        const index = placeholderIndex(node);
        const use = index === null ? undefined : aggregates[index];
        if (use !== undefined && !use.star) use.arg = (node as CallNode).args[0] ?? null;
      });
    }
    const keyItem = keyIndex < 0 ? null : (resolvedItems[keyIndex] as ExpressionItemNode).expression;
    const valueItems = resolvedItems.filter((_, i) => i !== keyIndex);
    const valueProjection = projection.kind === "Star" ? projection : ({ ...projection, items: valueItems } satisfies ProjectionListNode);
    return {
      sql: this.sql,
      source: statement.from.name,
      target: statement.target.name,
      program,
      query: { ...query, select: { ...query.select, projection: valueProjection } },
      keyItem,
      groupBy: groupBy === null ? null : { window, fields: resolvedFields },
      aggregates,
    };
  }

  /** Program settings applied here; the decoder settings kept for the query analyzer. */
  private applySettings(statements: SetStatementNode[]): { program: ProgramSettings; decoders: SetStatementNode[] } {
    const program: ProgramSettings = { ...DEFAULT_PROGRAM_SETTINGS };
    const decoders: SetStatementNode[] = [];
    for (const statement of statements) {
      const kind = classifyProgramSetting(statement.key);
      if (kind === "decoder") {
        decoders.push(statement);
      } else if (kind === "unknown") {
        this.fail(statement.keyLoc, `Unknown setting ${quote(statement.key)}`, describeChoices(PROGRAM_SETTING_NAMES));
      } else {
        const expected = applyProgramSetting(program, statement.key, statement.value.text);
        if (expected !== null) {
          this.fail(statement.value.loc, `Invalid value ${quote(statement.value.text)} for ${statement.key.toLowerCase()}`, expected);
        }
      }
    }
    return { program, decoders };
  }

  /** The target: writable, existing unless created, and not the source. */
  private checkTarget(target: string, targetLoc: Span, source: string, sourceLoc: Span, autoCreate: boolean): void {
    const refused = topicRefusal(this.allowed, target, "write");
    if (refused) {
      this.fail(targetLoc, refused);
    } else if (this.catalog !== null && !autoCreate && !this.catalog.topicExists(target)) {
      this.fail(targetLoc, `Unknown topic ${quote(target)}`, "an existing target topic, or SET autocreate = true; to create it");
    }
    if (source === target) {
      this.fail(sourceLoc, `The source is the target topic ${quote(target)}`, "a source other than the target");
    } else {
      const chain = this.loop?.(target, source);
      if (chain) {
        this.fail(
          targetLoc,
          `Writing ${quote(target)} closes a cycle of processors: ${chain}`,
          `a target from which no processor leads back to ${quote(source)}`,
        );
      }
    }
  }

  /**
   * A compacted topic refuses a record without a key, and one such record fails the whole
   * transaction it is in. Where the program makes the key (`AS _key`, or the GROUP BY of an
   * aggregation), a target known to be compacted (an existing compacted topic, or the topic
   * autocreated for a table) needs a key that is never null. A program that keeps its input's
   * keys is not refused here: its records without a key follow error.policy when they come.
   */
  private checkKeyForCompaction(
    target: string,
    autoCreate: boolean,
    items: SelectItemNode[],
    keyIndex: number,
    groupBy: StreamDocumentNode["statement"]["groupBy"],
    groupFields: ExpressionNode[],
  ): void {
    const table = groupBy !== null && groupBy.window === null;
    const known = this.compacted?.(target);
    const autocreatedTable = this.catalog !== null && !this.catalog.topicExists(target) && autoCreate && table;
    if (!(known ?? autocreatedTable)) return;
    const where = known ? `the compacted topic ${quote(target)}` : `topic ${quote(target)}, created compacted for a table,`;
    const keyItem = keyIndex >= 0 ? items[keyIndex] : undefined;
    if (keyItem?.kind === "ExpressionItem") {
      if (neverNull(keyItem.expression)) return;
      const text = this.sql.slice(keyItem.expression.loc.start, keyItem.expression.loc.end);
      this.fail(
        keyItem.expression.loc,
        `The key ${quote(text)} may be null, and ${where} takes no record without a key`,
        `a key that is never null, such as COALESCE(${text}, 'none') AS _key`,
      );
      return;
    }
    if (groupBy === null) return;
    if (groupBy.fields.length === 0) {
      this.fail(
        groupBy.keywordLoc,
        `A GROUP BY without fields writes its results without a key, and ${where} takes no record without a key`,
        "a GROUP BY field, or an item AS _key that is never null",
      );
      return;
    }
    // Several fields key the output by their JSON array, which is never null.
    const [only] = groupFields;
    const at = groupBy.fields[0];
    if (groupBy.fields.length > 1 || only === undefined || at === undefined || neverNull(only)) return;
    const text = this.sql.slice(at.loc.start, at.loc.end);
    this.fail(
      at.loc,
      `The key ${quote(text)} may be null, and ${where} takes no record without a key`,
      `a key that is never null, such as COALESCE(${text}, 'none') AS _key in the projection`,
    );
  }

  /** An unquoted alias `_key`, in any case: the item is the output record's key. */
  private isKeyAlias(item: ExpressionItemNode): boolean {
    const alias = item.alias;
    return alias !== null && alias.value.toLowerCase() === "_key" && this.sql[alias.loc.start] !== "`";
  }

  /**
   * The expression with each aggregate replaced by its placeholder (top-down, so that a nested
   * aggregate is reported and not counted). Arity is checked here: COALESCE accepts anything.
   */
  private replaceAggregates(node: ExpressionNode, found: CallNode[]): ExpressionNode {
    if (isAggregateCall(node)) {
      const star = (node as { star?: boolean }).star === true;
      if (!star && node.args.length !== 1) {
        const expected = node.name === "COUNT" ? "'*' or 1 argument" : "1 argument";
        this.fail(node.nameLoc, `Wrong number of arguments to ${node.name}`, `${expected}, found ${node.args.length}`);
      }
      for (const arg of node.args) {
        this.refuseAggregates(arg, (name) => `Nested aggregate ${name}`, `an expression without aggregates inside ${node.name}`);
      }
      const index = found.length;
      found.push(node);
      const args: ExpressionNode[] = star ? [{ kind: "NullLiteral", loc: node.loc }] : node.args.slice(0, 1);
      if (args.length === 0) args.push({ kind: "NullLiteral", loc: node.loc });
      const placeholder: Placeholder = {
        kind: "Call",
        name: "COALESCE",
        nameLoc: node.nameLoc,
        args,
        loc: node.loc,
        aggregateIndex: index,
      };
      return placeholder;
    }
    return rebuild(node, (child) => this.replaceAggregates(child, found));
  }

  /** Aggregates where each record is looked at on its own: WHERE, GROUP BY, inside another aggregate. */
  private refuseAggregates(node: ExpressionNode, what: (name: string) => string, expected: string): void {
    walkExpression(node, (inner) => {
      if (isAggregateCall(inner)) this.fail(inner.nameLoc, what(inner.name), expected);
    });
  }

  /**
   * What only a snapshot has: the end of a partition (LAST_OFFSET()), which a program that never
   * ends does not reach, and sampling of a live view (`_sample`), which would drop records from
   * the output.
   */
  private refuseSnapshotOnly(node: ExpressionNode): void {
    walkExpression(node, (inner) => {
      if (inner.kind === "Call" && inner.name === "LAST_OFFSET") {
        this.fail(inner.nameLoc, "LAST_OFFSET() in a stream program", "conditions on each record: a program has no last offset");
      }
      if (inner.kind !== "FieldPath" || inner.rooted || inner.segments.length !== 1) return;
      const only = inner.segments[0]!;
      const name = only.kind === "Field" ? only.name.toLowerCase() : "";
      if (name === "_sample" || name === "_samplewindow") {
        this.fail(
          inner.loc,
          `Sampling (${only.kind === "Field" ? only.name : ""}) in a stream program`,
          "every record: a program does not sample",
        );
      }
    });
  }

  /** A bare name in GROUP BY that is an alias of the projection stands for that item's expression. */
  private resolveAlias(field: ExpressionNode, items: SelectItemNode[]): ExpressionNode {
    this.refuseAggregates(field, (name) => `Aggregate ${name} in GROUP BY`, "fields or expressions of each record");
    if (field.kind !== "FieldPath" || field.rooted || field.segments.length !== 1) return field;
    const only = field.segments[0]!;
    if (only.kind !== "Field") return field;
    for (const item of items) {
      if (item.kind !== "ExpressionItem" || item.alias?.value !== only.name || this.isKeyAlias(item)) continue;
      let aggregate = false;
      walkExpression(item.expression, (node) => {
        aggregate ||= isAggregateCall(node);
      });
      if (aggregate) {
        this.fail(field.loc, `GROUP BY ${quote(only.name)} names an aggregate`, "fields or expressions of each record");
        return field;
      }
      return item.expression;
    }
    return field;
  }

  private checkWindow(node: WindowNode): AnalyzedWindow | null {
    const size = this.durationMs(node.size);
    if (node.type === "tumble") return size === null ? null : { kind: "tumble", sizeMs: size, advanceMs: size };
    const advanceNode = node.advance as DurationNode;
    const advance = this.durationMs(advanceNode);
    if (size === null || advance === null) return null;
    if (advance > size) {
      this.fail(
        advanceNode.loc,
        `HOP advance ${formatDuration(advance)} is longer than its size ${formatDuration(size)}`,
        "an advance no longer than the size",
      );
      return null;
    }
    if (size % advance !== 0) {
      this.fail(
        advanceNode.loc,
        `HOP size ${formatDuration(size)} is not a multiple of its advance ${formatDuration(advance)}`,
        "an advance that divides the size",
      );
      return null;
    }
    const windows = size / advance;
    if (windows > STREAM_LIMITS.windowsPerRecord) {
      this.fail(
        advanceNode.loc,
        `HOP size ${formatDuration(size)} with advance ${formatDuration(advance)} puts each record in ${windows} windows`,
        `at most ${STREAM_LIMITS.windowsPerRecord} windows per record: an advance of at least ${formatDuration(Math.ceil(size / STREAM_LIMITS.windowsPerRecord))}`,
      );
      return null;
    }
    return { kind: "hop", sizeMs: size, advanceMs: advance };
  }

  private durationMs(node: DurationNode): number | null {
    const ms = node.amount * node.unitMs;
    if (!/^[0-9]+$/.test(node.amountText) || node.amount < 1 || !Number.isSafeInteger(ms)) {
      this.fail(node.amountLoc, `Invalid window length ${quote(node.amountText)}`, "a whole number from 1");
      return null;
    }
    return ms;
  }

  /**
   * With GROUP BY: aggregates in the projection, no `*` or `_meta.*`, and every field read
   * outside an aggregate inside one of the GROUP BY expressions.
   */
  private checkGrouping(
    projection: StreamDocumentNode["statement"]["projection"],
    items: SelectItemNode[],
    keyIndex: number,
    fields: ExpressionNode[],
    groupBy: NonNullable<StreamDocumentNode["statement"]["groupBy"]>,
    hasAggregate: boolean,
  ): void {
    if (projection.kind === "Star") {
      this.fail(projection.loc, "'*' with GROUP BY", "the GROUP BY fields and aggregates");
    }
    if (!hasAggregate) {
      if (groupBy.window !== null) this.fail(groupBy.window.loc, "A window without an aggregate", AGGREGATE_CHOICES);
      else this.fail(groupBy.keywordLoc, "GROUP BY without an aggregate in the projection", AGGREGATE_CHOICES);
    }
    items.forEach((item, i) => {
      if (item.kind === "MetaStar") {
        this.fail(item.loc, "_meta.* with GROUP BY", "the GROUP BY fields and aggregates");
        return;
      }
      const outside = firstUngrouped(item.expression, fields);
      if (outside !== null) {
        const text = this.sql.slice(outside.loc.start, outside.loc.end);
        const role = i === keyIndex ? "The key" : "Field";
        this.fail(outside.loc, `${role} ${quote(text)} is not in GROUP BY`, "it in GROUP BY, or inside an aggregate");
      }
    });
  }
}

/**
 * Whether an expression is never null, as far as its form tells: a literal, a `_meta` field,
 * an IS NULL test, COUNT, or COALESCE with such an argument. Fields may always be missing.
 */
export function neverNull(node: ExpressionNode): boolean {
  switch (node.kind) {
    case "StringLiteral":
    case "NumberLiteral":
    case "BooleanLiteral":
    case "MetaField":
    case "IsNull":
      return true;
    case "Call":
      if (node.name === "COUNT") return true;
      return node.name === "COALESCE" && node.args.some(neverNull);
    default:
      return false;
  }
}

/** The first field read outside aggregates and outside every GROUP BY expression, or null. */
function firstUngrouped(node: ExpressionNode, fields: ExpressionNode[]): ExpressionNode | null {
  if (isAggregateCall(node) || fields.some((field) => sameExpression(field, node))) return null;
  if (node.kind === "FieldPath" || node.kind === "MetaField") return node;
  for (const child of childExpressions(node)) {
    const found = firstUngrouped(child, fields);
    if (found !== null) return found;
  }
  return null;
}

/** Structural equality of two expressions, positions ignored (`(a)` is `a`). */
export function sameExpression(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => sameExpression(item, b[i]));
  }
  const keys = (o: object) => Object.keys(o).filter((k) => k !== "loc" && !k.endsWith("Loc"));
  const ka = keys(a);
  const kb = keys(b);
  if (ka.length !== kb.length) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  return ka.every((k) => Object.hasOwn(rb, k) && sameExpression(ra[k], rb[k]));
}

/**
 * Rebuilds a node with each direct child replaced by `map(child)`; top-down rewriting, which
 * mapExpression (bottom-up) cannot do when a whole sub-tree is replaced by what it matches.
 */
export function rebuild(node: ExpressionNode, map: (child: ExpressionNode) => ExpressionNode): ExpressionNode {
  switch (node.kind) {
    case "Unary":
      return { ...node, operand: map(node.operand) };
    case "Binary":
      return { ...node, left: map(node.left), right: map(node.right) };
    case "Like":
      return { ...node, subject: map(node.subject), pattern: map(node.pattern) };
    case "In":
      return { ...node, subject: map(node.subject), list: node.list.map(map) };
    case "Between":
      return { ...node, subject: map(node.subject), low: map(node.low), high: map(node.high) };
    case "IsNull":
      return { ...node, subject: map(node.subject) };
    case "Call":
      return { ...node, args: node.args.map(map) };
    case "Cast":
      return { ...node, expression: map(node.expression) };
    default:
      return node;
  }
}

/** Milliseconds as the largest whole unit: 60000 -> 1m, 1500 -> 1500ms. */
export function formatDuration(ms: number): string {
  const units: [string, number][] = [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
  ];
  for (const [unit, size] of units) if (ms % size === 0 && ms >= size) return `${ms / size}${unit}`;
  return `${ms}ms`;
}
