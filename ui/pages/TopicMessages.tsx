import { type FormEvent, useCallback, useEffect, useId, useMemo, useRef, useState } from "react";
import { type BrowseAnswer, type BrowsedRecord, browseRecords, type Seek, type TopicDetail } from "../api/topics.ts";
import { withCluster } from "../cluster.ts";
import { Link, TableHead } from "../components.tsx";
import { replaceParams } from "../router.ts";
import "../styles/topic-messages.css";
import { number } from "../format.ts";
import { type BrowseStart, browseSql, fromBase64, hexDump, prettyJson, recordMatches } from "./TopicRecordText.ts";
import { partitionNumbers } from "./TopicShared.ts";

const LIMITS = [20, 50, 100, 500];
const SEEK_LABELS: Record<Seek, string> = {
  newest: "Newest first",
  oldest: "Oldest first",
  offset: "From an offset",
  time: "From a time",
};
/** A live tail asks for new records this long after its last answer. */
const TAIL_EVERY_MS = 1_000;
/** Rows a live tail keeps; older ones leave the list (and the page says so). */
const TAIL_KEEP = 1_000;

const pad = (n: number, w = 2) => String(n).padStart(w, "0");
/** A time as `2024-01-31 14:05:09.123` in the browser's zone. */
export function localTime(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}
/** The value of a datetime-local input for a time. */
const inputTime = (ms: number) => localTime(ms).replace(" ", "T");

const rowId = (r: { partition: number; offset: number }) => `${r.partition}/${r.offset}`;

function startOf(params: URLSearchParams, partitions: number): BrowseStart {
  const seek = (["newest", "oldest", "offset", "time"] as const).find((s) => s === params.get("seek")) ?? "newest";
  const whole = (k: string) => {
    const v = params.get(k);
    return v !== null && /^\d+$/.test(v) ? Number(v) : undefined;
  };
  const partition = whole("partition");
  const limit = whole("limit");
  return {
    seek,
    ...(partition !== undefined && partition < partitions ? { partition } : {}),
    ...(seek === "offset" ? { offset: whole("offset") ?? 0 } : {}),
    ...(seek === "time" ? { time: whole("time") ?? Date.now() - 3_600_000 } : {}),
    limit: limit !== undefined && LIMITS.includes(limit) ? limit : 50,
  };
}

const partitionWords = (ps: number[]) => (ps.length === 1 ? `partition ${ps[0]}` : `partitions ${ps.join(", ")}`);

/** What the rows are and what is left, in a sentence. */
function readSummary(rows: number, last: BrowseAnswer, more: number[]): string {
  // No rows at all: the table's place says so.
  if (rows === 0 && more.length === 0 && last.stopReason === "END" && last.message === null) return "";
  const what = `${number.format(rows)} record${rows === 1 ? "" : "s"}, ${last.order} first`;
  if (more.length === 0) {
    if (last.stopReason !== "END") return `${what}.`;
    return last.message === null ? `${what}: all there are.` : `${what}. ${last.message}`;
  }
  return `${what}. ${last.order === "newest" ? "Older" : "Newer"} records remain in ${partitionWords(more)}.`;
}

/** Newest first by timestamp, then partition and offset: the order a tail shows. */
const newestFirst = (a: BrowsedRecord, b: BrowsedRecord) => b.timestamp - a.timestamp || b.partition - a.partition || b.offset - a.offset;

interface View {
  rows: BrowsedRecord[];
  last: BrowseAnswer | null;
  /** Rows a live tail let go of. */
  dropped: number;
}

/**
 * The message browser: a topic's records newest first, or from a partition and offset or a
 * time (in the URL: `seek`, `partition`, `offset`, `time`, `limit`), each row opening to its key
 * and value (pretty JSON and Avro, the raw bytes a click away), headers, timestamp and its type.
 * A live tail asks for what came since, every second; a quick filter narrows the rows shown and
 * becomes a query of the workbench with one click. What cut an answer (limit, bytes, time) is
 * said beside the rows.
 */
