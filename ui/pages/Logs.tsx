import { useQuery } from "@tanstack/react-query";
import { useVirtualizer } from "@tanstack/react-virtual";
import { useMemo, useRef, useState } from "react";
import { fetchLogs, type LogLine } from "../api/logs.ts";
import { replaceParams } from "../router.ts";
import "../styles/logs.css";
import { ErrorAlert } from "../components.tsx";
import { number } from "../format.ts";

/** A line's fields as `key=value` words, in the order the server wrote them. */
const fieldsOf = (l: LogLine): Array<[string, string]> => Object.entries(l.fields ?? {}).map(([k, v]) => [k, String(v)]);

const LEVELS = ["INFO", "METRICS"] as const;
type LogLevel = (typeof LEVELS)[number];

/** Auto-refresh pace: the METRICS line comes every log.metricsInterval (a minute by default). */
const AUTO_REFRESH_MS = 5_000;
const ROW_ESTIMATE = 34;

/** The page's state in the URL: `level` (INFO unless METRICS) and `q` (the filter). */
function viewOf(location: string) {
  const params = new URLSearchParams(location.includes("?") ? location.slice(location.indexOf("?")) : "");
  const level: LogLevel = params.get("level") === "METRICS" ? "METRICS" : "INFO";
  return { params, level, q: params.get("q") ?? "" };
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");
/** Local date and time to the millisecond: log lines a few ms apart must read apart. */
function timeText(ms: number): string {
  const d = new Date(ms);
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`
  );
}

/** Loupe's own INFO (warnings and errors included) and METRICS lines, newest first, filtered as you type. */
export function LogsPage({ location }: { location: string }) {
  const view = viewOf(location);
  const [auto, setAuto] = useState(false);
  const lines = useQuery({
    queryKey: ["logs", view.level],
    queryFn: () => fetchLogs(view.level),
    refetchInterval: auto ? AUTO_REFRESH_MS : false,
  });

  const set = (changes: Record<string, string | null>) => replaceParams("/logs", view.params, changes);

  const rows = useMemo(() => {
    const needle = view.q.toLowerCase();
    const all = [...(lines.data ?? [])].reverse();
    if (needle === "") return all;
    return all.filter((l) =>
      `${l.level} ${l.logger} ${l.message} ${fieldsOf(l)
        .map(([k, v]) => `${k}=${v}`)
        .join(" ")} ${l.stacktrace}`
        .toLowerCase()
        .includes(needle),
    );
  }, [lines.data, view.q]);

  const scroller = useRef<HTMLElement>(null);
  const virtual = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_ESTIMATE,
    overscan: 10,
  });

  return (
    <section className="page logs">
      <h1>Logs</h1>
      <div className="toolbar">
        <fieldset className="segmented">
          <legend>Level</legend>
          {LEVELS.map((l) => (
            <label key={l}>
              <input
                type="radio"
                name="level"
                value={l}
                checked={view.level === l}
                onChange={() => set({ level: l === "INFO" ? null : l })}
              />
              <span>{l}</span>
            </label>
          ))}
        </fieldset>
        <label className="search">
          <span>Filter</span>
          <input type="search" value={view.q} onChange={(e) => set({ q: e.target.value })} placeholder="Text or key=value in the line" />
        </label>
        <button type="button" className="ghost" onClick={() => void lines.refetch()} disabled={lines.isFetching}>
          {lines.isFetching ? "Refreshing…" : "Refresh"}
        </button>
        <label className="check">
          <input type="checkbox" checked={auto} onChange={(e) => setAuto(e.target.checked)} />
          <span>Refresh every {AUTO_REFRESH_MS / 1000} s</span>
        </label>
        <span className="muted" aria-live="polite" data-testid="log-count">
          {lines.data ? `${number.format(rows.length)} of ${number.format(lines.data.length)} lines` : ""}
        </span>
      </div>
      <ErrorAlert error={lines.error} />
      {lines.isPending && <p className="muted">Loading the {view.level} lines…</p>}
      {lines.data && rows.length === 0 && (
        <p className="muted">
          {lines.data.length > 0
            ? "No line matches the filter: clear it or try other words."
            : view.level === "INFO"
              ? "No INFO line is kept yet: lines appear here as Loupe writes them. Refresh to look again."
              : "No METRICS line yet: Loupe writes one every log.metricsInterval (a minute by default). Refresh to look again."}
        </p>
      )}
      {rows.length > 0 && (
        // biome-ignore lint/a11y/noNoninteractiveTabindex: the keyboard must reach a scrolled region whose rows hold nothing focusable (WCAG 2.1.1)
        <section className="grid-scroll" ref={scroller} tabIndex={0} aria-label="Log lines">
          <table className="grid log-grid" aria-label={`${view.level} log lines, newest first`} aria-rowcount={rows.length + 1}>
            <thead>
              <tr className="grid-row log-cols" aria-rowindex={1}>
                <th scope="col">Time</th>
                <th scope="col">Level</th>
                <th scope="col">Logger</th>
                <th scope="col">Message</th>
              </tr>
            </thead>
            <tbody ref={(el) => el?.style.setProperty("height", `${virtual.getTotalSize()}px`)}>
              {virtual.getVirtualItems().map((item) => {
                const l = rows[item.index]!;
                return (
                  <tr
                    key={item.key}
                    data-index={item.index}
                    aria-rowindex={item.index + 2}
                    className={`grid-row log-cols log-${l.level.toLowerCase()}`}
                    ref={(el) => {
                      if (!el) return;
                      el.style.setProperty("transform", `translateY(${item.start}px)`);
                      virtual.measureElement(el);
                    }}
                  >
                    <td className="log-time">{timeText(l.timestamp)}</td>
                    <td className="log-level">{l.level}</td>
                    <td className="log-logger">{l.logger}</td>
                    <td className="log-message">
                      {l.message}
                      {fieldsOf(l).length > 0 && (
                        <span className="log-fields">
                          {fieldsOf(l).map(([k, v]) => (
                            <span key={k} className="log-field">
                              <span className="log-key">{k}</span>={v}
                            </span>
                          ))}
                        </span>
                      )}
                      {l.stacktrace && (
                        <details>
                          <summary>Stack trace</summary>
                          <pre>{l.stacktrace}</pre>
                        </details>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </section>
      )}
    </section>
  );
}
