/**
 * Semantic checks of a parsed query, against what the caller knows of the
 * cluster (the catalog). It also settles what the old dialect left implicit:
 * `_ktype = 'X'` / `_vtype = 'X'` conditions choose decoders and leave the
 * filter, `_sample = N AND _sampleWindow = M` asks for sampling and leaves it too, and string literals compared with `_meta.timestamp` become epoch
 * milliseconds.
 *
 * Every problem found is collected; the one that starts first in the text is
 * thrown, so the report does not depend on the order of the checks.
 */
import {
  type BinaryNode,
  type DocumentNode,
  type ExpressionNode,
  type FieldPathNode,
  isComparisonOperator,
  mapExpression,
  type SelectNode,
  walkExpression,
} from "./ast.ts";
import { describeChoices, quote, type Span, syntaxError } from "./errors.ts";
import { describeArity, FUNCTIONS } from "./functions.ts";
import { QUERY_LIMITS } from "./limits.ts";
import { lookup } from "./lookup.ts";
import { canonicalSetting, DEFAULT_SETTINGS, parseFormat, type QuerySettings, SETTING_NAMES, SETTINGS } from "./settings.ts";
import { codePointLength, parseTimestamp } from "./values.ts";

/** Field paths known for a topic's key and value; null or missing = not known. */
export interface TopicFields {
  /**
   * Dotted paths of the known fields, parents included: `["id", "address",
   * "address.city", "items", "items.sku"]`. Array elements are not written
   * (`items[].sku` is read as `items.sku`). A known field listed without
   * children is opaque: any path below it is accepted.
   */
  key?: string[] | null;
  value?: string[] | null;
}

/**
 * What the caller knows of the cluster. Fields are checked only where a schema
 * is known, and not for a side whose decoder the query chooses itself
 * (`SET key.format`/`value.format`, `_ktype`/`_vtype`): the known schema may
 * not describe what that decoder gives.
 */
export interface Catalog {
  topicExists(name: string): boolean;
  topicFields?(name: string): TopicFields | null;
}

/** What a statement does with its topic: a query reads it, an INSERT writes it. */
export type TopicAccess = "read" | "write";

/**
 * Whether the caller may use the topic for `access`; given by whoever knows the caller (the
 * routes, from the session's scope). Absent: every topic is allowed (callers without an
 * identity). Asked once per statement, before the catalog, so that a topic out of scope gets the
 * same answer whether it exists or not.
 */
export type TopicAllowed = (topic: string, access: TopicAccess) => boolean | string;

/** Why `allowed` refuses the topic (its own words, or the scope's), or undefined when it does not. */
export function topicRefusal(allowed: TopicAllowed | undefined, topic: string, access: TopicAccess): string | undefined {
  const verdict = allowed?.(topic, access) ?? true;
  return verdict === true ? undefined : verdict === false ? outsideScope(topic) : verdict;
}

/** The problem of a topic the caller may not use: says nothing of whether it exists. */
export function outsideScope(topic: string): string {
  return `Topic ${quote(topic)} is outside your scope`;
}

export interface AnalyzedQuery {
  source: string;
  document: DocumentNode;
  select: SelectNode;
  topic: string;
  settings: QuerySettings;
  /** The WHERE condition without decoder choices, or null when nothing is left. */
  where: ExpressionNode | null;
  /** Whether WHERE held `_ktype`/`_vtype` conditions. */
  legacyDecoders: boolean;
  /** Sampling asked for with `_sample`/`_sampleWindow`; null when none was. */
  sample: SampleHint | null;
}

/**
 * `_sample = N AND _sampleWindow = M` in WHERE: at most N matching records per window of M
 * milliseconds of wall-clock time while the query runs (the older clients' live views ask for
 * this). `_sample` alone uses windows of DEFAULT_SAMPLE_WINDOW_MS.
 */
export interface SampleHint {
  records: number;
  windowMs: number;
}

export const DEFAULT_SAMPLE_WINDOW_MS = 1000;

export function analyze(source: string, document: DocumentNode, catalog?: Catalog | null, allowed?: TopicAllowed): AnalyzedQuery {
  return new Analyzer(source, catalog ?? null, allowed).run(document);
}

/** A problem found; only the first in the text becomes an SqlError (locating costs a scan). */
interface Problem {
  at: Span;
  what: string;
  expected?: string;
}

class Analyzer {
  private readonly problems: Problem[] = [];

  constructor(
    private readonly source: string,
    private readonly catalog: Catalog | null,
    private readonly allowed?: TopicAllowed,
  ) {}

