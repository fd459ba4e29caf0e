/**
 * Typing over a selection in a CodeMirror editor (the workbench's, a processor's program).
 *
 * CodeMirror lets the browser put typed text into its DOM and reads it back. Over a selection,
 * Chrome deletes the selected DOM itself and, keeping the line's element, sets an empty `style`
 * attribute on it: an inline style, which the page's Content-Security-Policy refuses, so every
 * "select all, type" wrote a CSP violation to the console. Replacing the selection through the
 * editor instead leaves the DOM to CodeMirror, which writes no style attribute. The editor's own
 * input handlers (closing brackets) are asked first, as CodeMirror asks them for typed text.
 *
 * One listener on the document, in the capture phase, for every editor of the app: it acts only
 * when the input goes to an editor's content and a selection is not empty; anything else (IME
 * composition, typing at a cursor) is left to the browser and CodeMirror as before.
 */
import { EditorView } from "@codemirror/view";

let installed = false;

export function typeOverSelectionsInEditors(doc: Document = document): void {
  if (installed) return;
  installed = true;
  doc.addEventListener(
    "beforeinput",
    (e) => {
      if (e.inputType !== "insertText" || !e.data || e.isComposing) return;
      const content = e.target instanceof Element ? e.target.closest(".cm-content") : null;
      const view = content instanceof HTMLElement ? EditorView.findFromDOM(content) : null;
      if (!view || view.state.readOnly || view.state.selection.ranges.every((r) => r.empty)) return;
      e.preventDefault();
      const text = e.data;
      const { from, to } = view.state.selection.main;
      const insert = () => view.state.update(view.state.replaceSelection(text), { scrollIntoView: true, userEvent: "input.type" });
      if (view.state.facet(EditorView.inputHandler).some((handler) => handler(view, from, to, text, insert))) return;
      view.dispatch(insert());
    },
    true,
  );
}
