/**
 * The workbench's CodeMirror editor: highlighting by Loupe's own dialect (its keywords,
 * functions, backquoted names, both quote styles for strings), completion, validation as you
 * type, Ctrl/Cmd+Enter to run. Token colours are classes (classHighlighter) coloured by
 * ui/styles/workbench.css, so both themes keep their contrast.
 */
import { autocompletion, type CompletionSource } from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { SQLDialect, sql } from "@codemirror/lang-sql";
import { syntaxHighlighting } from "@codemirror/language";
import { lintKeymap } from "@codemirror/lint";
import { EditorState, Prec } from "@codemirror/state";
import { EditorView, keymap, lineNumbers } from "@codemirror/view";
import { classHighlighter, tagHighlighter, tags } from "@lezer/highlight";
import { CAST_TYPES, FUNCTION_NAMES, KEYWORDS } from "../../src/sql/vocabulary.ts";
import { topicFields, topicNames } from "./catalog.ts";
import { loupeCompletion } from "./completion.ts";
import { type ValidationState, validation } from "./validation.ts";

const LOUPE_SQL = SQLDialect.define({
  keywords: KEYWORDS.join(" ").toLowerCase(),
  builtin: FUNCTION_NAMES.join(" ").toLowerCase(),
  types: CAST_TYPES.join(" ").toLowerCase(),
  identifierQuotes: "`",
  doubleQuotedStrings: true,
  backslashEscapes: false,
  hashComments: false,
});

export interface SqlEditorOptions {
  parent: HTMLElement;
  doc: string;
  /** Ctrl/Cmd+Enter. */
  onRun(): void;
  onValidation(state: ValidationState): void;
  /** More completion sources beside the dialect's (the stream programs' words). */
  completions?: CompletionSource[];
  /** The editor's accessible name (default "SQL query"). */
  label?: string;
  /** Words highlighted as keywords beside the dialect's (the stream programs' INSERT, STREAM, GROUP...). */
  keywords?: readonly string[];
}

export function createSqlEditor({
  parent,
  doc,
  onRun,
  onValidation,
  completions = [],
  label = "SQL query",
  keywords,
}: SqlEditorOptions): EditorView {
  return new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        lineNumbers(),
        history(),
        sql({
          dialect: keywords
            ? SQLDialect.define({ ...LOUPE_SQL.spec, keywords: [...KEYWORDS, ...keywords].join(" ").toLowerCase() })
            : LOUPE_SQL,
          upperCaseKeywords: true,
        }),
        syntaxHighlighting(classHighlighter),
        // lang-sql tags the dialect's functions as standard names, which classHighlighter leaves plain.
        syntaxHighlighting(tagHighlighter([{ tag: tags.standard(tags.name), class: "tok-function" }])),
        // The dialect's own words replace lang-sql's generic keyword list.
        // No icons: they are symbols some systems have no font for; the detail says topic, field, function.
        autocompletion({ override: [loupeCompletion({ topics: topicNames, fields: topicFields }), ...completions], icons: false }),
        validation(onValidation),
        // Ctrl+Enter runs, even with the completion list open (its keys take Enter alone).
        Prec.highest(
          keymap.of([
            {
              key: "Mod-Enter",
              run: () => {
                onRun();
                return true;
              },
            },
          ]),
        ),
        keymap.of([...lintKeymap, ...defaultKeymap, ...historyKeymap]),
        EditorView.contentAttributes.of({ "aria-label": label }),
        // Its styles are <style> elements: they carry the page's nonce (the policy allows no other).
        EditorView.cspNonce.of(document.querySelector<HTMLMetaElement>('meta[name="loupe-style-nonce"]')?.content ?? ""),
      ],
    }),
  });
}
