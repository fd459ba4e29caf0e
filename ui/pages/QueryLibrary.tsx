import type { EditorView } from "@codemirror/view";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type KeyboardEvent, useEffect, useId, useRef, useState } from "react";
import { clearHistory, deleteSaved, fetchHistory, fetchSaved, type HistoryEntry, type SavedQuery, saveQuery } from "../api/library.ts";
import { ErrorAlert } from "../components.tsx";
import "../styles/library.css";
import { count } from "../format.ts";

const HISTORY_KEY = ["sql-history"];
const SAVED_KEY = ["sql-saved"];
/** How long after a run its unfinished line is polled for its end: the server's default longest query time. */
const UNFINISHED_POLL_MS = 60 * 60_000;
/** Whether the panel was left open, across visits: closed unless opened, so the results come first. */
const OPEN_KEY = "loupe.library.open";

export const readLibraryOpen = () => localStorage.getItem(OPEN_KEY) === "open";
export const saveLibraryOpen = (open: boolean) => localStorage.setItem(OPEN_KEY, open ? "open" : "closed");

type Tab = "history" | "saved";
const TABS: { id: Tab; label: string }[] = [
  { id: "history", label: "History" },
  { id: "saved", label: "Saved" },
];

/** Today's runs by their time, older ones with their date. */
function when(ms: number): string {
  const d = new Date(ms);
  return d.toDateString() === new Date().toDateString() ? d.toLocaleTimeString() : d.toLocaleString();
}

/** How a run ended, as the run status says it: "2 rows (END)", "invalid"; nothing while it runs. */
function outcome(e: HistoryEntry): string | null {
  if (e.stopReason === "INVALID") return "invalid";
  if (e.rows !== null) return `${count(e.rows)} ${e.rows === 1 ? "row" : "rows"} (${e.stopReason})`;
  return e.stopReason;
}

/** The query on one line, for the list; the whole text is in the entry's title. */
const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

/** Replaces the editor's text with `text` (one undoable change) and gives it the focus, ready to run. */
export function putInEditor(view: EditorView | null, text: string): void {
  if (!view) return;
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text }, selection: { anchor: text.length } });
  view.focus();
}

/**
 * The caller's query history and saved queries, in a panel beside the editor and the results
 * (the page opens and closes it). The history is written by the server for every run, so
 * `version` (anything that changes when a run starts or ends) only tells the panel to read it
 * again.
 */
