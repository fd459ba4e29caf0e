/**
 * Completion of the words stream programs add to the query dialect (src/sql/stream-vocabulary.ts):
 * INSERT INTO, SELECT STREAM, GROUP BY, the windows and aggregates, the units inside a window,
 * the program's SET keys. It runs beside the workbench's own completion, which offers the
 * topics, fields, functions and query settings; words it already offers are left to it.
 */
import type { Completion, CompletionContext, CompletionResult, CompletionSource } from "@codemirror/autocomplete";
import { AGGREGATE_NAMES, STREAM_KEYWORDS, STREAM_SETTING_NAMES, TIME_UNIT_NAMES } from "../../src/sql/stream-vocabulary.ts";
import { FUNCTION_NAMES, KEYWORDS, SETTING_NAMES } from "../../src/sql/vocabulary.ts";

const known = new Set<string>([...KEYWORDS, ...FUNCTION_NAMES].map((w) => w.toUpperCase()));
const knownSettings = new Set<string>(SETTING_NAMES.map((s) => s.toLowerCase()));

const withParens = (name: string, detail: string): Completion => ({
  label: name,
  type: "function",
  detail,
  apply: (view, _c, from, to) =>
    view.dispatch({
      changes: { from, to, insert: `${name}()` },
      selection: { anchor: from + name.length + 1 },
      userEvent: "input.complete",
    }),
});

const WORD_OPTIONS: Completion[] = [
  ...STREAM_KEYWORDS.filter((k) => !known.has(k) && k !== "TUMBLE" && k !== "HOP").map(
    (k): Completion => ({ label: k, type: "keyword", detail: "stream keyword", boost: -1 }),
  ),
  withParens("TUMBLE", "window (size, unit)"),
  withParens("HOP", "window (size, unit, advance, unit)"),
  ...AGGREGATE_NAMES.filter((a) => !known.has(a)).map((a) => withParens(a, "aggregate")),
];

const SETTING_OPTIONS: Completion[] = STREAM_SETTING_NAMES.filter((s) => !knownSettings.has(s.toLowerCase())).map((s) => ({
  label: s,
  type: "constant",
  detail: "program setting",
  apply: `${s} = `,
}));

const SETTING_AT = /\bSET\s+([\w.]*)$/i;
/** Inside `TUMBLE(1, ` or `HOP(5, m, 1, `: a unit is next. */
const UNIT_AT = /\b(?:TUMBLE|HOP)\s*\([^()]*,\s*(\w*)$/i;
const WORD_AT = /[A-Za-z_]\w*$/;

export const streamCompletion: CompletionSource = (context: CompletionContext): CompletionResult | null => {
  const line = context.state.doc.lineAt(context.pos);
  const before = context.state.sliceDoc(Math.max(0, line.from - 400), context.pos);
  const setting = SETTING_AT.exec(before);
  if (setting) return { from: context.pos - (setting[1] ?? "").length, options: SETTING_OPTIONS, validFor: /^[\w.]*$/ };
  const unit = UNIT_AT.exec(before);
  if (unit && /^[a-z]*$/.test(unit[1] ?? ""))
    return {
      from: context.pos - (unit[1] ?? "").length,
      options: TIME_UNIT_NAMES.map((u) => ({ label: u, type: "constant", detail: "time unit", boost: 3 })),
      validFor: /^\w*$/,
    };
  const word = WORD_AT.exec(before);
  if (!word && !context.explicit) return null;
  return { from: context.pos - (word?.[0].length ?? 0), options: WORD_OPTIONS, validFor: /^\w*$/ };
};
