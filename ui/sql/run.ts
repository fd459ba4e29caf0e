/**
 * One run of a query at a time, streamed into memory the page can afford: the first `cap` rows
 * are kept, later ones only counted. A value is parsed once, when first looked at (a row shown,
 * opened or exported), so rows arriving by the ten thousand cost little more than keeping them;
 * the first FIELD_SAMPLE rows are looked at as they come, for the columns. The page re-renders at
 * most once per animation frame however fast rows come, and the statistics messages and the end
 * record fill the figures the statistics bar shows.
 *
 * A run that a bound cut short can be continued (`resume`): the same query reads on from where it
 * stopped, its rows are added to the table, and the figures count both runs.
 */
import { useEffect, useRef, useState } from "react";
import type { ReadRanges, StopLimit } from "../../src/engine/schemas.ts";
import { runQuery, type StreamedRecord } from "../stream.ts";
import { isRecord, type Row } from "./cells.ts";

/** Value fields shown as columns, at most (the first records decide them). */
export const MAX_FIELDS = 40;

/** Rows whose value fields become columns (the rest are parsed when shown). */
export const FIELD_SAMPLE = 2_000;

/** A row whose value is parsed on first read, then kept. */
class StreamedRow implements Row {
  #value: unknown;
  #parsed = false;
  constructor(readonly rec: StreamedRecord) {}
  get value(): unknown {
    if (!this.#parsed) {
      this.#value = parse(this.rec.value);
      this.#parsed = true;
    }
    return this.#value;
  }
}

export type RunState =
  | { phase: "idle" }
  | { phase: "running" }
  | { phase: "done"; stopReason: string }
  /** Stopped from the page (Stop): the server's end record never came. */
  | { phase: "stopped" }
  | { phase: "failed"; message: string };

/** What the server said of the run so far (statistics), or in the end (the end record). */
export interface RunFigures {
  startedAt: number;
  endedAt: number | null;
  /** Records read from Kafka, matching or not. */
  read: number | null;
  /** Read but not returned (not matching, passed over, not decodable). */
  skipped: number | null;
  bytesRead: number | null;
  bytesReturned: number | null;
  /** Records the server says it returned (the end record). */
  returned: number | null;
  warnings: string[];
  /** A broker being retried, while it is. */
  retrying: string | null;
  /** Settings the server lowered to its bounds. */
  clamped: Record<string, number> | null;
  /** Field patterns masking policies hid from the caller (the end record's maskedFields). */
  masked: string[] | null;
  /** Offsets the read covers (from the statistics, once the read is planned). */
  offsetsToRead: number | null;
  /** What was read of what, per partition (the end record): over every run of the query. */
  ranges: ReadRanges | null;
  /** The bound that ended the last run, and where the query would go on. */
  stopLimit: StopLimit | null;
  resume: string | null;
  /** Runs that continued the first one. */
  continued: number;
}

/** The counts of the runs before a continued one, added to its own. */
interface Totals {
  read: number;
  skipped: number;
  bytesRead: number;
  bytesReturned: number;
  returned: number;
}

const plus = (n: number | null, base: number | undefined) => (n === null ? null : n + (base ?? 0));

/** A continued run's ranges cover what was left: each partition keeps its first run's range, and goes on to the new `next`. */
function mergeRanges(before: ReadRanges | null, now: ReadRanges): ReadRanges {
  if (before === null) return now;
  const later = new Map(now.map((r) => [r.partition, r]));
  return before.map((r) => ({ ...r, next: later.get(r.partition)?.next ?? r.next }));
}

function parse(text: string): unknown {
  // Only what can be JSON is tried: a plain text value costs no exception.
  const c = text.charCodeAt(0);
  const maybe = c === 123 || c === 91 || c === 34 || c === 45 || (c >= 48 && c <= 57) || c === 32 || c === 9 || c === 10 || c === 13;
  if (!maybe && text !== "true" && text !== "false" && text !== "null") return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === "string") : []);

function figuresFrom(prev: RunFigures, body: Record<string, unknown>, end: boolean, base: Totals | null): RunFigures {
  const ranges = end && Array.isArray(body.ranges) ? mergeRanges(base ? prev.ranges : null, body.ranges as ReadRanges) : prev.ranges;
  return {
    ...prev,
    endedAt: end ? Date.now() : prev.endedAt,
    read: plus(num(body.totalRecords), base?.read) ?? prev.read,
    skipped: plus(num(end ? body.skippedRecords : body.recordsSkipped), base?.skipped) ?? prev.skipped,
    bytesRead: plus(num(end ? body.totalSizeRead : body.totalBytes), base?.bytesRead) ?? prev.bytesRead,
    bytesReturned: plus(num(end ? body.size : body.currentSize), base?.bytesReturned) ?? prev.bytesReturned,
    returned: end ? plus(num(body.returnedRecords), base?.returned) : prev.returned,
    warnings: strings(body.warnings),
    retrying: end ? null : typeof body.retrying === "string" ? body.retrying : null,
    clamped:
      end && typeof body.clampedSettings === "object" && body.clampedSettings !== null
        ? (body.clampedSettings as Record<string, number>)
        : prev.clamped,
    masked: end && Array.isArray(body.maskedFields) ? strings(body.maskedFields) : prev.masked,
    // A continued run covers what was left: the whole is the first run's.
    offsetsToRead: base ? prev.offsetsToRead : (num(body.offsetsToRead) ?? prev.offsetsToRead),
    ranges,
    stopLimit: end ? ((body.stopLimit as StopLimit | undefined) ?? null) : prev.stopLimit,
    resume: end ? (typeof body.resume === "string" ? body.resume : null) : prev.resume,
  };
}

