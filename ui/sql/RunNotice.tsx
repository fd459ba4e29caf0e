/**
 * How the run ended, said where the rows are: what was read of what (records, partitions, the
 * offsets reached), which bound ended it and its value, and the way on: Continue (the same query
 * from where it stopped) or the bound raised as far as the server allows. A run stopped from the
 * page says so too. Regression: a search cut by max.size after 177 k of 1.5 M records said "No
 * record matched the query."
 */
import type { ReadRanges, StopLimit } from "../../src/engine/schemas.ts";
import { bytes, count, duration } from "../format.ts";
import type { RunFigures, RunState } from "./run.ts";

const plural = (n: number, one: string, many = `${one}s`) => `${count(n)} ${n === 1 ? one : many}`;

/** Partitions named one by one; beyond, a count. */
const PARTITIONS_NAMED = 4;

/** The setting as a value a person reads: `64 KiB`, `5 min 0 s`. */
export function settingText(setting: StopLimit["setting"], value: number): string {
  if (setting === "max.size") return bytes(value);
  if (setting === "LIMIT") return count(value);
  return duration(value);
}

/** `SET` text for a value: `256m`, `3600s` (what the query language reads). */
export function settingValue(setting: "max.size" | "max.query.time", value: number): string {
  if (setting === "max.size") return value % 1_048_576 === 0 ? `${value / 1_048_576}m` : String(value);
  return value % 1000 === 0 ? `${value / 1000}s` : `${value}ms`;
}

/** "partition 0: offsets 0–96 of 0–999": how far each unfinished partition got; the others counted. */
function partitionsText(ranges: ReadRanges): string {
  const open = ranges.filter((r) => r.next < r.to);
  const whole = ranges.length - open.length;
  const named = open.slice(0, PARTITIONS_NAMED).map((r) => {
    const of = `${count(r.from)}–${count(r.to - 1)}`;
    return r.next === r.from
      ? `partition ${r.partition}: none of offsets ${of}`
      : `partition ${r.partition}: offsets ${count(r.from)}–${count(r.next - 1)} of ${of}`;
  });
  const more = open.length - named.length;
  const parts = [...named];
  if (more > 0) parts.push(`${plural(more, "more partition")} not finished`);
  if (whole > 0) parts.push(`${plural(whole, "partition")} read to the end`);
  return parts.join("; ");
}

/** What was read of what: "290 records of about 3,000 in 3 partitions". */
function readText(figures: RunFigures): string {
  const read = figures.read ?? 0;
  const ranges = figures.ranges;
  const total = ranges ? ranges.reduce((n, r) => n + (r.to - r.from), 0) : figures.offsetsToRead;
  const partitions = ranges ? ` in ${plural(ranges.length, "partition")}` : "";
  if (total === null || total === undefined) return `${plural(read, "record")} read`;
  return `${plural(read, "record")} read of about ${count(total)}${partitions}`;
}

/** Why the run stopped, in words. */
function stopText(limit: StopLimit | null, stopReason: string): string {
  if (limit === null) return stopReason === "STOPPED" ? "The query was stopped on the server." : `The query stopped (${stopReason}).`;
  const value = settingText(limit.setting, limit.value);
  switch (limit.setting) {
    case "max.size":
      return limit.of === "answer"
        ? `Stopped at max.size: the answer reached ${value} of records.`
        : `Stopped at max.size: ${value} of records read.`;
    case "max.query.time":
      return `Stopped at max.query.time: the query ran ${value}.`;
    case "max.idle.time":
      return `Stopped at max.idle.time: no record came for ${value}.`;
    default:
      return `LIMIT ${value} reached.`;
  }
}

export function RunNotice({
  state,
  figures,
  rows,
  onContinue,
  onRaise,
}: {
  state: RunState;
  figures: RunFigures | null;
  /** Rows the runs returned (kept or counted). */
  rows: number;
  onContinue(resume: string): void;
  onRaise(setting: "max.size" | "max.query.time", value: number): void;
}) {
  if (!figures) return null;
  const matched = rows === 0 ? "No record matched in the part read." : `${plural(rows, "row")} matched in the part read.`;
  if (state.phase === "stopped")
    return (
      <section className="run-notice cut" aria-label="How the query ended" data-testid="run-notice">
        <p>
          <strong>You stopped the query.</strong> {readText(figures)} by then. {matched}
        </p>
      </section>
    );
  if (state.phase !== "done") return null;
  const ranges = figures.ranges ?? [];
  const limit = figures.stopLimit;
  if (state.stopReason === "END" || state.stopReason === "LIMIT") {
    const whole = state.stopReason === "END";
    return (
      <p className="run-notice muted" data-testid="run-notice">
        {whole
          ? `Read to the end: ${plural(figures.read ?? 0, "record")} in ${plural(ranges.length, "partition")}${figures.continued > 0 ? `, in ${figures.continued + 1} runs` : ""}.`
          : `${stopText(limit, state.stopReason)} ${readText(figures)}.`}
      </p>
    );
  }
  const raise =
    limit?.bound !== undefined && (limit.setting === "max.size" || limit.setting === "max.query.time") && limit.bound > limit.value
      ? { setting: limit.setting, value: limit.bound }
      : null;
  return (
    <section className="run-notice cut" aria-label="How the query ended" data-testid="run-notice">
      <p>
        <strong>{stopText(limit, state.stopReason)}</strong> {readText(figures)}
        {ranges.length > 0 ? ` (${partitionsText(ranges)})` : ""}. {matched}
      </p>
      {(figures.resume !== null || raise !== null) && (
        <div className="toolbar">
          {figures.resume !== null && (
            <button type="button" onClick={() => onContinue(figures.resume!)}>
              Continue from where it stopped
            </button>
          )}
          {raise && (
            <button type="button" className="ghost" onClick={() => onRaise(raise.setting, raise.value)}>
              Run again with {raise.setting} = {settingText(raise.setting, raise.value)}
            </button>
          )}
        </div>
      )}
    </section>
  );
}
