/**
 * The `SET key = value;` statements a query may start with.
 *
 *   max.size        bytes read, and bytes of the answer, before the query stops: 1048576, 500k,
 *                   1m, 2g (k, m, g are powers of 1024; kb, mb, gb and b are accepted)
 *   max.query.time  how long the query may run: 60000 (ms), 60000ms, 30s, 5m, 1h
 *   max.idle.time   how long to wait without new records before ending
 *   max.zero.polls  max.idle.time counted in empty polls of ZERO_POLL_MS (1 s) each: 20 = 20 s
 *   key.format      decoder for the key:   AVRO BYTES DOUBLE FLOAT INT JSON LONG PROTOBUF STRING
 *   value.format    decoder for the value: same choices
 *   autocreate      true or false; accepted for the SQL of older clients, no effect on a query
 *
 * The names older clients write are aliases (SETTING_ALIASES): max.time = max.query.time,
 * max.bytes = max.size, _ktype = key.format, _vtype = value.format.
 *
 * Keys and format names are case-insensitive; values may be quoted or bare; a key may be
 * backquoted (`max.time`). When a key is set twice the last statement wins.
 */
import { lookup } from "./lookup.ts";

export const DATA_FORMATS = ["AVRO", "BYTES", "DOUBLE", "FLOAT", "INT", "JSON", "LONG", "PROTOBUF", "STRING"] as const;
export type DataFormat = (typeof DATA_FORMATS)[number];

export interface QuerySettings {
  /** Most bytes of records the answer may return (SET max.size, else DEFAULT_ANSWER_BYTES). */
  maxSizeBytes: number;
  /**
   * Most bytes the query may read from Kafka: SET max.size bounds them too; without it nothing
   * does but time (max.query.time), so a filter searches the whole topic (see DEFAULT_SETTINGS).
   */
  maxReadBytes: number;
  maxQueryTimeMs: number;
  maxIdleTimeMs: number;
  keyFormat?: DataFormat;
  valueFormat?: DataFormat;
  /** `SET autocreate`: kept for statements that create what they write to; a query ignores it. */
  autoCreate?: boolean;
}

/**
 * How long one empty poll of `max.zero.polls` stands for. The older product ended a query after
 * that many polls in a row brought nothing; Loupe waits for records by time (max.idle.time), so a
 * count of polls becomes that many seconds.
 */
export const ZERO_POLL_MS = 1000;

/** What a query returns at most when it does not SET max.size: 20 MiB of records. */
export const DEFAULT_ANSWER_BYTES = 20 * 1024 * 1024;

/** No bound: what the end record and the statistics say of a bound that is not set (2^53-1). */
export const UNBOUNDED = Number.MAX_SAFE_INTEGER;

/**
 * The rule for a query that SETs nothing: it reads until the snapshot's end, its LIMIT, or
 * five minutes (max.query.time), whichever comes first, however many bytes that is: a filter
 * searches the whole topic, bounded by time. Only what it returns is bounded by size (20 MiB of
 * records). `SET max.size` bounds the bytes read as well. Regression: a 20 MiB default on the
 * bytes read stopped a search of a 1.5 M-record topic after 177 k records, and the page said no
 * record matched.
 */
export const DEFAULT_SETTINGS: Readonly<QuerySettings> = {
  maxSizeBytes: DEFAULT_ANSWER_BYTES,
  maxReadBytes: UNBOUNDED,
  maxQueryTimeMs: 5 * 60 * 1000,
  maxIdleTimeMs: 5 * 1000,
};

export interface SettingDefinition {
  /** What a valid value looks like, for "Expected ..." in messages. */
  expected: string;
  /** Applies the value, or returns false when it is not valid. */
  apply(settings: QuerySettings, text: string): boolean;
}

const SIZE_UNITS: Readonly<Record<string, number>> = {
  "": 1,
  b: 1,
  k: 1024,
  kb: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
};