export function TopicMessages({ topic, cluster, location }: { topic: TopicDetail; cluster: string | null; location: string }) {
  const params = new URLSearchParams(location.includes("?") ? location.slice(location.indexOf("?")) : "");
  const start = startOf(params, topic.partitions);
  const startKey = JSON.stringify(start);
  const [draft, setDraft] = useState(start);
  const [view, setView] = useState<View>({ rows: [], last: null, dropped: 0 });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [filter, setFilter] = useState("");
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const [tailing, setTailing] = useState(false);
  const [tailed, setTailed] = useState(0);
  const reading = useRef<AbortController | null>(null);

  const read = useCallback(
    async (ask: Parameters<typeof browseRecords>[1], mode: "replace" | "append") => {
      reading.current?.abort();
      const abort = new AbortController();
      reading.current = abort;
      setBusy(true);
      setError(null);
      try {
        const answer = await browseRecords(topic.topicName, ask, abort.signal);
        if (abort.signal.aborted) return;
        setView((v) => ({ rows: mode === "replace" ? answer.records : [...v.rows, ...answer.records], last: answer, dropped: 0 }));
      } catch (e) {
        if (!abort.signal.aborted) setError((e as Error).message);
      } finally {
        if (reading.current === abort) {
          reading.current = null;
          setBusy(false);
        }
      }
    },
    [topic.topicName],
  );

  // The URL is the read: a new start (a link, Back, the form) reads again.
  // biome-ignore lint/correctness/useExhaustiveDependencies: startKey stands for start
  useEffect(() => {
    setDraft(start);
    setTailing(false);
    setOpen(new Set());
    void read(start, "replace");
    return () => reading.current?.abort();
  }, [startKey, read]);

  // A live tail: what came since the newest answer, every second, until stopped.
  const tailFrom = useRef<Array<{ partition: number; offset: number }>>([]);
  useEffect(() => {
    if (!tailing) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const abort = new AbortController();
    const poll = async () => {
      try {
        const answer = await browseRecords(
          topic.topicName,
          { after: tailFrom.current, limit: 500, ...(start.partition !== undefined ? { partition: start.partition } : {}) },
          abort.signal,
        );
        if (stopped) return;
        tailFrom.current = answer.partitions.map((p) => ({ partition: p.partition, offset: p.next }));
        if (answer.records.length > 0) {
          const fresh = [...answer.records].sort(newestFirst);
          setTailed((n) => n + fresh.length);
          setView((v) => {
            const rows = [...fresh, ...v.rows];
            const kept = rows.slice(0, TAIL_KEEP);
            return { rows: kept, last: v.last, dropped: v.dropped + rows.length - kept.length };
          });
        }
        setError(null);
      } catch (e) {
        if (stopped) return;
        setError((e as Error).message);
      }
      if (!stopped) timer = setTimeout(poll, TAIL_EVERY_MS);
    };
    void poll();
    return () => {
      stopped = true;
      abort.abort();
      clearTimeout(timer);
    };
  }, [tailing, topic.topicName, start.partition]);

  async function startTail() {
    // From the newest records on: a tail shows what arrives, newest at the top.
    let last = view.last;
    if (last?.order !== "newest") {
      const answer = await browseRecords(topic.topicName, {
        seek: "newest",
        limit: start.limit,
        ...(start.partition !== undefined ? { partition: start.partition } : {}),
      }).catch((e: Error) => {
        setError(e.message);
        return null;
      });
      if (!answer) return;
      setView({ rows: answer.records, last: answer, dropped: 0 });
      last = answer;
    }
    tailFrom.current = last.partitions.map((p) => ({ partition: p.partition, offset: p.next }));
    setTailed(0);
    setTailing(true);
  }

  function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const changes = {
      seek: draft.seek === "newest" ? null : draft.seek,
      partition: draft.partition === undefined ? null : String(draft.partition),
      offset: draft.seek === "offset" ? String(draft.offset ?? 0) : null,
      time: draft.seek === "time" ? String(draft.time ?? Date.now()) : null,
      limit: draft.limit === 50 ? null : String(draft.limit),
    };
    const same = JSON.stringify(draft) === startKey;
    replaceParams(location.slice(0, location.includes("?") ? location.indexOf("?") : undefined), params, changes);
    // The same start again: read again (the URL does not change).
    if (same) {
      setTailing(false);
      void read(start, "replace");
    }
  }

  const shown = useMemo(() => view.rows.filter((r) => recordMatches(r, filter)), [view.rows, filter]);
  const last = view.last;
  const more = last
    ? last.order === "newest"
      ? last.partitions.filter((p) => p.first > p.begin)
      : last.partitions.filter((p) => p.next < p.end)
    : [];
  const cut = last && (last.stopReason === "MAX_BYTES" || last.stopReason === "TIME");
  const sql = withCluster(`/sql?q=${encodeURIComponent(browseSql(topic.topicName, start, filter))}&run=1`, cluster);
  const formId = useId();

  return (
    <section aria-label="Messages" className="messages-section">
      <form className="browse-form" onSubmit={submit} aria-label="Read records">
        <label className="stacked">
          <span>Partition</span>
          <select
            value={draft.partition === undefined ? "" : String(draft.partition)}
            onChange={(e) => {
              const { partition: _, ...rest } = draft;
              setDraft(e.target.value === "" ? rest : { ...rest, partition: Number(e.target.value) });
            }}
          >
            <option value="">All partitions</option>
            {partitionNumbers(topic.partitions).map((p) => (
              <option key={p} value={p}>
                {`Partition ${p}`}
              </option>
            ))}
          </select>
        </label>
        <label className="stacked">
          <span>Start</span>
          <select value={draft.seek} onChange={(e) => setDraft({ ...draft, seek: e.target.value as Seek })}>
            {(Object.keys(SEEK_LABELS) as Seek[]).map((s) => (
              <option key={s} value={s}>
                {SEEK_LABELS[s]}
              </option>
            ))}
          </select>
        </label>
        {draft.seek === "offset" && (
          <label className="stacked">
            <span>Offset</span>
            <input
              type="number"
              min={0}
              step={1}
              required
              value={draft.offset ?? 0}
              onChange={(e) => setDraft({ ...draft, offset: Math.max(0, Math.floor(Number(e.target.value) || 0)) })}
            />
          </label>
        )}
        {draft.seek === "time" && (
          <label className="stacked">
            <span>Time (local)</span>
            <input
              type="datetime-local"
              step="0.001"
              required
              value={inputTime(draft.time ?? Date.now())}
              onChange={(e) => {
                const at = new Date(e.target.value).getTime();
                if (!Number.isNaN(at)) setDraft({ ...draft, time: at });
              }}
            />
          </label>
        )}
        <label className="stacked">
          <span>Records</span>
          <select value={draft.limit} onChange={(e) => setDraft({ ...draft, limit: Number(e.target.value) })}>
            {LIMITS.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
        <div className="browse-buttons">
          <button type="submit" disabled={busy && !tailing}>
            {busy && !tailing ? "Reading…" : "Read"}
          </button>
          <button
            type="button"
            className={tailing ? "tailing" : "ghost"}
            aria-pressed={tailing}
            onClick={() => (tailing ? setTailing(false) : void startTail())}
          >
            {tailing ? "Stop live tail" : "Live tail"}
          </button>
        </div>
      </form>

      <div className="toolbar browse-filter">
        <label className="search">
          <span>Filter</span>
          <input
            type="search"
            value={filter}
            onChange={(e) => setFilter(e.target.value)}
            placeholder="Text in key, value or headers"
            aria-describedby={`${formId}-filter`}
          />
        </label>
        <span className="muted" id={`${formId}-filter`}>
          {filter.trim() === ""
            ? "Narrows the rows below."
            : `${number.format(shown.length)} of ${number.format(view.rows.length)} rows match.`}
        </span>
        <Link to={sql}>
          {filter.trim() === "" ? "Open in SQL" : "Search the topic in SQL"}
          <span aria-hidden="true"> →</span>
        </Link>
      </div>

      <p className="browse-status" role="status" data-testid="browse-status">
        {tailing
          ? `Live: ${number.format(tailed)} new record${tailed === 1 ? "" : "s"} since the tail began, newest first.${view.dropped > 0 ? ` Showing the newest ${number.format(TAIL_KEEP)}: ${number.format(view.dropped)} older left the list.` : ""}`
          : busy
            ? "Reading…"
            : last
              ? readSummary(
                  view.rows.length,
                  last,
                  more.map((p) => p.partition),
                )
              : ""}
      </p>
      {cut && !tailing && (
        <p className="notice" role="note" data-testid="browse-cut">
          {last.message}
        </p>
      )}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}

      {view.rows.length === 0 && last && !busy ? (
        <p className="muted">{tailing ? "Waiting for new records…" : "No records in this range."}</p>
      ) : (
        <table aria-label="Messages" className="messages">
          <thead>
            <tr>
              <th scope="col" className="toggle-col">
                <span className="visually-hidden">Details</span>
              </th>
              <th scope="col" className="num">
                Partition
              </th>
              <th scope="col" className="num">
                Offset
              </th>
              <th scope="col">Timestamp</th>
              <th scope="col">Key</th>
              <th scope="col">Value</th>
              <th scope="col" className="num">
                Headers
              </th>
            </tr>
          </thead>
          <tbody>
            {shown.map((r) => {
              const id = rowId(r);
              const expanded = open.has(id);
              const detailId = `record-${r.partition}-${r.offset}`;
              return (
                <RecordRows
                  key={id}
                  record={r}
                  expanded={expanded}
                  detailId={detailId}
                  onToggle={() =>
                    setOpen((s) => {
                      const next = new Set(s);
                      if (expanded) next.delete(id);
                      else next.add(id);
                      return next;
                    })
                  }
                />
              );
            })}
          </tbody>
        </table>
      )}
      {!tailing && last && more.length > 0 && (
        <div className="toolbar actions">
          <button
            type="button"
            className="ghost"
            disabled={busy}
            onClick={() =>
              void read(
                last.order === "newest"
                  ? { before: last.partitions.map((p) => ({ partition: p.partition, offset: p.first })), limit: start.limit }
                  : { after: last.partitions.map((p) => ({ partition: p.partition, offset: p.next })), limit: start.limit },
                "append",
              )
            }
          >
            {last.order === "newest" ? "Load older records" : "Load newer records"}
          </button>
        </div>
      )}
    </section>
  );
}

