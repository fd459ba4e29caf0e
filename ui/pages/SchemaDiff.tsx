export interface DiffLine {
  kind: "same" | "add" | "del";
  text: string;
  /** Line numbers in the old and the new text (1-based), where the line is in it. */
  oldNo?: number;
  newNo?: number;
}

/** Above this many cells the table of common subsequences is not built: the middle shows as removed, then added. */
const MAX_CELLS = 4_000_000;

/**
 * A line diff of `before` and `after`: the longest common subsequence of lines is kept, the rest
 * is removed or added. The common head and tail are taken off first, so two versions of a
 * schema (mostly alike) leave a small middle for the quadratic table.
 */
export function lineDiff(before: string, after: string): DiffLine[] {
  const a = before.split("\n");
  const b = after.split("\n");
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const out: DiffLine[] = [];
  for (let i = 0; i < head; i++) out.push({ kind: "same", text: a[i]!, oldNo: i + 1, newNo: i + 1 });

  const am = a.slice(head, a.length - tail);
  const bm = b.slice(head, b.length - tail);
  const n = am.length;
  const m = bm.length;
  if (n * m > MAX_CELLS) {
    for (const [i, text] of am.entries()) out.push({ kind: "del", text, oldNo: head + i + 1 });
    for (const [j, text] of bm.entries()) out.push({ kind: "add", text, newNo: head + j + 1 });
  } else {
    // lcs[i * (m + 1) + j]: the common subsequence's length of am[i..] and bm[j..].
    const lcs = new Uint32Array((n + 1) * (m + 1));
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--)
        lcs[i * (m + 1) + j] =
          am[i] === bm[j] ? lcs[(i + 1) * (m + 1) + j + 1]! + 1 : Math.max(lcs[(i + 1) * (m + 1) + j]!, lcs[i * (m + 1) + j + 1]!);
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && am[i] === bm[j]) {
        out.push({ kind: "same", text: am[i]!, oldNo: head + i + 1, newNo: head + j + 1 });
        i++;
        j++;
      } else if (i < n && (j === m || lcs[(i + 1) * (m + 1) + j]! >= lcs[i * (m + 1) + j + 1]!)) {
        // Removed lines before added ones, as people read a change.
        out.push({ kind: "del", text: am[i]!, oldNo: head + i + 1 });
        i++;
      } else {
        out.push({ kind: "add", text: bm[j]!, newNo: head + j + 1 });
        j++;
      }
    }
  }
  for (let k = 0; k < tail; k++)
    out.push({ kind: "same", text: a[a.length - tail + k]!, oldNo: a.length - tail + k + 1, newNo: b.length - tail + k + 1 });
  return out;
}

const SIGN = { same: " ", add: "+", del: "−" } as const;
const SAID = { same: "", add: "added: ", del: "removed: " } as const;

/** Two versions' differences, line by line, with both line numbers; a word says added or removed beside the colour. */
export function SchemaDiffView({ before, after, label }: { before: string; after: string; label: string }) {
  const lines = lineDiff(before, after);
  const added = lines.filter((l) => l.kind === "add").length;
  const removed = lines.filter((l) => l.kind === "del").length;
  return (
    <figure className="schema-diff">
      <figcaption>
        {label}
        <span className="muted" data-testid="diff-summary">
          {added === 0 && removed === 0
            ? "The two versions are the same text."
            : `${added} ${added === 1 ? "line" : "lines"} added, ${removed} removed`}
        </span>
      </figcaption>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region is reached by Tab (WCAG 2.1.1) */}
      <div className="schema-diff-scroll" tabIndex={0}>
        <table aria-label={label}>
          <thead>
            <tr>
              <th scope="col" className="num">
                Old
              </th>
              <th scope="col" className="num">
                New
              </th>
              <th scope="col">
                <span className="visually-hidden">Change</span>
              </th>
              <th scope="col">Line</th>
            </tr>
          </thead>
          <tbody>
            {lines.map((l, k) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: the lines of one diff never move.
              <tr key={k} className={`diff-${l.kind}`}>
                <td className="num">{l.oldNo ?? ""}</td>
                <td className="num">{l.newNo ?? ""}</td>
                <td className="diff-sign" aria-hidden="true">
                  {SIGN[l.kind]}
                </td>
                <td className="diff-text">
                  {l.kind !== "same" && <span className="visually-hidden">{SAID[l.kind]}</span>}
                  {l.text}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  );
}