const DURATION_UNITS: Readonly<Record<string, number>> = {
  "": 1,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

function parseQuantity(text: string, units: Readonly<Record<string, number>>): number | null {
  const match = /^\s*(\d+(?:\.\d+)?(?:e[+-]?\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  if (match === null) return null;
  const factor = lookup(units, (match[2] ?? "").toLowerCase());
  if (factor === undefined) return null;
  const value = Math.floor(Number(match[1]) * factor);
  return Number.isSafeInteger(value) && value >= 1 ? value : null;
}

/** The size in bytes written as `500k`, `1m`, `2g` or a plain number, or null. */
export function parseSize(text: string): number | null {
  return parseQuantity(text, SIZE_UNITS);
}

/** The duration in milliseconds written as `30s`, `60000ms`, `5m`, `1h` or a plain number, or null. */
export function parseDuration(text: string): number | null {
  return parseQuantity(text, DURATION_UNITS);
}

/** The format written in any case, or null when it is not one of DATA_FORMATS. */
export function parseFormat(text: string): DataFormat | null {
  const upper = text.trim().toUpperCase();
  return (DATA_FORMATS as readonly string[]).includes(upper) ? (upper as DataFormat) : null;
}

const FORMAT_CHOICES = `one of: ${DATA_FORMATS.join(", ")}`;

/** Other names of settings, as older clients write them: alias -> the setting's name. */
export const SETTING_ALIASES: Readonly<Record<string, string>> = {
  _ktype: "key.format",
  _vtype: "value.format",
  "max.bytes": "max.size",
  "max.time": "max.query.time",
};

/** The setting a key (any case, alias or not) names: lower case, aliases resolved. */
export function canonicalSetting(key: string): string {
  const lower = key.toLowerCase();
  return lookup(SETTING_ALIASES, lower) ?? lower;
}

export const SETTINGS: Readonly<Record<string, SettingDefinition>> = {
  autocreate: {
    expected: "true or false",
    apply(settings, text) {
      const flag = text.trim().toLowerCase();
      if (flag !== "true" && flag !== "false") return false;
      settings.autoCreate = flag === "true";
      return true;
    },
  },
  "key.format": {
    expected: FORMAT_CHOICES,
    apply(settings, text) {
      const format = parseFormat(text);
      if (format === null) return false;
      settings.keyFormat = format;
      return true;
    },
  },
  "max.idle.time": {
    expected: "a duration such as 60000, 60000ms, 30s, 5m or 1h",
    apply(settings, text) {
      const ms = parseDuration(text);
      if (ms === null) return false;
      settings.maxIdleTimeMs = ms;
      return true;
    },
  },
  "max.query.time": {
    expected: "a duration such as 60000, 60000ms, 30s, 5m or 1h",
    apply(settings, text) {
      const ms = parseDuration(text);
      if (ms === null) return false;
      settings.maxQueryTimeMs = ms;
      return true;
    },
  },
  "max.zero.polls": {
    expected: "a positive whole number of polls (1 s each), such as 20",
    apply(settings, text) {
      const polls = /^\s*[0-9]{1,9}\s*$/.test(text) ? Number(text) : 0;
      if (polls < 1) return false;
      settings.maxIdleTimeMs = polls * ZERO_POLL_MS;
      return true;
    },
  },
  "max.size": {
    expected: "a size such as 1048576, 500k, 1m or 2g",
    apply(settings, text) {
      const bytes = parseSize(text);
      if (bytes === null) return false;
      settings.maxSizeBytes = bytes;
      settings.maxReadBytes = bytes;
      return true;
    },
  },
  "value.format": {
    expected: FORMAT_CHOICES,
    apply(settings, text) {
      const format = parseFormat(text);
      if (format === null) return false;
      settings.valueFormat = format;
      return true;
    },
  },
};

export const SETTING_NAMES: readonly string[] = Object.keys(SETTINGS).sort();
