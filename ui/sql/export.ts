/**
 * Export of the rows kept, built in the browser and handed over as a download (a Blob behind an
 * object URL: nothing goes back to the server). JSON lines carry each record as the API gives it,
 * its value parsed when it is JSON; CSV has the table's columns with every value field seen in
 * the rows kept (not only those shown), timestamps in ISO 8601, quoting per RFC 4180. The text is
 * built in slices of a few milliseconds between turns of the event loop, so 100,000 rows do not
 * freeze the page.
 */
import { cellValue, isRecord, RECORD_COLUMNS, type Row } from "./cells.ts";

export type ExportFormat = "jsonl" | "csv";

/** Value fields a CSV gets columns for, at most. */
const MAX_CSV_FIELDS = 1_000;

export function jsonLine(row: Row): string {
  const { rec } = row;
  const topic = (rec as { topic?: unknown }).topic;
  return JSON.stringify({
    ...(typeof topic === "string" ? { topic } : {}),
    partition: rec.partition,
    offset: rec.offset,
    timestamp: rec.timestamp,
    key: rec.key,
    // A record's headers, where it has some.
    ...(rec.headers && rec.headers.length > 0 ? { headers: rec.headers } : {}),
    value: row.value,
  });
}

/** A CSV field: quoted when it holds a comma, a quote or a line break, quotes doubled. */
export function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function csvText(v: unknown): string {
  if (v === undefined || v === null) return "";
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}

/** Work done between two turns of the page, at most (the page answers input in between). */
const BUDGET_MS = 12;
const turn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** Calls `each` on every row, giving the page a turn whenever BUDGET_MS have passed; `signal` abandons it between turns. */
async function forEachRow(rows: readonly Row[], each: (row: Row) => void, signal?: AbortSignal): Promise<void> {
  let since = performance.now();
  for (let i = 0; i < rows.length; i++) {
    each(rows[i]!);
    if ((i & 127) === 127 && performance.now() - since > BUDGET_MS) {
      await turn();
      signal?.throwIfAborted();
      since = performance.now();
    }
  }
}

/** The CSV's columns: the record's, each value field seen (first seen first), and `value` for values that are not objects. */
export async function csvColumns(rows: readonly Row[], signal?: AbortSignal): Promise<string[]> {
  const fields = new Set<string>();
  let plain = false;
  await forEachRow(
    rows,
    (row) => {
      const value = row.value;
      if (!isRecord(value)) {
        plain = true;
        return;
      }
      for (const k in value) {
        if (fields.size >= MAX_CSV_FIELDS) break;
        fields.add(k);
      }
    },
    signal,
  );
  return [...RECORD_COLUMNS, ...[...fields].map((f) => `value.${f}`), ...(plain || fields.size === 0 ? ["value"] : [])];
}

function csvRow(row: Row, columns: readonly string[]): string {
  return columns
    .map((c) => {
      // `value` stands for values that are not objects only: objects are spread over their fields.
      if (c === "value") return isRecord(row.value) ? "" : csvField(csvText(row.value));
      return csvField(csvText(cellValue(row, c)));
    })
    .join(",");
}

/** The export's content; `signal` abandons it between turns. */
export async function exportBlob(rows: readonly Row[], format: ExportFormat, signal?: AbortSignal): Promise<Blob> {
  const parts: Blob[] = [];
  let chunk = "";
  // Lines are joined into chunks of half a megabyte, each made a Blob (encoded) as it fills: no one
  // string of the whole file, and the encoding is spread over the slices rather than done at the end.
  const add = (line: string) => {
    chunk += line;
    if (chunk.length > 1 << 19) {
      parts.push(new Blob([chunk]));
      chunk = "";
    }
  };
  if (format === "csv") {
    const columns = await csvColumns(rows, signal);
    add(`${columns.map(csvField).join(",")}\r\n`);
    await forEachRow(rows, (row) => add(`${csvRow(row, columns)}\r\n`), signal);
  } else {
    await forEachRow(rows, (row) => add(`${jsonLine(row)}\n`), signal);
  }
  parts.push(new Blob([chunk]));
  return new Blob(parts, { type: format === "csv" ? "text/csv;charset=utf-8" : "application/x-ndjson" });
}

/** `orders-20240601-120000.csv`: the topic and the local time of the export. */
export function exportName(topic: string | null, format: ExportFormat, now = new Date()): string {
  const p = (n: number) => String(n).padStart(2, "0");
  const stamp = `${now.getFullYear()}${p(now.getMonth() + 1)}${p(now.getDate())}-${p(now.getHours())}${p(now.getMinutes())}${p(now.getSeconds())}`;
  const base = (topic ?? "query").replace(/[^\w.-]+/g, "_");
  return `${base}-${stamp}.${format}`;
}

/** Hands the blob to the browser as a download named `name`. */
export function download(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  // The download has taken the URL by the next turn; the memory is let go then.
  setTimeout(() => URL.revokeObjectURL(url), 1_000);
}
