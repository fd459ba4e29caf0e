/**
 * Completion for Loupe's query dialect: its keywords and functions (from src/sql/vocabulary.ts,
 * the lists the parser and the function registry are held to), the cluster's topic names after
 * FROM, and the fields of the topic the query reads (from its schema or a few sampled records),
 * bare (`city`), nested (`geo.lat`), or under `_value.`; `_meta.` offers the metadata fields,
 * SET its settings and formats, `CAST(x AS` its types. Names the dialect would not read bare
 * are inserted in backticks.
 */
import type { Completion, CompletionContext, CompletionResult, CompletionSource } from "@codemirror/autocomplete";
import { syntaxTree } from "@codemirror/language";
import type { EditorView } from "@codemirror/view";
import { CAST_TYPES, DATA_FORMATS, FUNCTION_NAMES, KEYWORDS, META_FIELDS, SETTING_NAMES, SPECIAL_NAMES } from "../../src/sql/vocabulary.ts";
import type { FieldPath } from "./catalog.ts";

export interface CompletionData {
  topics(): Promise<string[]>;
  fields(topic: string): Promise<FieldPath[]>;
}

/** Bare names the parser gives a meaning of their own (an unquoted field of that name would not be read as one). */
const SPECIAL = new Set([...SPECIAL_NAMES, "_offset", "_partition", "_ts", "_ktype", "_vtype"].map((n) => n.toLowerCase()));
const WORDS = new Set<string>(KEYWORDS);
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A name as the dialect reads it: bare when it can be, else in backticks (a backtick doubled). */
export function quoteName(name: string): string {
  if (NAME.test(name) && !WORDS.has(name.toUpperCase()) && !SPECIAL.has(name.toLowerCase())) return name;
  return `\`${name.replaceAll("`", "``")}\``;
}

const unquote = (part: string) => (part.startsWith("`") ? part.slice(1, -1).replaceAll("``", "`") : part);

const PART = "(?:[A-Za-z_][A-Za-z0-9_]*|`(?:[^`\\n]|``)*`)";
/** A dotted path up to the cursor: `geo.`, `_value.geo.la`. */
const DOTTED = new RegExp(`(?<![\\w.\`])(${PART}(?:\\.${PART})*)\\.(\\w*)$`);
const TOPIC_AT = /\bFROM\s+(`(?:[^`\n]|``)*|[A-Za-z_]\w*)?$/i;
const FROM_TOPIC = /\bFROM\s+(?:`((?:[^`\n]|``)+)`|([A-Za-z_]\w*))/i;
const SETTING_AT = /\bSET\s+([\w.]*)$/i;
const FORMAT_AT = /\b(?:key|value)\.format\s*=\s*(\w*)$/i;
const CAST_TYPE_AT = /\bCAST\s*\((?:[^()]|\([^()]*\))*\bAS\s+(\w*)$/i;
const WORD_AT = /[A-Za-z_]\w*$/;

/** The topic the query reads: the name after FROM, wherever the cursor is. */
export function topicOf(text: string): string | null {
  const m = FROM_TOPIC.exec(text);
  if (!m) return null;
  return m[1] !== undefined ? m[1].replaceAll("``", "`") : (m[2] ?? null);
}

function functionOption(name: string): Completion {
  return {
    label: name,
    type: "function",
    detail: "function",
    // Inserted with its parentheses, the cursor between them.
    apply: (view: EditorView, _c: Completion, from: number, to: number) =>
      view.dispatch({
        changes: { from, to, insert: `${name}()` },
        selection: { anchor: from + name.length + 1 },
        userEvent: "input.complete",
      }),
  };
}

const KEYWORD_OPTIONS: Completion[] = [
  ...KEYWORDS.map((k): Completion => ({ label: k, type: "keyword", detail: "keyword", boost: -1 })),
  ...FUNCTION_NAMES.map(functionOption),
  { label: "_key", type: "variable", detail: "the key" },
  { label: "_value", type: "variable", detail: "the whole value" },
  { label: "_meta.", type: "variable", detail: "partition, offset, timestamp…" },
];

