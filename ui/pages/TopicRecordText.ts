/**
 * A record's key or value shown to be read: JSON indented without being parsed into numbers
 * (so `12345678901234567890` keeps every digit), raw bytes as a hex dump, and the quick
 * filter of the message browser with the SQL it becomes in the workbench. No DOM: tests
 * import it as it is.
 */
import { sqlTopic } from "./TopicShared.ts";

/**
 * JSON text indented by two spaces, token by token: strings and numbers are copied as they are.
 * Text that is no JSON comes back unchanged.
 */
export function prettyJson(text: string): string {
  try {
    // Only checked: the value parsed (numbers rounded) is not what is shown.
    JSON.parse(text);
  } catch {
    return text;
  }
  let out = "";
  let depth = 0;
  let i = 0;
  const n = text.length;
  const newline = () => `\n${"  ".repeat(depth)}`;
  while (i < n) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < n && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (j >= n) return text;
      out += text.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (c === " " || c === "\n" || c === "\r" || c === "\t") {
      i++;
      continue;
    }
    if (c === "{" || c === "[") {
      // An empty object or array stays on its line.
      let j = i + 1;
      while (j < n && /\s/.test(text[j]!)) j++;
      if (text[j] === (c === "{" ? "}" : "]")) {
        out += c === "{" ? "{}" : "[]";
        i = j + 1;
        continue;
      }
      depth++;
      out += c + newline();
    } else if (c === "}" || c === "]") {
      if (depth === 0) return text;
      depth--;
      out += newline() + c;
    } else if (c === ",") out += `,${newline()}`;
    else if (c === ":") out += ": ";
    else out += c;
    i++;
  }
  return depth === 0 ? out : text;
}

/** Bytes as a hex dump: offset, 16 bytes in hex, the printable ones as text. */
export function hexDump(bytes: Uint8Array, max = 4096): string {
  const lines: string[] = [];
  const shown = Math.min(bytes.length, max);
  for (let at = 0; at < shown; at += 16) {
    const row = bytes.subarray(at, Math.min(at + 16, shown));
    const hex = [...row].map((b) => b.toString(16).padStart(2, "0")).join(" ");
    const text = [...row].map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : ".")).join("");
    lines.push(`${at.toString(16).padStart(8, "0")}  ${hex.padEnd(47)}  ${text}`);
  }
  if (bytes.length > shown) lines.push(`… ${bytes.length - shown} more bytes`);
  return lines.join("\n");
}

export function fromBase64(text: string): Uint8Array {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Whether a record's key, value or headers hold the text (case-insensitive): the quick filter. */
export function recordMatches(
  r: { key: { text: string } | null; value: { text: string } | null; headers: Array<{ key: string; value: string | null }> },
  needle: string,
): boolean {
  const q = needle.trim().toLowerCase();
  if (q === "") return true;
  const has = (s: string | null | undefined) => s?.toLowerCase().includes(q) === true;
  return has(r.key?.text) || has(r.value?.text) || r.headers.some((h) => has(h.key) || has(h.value));
}

/** Where the browser started reading, as the SQL condition on the record's metadata. */
export interface BrowseStart {
  partition?: number;
  seek: "newest" | "oldest" | "offset" | "time";
  offset?: number;
  time?: number;
  limit: number;
}

const literal = (s: string) => `'${s.replaceAll("'", "''")}'`;

/**
 * The browser's read and quick filter as a query of the workbench: the same partition, start
 * and limit, and the filter text searched in the key and the value from that start on (the whole
 * topic for "newest first"; headers are no column of the dialect). `%` and `_` of the text match any text there, as LIKE reads them.
 */
export function browseSql(topic: string, start: BrowseStart, filter: string): string {
  const where: string[] = [];
  if (start.partition !== undefined) where.push(`_meta.partition = ${start.partition}`);
  if (start.seek === "offset" && start.offset !== undefined) where.push(`_meta.offset >= ${start.offset}`);
  if (start.seek === "time" && start.time !== undefined) where.push(`_meta.timestamp >= ${start.time}`);
  const text = filter.trim().toLowerCase();
  // Without a filter, the same newest records; with one, a search of the whole topic.
  if (start.seek === "newest" && text === "") where.push(`_meta.offset >= LAST_OFFSET() - ${start.limit}`);
  if (text !== "") {
    const pattern = literal(`%${text}%`);
    where.push(`(LOWERCASE(CAST(_key AS STRING)) LIKE ${pattern} OR LOWERCASE(CAST(_value AS STRING)) LIKE ${pattern})`);
  }
  return `SELECT * FROM ${sqlTopic(topic)}${where.length ? ` WHERE ${where.join(" AND ")}` : ""} LIMIT ${start.limit}`;
}
