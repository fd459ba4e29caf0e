import type { EditorView } from "@codemirror/view";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { navigate } from "../router.ts";
import { columnsFor } from "../sql/cells.ts";
import { topicOf } from "../sql/completion.ts";
import { createSqlEditor } from "../sql/editor.ts";
import type { JsonPath } from "../sql/JsonTree.tsx";
import { RecordDetail } from "../sql/RecordDetail.tsx";
import { ResultTable } from "../sql/ResultTable.tsx";
import { ResultTools } from "../sql/ResultTools.tsx";
import { readRowCap, saveRowCap } from "../sql/row-cap.ts";
import { useQueryRun } from "../sql/run.ts";
import { StatsBar } from "../sql/StatsBar.tsx";
import type { ValidationState } from "../sql/validation.ts";
import "../styles/workbench.css";
import { putInEditor, QueryLibrary } from "./QueryLibrary.tsx";

const count = (n: number) => n.toLocaleString("en-US");

/**
 * The SQL workbench: an editor with completion and validation as you type, Run (Ctrl/Cmd+Enter)
 * streaming rows into a virtualized table, Stop, live statistics, a record's value as a tree,
 * export as JSON lines or CSV.
 */
export function SqlPage({ location }: { location: string }) {
  const params = new URLSearchParams(location.includes("?") ? location.slice(location.indexOf("?")) : "");
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const run = useRef<() => void>(() => {});
  const [validation, setValidation] = useState<ValidationState>({ kind: "none" });
  const [cap, setCap] = useState(readRowCap);
  const [topic, setTopic] = useState<string | null>(null);
  const [selected, setSelected] = useState<{ index: number; focus: JsonPath | null } | null>(null);
  const result = useQueryRun();

  useEffect(() => {
    if (!host.current) return;
    const editor = createSqlEditor({
      parent: host.current,
      doc: new URLSearchParams(window.location.search).get("q") ?? "SELECT * FROM ",
      onRun: () => run.current(),
      onValidation: setValidation,
    });
    view.current = editor;
    return () => editor.destroy();
    // The editor is made once; the query text then lives in it (and in the URL once run).
  }, []);

  run.current = () => {
    const text = view.current?.state.doc.toString().trim() ?? "";
    if (!text) return;
    const q = new URLSearchParams(params);
    q.set("q", text);
    navigate(`/sql?${q}`, { replace: true });
    setSelected(null);
    setTopic(topicOf(text));
    result.start(text, cap);
  };

  const { state, shown, dropped } = result;
  const columns = useMemo(() => columnsFor(result.fields), [result.fields]);
  const select = useCallback((index: number) => setSelected({ index, focus: null }), []);
  const expand = useCallback((index: number, path: string[]) => setSelected({ index, focus: path }), []);
  const detail = selected === null ? undefined : result.rows[selected.index];

  return (
    <section className="page sql-page">
      <h1>SQL</h1>
      <div className="editor" ref={host} />
      <p
        role="status"
        data-testid="validation"
        className={`validation ${validation.kind === "invalid" || validation.kind === "unavailable" ? "error" : "muted"}`}
      >
        {validation.kind === "valid" && "The query is valid."}
        {validation.kind === "invalid" && validation.problem.message}
        {validation.kind === "unavailable" && validation.message}
      </p>
      <div className="toolbar actions">
        <button type="button" onClick={() => run.current()} disabled={state.phase === "running"}>
          Run
        </button>
        <button type="button" className="ghost" onClick={result.stop} disabled={state.phase !== "running"}>
          Stop
        </button>
        <span className="muted">Ctrl+Enter runs, Ctrl+Space completes</span>
        <span className="spacer" />
        <span role="status" data-testid="run-status">
          {state.phase === "running" && `Running… ${count(shown)} rows`}
          {state.phase === "done" && `${count(shown)} rows (${state.stopReason})`}
          {state.phase === "stopped" && `Stopped after ${count(shown)} rows`}
        </span>
      </div>
      <StatsBar figures={result.figures} state={state} kept={shown} dropped={dropped} />
      <QueryLibrary
        onOpen={(t) => putInEditor(view.current, t)}
        currentText={() => view.current?.state.doc.toString() ?? ""}
        version={state}
      />
      {state.phase === "failed" && (
        <p className="error" role="alert">
          {state.message}
        </p>
      )}
      {dropped > 0 && (
        <p className="muted" role="note">
          {count(dropped)} more rows were counted, not kept: the table holds the first {count(result.cap)} (Rows kept, below).
        </p>
      )}
      <ResultTable
        rows={result.rows}
        count={shown}
        columns={columns}
        selected={selected?.index ?? null}
        onSelect={select}
        onExpand={expand}
        empty={
          state.phase === "idle"
            ? "Write a query (SELECT * FROM topic, with WHERE and LIMIT) and press Run or Ctrl+Enter; its rows stream in here."
            : state.phase === "running"
              ? "Waiting for the first row…"
              : state.phase === "done"
                ? "No record matched the query."
                : ""
        }
      />
      <ResultTools
        rows={result.rows}
        dropped={dropped}
        runCap={result.cap}
        topic={topic}
        running={state.phase === "running"}
        cap={cap}
        onCap={(n) => {
          setCap(n);
          saveRowCap(n);
        }}
      />
      {detail && <RecordDetail key={selected?.index} row={detail} focus={selected?.focus ?? null} onClose={() => setSelected(null)} />}
    </section>
  );
}
