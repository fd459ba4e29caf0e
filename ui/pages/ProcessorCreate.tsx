import type { EditorView } from "@codemirror/view";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { STREAM_KEYWORDS } from "../../src/sql/stream-vocabulary.ts";
import { ErrorAlert, Link } from "../components.tsx";
import { navigate } from "../router.ts";
import { createSqlEditor } from "../sql/editor.ts";
import type { ValidationState } from "../sql/validation.ts";
import "../styles/workbench.css";
import { createProcessor, processorHref, processorKeys } from "../api/processors.ts";
import { streamCompletion } from "./ProcessorWords.ts";
import { EXAMPLES } from "./processor-examples.ts";
import { putInEditor } from "./QueryLibrary.tsx";

/** The problem with where it is: the parser's messages say so already, others get it in front. */
const positioned = (p: { line: number; column: number; message: string }) =>
  /\bline \d+/i.test(p.message) ? p.message : `Line ${p.line}, column ${p.column}: ${p.message}`;

/**
 * A new stream processor: its name, its runners, and its program in the SQL workbench's editor
 * (validated as it is typed, completed with the stream words). The API's refusal (a taken name, a
 * program it rejects, a missing right) is shown under the Create button.
 */
export function ProcessorCreate() {
  const client = useQueryClient();
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const [name, setName] = useState("");
  const [runners, setRunners] = useState("1");
  const [validation, setValidation] = useState<ValidationState>({ kind: "none" });
  const create = useMutation({
    mutationFn: () => createProcessor({ name: name.trim(), sql: view.current?.state.doc.toString() ?? "", runners: Number(runners) }),
    onSuccess: async (p) => {
      await client.invalidateQueries({ queryKey: processorKeys.all });
      navigate(processorHref(p.id));
    },
  });
  const submit = useRef<() => void>(() => {});
  submit.current = () => {
    if (name.trim() !== "" && !create.isPending) create.mutate();
  };

  useEffect(() => {
    if (!host.current) return;
    const editor = createSqlEditor({
      parent: host.current,
      doc: "",
      onRun: () => submit.current(),
      onValidation: setValidation,
      completions: [streamCompletion],
      label: "Stream program",
      keywords: STREAM_KEYWORDS,
    });
    view.current = editor;
    return () => editor.destroy();
  }, []);

  const runnersValid = /^\d+$/.test(runners) && Number(runners) >= 1;
  return (
    <section className="page processors proc-create">
      <p className="crumbs">
        <Link to="/processors">Stream processors</Link>
      </p>
      <h1>New stream processor</h1>
      <form
        className="proc-form"
        onSubmit={(e) => {
          e.preventDefault();
          submit.current();
        }}
      >
        <div className="toolbar">
          <label className="stacked">
            <span>Name</span>
            <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} autoComplete="off" />
          </label>
          <label className="stacked">
            <span>Runners</span>
            <input
              type="number"
              min={1}
              max={32}
              value={runners}
              onChange={(e) => setRunners(e.target.value)}
              aria-describedby="runners-help"
              className="proc-runners"
            />
          </label>
          <p id="runners-help" className="muted proc-help">
            Runners share the source's partitions as members of one consumer group.
          </p>
        </div>
        <fieldset className="proc-examples">
          <legend>Start from an example</legend>
          <div className="proc-example-row">
            {EXAMPLES.map((x) => (
              <button key={x.label} type="button" className="ghost" onClick={() => putInEditor(view.current, x.sql)}>
                {x.label}
              </button>
            ))}
            <span className="muted">They read a topic named orders: change the names to your topics.</span>
          </div>
        </fieldset>
        <span className="proc-label">Program</span>
        <div className="editor" ref={host} />
        <p
          role="status"
          data-testid="validation"
          className={`validation ${validation.kind === "invalid" || validation.kind === "unavailable" ? "error" : "muted"}`}
        >
          {validation.kind === "none" && "Write INSERT INTO target SELECT STREAM … FROM source; it is checked as you type."}
          {validation.kind === "valid" && "The program is valid."}
          {validation.kind === "invalid" && positioned(validation.problem)}
          {validation.kind === "unavailable" && validation.message}
        </p>
        <ErrorAlert error={create.error} />
        <div className="toolbar actions">
          <button type="submit" disabled={create.isPending || name.trim() === "" || !runnersValid}>
            {create.isPending ? "Creating…" : "Create"}
          </button>
          <button type="button" className="ghost" onClick={() => navigate("/processors")}>
            Cancel
          </button>
          <span className="muted">Ctrl+Enter creates, Ctrl+Space completes</span>
        </div>
      </form>
    </section>
  );
}
