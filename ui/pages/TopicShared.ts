/**
 * What the topic pages share, apart from the pages themselves (which import each other only
 * from TopicDetail down): number formats, the workbench's query on a topic, config values in
 * words a person reads (`7 d`, `1 GiB`, `∞`), and the rules of a topic name. No DOM, no fetch:
 * tests import it as it is.
 */
import { RESERVED_WORDS } from "../../src/sql/vocabulary.ts";
import { number, oneDecimal } from "../format.ts";

/** The formats records are written in (the server's WRITE_FORMATS; a test holds them equal). */
export const WRITE_FORMATS = ["AVRO", "BYTES", "DOUBLE", "FLOAT", "INT", "JSON", "LONG", "PROTOBUF", "STRING"] as const;

/** The partitions of a topic with `count` of them: 0, 1, ... */
export function partitionNumbers(count: number): number[] {
  return Array.from({ length: count }, (_, i) => i);
}

/** A topic's name as the dialect takes it: in backticks when it needs them. */
export function sqlTopic(topic: string): string {
  const bare = /^[A-Za-z_][A-Za-z0-9_]*$/.test(topic) && !RESERVED_WORDS.has(topic.toUpperCase());
  return bare ? topic : `\`${topic.replaceAll("`", "``")}\``;
}

/** The workbench's first query on a topic. */
export function topicQuery(topic: string): string {
  return `SELECT * FROM ${sqlTopic(topic)} LIMIT 100`;
}

/** Cleanup policy `compact` alone keeps records by key: Kafka refuses to delete them by offset. */
export function compactedOnly(config: Array<{ configuration: string; value: string | null }>): boolean {
  const policy = config.find((c) => c.configuration === "cleanup.policy")?.value ?? "delete";
  return !policy.split(",").some((p) => p.trim() === "delete");
}

// ---------------------------------------------------------------------------------------------
// Config values in words

/** Java's Long.MAX_VALUE: Kafka's "never" for times and counts. */
const LONG_MAX = "9223372036854775807";

const DURATION_UNITS: Array<[string, number]> = [
  ["d", 86_400_000],
  ["h", 3_600_000],
  ["min", 60_000],
  ["s", 1_000],
  ["ms", 1],
];
const SIZE_UNITS: Array<[string, number]> = [
  ["TiB", 1024 ** 4],
  ["GiB", 1024 ** 3],
  ["MiB", 1024 ** 2],
  ["KiB", 1024],
  ["B", 1],
];

/** What a config's value counts: a time in ms, a size in bytes, or something else. */
export function configKind(name: string): "duration" | "size" | "other" {
  if (name.endsWith(".ms")) return "duration";
  if (name.endsWith(".bytes")) return "size";
  return "other";
}

/** `604800000` -> `7 d`; `90000000` -> `1 d 1 h`; `1500` -> `1 s 500 ms`. */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0";
  let rest = ms;
  const parts: string[] = [];
  for (const [unit, size] of DURATION_UNITS) {
    const n = Math.floor(rest / size);
    if (n > 0) {
      parts.push(`${number.format(n)} ${unit}`);
      rest -= n * size;
    }
    if (parts.length === 2) break;
  }
  return rest > 0 ? `≈ ${parts.join(" ")}` : parts.join(" ");
}

/** `1073741824` -> `1 GiB`; `1048588` -> `≈ 1 MiB`. */
export function formatSize(bytes: number): string {
  if (bytes === 0) return "0 B";
  for (const [unit, size] of SIZE_UNITS) {
    if (bytes >= size) {
      const n = bytes / size;
      return Number.isInteger(n) ? `${number.format(n)} ${unit}` : `≈ ${oneDecimal.format(n)} ${unit}`;
    }
  }
  return `${bytes} B`;
}

/**
 * A config value in words (`7 d`, `1 GiB`, `∞`), or null when the raw value says it best (a
 * word, a flag, a plain count). Kafka's -1 for retention means "no limit" and Long.MAX "never".
 */
