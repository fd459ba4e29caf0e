/**
 * A query's text with one of its settings set to a value: the last `SET` of that setting (under
 * any of its names, `max.bytes` for `max.size`) gets the value, else a `SET` is put first. What
 * "Run again with max.size = 256 MiB" runs.
 */
import { leadingSettings } from "../../src/sql/leading-sets.ts";
import { canonicalSetting } from "../../src/sql/settings.ts";

export function withSetting(sql: string, setting: string, value: string): string {
  const last = leadingSettings(sql)
    .filter((s) => canonicalSetting(s.key) === setting)
    .at(-1);
  if (!last) return `SET ${setting} = ${value};\n${sql}`;
  const { start, end } = last.value;
  return `${sql.slice(0, start)}${value}${sql.slice(end)}`;
}
