/**
 * The run's figures in one line: rows kept (and counted beyond the cap), records and bytes read,
 * skipped, elapsed time and rate; live from the statistics messages, final from the end record.
 * It is not a live region: the run status beside it says when the run ends.
 */
import { useEffect, useState } from "react";
import { bytes, count, duration } from "../format.ts";
import type { RunFigures, RunState } from "./run.ts";

function Figure({ label, value }: { label: string; value: string }) {
  return (
    <div className="stat">
      <dt>{label}</dt>
      <dd>{value}</dd>
    </div>
  );
}

export function StatsBar({
  figures,
  state,
  kept,
  dropped,
}: {
  figures: RunFigures | null;
  state: RunState;
  kept: number;
  dropped: number;
}) {
  const running = state.phase === "running";
  // The clock goes on while nothing arrives (a slow reader, a quiet topic): a render a second.
  const [, tick] = useState(0);
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => tick((n) => n + 1), 1000);
    return () => clearInterval(timer);
  }, [running]);
  if (!figures) return null;
  const elapsed = (figures.endedAt ?? Date.now()) - figures.startedAt;
  const rows = kept + dropped;
  return (
    <div className="sql-stats" data-testid="run-stats">
      <dl className={running ? "running" : undefined}>
        <Figure label="Rows" value={dropped > 0 ? `${count(rows)} (${count(kept)} kept)` : count(rows)} />
        {figures.read !== null && <Figure label="Read" value={count(figures.read)} />}
        {figures.skipped !== null && <Figure label="Skipped" value={count(figures.skipped)} />}
        {figures.bytesRead !== null && <Figure label="Bytes read" value={bytes(figures.bytesRead)} />}
        {figures.bytesReturned !== null && <Figure label="Bytes returned" value={bytes(figures.bytesReturned)} />}
        <Figure label="Elapsed" value={duration(elapsed)} />
        {elapsed >= 200 && rows > 0 && <Figure label="Rows/s" value={count(Math.round((rows * 1000) / elapsed))} />}
      </dl>
      {figures.retrying && <p className="error">Retrying: {figures.retrying}</p>}
      {figures.warnings.map((w) => (
        <p key={w} className="warning">
          {w}
        </p>
      ))}
      {figures.masked && <p className="muted">Masked for you by data masking policies: {figures.masked.join(", ")}</p>}
      {figures.clamped && (
        <p className="muted">
          Lowered to the server's bounds:{" "}
          {Object.entries(figures.clamped)
            .map(([k, v]) => `${k} = ${k === "max.size" ? bytes(v) : duration(v)}`)
            .join(", ")}
        </p>
      )}
    </div>
  );
}
