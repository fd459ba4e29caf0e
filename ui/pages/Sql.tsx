import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { sql as sqlLanguage } from "@codemirror/lang-sql";
import { defaultHighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { EditorState } from "@codemirror/state";
import { EditorView, keymap, lineNumbers } from "@codemirror/view";
import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useRef, useState } from "react";
import { navigate } from "../router.ts";
import { runQuery, type StreamedRecord } from "../stream.ts";
import { putInEditor, QueryLibrary } from "./QueryLibrary.tsx";

/** Rows kept for the table; beyond, rows are counted, not kept (the page's memory stays bounded). */
export const ROW_CAP = 100_000;
/** Value fields shown as columns, at most (the first records decide them). */
const MAX_FIELDS = 40;
const ROW_HEIGHT = 32;

interface Row {
  rec: StreamedRecord;
  /** The value parsed, when it is JSON. */
  value: unknown;
}

type RunState =
  | { phase: "idle" }
  | { phase: "running" }
  | { phase: "done"; stopReason: string }
  | { phase: "stopped" }
  | { phase: "failed"; message: string };

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const cellText = (v: unknown) => (v === undefined ? "" : v === null ? "null" : typeof v === "object" ? JSON.stringify(v) : String(v));
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The SQL workbench: an editor, Run (Ctrl/Cmd+Enter) streaming rows into a virtualized table, Stop, live statistics. */
export function SqlPage({ location }: { location: string }) {
  const params = new URLSearchParams(location.includes("?") ? location.slice(location.indexOf("?")) : "");
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const run = useRef<() => void>(() => {});

  const rows = useRef<Row[]>([]);
  const [shown, setShown] = useState(0);
  const [dropped, setDropped] = useState(0);
  const [fields, setFields] = useState<string[]>([]);
  const [stats, setStats] = useState<Record<string, unknown> | null>(null);
  const [state, setState] = useState<RunState>({ phase: "idle" });
  const [selected, setSelected] = useState<number | null>(null);
  const abort = useRef<AbortController | null>(null);

  useEffect(() => {
    if (!host.current) return;
    const editor = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: new URLSearchParams(window.location.search).get("q") ?? "SELECT * FROM ",
        extensions: [
          lineNumbers(),
          history(),
          sqlLanguage(),
          syntaxHighlighting(defaultHighlightStyle),
          keymap.of([
            {
              key: "Mod-Enter",
              run: () => {
                run.current();
                return true;
              },
            },
            ...defaultKeymap,
            ...historyKeymap,
          ]),
          EditorView.contentAttributes.of({ "aria-label": "SQL query" }),
          // Its styles are <style> elements: they carry the page's nonce (the policy allows no other).
          EditorView.cspNonce.of(document.querySelector<HTMLMetaElement>('meta[name="loupe-style-nonce"]')?.content ?? ""),
        ],
      }),
    });
    view.current = editor;
    return () => editor.destroy();
    // The editor is made once; the query text then lives in it (and in the URL once run).
  }, []);

  run.current = () => {
    const text = view.current?.state.doc.toString().trim() ?? "";
    if (!text) return;
    abort.current?.abort();
    const controller = new AbortController();
    abort.current = controller;
    const q = new URLSearchParams(params);
    q.set("q", text);
    navigate(`/sql?${q}`, { replace: true });
    rows.current = [];
    const seen: string[] = [];
    let frame = 0;
    let droppedCount = 0;
    setShown(0);
    setDropped(0);
    setFields([]);
    setStats(null);
    setSelected(null);
    setState({ phase: "running" });
    // Re-render at most once a frame however fast rows arrive.
    const flush = () => {
      frame = 0;
      setShown(rows.current.length);
      setDropped(droppedCount);
      setFields([...seen]);
    };
    runQuery(
      text,
      {
        records(batch) {
          for (const rec of batch) {
            if (rows.current.length >= ROW_CAP) {
              droppedCount++;
              continue;
            }
            const value = parse(rec.value);
            if (isRecord(value) && seen.length < MAX_FIELDS)
              for (const k of Object.keys(value)) if (!seen.includes(k) && seen.length < MAX_FIELDS) seen.push(k);
            rows.current.push({ rec, value });
          }
          if (frame === 0) frame = requestAnimationFrame(flush);
        },
        stats: (s) => setStats(s),
        end: (e) => setState({ phase: "done", stopReason: String(e.stopReason ?? "END") }),
        error: (message) => setState({ phase: "failed", message }),
      },
      controller.signal,
    )
      .catch((err: unknown) => {
        if (controller.signal.aborted) setState({ phase: "stopped" });
        else setState({ phase: "failed", message: err instanceof Error ? err.message : String(err) });
      })
      .finally(() => {
        if (frame !== 0) cancelAnimationFrame(frame);
        flush();
      });
  };

  useEffect(() => () => abort.current?.abort(), []);

  const columns = ["key", "partition", "offset", "timestamp", ...(fields.length > 0 ? fields.map((f) => `value.${f}`) : ["value"])];
  const scroller = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({ count: shown, getScrollElement: () => scroller.current, estimateSize: () => ROW_HEIGHT, overscan: 15 });
  const cell = (row: Row, column: string): string => {
    switch (column) {
      case "key":
        return cellText(row.rec.key);
      case "partition":
        return String(row.rec.partition);
      case "offset":
        return String(row.rec.offset);
      case "timestamp":
        return new Date(row.rec.timestamp).toISOString();
      case "value":
        return cellText(row.value);
      default:
        return isRecord(row.value) ? cellText(row.value[column.slice("value.".length)]) : "";
    }
  };
  const detail = selected === null ? null : rows.current[selected];

  return (
    <section className="page">
      <h1>SQL</h1>
      <div className="editor" ref={host} />
      <div className="toolbar actions">
        <button type="button" onClick={() => run.current()} disabled={state.phase === "running"}>
          Run
        </button>
        <button type="button" className="ghost" onClick={() => abort.current?.abort()} disabled={state.phase !== "running"}>
          Stop
        </button>
        <span className="muted">Ctrl+Enter runs</span>
        <span className="spacer" />
        <span role="status" data-testid="run-status">
          {state.phase === "running" && `Running… ${shown.toLocaleString("en-US")} rows`}
          {state.phase === "done" && `${shown.toLocaleString("en-US")} rows (${state.stopReason})`}
          {state.phase === "stopped" && `Stopped after ${shown.toLocaleString("en-US")} rows`}
          {stats && state.phase === "running" && `, ${Number(stats.totalRecords ?? 0).toLocaleString("en-US")} read`}
        </span>
      </div>
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
          {dropped.toLocaleString("en-US")} more rows were counted, not kept: the table holds the first {ROW_CAP.toLocaleString("en-US")}.
        </p>
      )}
      <div className="grid-scroll results" ref={scroller}>
        <table
          className="grid"
          aria-label="Results"
          aria-rowcount={shown + 1}
          ref={(el) => el?.style.setProperty("--cols", `repeat(${columns.length}, minmax(120px, 1fr))`)}
        >
          <thead>
            <tr className="grid-row result-cols" aria-rowindex={1}>
              {columns.map((c) => (
                <th key={c} scope="col">
                  {c}
                </th>
              ))}
            </tr>
          </thead>
          <tbody ref={(el) => el?.style.setProperty("height", `${virtual.getTotalSize()}px`)}>
            {virtual.getVirtualItems().map((item) => {
              const row = rows.current[item.index]!;
              return (
                <tr
                  key={item.index}
                  aria-rowindex={item.index + 2}
                  aria-selected={selected === item.index}
                  className="grid-row result-cols"
                  ref={(el) => el?.style.setProperty("transform", `translateY(${item.start}px)`)}
                  onClick={() => setSelected(item.index)}
                >
                  {columns.map((c) => {
                    const text = cell(row, c);
                    return c === "offset" ? (
                      // The record whole, from the keyboard too.
                      <td key={c}>
                        <button
                          type="button"
                          className="link"
                          onClick={() => setSelected(item.index)}
                          aria-label={`Show the record at offset ${text}`}
                        >
                          {text}
                        </button>
                      </td>
                    ) : (
                      <td key={c} title={text.length > 40 ? text : undefined}>
                        {text}
                      </td>
                    );
                  })}
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {detail && (
        <section className="card record" aria-label="Selected record">
          <h2>
            Partition {detail.rec.partition}, offset {detail.rec.offset}
          </h2>
          <pre>{JSON.stringify({ key: detail.rec.key, timestamp: detail.rec.timestamp, value: detail.value }, null, 2)}</pre>
        </section>
      )}
    </section>
  );
}
