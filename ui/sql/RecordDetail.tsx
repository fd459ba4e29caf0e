/**
 * The selected record whole: its key, timestamp and Kafka headers, its value as a collapsible
 * tree (opened at the field a cell's Expand named) beside its JSON text, which can be selected
 * and copied.
 */

import { TableHead } from "../components.tsx";
import type { Row } from "./cells.ts";
import { type JsonPath, JsonTree } from "./JsonTree.tsx";

export function RecordDetail({ row, focus, onClose }: { row: Row; focus: JsonPath | null; onClose(): void }) {
  const { rec } = row;
  const headers = rec.headers ?? [];
  return (
    <section className="card record" aria-label="Selected record">
      <div className="record-head">
        <h2>
          Partition {rec.partition}, offset {rec.offset}
        </h2>
        <span className="spacer" />
        <button type="button" className="ghost" onClick={onClose}>
          Close
        </button>
      </div>
      <dl className="record-meta">
        <dt>Key</dt>
        <dd>{rec.key === null ? <span className="muted">null</span> : String(rec.key)}</dd>
        <dt>Timestamp</dt>
        <dd>
          {new Date(rec.timestamp).toISOString()} <span className="muted">({rec.timestamp})</span>
        </dd>
        <dt>Headers</dt>
        <dd>
          {headers.length === 0 ? (
            <span className="muted">none</span>
          ) : (
            <table className="record-headers" aria-label="Headers">
              <TableHead columns={["Key", "Value"]} />
              <tbody>
                {headers.map((h, i) => (
                  // Keys repeat in Kafka: the place tells them apart.
                  // biome-ignore lint/suspicious/noArrayIndexKey: headers are a list in record order, never reordered
                  <tr key={i}>
                    <td>{h.key}</td>
                    <td>
                      {h.value === null ? <span className="muted">null</span> : h.value}
                      {h.encoding === "base64" && <span className="muted"> (base64: not UTF-8 text)</span>}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </dd>
      </dl>
      <div className="record-views">
        <JsonTree name="value" value={row.value} focus={focus} label="The value as a tree" />
        {/* Focusable: it scrolls, and the keyboard must reach what it holds. */}
        {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region is reached by Tab (WCAG 2.1.1) */}
        <pre tabIndex={0}>
          {JSON.stringify({ key: rec.key, timestamp: rec.timestamp, headers: rec.headers ?? [], value: row.value }, null, 2)}
        </pre>
      </div>
    </section>
  );
}