  run(document: DocumentNode): AnalyzedQuery {
    const select = document.select;
    const settings: QuerySettings = { ...DEFAULT_SETTINGS };

    // Decoders chosen in WHERE first, so that SET statements override them.
    const { where: withHints, legacyDecoders } = this.extractDecoderChoices(select.where, settings);
    const { where: filtered, sample } = this.extractSampleHints(withHints);
    this.applySettings(document, settings);

    const topic = select.from.name;
    let fields: TopicFields | null = null;
    const refused = topicRefusal(this.allowed, topic, "read");
    if (refused) {
      // Before the catalog, and no fields looked up: nothing tells whether the topic exists.
      this.fail(select.from.loc, refused);
    } else if (this.catalog !== null) {
      if (!this.catalog.topicExists(topic)) {
        this.fail(select.from.loc, `Unknown topic ${quote(topic)}`);
      } else {
        fields = this.catalog.topicFields?.(topic) ?? null;
      }
    }
    const known = {
      key: settings.keyFormat === undefined ? KnownFields.from(fields?.key) : null,
      value: settings.valueFormat === undefined ? KnownFields.from(fields?.value) : null,
    };

    const resolve = (expression: ExpressionNode): ExpressionNode => {
      this.check(expression, topic, known);
      return this.resolveTimestamps(expression);
    };
    const projection =
      select.projection.kind === "Star"
        ? select.projection
        : {
            ...select.projection,
            items: select.projection.items.map((item) =>
              item.kind === "MetaStar" ? item : { ...item, expression: resolve(item.expression) },
            ),
          };
    const where = filtered === null ? null : resolve(filtered);

    let first: Problem | undefined;
    for (const problem of this.problems) if (first === undefined || problem.at.start < first.at.start) first = problem;
    if (first !== undefined) throw syntaxError(this.source, first.at, first.what, first.expected);
    return {
      source: this.source,
      document,
      select: { ...select, projection, where },
      topic,
      settings,
      where,
      legacyDecoders,
      sample,
    };
  }

  private fail(at: Span, what: string, expected?: string): void {
    this.problems.push({ at, what, expected });
  }

  private applySettings(document: DocumentNode, settings: QuerySettings): void {
    for (const statement of document.settings) {
      const key = statement.key.toLowerCase();
      const definition = lookup(SETTINGS, canonicalSetting(key));
      if (definition === undefined) {
        this.fail(statement.keyLoc, `Unknown setting ${quote(statement.key)}`, describeChoices(SETTING_NAMES));
      } else if (!definition.apply(settings, statement.value.text)) {
        this.fail(statement.value.loc, `Invalid value ${quote(statement.value.text)} for ${key}`, definition.expected);
      }
    }
  }

  /**
   * WHERE conditions `_ktype = 'FORMAT'` and `_vtype = 'FORMAT'` joined by AND at
   * the top level choose decoders and are removed from the filter. Anywhere
   * else these names are an error (reported by `check`).
   */
  private extractDecoderChoices(
    where: ExpressionNode | null,
    settings: QuerySettings,
  ): { where: ExpressionNode | null; legacyDecoders: boolean } {
    if (where === null) return { where, legacyDecoders: false };
    const kept: ExpressionNode[] = [];
    let removed = false;
    for (const conjunct of conjuncts(where)) {
      const choice = decoderChoice(conjunct);
      if (choice === null) {
        kept.push(conjunct);
        continue;
      }
      removed = true;
      const format = parseFormat(choice.text);
      if (format === null) {
        const name = choice.side === "key" ? "_ktype" : "_vtype";
        this.fail(choice.loc, `Invalid value ${quote(choice.text)} for ${name}`, SETTINGS["key.format"]?.expected);
      } else if (choice.side === "key") {
        settings.keyFormat = format;
      } else {
        settings.valueFormat = format;
      }
    }
    if (!removed) return { where, legacyDecoders: false };
    return { where: andAll(kept), legacyDecoders: true };
  }

  /**
   * `_sample = N` and `_sampleWindow = M` joined by AND at the top of WHERE are the sampling hint
   * and leave the filter; each at most once, with whole numbers from 1, and no window without
   * `_sample`. Anywhere else these names are an error (reported by `check`).
   */
  private extractSampleHints(where: ExpressionNode | null): { where: ExpressionNode | null; sample: SampleHint | null } {
    if (where === null) return { where, sample: null };
    const kept: ExpressionNode[] = [];
    const found: Partial<Record<SampleHintName, { value: number; at: Span }>> = {};
    let removed = false;
    for (const conjunct of conjuncts(where)) {
      const hint = sampleHint(conjunct);
      if (hint === null) {
        kept.push(conjunct);
        continue;
      }
      removed = true;
      if (found[hint.name] !== undefined) {
        this.fail(hint.at, `Duplicate ${hint.name}`, `${hint.name} at most once`);
        continue;
      }
      const value = positiveInteger(hint.value);
      if (value === null) {
        const text = this.source.slice(hint.value.loc.start, hint.value.loc.end);
        this.fail(hint.value.loc, `Invalid value ${quote(text)} for ${hint.name}`, SAMPLE_EXPECTED[hint.name]);
        continue;
      }
      found[hint.name] = { value, at: hint.at };
    }
    if (!removed) return { where, sample: null };
    const records = found._sample;
    const window = found._sampleWindow;
    if (records === undefined) {
      if (window !== undefined)
        this.fail(window.at, "_sampleWindow without _sample", "_sample = <records> AND _sampleWindow = <milliseconds>");
      return { where: andAll(kept), sample: null };
    }
    return { where: andAll(kept), sample: { records: records.value, windowMs: window?.value ?? DEFAULT_SAMPLE_WINDOW_MS } };
  }