export function QueryLibrary({
  id: panelId,
  onOpen,
  onClose,
  currentText,
  version,
}: {
  /** The panel's id, named by the button that opens it. */
  id: string;
  onOpen: (text: string) => void;
  onClose: () => void;
  currentText: () => string;
  version?: unknown;
}) {
  const client = useQueryClient();
  const id = useId();
  const titleId = `${id}-title`;
  const [tab, setTab] = useState<Tab>("history");
  const [saving, setSaving] = useState(false);
  const [status, setStatus] = useState("");
  const tabs = useRef<Record<Tab, HTMLButtonElement | null>>({ history: null, saved: null });

  const history = useQuery({
    queryKey: HISTORY_KEY,
    queryFn: fetchHistory,
    // The server completes a line just after its run ends: read again until the newest one says how.
    refetchInterval: (q) => {
      const newest = q.state.data?.[0];
      return newest && newest.stopReason === null && Date.now() - newest.ranAt < UNFINISHED_POLL_MS ? 2_000 : false;
    },
  });
  const saved = useQuery({ queryKey: SAVED_KEY, queryFn: fetchSaved });

  // A run started or ended: its history line is on the server by now (it is written when the run arrives).
  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` is the trigger itself
  useEffect(() => {
    void client.invalidateQueries({ queryKey: HISTORY_KEY });
  }, [version, client]);

  const openEntry = (text: string) => {
    onOpen(text);
    setStatus("Query put in the editor.");
  };

  // Tabs as the ARIA pattern has them: arrows move between them, only the chosen one is in the tab order.
  const onTabKey = (e: KeyboardEvent<HTMLButtonElement>) => {
    const i = TABS.findIndex((t) => t.id === tab);
    const next = e.key === "ArrowRight" ? i + 1 : e.key === "ArrowLeft" ? i - 1 : e.key === "Home" ? 0 : e.key === "End" ? -1 : null;
    if (next === null) return;
    e.preventDefault();
    const to = TABS.at(next % TABS.length)!.id;
    setTab(to);
    tabs.current[to]?.focus();
  };

  return (
    <aside className="card library" id={panelId} aria-labelledby={titleId}>
      <div className="library-title">
        <h2 id={titleId}>Query library</h2>
        <span className="spacer" />
        <button type="button" className="ghost" onClick={onClose}>
          Close
        </button>
      </div>
      <div className="library-head">
        <div role="tablist" aria-label="Query library" className="library-tabs">
          {TABS.map((t) => (
            <button
              key={t.id}
              type="button"
              role="tab"
              id={`${id}-${t.id}-tab`}
              aria-controls={`${id}-${t.id}`}
              aria-selected={tab === t.id}
              tabIndex={tab === t.id ? 0 : -1}
              className="library-tab"
              ref={(el) => {
                tabs.current[t.id] = el;
              }}
              onClick={() => setTab(t.id)}
              onKeyDown={onTabKey}
            >
              {t.label}
              {t.id === "saved" && saved.data ? ` (${saved.data.length})` : ""}
            </button>
          ))}
        </div>
        <span className="spacer" />
        <span role="status" className="muted library-status">
          {status}
        </span>
        {!saving && (
          <button type="button" className="ghost" onClick={() => setSaving(true)}>
            Save as…
          </button>
        )}
      </div>
      {saving && (
        <SaveForm
          existing={saved.data ?? []}
          currentText={currentText}
          onDone={(name) => {
            setSaving(false);
            if (name !== null) {
              setTab("saved");
              setStatus(`Saved as “${name}”.`);
            }
          }}
        />
      )}
      <div role="tabpanel" id={`${id}-history`} aria-labelledby={`${id}-history-tab`} hidden={tab !== "history"}>
        <HistoryList entries={history.data} error={history.error} onOpen={openEntry} onCleared={() => setStatus("History cleared.")} />
      </div>
      <div role="tabpanel" id={`${id}-saved`} aria-labelledby={`${id}-saved-tab`} hidden={tab !== "saved"}>
        <SavedList entries={saved.data} error={saved.error} onOpen={openEntry} onDeleted={(name) => setStatus(`Deleted “${name}”.`)} />
      </div>
    </aside>
  );
}

function SaveForm({
  existing,
  currentText,
  onDone,
}: {
  existing: SavedQuery[];
  currentText: () => string;
  onDone: (name: string | null) => void;
}) {
  const client = useQueryClient();
  const [name, setName] = useState("");
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  const save = useMutation({
    mutationFn: (n: string) => saveQuery(n, currentText()),
    onSuccess: async (_, n) => {
      await client.invalidateQueries({ queryKey: SAVED_KEY });
      onDone(n);
    },
  });
  const trimmed = name.trim();
  const replaces = existing.some((s) => s.name === trimmed);
  return (
    <form
      className="library-save"
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate(trimmed);
      }}
      onKeyDown={(e) => {
        if (e.key === "Escape") onDone(null);
      }}
    >
      <label>
        Name of the saved query
        <input ref={input} value={name} maxLength={100} onChange={(e) => setName(e.target.value)} required />
      </label>
      <button type="submit" disabled={trimmed === "" || save.isPending}>
        {save.isPending ? "Saving…" : replaces ? "Replace" : "Save"}
      </button>
      <button type="button" className="ghost" onClick={() => onDone(null)}>
        Cancel
      </button>
      {replaces && <p className="muted library-note">A saved query has this name: saving replaces its text with the editor's.</p>}
      {save.error && (
        <p className="error library-note" role="alert">
          {save.error.message}
        </p>
      )}
    </form>
  );
}

function HistoryList({
  entries,
  error,
  onOpen,
  onCleared,
}: {
  entries: HistoryEntry[] | undefined;
  error: Error | null;
  onOpen: (text: string) => void;
  onCleared: () => void;
}) {
  const client = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const clear = useMutation({
    mutationFn: clearHistory,
    onSuccess: async () => {
      setConfirming(false);
      await client.invalidateQueries({ queryKey: HISTORY_KEY });
      onCleared();
    },
  });
  if (error) return <ErrorAlert error={error} />;
  if (!entries) return <p className="muted">Loading the history…</p>;
  if (entries.length === 0) return <p className="muted">No queries run yet. Run one (Ctrl+Enter) and it is listed here.</p>;
  return (
    <>
      <ul className="library-list" aria-label="Queries run, newest first">
        {entries.map((e) => (
          <li key={e.id}>
            <button type="button" className="library-entry" title={e.text} onClick={() => onOpen(e.text)}>
              <code>{oneLine(e.text)}</code>
              <span className="muted">{[outcome(e), when(e.ranAt), e.cluster].filter(Boolean).join(" · ")}</span>
            </button>
          </li>
        ))}
      </ul>
      <div className="toolbar library-actions">
        {confirming ? (
          <>
            <span>Clear all {entries.length} entries?</span>
            <button type="button" className="danger" onClick={() => clear.mutate()} disabled={clear.isPending}>
              Clear history
            </button>
            <button type="button" className="ghost" onClick={() => setConfirming(false)}>
              Keep
            </button>
          </>
        ) : (
          <button type="button" className="ghost" onClick={() => setConfirming(true)}>
            Clear history…
          </button>
        )}
        {clear.error && (
          <span className="error" role="alert">
            {clear.error.message}
          </span>
        )}
      </div>
    </>
  );
}

function SavedList({
  entries,
  error,
  onOpen,
  onDeleted,
}: {
  entries: SavedQuery[] | undefined;
  error: Error | null;
  onOpen: (text: string) => void;
  onDeleted: (name: string) => void;
}) {
  const client = useQueryClient();
  const [confirming, setConfirming] = useState<string | null>(null);
  const remove = useMutation({
    mutationFn: deleteSaved,
    onSuccess: async (_, name) => {
      setConfirming(null);
      await client.invalidateQueries({ queryKey: SAVED_KEY });
      onDeleted(name);
    },
  });
  if (error) return <ErrorAlert error={error} />;
  if (!entries) return <p className="muted">Loading the saved queries…</p>;
  if (entries.length === 0) return <p className="muted">No saved queries. “Save as…” keeps the editor's query under a name.</p>;
  return (
    <>
      <ul className="library-list" aria-label="Saved queries">
        {entries.map((s) => (
          <li key={s.name} className="library-saved">
            <button type="button" className="library-entry" title={s.text} onClick={() => onOpen(s.text)}>
              <strong>{s.name}</strong>
              <code className="muted">{oneLine(s.text)}</code>
            </button>
            {confirming === s.name ? (
              <span className="library-confirm">
                <button
                  type="button"
                  className="danger"
                  aria-label={`Delete ${s.name}`}
                  onClick={() => remove.mutate(s.name)}
                  disabled={remove.isPending}
                >
                  Delete
                </button>
                <button type="button" className="ghost" onClick={() => setConfirming(null)}>
                  Keep
                </button>
              </span>
            ) : (
              <button type="button" className="ghost" aria-label={`Delete the saved query ${s.name}`} onClick={() => setConfirming(s.name)}>
                Delete…
              </button>
            )}
          </li>
        ))}
      </ul>
      <ErrorAlert error={remove.error} />
    </>
  );
}
