import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import "../styles/consumers.css";
import { fetchLagHistory } from "../api/consumers.ts";
import { ErrorAlert } from "../components.tsx";
import { number } from "../format.ts";

const HEIGHT = 240;
/** The windows offered, as the API's `window` parameter, shortest first. */
export const LAG_WINDOWS = [
  { value: "5m", label: "last 5 minutes" },
  { value: "15m", label: "last 15 minutes" },
  { value: "1h", label: "last hour" },
  { value: "6h", label: "last 6 hours" },
  { value: "24h", label: "last 24 hours" },
  { value: "7d", label: "last 7 days" },
  { value: "30d", label: "last 30 days" },
] as const;
/** The window a group's page opens with. */
export const DEFAULT_LAG_WINDOW = "1h";
export type LagWindow = (typeof LAG_WINDOWS)[number]["value"];

/** The theme's colours, read from the CSS variables at the time the chart is drawn. */
function palette() {
  const css = getComputedStyle(document.documentElement);
  const v = (name: string) => css.getPropertyValue(name).trim();
  return { text: v("--text"), muted: v("--muted"), border: v("--border"), accent: v("--accent"), second: v("--chart-2") || v("--error") };
}

/** Redraws when the theme toggle changes `data-theme` on the root element. */
function useThemeVersion(): number {
  const [version, setVersion] = useState(0);
  useEffect(() => {
    const observer = new MutationObserver(() => setVersion((v) => v + 1));
    observer.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
    const media = window.matchMedia("(prefers-color-scheme: dark)");
    const onMedia = () => setVersion((v) => v + 1);
    media.addEventListener("change", onMedia);
    return () => {
      observer.disconnect();
      media.removeEventListener("change", onMedia);
    };
  }, []);
  return version;
}

function options(width: number): uPlot.Options {
  const c = palette();
  const axis = { stroke: c.muted, grid: { stroke: c.border, width: 1 }, ticks: { stroke: c.border, width: 1 } };
  return {
    width,
    height: HEIGHT,
    cursor: { drag: { x: false, y: false } },
    legend: { show: false },
    scales: { x: { time: true }, records: { auto: true, range: (_u, _min, max) => [0, Math.max(1, max)] }, seconds: { auto: true } },
    series: [
      {},
      {
        label: "Lag (records)",
        scale: "records",
        stroke: c.accent,
        width: 2,
        fill: `${c.accent}22`, // Markers while they stay apart; a month of hours is a line.
        points: { show: (u: uPlot) => u.data[0].length <= 120, size: 4 },
      },
      { label: "Lag (s)", scale: "seconds", stroke: c.second, width: 1.5, dash: [6, 4], points: { show: false } },
    ],
    axes: [
      { ...axis },
      { ...axis, scale: "records", label: "records", labelSize: 18, size: 60, values: (_u, ticks) => ticks.map((t) => number.format(t)) },
      { ...axis, scale: "seconds", side: 1, label: "seconds", labelSize: 18, size: 50, grid: { show: false } },
    ],
  };
}

/**
 * The group's lag over time (records, and the age of the oldest unread record in seconds),
 * from GET /api/consumers/{group}/lag-history, read again at the sampler's pace (at most every
 * 30 s). Windows from 5 minutes to 30 days: the server keeps a day of samples and 30 days of
 * hourly peaks, and answers each window at the resolution it calls for. uPlot styles
 * its elements through the CSSOM, which the page's Content-Security-Policy allows.
 */
export function LagChart({
  group,
  cluster,
  window: span,
  onWindow,
}: {
  group: string;
  cluster: string | null;
  window: LagWindow;
  onWindow: (w: LagWindow) => void;
}) {
  const history = useQuery({
    queryKey: ["lag-history", cluster, group, span],
    queryFn: () => fetchLagHistory(group, span),
    placeholderData: (previous) => previous,
    refetchInterval: (q) => Math.min(Math.max(q.state.data?.intervalMs ?? 15_000, 2_000), 30_000),
  });
  const box = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot | null>(null);
  const theme = useThemeVersion();
  const points = history.data?.points ?? [];

  const data: uPlot.AlignedData = [points.map((p) => p.t / 1000), points.map((p) => p.lag), points.map((p) => p.lagSeconds)];

  // Built again when the theme changes (colours are options); otherwise only the data changes.
  // biome-ignore lint/correctness/useExhaustiveDependencies: data is set by the effect below
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const u = new uPlot(options(Math.max(200, el.clientWidth)), [[], [], []], el);
    chart.current = u;
    const resize = new ResizeObserver(() => u.setSize({ width: Math.max(200, el.clientWidth), height: HEIGHT }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      u.destroy();
      chart.current = null;
    };
  }, [theme]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: redraw when the points or the chart change
  useEffect(() => {
    chart.current?.setData(data);
  }, [history.data, theme]);

  const last = points.at(-1);
  // Past six hours a point is a bucket (5 minutes, or an hour past a day): its lag is the peak.
  const bucket = history.data?.downsampled ? ` (${history.data.intervalMs >= 3_600_000 ? "hourly" : "5-minute"} peaks)` : "";
  const summary =
    points.length === 0
      ? "No point yet"
      : `${points.length} point${points.length === 1 ? "" : "s"}${bucket}; latest lag ${number.format(last!.lag)} records${last!.lagSeconds === null ? "" : `, ${number.format(last!.lagSeconds)} s`}`;

  return (
    <figure
      className="lag-chart"
      aria-labelledby="lag-chart-caption"
      data-points={points.length}
      data-downsampled={history.data?.downsampled ?? false}
    >
      <figcaption id="lag-chart-caption">
        <span>Lag over the {LAG_WINDOWS.find((w) => w.value === span)?.label}</span>
        <span className="lag-chart-keys" aria-hidden="true">
          <span className="lag-key lag-key-records">records</span>
          <span className="lag-key lag-key-seconds">seconds</span>
        </span>
        <span className="muted">{summary}</span>
        <label className="lag-window">
          <span>Window</span>
          <select value={span} onChange={(e) => onWindow(e.target.value as LagWindow)}>
            {LAG_WINDOWS.map((w) => (
              <option key={w.value} value={w.value}>
                {w.label}
              </option>
            ))}
          </select>
        </label>
      </figcaption>
      <ErrorAlert error={history.error} />
      <div ref={box} className="lag-chart-plot" />
      {history.data && points.length < 2 && (
        <p className="muted lag-chart-empty">
          Points appear at each sample of end offsets
          {history.data.intervalMs > 0 ? ` (every ${Math.round(history.data.intervalMs / 1000)} s)` : ""}; the chart fills in as they come.
        </p>
      )}
    </figure>
  );
}