  /** Functions, arities, literal LIKE patterns, misplaced decoder names and fields against the known schema. */
  private check(expression: ExpressionNode, topic: string, known: { key: KnownFields | null; value: KnownFields | null }): void {
    walkExpression(expression, (node) => {
      switch (node.kind) {
        case "Call": {
          const definition = lookup(FUNCTIONS, node.name);
          if (definition === undefined) {
            this.fail(node.nameLoc, `Unknown function ${quote(node.name)}`);
          } else if (node.args.length < definition.minArgs || node.args.length > definition.maxArgs) {
            this.fail(node.nameLoc, `Wrong number of arguments to ${node.name}`, `${describeArity(definition)}, found ${node.args.length}`);
          }
          break;
        }
        case "Like": {
          // A computed pattern is checked on each record instead (QueryLimitError).
          const pattern = node.pattern;
          if (pattern.kind === "StringLiteral" && pattern.value.length > QUERY_LIMITS.likePattern) {
            const length = codePointLength(pattern.value);
            if (length > QUERY_LIMITS.likePattern) {
              this.fail(pattern.loc, "LIKE pattern too long", `at most ${QUERY_LIMITS.likePattern} characters, found ${length}`);
            }
          }
          break;
        }
        case "DecoderType": {
          const name = node.side === "key" ? "_ktype" : "_vtype";
          this.fail(node.loc, `Misplaced ${name}`, `${name} = '<format>' only as a condition joined by AND at the top of WHERE`);
          break;
        }
        case "FieldPath": {
          const hint = sampleHintName(node);
          if (hint !== null) {
            this.fail(node.loc, `Misplaced ${hint}`, `${hint} = <number> only as a condition joined by AND at the top of WHERE`);
            break;
          }
          const fields = known[node.source];
          if (fields !== null) this.checkPath(node, fields, topic);
          break;
        }
        default:
          break;
      }
    });
  }

  private checkPath(node: FieldPathNode, fields: KnownFields, topic: string): void {
    const names: string[] = [];
    let shown = "";
    for (const segment of node.segments) {
      if (segment.kind === "Index") {
        shown += `[${segment.index}]`;
        continue;
      }
      const parent = names.join(".");
      if (!fields.hasChildren(parent)) return; // opaque: nothing known below
      names.push(segment.name);
      shown += shown === "" ? segment.name : `.${segment.name}`;
      if (!fields.has(names.join("."))) {
        const side = node.source === "key" ? "key" : "value";
        const siblings = fields.childrenOf(parent);
        this.fail(
          segment.loc,
          `Unknown field ${quote(shown)} in the ${side} of topic ${quote(topic)}`,
          siblings.length > 0 ? describeChoices(abbreviate(siblings)) : undefined,
        );
        return;
      }
    }
  }

  /** `_meta.timestamp` compared with a string: the string becomes epoch milliseconds. */
  private resolveTimestamps(expression: ExpressionNode): ExpressionNode {
    const toMillis = (node: ExpressionNode): ExpressionNode => {
      if (node.kind !== "StringLiteral") return node;
      const ms = parseTimestamp(node.value);
      if (ms === null) {
        this.fail(
          node.loc,
          `Invalid timestamp ${quote(node.value)}`,
          "epoch milliseconds or an ISO-8601 date such as 2024-01-31 or 2024-01-31T12:00:00Z",
        );
        return node;
      }
      return { kind: "NumberLiteral", value: ms, loc: node.loc };
    };
    const isTimestamp = (node: ExpressionNode): boolean => node.kind === "MetaField" && node.field === "timestamp";
    return mapExpression(expression, (node) => {
      if (node.kind === "Binary" && isComparisonOperator(node.operator)) {
        if (isTimestamp(node.left)) return { ...node, right: toMillis(node.right) };
        if (isTimestamp(node.right)) return { ...node, left: toMillis(node.left) };
      } else if (node.kind === "Between" && isTimestamp(node.subject)) {
        return { ...node, low: toMillis(node.low), high: toMillis(node.high) };
      } else if (node.kind === "In" && isTimestamp(node.subject)) {
        return { ...node, list: node.list.map(toMillis) };
      }
      return node;
    });
  }
}

