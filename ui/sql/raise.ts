/**
 * A query's text with one of its settings set to a value: the last `SET` of that setting (under
 * any of its names, `max.bytes` for `max.size`) gets the value, else a `SET` is put first. What
 * "Run again with max.size = 256 MiB" runs.
 */
import { parse } from "../../src/sql/parser.ts";
import { canonicalSetting } from "../../src/sql/settings.ts";

export function withSetting(sql: string, setting: string, value: string): string {
  let settings: ReturnType<typeof parse>["settings"] = [];
  try {
    settings = parse(sql).settings;
  } catch {
    // Not a query the parser takes whole: the SET goes first, the server says what is wrong.
  }
  const last = settings.filter((s) => canonicalSetting(s.key) === setting).at(-1);
  if (!last) return `SET ${setting} = ${value};\n${sql}`;
  const { start, end } = last.value.loc;
  return `${sql.slice(0, start)}${value}${sql.slice(end)}`;
}