const EMPTY_FIGURES: Omit<RunFigures, "startedAt"> = {
  endedAt: null,
  read: null,
  skipped: null,
  bytesRead: null,
  bytesReturned: null,
  returned: null,
  warnings: [],
  retrying: null,
  clamped: null,
  masked: null,
  offsetsToRead: null,
  ranges: null,
  stopLimit: null,
  resume: null,
  continued: 0,
};

export function useQueryRun() {
  const rows = useRef<Row[]>([]);
  const abort = useRef<AbortController | null>(null);
  // What a continued run goes on from: the fields found and the rows counted beyond the cap.
  const seenFields = useRef(new Set<string>());
  const droppedSoFar = useRef(0);
  const [shown, setShown] = useState(0);
  const [dropped, setDropped] = useState(0);
  const [fields, setFields] = useState<string[]>([]);
  const [figures, setFigures] = useState<RunFigures | null>(null);
  const [state, setState] = useState<RunState>({ phase: "idle" });
  /** The cap of the run shown (a changed setting applies from the next run). */
  const [cap, setCap] = useState(0);

  useEffect(() => () => abort.current?.abort(), []);

  /**
   * Runs `text`; with `resume` (the last run's), goes on from where that run of the same query
   * stopped: its rows are kept, and the new ones added after them.
   */
  function start(text: string, rowCap: number, resume?: string): void {
    abort.current?.abort();
    const controller = new AbortController();
    abort.current = controller;
    const going = resume !== undefined && figures !== null;
    const kept: Row[] = going ? rows.current : [];
    rows.current = kept;
    if (!going) {
      seenFields.current = new Set();
      droppedSoFar.current = 0;
    }
    const seen = seenFields.current;
    // A continued run keeps to the cap of the run it continues.
    const keepAtMost = going ? cap : rowCap;
    let fieldsChanged = false;
    let frame = 0;
    let droppedCount = droppedSoFar.current;
    let settled = false;
    const base: Totals | null = going
      ? {
          read: figures.read ?? 0,
          skipped: figures.skipped ?? 0,
          bytesRead: figures.bytesRead ?? 0,
          bytesReturned: figures.bytesReturned ?? 0,
          returned: figures.returned ?? 0,
        }
      : null;
    if (!going) {
      setShown(0);
      setDropped(0);
      setCap(rowCap);
      setFields([]);
    }
    setState({ phase: "running" });
    setFigures(
      going
        ? {
            ...figures,
            // Elapsed counts the runs, not the pause between them.
            startedAt: Date.now() - ((figures.endedAt ?? Date.now()) - figures.startedAt),
            endedAt: null,
            stopLimit: null,
            resume: null,
            continued: figures.continued + 1,
          }
        : { ...EMPTY_FIGURES, startedAt: Date.now() },
    );
    const current = () => abort.current === controller;
    // Re-render at most once a frame however fast rows arrive.
    const flush = () => {
      frame = 0;
      if (!current()) return;
      setShown(kept.length);
      setDropped(droppedCount);
      droppedSoFar.current = droppedCount;
      if (fieldsChanged) {
        fieldsChanged = false;
        setFields([...seen]);
      }
    };
    runQuery(
      text,
      {
        records(batch) {
          for (const rec of batch) {
            if (kept.length >= keepAtMost) {
              droppedCount++;
              continue;
            }
            const row = new StreamedRow(rec);
            if (kept.length < FIELD_SAMPLE && seen.size < MAX_FIELDS) {
              const value = row.value;
              if (isRecord(value))
                for (const k in value)
                  if (!seen.has(k) && seen.size < MAX_FIELDS) {
                    seen.add(k);
                    fieldsChanged = true;
                  }
            }
            kept.push(row);
          }
          if (frame === 0) frame = requestAnimationFrame(flush);
        },
        stats: (s) => current() && setFigures((f) => (f ? figuresFrom(f, s, false, base) : f)),
        end: (e) => {
          settled = true;
          if (!current()) return;
          setFigures((f) => (f ? figuresFrom(f, e, true, base) : f));
          setState({ phase: "done", stopReason: String(e.stopReason ?? "END") });
        },
        error: (message) => {
          settled = true;
          if (!current()) return;
          setFigures((f) => (f ? { ...f, endedAt: Date.now() } : f));
          setState({ phase: "failed", message });
        },
      },
      controller.signal,
      { headers: true, ...(going ? { resume } : {}) },
    )
      .then(() => {
        // A stream that closed without its end record did not finish: say so rather than spin.
        if (!settled && current()) {
          setFigures((f) => (f && f.endedAt === null ? { ...f, endedAt: Date.now() } : f));
          setState({ phase: "failed", message: "The answer ended before the query did (the connection closed)." });
        }
      })
      .catch((err: unknown) => {
        if (!current()) return;
        setFigures((f) => (f && f.endedAt === null ? { ...f, endedAt: Date.now() } : f));
        if (controller.signal.aborted) setState({ phase: "stopped" });
        else setState({ phase: "failed", message: err instanceof Error ? err.message : String(err) });
      })
      .finally(() => {
        if (frame !== 0) cancelAnimationFrame(frame);
        flush();
      });
  }

  return {
    rows: rows.current,
    shown,
    dropped,
    fields,
    figures,
    state,
    cap,
    start,
    stop: () => abort.current?.abort(),
  };
}