/** The operands of the top-level ANDs, left to right. */
export function conjuncts(expression: ExpressionNode): ExpressionNode[] {
  const out: ExpressionNode[] = [];
  const stack: ExpressionNode[] = [expression];
  while (stack.length > 0) {
    const node = stack.pop() as ExpressionNode;
    if (node.kind === "Binary" && node.operator === "AND") {
      stack.push(node.right, node.left);
    } else {
      out.push(node);
    }
  }
  return out;
}

function andAll(parts: ExpressionNode[]): ExpressionNode | null {
  let result: ExpressionNode | null = null;
  for (const part of parts) {
    result =
      result === null
        ? part
        : ({
            kind: "Binary",
            operator: "AND",
            left: result,
            right: part,
            loc: { start: result.loc.start, end: part.loc.end },
          } satisfies BinaryNode);
  }
  return result;
}

/** `_ktype = 'JSON'` (either way round; a bare JSON is accepted too) as {side, text}. */
function decoderChoice(node: ExpressionNode): { side: "key" | "value"; text: string; loc: Span } | null {
  if (node.kind !== "Binary" || node.operator !== "=") return null;
  const [decoder, other] =
    node.left.kind === "DecoderType" ? [node.left, node.right] : node.right.kind === "DecoderType" ? [node.right, node.left] : [null, null];
  if (decoder === null || decoder.kind !== "DecoderType") return null;
  const text = formatText(other);
  return text === null ? null : { side: decoder.side, text, loc: other.loc };
}

type SampleHintName = "_sample" | "_sampleWindow";

const SAMPLE_EXPECTED: Readonly<Record<SampleHintName, string>> = {
  _sample: "a whole number of records from 1",
  _sampleWindow: "a whole number of milliseconds from 1",
};

/** `_sample` or `_sampleWindow` (any case, bare, not below `_value`) as the hint's name; else null. */
function sampleHintName(node: ExpressionNode): SampleHintName | null {
  if (node.kind !== "FieldPath" || node.rooted || node.segments.length !== 1) return null;
  const only = node.segments[0]!;
  if (only.kind !== "Field") return null;
  const lower = only.name.toLowerCase();
  return lower === "_sample" ? "_sample" : lower === "_samplewindow" ? "_sampleWindow" : null;
}

/** `_sample = 2` (either way round) as {name, value, at}, `at` being where the name is. */
function sampleHint(node: ExpressionNode): { name: SampleHintName; value: ExpressionNode; at: Span } | null {
  if (node.kind !== "Binary" || node.operator !== "=") return null;
  const left = sampleHintName(node.left);
  if (left !== null) return { name: left, value: node.right, at: node.left.loc };
  const right = sampleHintName(node.right);
  return right === null ? null : { name: right, value: node.left, at: node.right.loc };
}

/** A whole number from 1 written as a number or a string of digits; else null. */
function positiveInteger(node: ExpressionNode): number | null {
  const value =
    node.kind === "NumberLiteral" ? node.value : node.kind === "StringLiteral" && /^[0-9]+$/.test(node.value) ? Number(node.value) : NaN;
  return Number.isSafeInteger(value) && value >= 1 ? value : null;
}

function formatText(node: ExpressionNode): string | null {
  if (node.kind === "StringLiteral") return node.value;
  const only = node.kind === "FieldPath" && !node.rooted && node.segments.length === 1 ? node.segments[0] : undefined;
  return only?.kind === "Field" ? only.name : null;
}

function abbreviate(names: string[]): string[] {
  const limit = 10;
  return names.length <= limit ? names : [...names.slice(0, limit), `and ${names.length - limit} more`];
}

/** The known field paths of one side of a topic. */
class KnownFields {
  private readonly paths = new Set<string>();
  private readonly children = new Map<string, string[]>();

  static from(list: string[] | null | undefined): KnownFields | null {
    return list === null || list === undefined ? null : new KnownFields(list);
  }

  private constructor(list: string[]) {
    this.children.set("", []);
    for (const raw of list) {
      const path = raw.replace(/\[[^\]]*\]/g, "");
      const names = path.split(".").filter((n) => n !== "");
      for (let i = 1; i <= names.length; i++) {
        const full = names.slice(0, i).join(".");
        if (this.paths.has(full)) continue;
        this.paths.add(full);
        const parent = names.slice(0, i - 1).join(".");
        const siblings = this.children.get(parent) ?? [];
        siblings.push(full);
        this.children.set(parent, siblings);
      }
    }
  }

  has(path: string): boolean {
    return this.paths.has(path);
  }

  /** Whether anything is known below `path` ("" is the root, which is always known). */
  hasChildren(path: string): boolean {
    return path === "" || this.children.has(path);
  }

  childrenOf(path: string): string[] {
    return [...(this.children.get(path) ?? [])].sort();
  }
}
