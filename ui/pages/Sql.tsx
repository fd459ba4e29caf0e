import type { EditorView } from "@codemirror/view";
import { useQuery } from "@tanstack/react-query";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { type EditorFacts, useInsert, validateSql } from "../api/sql.ts";
import { navigate } from "../router.ts";
import { ApiError, whoAmI } from "../session.ts";
import { columnsFor } from "../sql/cells.ts";
import { topicOf } from "../sql/completion.ts";
import { createSqlEditor } from "../sql/editor.ts";
import { InsertResult } from "../sql/InsertResult.tsx";
import type { JsonPath } from "../sql/JsonTree.tsx";
import { RecordDetail } from "../sql/RecordDetail.tsx";
import { ResultTable } from "../sql/ResultTable.tsx";
import { ResultTools } from "../sql/ResultTools.tsx";
import { RunNotice, settingValue } from "../sql/RunNotice.tsx";
import { withSetting } from "../sql/raise.ts";
import { readRowCap, saveRowCap } from "../sql/row-cap.ts";
import { useQueryRun } from "../sql/run.ts";
import { StatsBar } from "../sql/StatsBar.tsx";
import type { ValidationState } from "../sql/validation.ts";
import "../styles/workbench.css";
import { count } from "../format.ts";
import { putInEditor, QueryLibrary, readLibraryOpen, saveLibraryOpen } from "./QueryLibrary.tsx";

const LIBRARY_ID = "query-library";

/**
 * What the server's lexer reads of `text` (whether it is an INSERT, its leading SETs): the
 * latest validation answer's (`known`) when it is for this text, else asked; null when the
 * server cannot be asked.
 */
async function factsOf(text: string, known: { text: string; facts: EditorFacts } | null): Promise<EditorFacts | null> {
  if (known && known.text === text) return known.facts;
  try {
    return (await validateSql(text)).editor;
  } catch {
    return null;
  }
}

/**
 * The SQL workbench: an editor with completion and validation as you type, Run (Ctrl/Cmd+Enter)
 * streaming rows into a virtualized table, Stop, live statistics, a record's value as a tree,
 * export as JSON lines or CSV. The results come first: the query library is a side panel opened
 * on demand. A run cut short by a bound says so above its rows, with Continue. An INSERT is
 * written (through the route the JDBC driver uses, audited) and answered with where each record went.
 */