function Preview({ side }: { side: BrowsedRecord["key"] }) {
  if (side === null) return <span className="muted">null</span>;
  return <span className="cell-text">{side.text.length > 300 ? `${side.text.slice(0, 300)}…` : side.text}</span>;
}

function RecordRows({
  record: r,
  expanded,
  detailId,
  onToggle,
}: {
  record: BrowsedRecord;
  expanded: boolean;
  detailId: string;
  onToggle: () => void;
}) {
  return (
    <>
      <tr className={expanded ? "record-open" : undefined}>
        <td className="toggle-col">
          <button
            type="button"
            className="ghost small toggle"
            aria-expanded={expanded}
            aria-controls={expanded ? detailId : undefined}
            aria-label={`Record ${r.partition}/${r.offset}`}
            onClick={onToggle}
          >
            <span aria-hidden="true">{expanded ? "▾" : "▸"}</span>
          </button>
        </td>
        <td className="num">{r.partition}</td>
        <td className="num">{r.offset}</td>
        <td className="nowrap">
          {localTime(r.timestamp)}
          {r.timestampType === "LogAppendTime" && <span className="badge">broker</span>}
        </td>
        <td className="mono cell">
          <Preview side={r.key} />
        </td>
        <td className="mono cell">
          <Preview side={r.value} />
        </td>
        <td className="num">{r.headers.length}</td>
      </tr>
      {expanded && (
        <tr className="record-detail">
          <td colSpan={7} id={detailId}>
            <RecordView record={r} />
          </td>
        </tr>
      )}
    </>
  );
}

