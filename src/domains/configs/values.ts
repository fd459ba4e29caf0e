import type { JsonText } from "../../http/route.ts";
/**
 * Broker config values as JSON of their Kafka type. Kafka reports every value as text; the Go
 * client decodes `log.cleaner.threads` and `advertised.port` into ints and fails on a string,
 * so numbers are written as JSON numbers, booleans as JSON booleans, the rest as strings. A
 * LONG beyond 2^53 (`log.flush.interval.messages` is 2^63-1 by default) keeps its exact digits:
 * clients that decode int64 read it exactly, where a JavaScript number would round it.
 */

import type { ConfigEntry } from "../../kafka/index.ts";

/** An integer written with its exact digits. */
export class ExactInteger {
  constructor(readonly digits: string) {}
}

export type ConfigJsonValue = string | number | boolean | ExactInteger;

const INTEGER = /^-?\d{1,20}$/;

/**
 * The JSON value of a config, or undefined when it has none to show: no value, a secret, or a
 * number that does not parse (left out rather than written with another type).
 */
export function typedValue(entry: ConfigEntry): ConfigJsonValue | undefined {
  const v = entry.value;
  if (v === null || entry.sensitive || entry.type === "PASSWORD") return undefined;
  switch (entry.type) {
    case "INT":
    case "SHORT":
    case "LONG": {
      const text = v.trim();
      if (!INTEGER.test(text)) return undefined;
      const n = Number(text);
      return Number.isSafeInteger(n) ? n : new ExactInteger(BigInt(text).toString());
    }
    case "DOUBLE": {
      const n = Number(v.trim());
      return v.trim() !== "" && Number.isFinite(n) ? n : undefined;
    }
    case "BOOLEAN":
      return v === "true" ? true : v === "false" ? false : undefined;
    default:
      return v;
  }
}

/** The configs as one JSON object of name to typed value, sorted by name, valueless ones left out. */
export function configsJson(entries: readonly ConfigEntry[]): JsonText<Record<string, string | number | boolean>> {
  const parts: string[] = [];
  for (const e of [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const v = typedValue(e);
    if (v === undefined) continue;
    parts.push(`${JSON.stringify(e.name)}:${v instanceof ExactInteger ? v.digits : JSON.stringify(v)}`);
  }
  return `{${parts.join(",")}}`;
}