export function humanConfig(name: string, value: string | null): string | null {
  if (value === null || value.trim() === "") return null;
  if (value === LONG_MAX) return "∞";
  const kind = configKind(name);
  if (kind === "other" || !/^-?\d+$/.test(value)) return null;
  const n = Number(value);
  if (n === -1 && (name.startsWith("retention.") || name.startsWith("local.retention."))) return "∞";
  if (n === -2 && name.startsWith("local.retention.")) return `as ${name.slice("local.".length)}`;
  if (n < 0 || !Number.isSafeInteger(n)) return null;
  return kind === "duration" ? formatDuration(n) : formatSize(n);
}

const DURATION_INPUT: Record<string, number> = {
  ms: 1,
  s: 1_000,
  sec: 1_000,
  m: 60_000,
  min: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};
const SIZE_INPUT: Record<string, number> = {
  b: 1,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
  kb: 1000,
  mb: 1000 ** 2,
  gb: 1000 ** 3,
  tb: 1000 ** 4,
};

/**
 * A value typed in words, as the broker wants it: `7d` or `7 d` -> `604800000` for a time,
 * `1 GiB` -> `1073741824` for a size, `∞` -> `-1` for a retention. Anything else is sent as
 * typed (the broker says what it refuses).
 */
export function configInput(name: string, typed: string): string {
  const text = typed.trim();
  const kind = configKind(name);
  if (kind === "other") return typed;
  if (text === "∞" && (name.startsWith("retention.") || name.startsWith("local.retention."))) return "-1";
  const m = /^(\d+(?:\.\d+)?)\s*([a-zA-Z]+)$/.exec(text);
  if (!m) return typed;
  const unit = (kind === "duration" ? DURATION_INPUT : SIZE_INPUT)[m[2]!.toLowerCase()];
  if (unit === undefined) return typed;
  const value = Number(m[1]) * unit;
  return Number.isSafeInteger(value) ? String(value) : typed;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };

/** Kafka's documentation of a config as text: its HTML tags (`<code>`, `<a href>`, `<p>`) left out, entities read. */
export function plainDoc(doc: string): string {
  return doc
    .replace(/<\/?(p|br|li|ul|ol)\b[^>]*>/gi, " ")
    .replace(/<[^>]*>/g, "")
    .replace(/&(amp|lt|gt|quot|apos|nbsp);/g, (_m, name: string) => ENTITIES[name]!)
    .replace(/\s+/g, " ")
    .trim();
}

/** The first sentence of a config's documentation (as text): the rest waits behind "more". */
export function firstSentence(html: string): { head: string; rest: string } {
  const doc = plainDoc(html);
  const m = /^(.+?[.!?])(\s+)(?=[A-Z(])/s.exec(doc);
  return m ? { head: m[1]!, rest: doc.slice(m[0].length) } : { head: doc, rest: "" };
}

// ---------------------------------------------------------------------------------------------
// Topic names

/** Kafka's rule (src/domains/topics/names.ts), said as the user types; null when the name is good. */
export function topicNameProblem(name: string, existing: readonly string[] = []): string | null {
  if (name === "") return "A topic needs a name.";
  if (name.length > 249) return `At most 249 characters (this one has ${name.length}).`;
  const bad = [...new Set(name.replace(/[a-zA-Z0-9._-]/g, ""))];
  if (bad.length > 0)
    return `Only letters, digits, '.', '_' and '-': not ${bad.map((c) => (c === " " ? "a space" : `'${c}'`)).join(", ")}.`;
  if (name === "." || name === "..") return "A topic cannot be named '.' or '..'.";
  if (existing.includes(name)) return `Topic '${name}' exists already.`;
  return null;
}

/**
 * Kafka's warning: '.' and '_' become the same in metric names, so `a.b` and `a_b` collide.
 * Names another topic of the list it would collide with.
 */
export function topicNameCollision(name: string, existing: readonly string[]): string | null {
  if (!/[._]/.test(name)) return null;
  const norm = (n: string) => n.replaceAll(".", "_");
  const other = existing.find((t) => t !== name && norm(t) === norm(name));
  return other ? `'${other}' exists: Kafka's metrics cannot tell the two apart ('.' and '_' are the same there).` : null;
}