/** One record in full: where and when, key and value (decoded or raw), headers. */
function RecordView({ record: r }: { record: BrowsedRecord }) {
  return (
    <div className="record-view">
      <dl className="record-meta">
        <dt>Partition</dt>
        <dd>{r.partition}</dd>
        <dt>Offset</dt>
        <dd>{r.offset}</dd>
        <dt>Timestamp</dt>
        <dd>
          {localTime(r.timestamp)}{" "}
          <span className="muted">
            ({new Date(r.timestamp).toISOString()}, {number.format(r.timestamp)} ms)
          </span>
        </dd>
        <dt>Timestamp type</dt>
        <dd>
          {r.timestampType === "LogAppendTime"
            ? "LogAppendTime (set by the broker when it stored the record)"
            : "CreateTime (set by the producer)"}
        </dd>
      </dl>
      <div className="record-sides">
        <RecordSide label="Key" side={r.key} where={`${r.partition}/${r.offset}`} />
        <RecordSide label="Value" side={r.value} where={`${r.partition}/${r.offset}`} />
      </div>
      <h3>Headers</h3>
      {r.headers.length === 0 ? (
        <p className="muted">No headers.</p>
      ) : (
        <table aria-label={`Headers of record ${r.partition}/${r.offset}`} className="record-headers">
          <TableHead columns={["Name", "Value"]} />
          <tbody>
            {r.headers.map((h, i) => (
              // Names may repeat: the place tells them apart.
              // biome-ignore lint/suspicious/noArrayIndexKey: headers have no id but their place
              <tr key={i}>
                <td className="mono">{h.key}</td>
                <td className="mono">
                  {h.value === null ? <span className="muted">null</span> : h.value}
                  {h.base64 && <span className="badge">base64</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

function RecordSide({ label, side, where }: { label: string; side: BrowsedRecord["key"]; where: string }) {
  const [raw, setRaw] = useState(false);
  const text = useMemo(() => {
    if (side === null) return "";
    if (raw) return hexDump(fromBase64(side.base64));
    return side.format === "JSON" || side.format === "AVRO" || side.format === "PROTOBUF" ? prettyJson(side.text) : side.text;
  }, [side, raw]);
  return (
    <section className="record-side" aria-label={`${label} of record ${where}`}>
      <div className="record-side-head">
        <h3>{label}</h3>
        {side && (
          <span className="muted">
            {side.format} · {number.format(side.size)} B
          </span>
        )}
        {side && (
          <button type="button" className="ghost small" aria-pressed={raw} onClick={() => setRaw(!raw)}>
            Raw bytes
          </button>
        )}
      </div>
      {side === null ? (
        <p className="muted">No {label.toLowerCase()} (null).</p>
      ) : (
        <>
          {side.error && <p className="warning">{`Not readable as its format says (${side.error}): shown as base64.`}</p>}
          {/* Scrolls when long: focusable, so the keyboard scrolls it too. */}
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus to be scrolled by keyboard */}
          <pre className={raw ? "record-text raw" : "record-text"} tabIndex={0}>
            {text}
          </pre>
          {raw && (
            <>
              <h4 className="muted">base64</h4>
              {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus to be scrolled by keyboard */}
              <pre className="record-text" tabIndex={0}>
                {side.base64}
              </pre>
            </>
          )}
          {!raw && side.textCut && (
            <p className="muted">The text is cut here: the record holds more (see its raw bytes, or read it in SQL).</p>
          )}
          {raw && side.rawCut && (
            <p className="muted">{`Only the first ${number.format(fromBase64(side.base64).length)} of ${number.format(side.size)} bytes are shown.`}</p>
          )}
        </>
      )}
    </section>
  );
}
