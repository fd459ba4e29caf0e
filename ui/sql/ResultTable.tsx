/**
 * The result rows, virtualized: only the rows in view are in the page. A row re-renders only when
 * it changes (memo), so rows streaming in below cost the rows in view nothing; a cell's text is
 * computed once per value (cached by object) and cut to what a cell can show. A cell holding an
 * object or an array is a button that opens it as a tree in the record panel.
 */
import { useVirtualizer } from "@tanstack/react-virtual";
import { memo, useCallback, useMemo, useRef } from "react";
import { cellText, cellValue, fieldOf, isContainer, type Row } from "./cells.ts";

const ROW_HEIGHT = 36;
/** Characters of a cell's text put in the page (it shows one line, cut with an ellipsis). */
const CELL_CHARS = 300;

const shortText = new WeakMap<object, string>();
function textOf(v: unknown): string {
  if (!isContainer(v)) return cellText(v);
  let t = shortText.get(v);
  if (t === undefined) {
    t = cellText(v);
    if (t.length > CELL_CHARS) t = `${t.slice(0, CELL_CHARS)}…`;
    shortText.set(v, t);
  }
  return t;
}

/** Widths of the record's own columns: they fit what they hold (an ISO timestamp whole). */
const WIDTHS: Record<string, string> = {
  partition: "90px",
  offset: "100px",
  timestamp: "215px",
};
/** Rows looked at for a column's width, and the widths a column takes, in characters. */
const WIDTH_SAMPLE = 50;
const MIN_CHARS = 6;
const MAX_CHARS = 32;

/**
 * Each column as wide as its name and most of what it holds (within MIN_CHARS and MAX_CHARS),
 * sharing what is left by the same measure: a name is read whole, a short value does not take
 * the room of a long one. Regression: every value column was 120 px, and `value.orderId` showed
 * as `value.orde…`. A column marked masked is as wide as its name and the mark: the mark came in
 * with the answer's end and was cut to `value.customer (m…`.
 */
function template(columns: readonly string[], rows: readonly Row[], marked: (column: string) => boolean): string {
  const sample = rows.slice(0, WIDTH_SAMPLE);
  return columns
    .map((c) => {
      const fixed = WIDTHS[c];
      if (fixed) return fixed;
      const lengths = sample.map((row) => textOf(cellValue(row, c)).length).sort((a, b) => a - b);
      // Most of what it holds: the longest but an odd few.
      const typical = lengths[Math.floor(lengths.length * 0.9)] ?? 0;
      const name = c.length + (marked(c) ? MASKED_MARK.length : 0);
      const chars = Math.min(MAX_CHARS, Math.max(MIN_CHARS, name + 2, typical));
      return `minmax(calc(${chars}ch + 1.5rem), ${chars}fr)`;
    })
    .join(" ");
}

interface RowProps {
  row: Row;
  index: number;
  start: number;
  columns: readonly string[];
  selected: boolean;
  onSelect(index: number): void;
  onExpand(index: number, column: string): void;
}

const ResultRow = memo(function ResultRow({ row, index, start, columns, selected, onSelect, onExpand }: RowProps) {
  const offset = String(row.rec.offset);
  return (
    <tr
      aria-rowindex={index + 2}
      aria-selected={selected}
      className="grid-row result-cols"
      ref={(el) => el?.style.setProperty("transform", `translateY(${start}px)`)}
      onClick={() => onSelect(index)}
    >
      {columns.map((c) => {
        if (c === "offset")
          return (
            // The record whole, from the keyboard too.
            <td key={c}>
              <button type="button" className="link" onClick={() => onSelect(index)} aria-label={`Show the record at offset ${offset}`}>
                {offset}
              </button>
            </td>
          );
        const v = cellValue(row, c);
        const text = textOf(v);
        if (isContainer(v))
          return (
            <td key={c}>
              <button
                type="button"
                className="json-cell"
                onClick={(e) => {
                  e.stopPropagation();
                  onExpand(index, c);
                }}
              >
                {/* The name says what the button does; the text shown stays part of it. */}
                <span className="visually-hidden">{`Expand ${c} of the record at offset ${offset}: `}</span>
                <span aria-hidden="true" className="json-cell-mark">
                  {Array.isArray(v) ? "[ ]" : "{ }"}
                </span>
                {text}
              </button>
            </td>
          );
        return (
          <td key={c} title={text.length > 40 ? text : undefined}>
            {text}
          </td>
        );
      })}
    </tr>
  );
});

