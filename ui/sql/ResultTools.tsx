/**
 * What to do with a result: export the rows kept as JSON lines or CSV (a download built in the
 * browser), and how many rows a run keeps (this browser's setting, from the next run).
 */
import { useState } from "react";
import { count } from "../format.ts";
import type { Row } from "./cells.ts";
import { download, type ExportFormat, exportBlob, exportName } from "./export.ts";
import { MAX_ROW_CAP, MIN_ROW_CAP, validRowCap } from "./row-cap.ts";

const FORMAT_NAMES: Record<ExportFormat, string> = { jsonl: "JSON lines", csv: "CSV" };

export function ResultTools({
  rows,
  dropped,
  runCap,
  topic,
  running,
  cap,
  onCap,
}: {
  rows: readonly Row[];
  /** Rows of the run counted beyond its cap, not kept. */
  dropped: number;
  runCap: number;
  topic: string | null;
  running: boolean;
  cap: number;
  onCap(cap: number): void;
}) {
  const [capText, setCapText] = useState(String(cap));
  const [exporting, setExporting] = useState<ExportFormat | null>(null);
  const [said, setSaid] = useState<{ text: string; error: boolean } | null>(null);
  const capValid = validRowCap(Number(capText));

  async function exportAs(format: ExportFormat) {
    setExporting(format);
    setSaid(null);
    try {
      const n = rows.length;
      download(await exportBlob(rows, format), exportName(topic, format));
      const beyond =
        dropped > 0 ? ` ${count(dropped)} more rows beyond the cap of ${count(runCap)} were not kept, and are not in the file.` : "";
      setSaid({ text: `Exported ${count(n)} rows as ${FORMAT_NAMES[format]}.${beyond}`, error: false });
    } catch (err) {
      setSaid({ text: `The export failed: ${err instanceof Error ? err.message : String(err)}`, error: true });
    } finally {
      setExporting(null);
    }
  }

  const disabled = running || rows.length === 0 || exporting !== null;
  return (
    <div className="toolbar sql-tools">
      {(["jsonl", "csv"] as const).map((f) => (
        <button key={f} type="button" className="ghost" disabled={disabled} onClick={() => void exportAs(f)}>
          {exporting === f ? "Exporting…" : `Export ${FORMAT_NAMES[f]}`}
        </button>
      ))}
      <span role="status" data-testid="export-status" className={said?.error ? "error" : "muted"}>
        {said?.text}
      </span>
      <span className="spacer" />
      <label className="row-cap">
        Rows kept
        <input
          type="number"
          inputMode="numeric"
          min={MIN_ROW_CAP}
          max={MAX_ROW_CAP}
          step={1000}
          value={capText}
          aria-invalid={!capValid}
          aria-describedby="row-cap-help"
          onChange={(e) => {
            setCapText(e.target.value);
            const n = Number(e.target.value);
            if (validRowCap(n)) onCap(n);
          }}
        />
      </label>
      <span id="row-cap-help" className={capValid ? "muted" : "error"}>
        {capValid ? "from the next run" : `a whole number from ${count(MIN_ROW_CAP)} to ${count(MAX_ROW_CAP)}`}
      </span>
    </div>
  );
}