export function SqlPage({ location }: { location: string }) {
  const params = new URLSearchParams(location.includes("?") ? location.slice(location.indexOf("?")) : "");
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const run = useRef<() => void>(() => {});
  /** Runs a text known to be no INSERT (a linked query once the server has said so). */
  const runQuery = useRef<(text: string) => void>(() => {});
  /** The text of the run shown: what Continue and "Run again with" go on from (the editor may hold another by then). */
  const ranText = useRef("");
  /** The latest validation answer's text and what the server's lexer read of it. */
  const validated = useRef<{ text: string; facts: EditorFacts } | null>(null);
  /** Counts the runs asked for: one that waits for the server's reading of its text yields to a later one. */
  const runs = useRef(0);
  const [validation, setValidation] = useState<ValidationState>({ kind: "none" });
  const [cap, setCap] = useState(readRowCap);
  const [topic, setTopic] = useState<string | null>(null);
  const [selected, setSelected] = useState<{ index: number; focus: JsonPath | null } | null>(null);
  const [libraryOpen, setLibraryOpen] = useState(readLibraryOpen);
  /** What the results area shows: the rows of a query, or what an INSERT wrote. */
  const [mode, setMode] = useState<"query" | "insert">("query");
  const [isInsert, setIsInsert] = useState(false);
  const result = useQueryRun();
  const insert = useInsert();
  const me = useQuery({ queryKey: ["whoami"], queryFn: whoAmI, staleTime: 60_000 });
  // Writing needs the write role (the server checks each topic's scope too); unknown yet: the server says.
  const writer = me.data ? me.data.roles.some((r) => r === "admin" || r === "write") : true;
  const roles = me.data?.roles.join(", ") ?? "";

  useEffect(() => {
    if (!host.current) return;
    const doc = new URLSearchParams(window.location.search).get("q") ?? "SELECT * FROM ";
    let live = true;
    const editor = createSqlEditor({
      parent: host.current,
      doc,
      onRun: () => run.current(),
      // The workbench runs INSERT statements too.
      keywords: ["INSERT", "INTO", "VALUES"],
      onValidation: (v) => {
        setValidation(v);
        validated.current = v.kind === "valid" || v.kind === "invalid" ? { text: v.text, facts: v.facts } : null;
        setIsInsert(validated.current?.facts.insert ?? false);
      },
    });
    view.current = editor;
    // A link that asks for it (a topic's "Query in SQL", the message browser's search) runs its
    // query at once, once the server has said it is no INSERT: an INSERT never runs unasked, nor
    // a text the server could not read, nor one edited meanwhile.
    const linked = doc.trim();
    if (new URLSearchParams(window.location.search).get("run") === "1" && linked) {
      void factsOf(linked, null).then((facts) => {
        if (live && facts && !facts.insert && editor.state.doc.toString().trim() === linked) runQuery.current(linked);
      });
    }
    return () => {
      live = false;
      editor.destroy();
    };
    // The editor is made once; the query text then lives in it (and in the URL once run).
  }, []);

  /**
   * Runs `text`: writes it when it is an INSERT, else queries. `asInsert`, when known; else the
   * server is asked (a text not validated yet), and when it cannot be, the text is sent as a
   * query, which the server refuses for an INSERT: nothing is written unasked.
   */
  const runText = async (text: string, asInsert?: boolean) => {
    const seq = ++runs.current;
    const known = validated.current;
    const writes = asInsert ?? (known && known.text.trim() === text ? known.facts.insert : ((await factsOf(text, known))?.insert ?? false));
    if (seq !== runs.current) return;
    const q = new URLSearchParams(params);
    q.set("q", text);
    // Once run, a reload shows the query without running it again.
    q.delete("run");
    navigate(`/sql?${q}`, { replace: true });
    setSelected(null);
    ranText.current = text;
    if (writes) {
      setMode("insert");
      result.stop();
      // Not sent when the role cannot write: said beside Run instead.
      if (writer) insert.mutate(text);
      else insert.reset();
      return;
    }
    setMode("query");
    insert.reset();
    setTopic(topicOf(text));
    result.start(text, cap);
  };

  run.current = () => {
    const text = view.current?.state.doc.toString().trim() ?? "";
    if (text) void runText(text);
  };
  runQuery.current = (text) => void runText(text, false);

  const toggleLibrary = (open: boolean) => {
    setLibraryOpen(open);
    saveLibraryOpen(open);
  };

  const { state, shown, dropped } = result;
  const columns = useMemo(() => columnsFor(result.fields), [result.fields]);
  const select = useCallback((index: number) => setSelected({ index, focus: null }), []);
  const expand = useCallback((index: number, path: string[]) => setSelected({ index, focus: path }), []);
  const detail = selected === null ? undefined : result.rows[selected.index];
  const busy = state.phase === "running" || insert.isPending;
  const continued = result.figures?.continued ?? 0;

  return (
    <section className={`page sql-page${libraryOpen ? " with-library" : ""}`}>
      <div className="sql-main">
        <div className="sql-head">
          <h1>SQL</h1>
          <span className="spacer" />
          <button
            type="button"
            className="ghost"
            aria-expanded={libraryOpen}
            aria-controls={libraryOpen ? LIBRARY_ID : undefined}
            onClick={() => toggleLibrary(!libraryOpen)}
          >
            Query library
          </button>
        </div>
        <div className="editor" ref={host} />
        <p
          role="status"
          data-testid="validation"
          className={`validation ${validation.kind === "invalid" || validation.kind === "unavailable" ? "error" : "muted"}`}
        >
          {validation.kind === "valid" &&
            (!isInsert
              ? "The query is valid."
              : writer
                ? "The statement is valid: Run writes its records."
                : `The statement is valid, but writing records needs the write role (yours: ${roles}).`)}
          {validation.kind === "invalid" && validation.problem.message}
          {validation.kind === "unavailable" && validation.message}
        </p>
        <div className="toolbar actions">
          <button type="button" onClick={() => run.current()} disabled={busy || (isInsert && !writer)}>
            Run
          </button>
          <button type="button" className="ghost" onClick={result.stop} disabled={state.phase !== "running"}>
            Stop
          </button>
          <span className="muted">Ctrl+Enter runs, Ctrl+Space completes</span>
          <span className="spacer" />
          <span role="status" data-testid="run-status">
            {mode === "insert" && insert.isPending && "Writing…"}
            {mode === "insert" &&
              insert.data &&
              `${count(insert.data.records)} ${insert.data.records === 1 ? "record" : "records"} written`}
            {mode === "insert" && insert.error && "Not written"}
            {mode === "query" && state.phase === "running" && `Running… ${count(shown)} rows${continued > 0 ? " (continued)" : ""}`}
            {mode === "query" && state.phase === "done" && `${count(shown)} rows (${state.stopReason})`}
            {mode === "query" && state.phase === "stopped" && `Stopped after ${count(shown)} rows`}
          </span>
        </div>
        {mode === "insert" ? (
          <>
            {!writer && (
              <p className="error" role="alert">
                Not written: an INSERT needs the write role (yours: {roles}).
              </p>
            )}
            {insert.error && (
              <p className="error" role="alert">
                {insert.error instanceof ApiError && insert.error.status === 403
                  ? `Not written: ${insert.error.message} (an INSERT needs the write role on the topic).`
                  : `Not written: ${insert.error.message}`}
              </p>
            )}
            {insert.data && <InsertResult answer={insert.data} />}
          </>
        ) : (
          <>
            <StatsBar figures={result.figures} state={state} kept={shown} dropped={dropped} />
            {state.phase === "failed" && (
              <p className="error" role="alert">
                {state.message}
              </p>
            )}
            <RunNotice
              state={state}
              figures={result.figures}
              rows={shown + dropped}
              onContinue={(resume) => result.start(ranText.current, cap, resume)}
              onRaise={async (setting, value) => {
                const ran = ranText.current;
                const facts = await factsOf(ran, validated.current);
                const text = withSetting(ran, facts?.settings ?? [], setting, settingValue(setting, value));
                putInEditor(view.current, text);
                // A setting more or changed leaves a query a query.
                void runText(text, false);
              }}
            />
            {dropped > 0 && (
              <p className="muted" role="note">
                {count(dropped)} more rows were counted, not kept: the table holds the first {count(result.cap)} (Rows kept, below).
              </p>
            )}
            <ResultTable
              rows={result.rows}
              count={shown}
              columns={columns}
              masked={result.figures?.masked ?? []}
              selected={selected?.index ?? null}
              onSelect={select}
              onExpand={expand}
              empty={
                state.phase === "idle"
                  ? "Write a query (SELECT * FROM topic, with WHERE and LIMIT) and press Run or Ctrl+Enter; its rows stream in here."
                  : state.phase === "running"
                    ? "Waiting for the first row…"
                    : state.phase === "done" && state.stopReason === "END"
                      ? "No record matched the query."
                      : state.phase === "done" || state.phase === "stopped"
                        ? "No record matched in the part read (above)."
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
            {detail && (
              <RecordDetail key={selected?.index} row={detail} focus={selected?.focus ?? null} onClose={() => setSelected(null)} />
            )}
          </>
        )}
      </div>
      {libraryOpen && (
        <QueryLibrary
          id={LIBRARY_ID}
          onOpen={(t) => putInEditor(view.current, t)}
          onClose={() => toggleLibrary(false)}
          currentText={() => view.current?.state.doc.toString() ?? ""}
          version={state}
        />
      )}
    </section>
  );
}
