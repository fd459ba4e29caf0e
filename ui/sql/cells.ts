/**
 * The result's columns and what a cell holds: the record's key, partition, offset and timestamp,
 * then the value's fields (`value.<field>`) when values are objects, else the value whole.
 */
import type { StreamedRecord } from "../stream.ts";

/** A row of the result: the record as streamed, and its value (parsed when it is JSON). */
export interface Row {
  readonly rec: StreamedRecord;
  /** The value parsed, when it is JSON; its text otherwise. */
  readonly value: unknown;
}

export const RECORD_COLUMNS = ["key", "partition", "offset", "timestamp"] as const;
const FIELD = "value.";

export function columnsFor(fields: readonly string[]): string[] {
  return [...RECORD_COLUMNS, ...(fields.length > 0 ? fields.map((f) => FIELD + f) : ["value"])];
}

/** The cell's value as data: an object or array stays one (it is shown expandable). */
export function cellValue(row: Row, column: string): unknown {
  switch (column) {
    case "key":
      return row.rec.key;
    case "partition":
      return row.rec.partition;
    case "offset":
      return row.rec.offset;
    case "timestamp":
      return new Date(row.rec.timestamp).toISOString();
    case "value":
      return row.value;
    default:
      return isRecord(row.value) ? row.value[column.slice(FIELD.length)] : undefined;
  }
}

/** The value field a column shows (`value.geo` -> `geo`), or null for the record's own columns. */
export const fieldOf = (column: string): string | null => (column.startsWith(FIELD) ? column.slice(FIELD.length) : null);

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export const isContainer = (v: unknown): v is object => typeof v === "object" && v !== null;

/** One line of text for a cell: objects and arrays as compact JSON. */
export function cellText(v: unknown): string {
  if (v === undefined) return "";
  if (v === null) return "null";
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}