const fieldOption = (name: string, depth = 0): Completion => ({
  label: quoteName(name),
  type: "property",
  detail: "field",
  boost: 2 - depth,
});

/** The sources' answer for the text before the cursor; `null` when nothing is to be offered. */
export function loupeCompletion(data: CompletionData): CompletionSource {
  return async (context: CompletionContext): Promise<CompletionResult | null> => {
    const node = syntaxTree(context.state).resolveInner(context.pos, -1);
    if (/String|Comment/.test(node.name)) return null;
    const pos = context.pos;
    const line = context.state.doc.lineAt(pos);
    // Statements may span lines; what decides the context is on the last few.
    const before = context.state.sliceDoc(Math.max(0, line.from - 400), pos);

    const topicAt = TOPIC_AT.exec(before);
    if (topicAt) {
      const typed = topicAt[1] ?? "";
      const names = await data.topics().catch(() => [] as string[]);
      const quoted = typed.startsWith("`");
      return {
        from: pos - typed.length,
        options: names.map((name) => ({
          label: quoted ? `\`${name.replaceAll("`", "``")}\`` : name,
          apply: quoted ? `\`${name.replaceAll("`", "``")}\`` : quoteName(name),
          type: "class",
          detail: "topic",
        })),
        validFor: /^`?[^`\s]*`?$/,
      };
    }

    const format = FORMAT_AT.exec(before);
    if (format) {
      return {
        from: pos - (format[1] ?? "").length,
        options: DATA_FORMATS.map((f) => ({ label: f, type: "constant", detail: "format" })),
        validFor: /^\w*$/,
      };
    }
    const setting = SETTING_AT.exec(before);
    if (setting) {
      return {
        from: pos - (setting[1] ?? "").length,
        options: SETTING_NAMES.map((s) => ({ label: s, type: "constant", detail: "setting", apply: `${s} = ` })),
        validFor: /^[\w.]*$/,
      };
    }
    const cast = CAST_TYPE_AT.exec(before);
    if (cast) {
      return {
        from: pos - (cast[1] ?? "").length,
        options: CAST_TYPES.map((t) => ({ label: t, type: "type", detail: "type" })),
        validFor: /^\w*$/,
      };
    }

    const dotted = DOTTED.exec(before);
    if (dotted) {
      const parts = (dotted[1]!.match(new RegExp(PART, "g")) ?? []).map(unquote);
      const typed = dotted[2] ?? "";
      const root = parts[0]!.toLowerCase();
      if (root === "_meta" && parts.length === 1 && !dotted[1]!.startsWith("`")) {
        return {
          from: pos - typed.length,
          options: META_FIELDS.map((f) => ({ label: f, type: "property", detail: "metadata" })),
          validFor: /^\w*$/,
        };
      }
      if (root === "_key" && !dotted[1]!.startsWith("`")) return null;
      const prefix = root === "_value" && !dotted[1]!.startsWith("`") ? parts.slice(1) : parts;
      const topic = topicOf(context.state.doc.toString());
      if (!topic) return null;
      const paths = await data.fields(topic).catch(() => [] as FieldPath[]);
      const next = new Set<string>();
      for (const p of paths) if (p.length === prefix.length + 1 && prefix.every((s, i) => p[i] === s)) next.add(p[prefix.length]!);
      if (next.size === 0) return null;
      return { from: pos - typed.length, options: [...next].map((n) => fieldOption(n)), validFor: /^\w*$/ };
    }

    const word = WORD_AT.exec(before);
    if (!word && !context.explicit) return null;
    const from = pos - (word?.[0].length ?? 0);
    const topic = topicOf(context.state.doc.toString());
    const paths = topic ? await data.fields(topic).catch(() => [] as FieldPath[]) : [];
    return {
      from,
      options: [...paths.filter((p) => p.length === 1).map((p) => fieldOption(p[0]!)), ...KEYWORD_OPTIONS],
      validFor: /^\w*$/,
    };
  };
}