/** What follows the name of a column whose values masking policies hide from the caller. */
const MASKED_MARK = " (masked)";

/** `*` any run, `?` one character, the rest literal: a masking policy's field pattern segment. */
function globMatches(glob: string, name: string): boolean {
  const source = glob
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${source}$`).test(name);
}

/** Whether a value field's column shows masked values: a pattern names it, or (dotted) something inside it. */
function maskedColumn(field: string, masked: readonly string[]): boolean {
  return masked.some((p) => globMatches(p.split(".")[0]!, field));
}

export function ResultTable({
  rows,
  count,
  columns,
  masked = [],
  selected,
  onSelect,
  onExpand,
  empty,
}: {
  rows: readonly Row[];
  count: number;
  columns: readonly string[];
  /** Field patterns masking policies hid from the caller: the columns they touch are marked. */
  masked?: readonly string[];
  selected: number | null;
  onSelect(index: number): void;
  /** A cell's object or array asked for: `path` from the value's root (empty for the value whole). */
  onExpand(index: number, path: string[]): void;
  /** Said in the table's place while it has no row. */
  empty: string;
}) {
  const scroller = useRef<HTMLDivElement>(null);
  const marks = masked.join("\n");
  const isMarked = (c: string) => {
    const field = fieldOf(c);
    return field !== null && maskedColumn(field, masked);
  };
  // Measured when the columns change (their first rows are in by then) or the masks are known (the answer's end), not at every row.
  // biome-ignore lint/correctness/useExhaustiveDependencies: rows grow in place; the columns and the marks say when to measure
  const widths = useMemo(() => template(columns, rows, isMarked), [columns, marks]);
  const virtual = useVirtualizer({ count, getScrollElement: () => scroller.current, estimateSize: () => ROW_HEIGHT, overscan: 15 });
  const expand = useCallback(
    (index: number, column: string) => {
      const field = fieldOf(column);
      onExpand(index, field === null ? [] : [field]);
    },
    [onExpand],
  );
  return (
    <div className="grid-scroll results" ref={scroller}>
      <table className="grid" aria-label="Results" aria-rowcount={count + 1} ref={(el) => el?.style.setProperty("--cols", widths)}>
        <thead>
          <tr className="grid-row result-cols" aria-rowindex={1}>
            {columns.map((c) => {
              const field = fieldOf(c);
              return (
                // The whole name on hover, where the column is too narrow for it.
                <th
                  key={c}
                  scope="col"
                  title={field !== null && maskedColumn(field, masked) ? `${c} (masked by a data masking policy)` : c}
                >
                  {field === null ? (
                    c
                  ) : (
                    <>
                      <span className="col-prefix">value.</span>
                      {field}
                      {maskedColumn(field, masked) && <span className="col-prefix">{MASKED_MARK}</span>}
                    </>
                  )}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody ref={(el) => el?.style.setProperty("height", `${virtual.getTotalSize()}px`)}>
          {virtual.getVirtualItems().map((item) => (
            <ResultRow
              key={item.index}
              row={rows[item.index]!}
              index={item.index}
              start={item.start}
              columns={columns}
              selected={selected === item.index}
              onSelect={onSelect}
              onExpand={expand}
            />
          ))}
        </tbody>
      </table>
      {count === 0 && <p className="muted results-empty">{empty}</p>}
    </div>
  );
}
