/**
 * The `SET key = value;` statements a stream program may start with.
 *
 *   autocreate          true or false: create the target when it is missing (default false)
 *   partitions          the target's partitions when created (default: the source's count)
 *   replication         the target's replication factor when created (default: the cluster's)
 *   auto.offset.reset   earliest or latest: where a new program starts reading (default earliest)
 *   output.format       JSON, AVRO or PROTOBUF (through the registry): how results are written (default JSON)
 *   error.policy        skip (alias continue) or stop (alias fail): what a failing record does
 *   window.grace        how long a window stays open for late records: 0, 500ms, 10s, 1m (default 0)
 *   commit.interval     how often a transaction commits: 10ms to 60s (default 100ms)
 *   key.format          decoder of the source's keys, as in queries (alias _ktype)
 *   value.format        decoder of the source's values, as in queries (alias _vtype)
 *
 * Keys are case-insensitive and may be backquoted; values may be quoted or bare; the last
 * statement of a key wins. The decoders are left to the query analyzer, which also reads the
 * `_ktype = X` conditions of WHERE; this file applies the rest.
 */
import { lookup } from "./lookup.ts";
import { canonicalSetting, parseDuration, SETTINGS } from "./settings.ts";

export interface ProgramSettings {
  autoCreate: boolean;
  partitions?: number;
  replication?: number;
  autoOffsetReset: "earliest" | "latest";
  outputFormat: "JSON" | "AVRO" | "PROTOBUF";
  errorPolicy: "skip" | "stop";
  graceMs: number;
  commitIntervalMs: number;
}

export const DEFAULT_PROGRAM_SETTINGS: Readonly<ProgramSettings> = {
  autoCreate: false,
  autoOffsetReset: "earliest",
  outputFormat: "JSON",
  errorPolicy: "skip",
  graceMs: 0,
  commitIntervalMs: 100,
};

export const COMMIT_INTERVAL_BOUNDS = { minMs: 10, maxMs: 60_000 } as const;

interface ProgramSetting {
  expected: string;
  apply(settings: ProgramSettings, text: string): boolean;
}

function word(text: string): string {
  return text.trim().toLowerCase();
}

function positiveInteger(text: string): number | null {
  if (!/^\s*[0-9]{1,9}\s*$/.test(text)) return null;
  const n = Number(text);
  return n >= 1 ? n : null;
}

/** A duration as in the query settings, where a grace period may also be zero. */
function durationOrZero(text: string): number | null {
  if (/^\s*0+(?:\.0*)?\s*(?:ms|s|m|h)?\s*$/i.test(text)) return 0;
  return parseDuration(text);
}

function choice<T extends string>(aliases: Readonly<Record<string, T>>, set: (settings: ProgramSettings, value: T) => void) {
  return (settings: ProgramSettings, text: string): boolean => {
    const value = lookup(aliases, word(text));
    if (value === undefined) return false;
    set(settings, value);
    return true;
  };
}

const PROGRAM_SETTINGS: Readonly<Record<string, ProgramSetting>> = {
  autocreate: {
    expected: "true or false",
    apply: choice({ true: "true", false: "false" }, (s, v) => {
      s.autoCreate = v === "true";
    }),
  },
  partitions: {
    expected: "a whole number of partitions from 1",
    apply(settings, text) {
      const n = positiveInteger(text);
      if (n === null) return false;
      settings.partitions = n;
      return true;
    },
  },
  replication: {
    expected: "a whole replication factor from 1",
    apply(settings, text) {
      const n = positiveInteger(text);
      if (n === null) return false;
      settings.replication = n;
      return true;
    },
  },
  "auto.offset.reset": {
    expected: "one of: earliest, latest",
    apply: choice({ earliest: "earliest", latest: "latest" }, (s, v) => {
      s.autoOffsetReset = v;
    }),
  },
  "output.format": {
    expected: "one of: AVRO, JSON, PROTOBUF",
    apply: choice({ json: "JSON", avro: "AVRO", protobuf: "PROTOBUF" }, (s, v) => {
      s.outputFormat = v;
    }),
  },
  "error.policy": {
    expected: "one of: skip, stop (or continue, fail)",
    apply: choice({ skip: "skip", continue: "skip", stop: "stop", fail: "stop" }, (s, v) => {
      s.errorPolicy = v;
    }),
  },
  "window.grace": {
    expected: "a duration such as 0, 500ms, 10s or 1m",
    apply(settings, text) {
      const ms = durationOrZero(text);
      if (ms === null) return false;
      settings.graceMs = ms;
      return true;
    },
  },
  "commit.interval": {
    expected: "a duration from 10ms to 60s, such as 100ms or 1s",
    apply(settings, text) {
      const ms = parseDuration(text);
      if (ms === null || ms < COMMIT_INTERVAL_BOUNDS.minMs || ms > COMMIT_INTERVAL_BOUNDS.maxMs) return false;
      settings.commitIntervalMs = ms;
      return true;
    },
  },
};

/** The source decoders, applied by the query analyzer with the WHERE conditions. */
const DECODER_SETTINGS = ["key.format", "value.format"] as const;

/** Every setting name a program accepts, for "Expected one of ..." (aliases of the decoders included). */
export const PROGRAM_SETTING_NAMES: readonly string[] = [...Object.keys(PROGRAM_SETTINGS), ...DECODER_SETTINGS, "_ktype", "_vtype"].sort();

/** What a SET key is to a program: a decoder (for the analyzer), one of its own, or unknown. */
export function classifyProgramSetting(key: string): "decoder" | "program" | "unknown" {
  const canonical = canonicalSetting(key);
  if ((DECODER_SETTINGS as readonly string[]).includes(canonical) && SETTINGS[canonical] !== undefined) return "decoder";
  return lookup(PROGRAM_SETTINGS, key.toLowerCase()) === undefined ? "unknown" : "program";
}

/** Applies one program setting; the "Expected" text when the value is not valid, else null. */
export function applyProgramSetting(settings: ProgramSettings, key: string, text: string): string | null {
  const definition = lookup(PROGRAM_SETTINGS, key.toLowerCase());
  if (definition === undefined) return "a known setting";
  return definition.apply(settings, text) ? null : definition.expected;
}
