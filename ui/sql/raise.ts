/**
 * A query's text with one of its settings set to a value: the last `SET` of that setting (under
 * any of its names, `max.bytes` for `max.size`) gets the value, else a `SET` is put first. What
 * "Run again with max.size = 256 MiB" runs. `settings`: the text's leading SETs, as the server's
 * validation answer gives them (`editor.settings`).
 */

import type { EditorFacts } from "../../src/sql/editor-facts.ts";
import { canonicalSetting } from "../../src/sql/settings.ts";

export function withSetting(sql: string, settings: EditorFacts["settings"], setting: string, value: string): string {
  const last = settings.filter((s) => canonicalSetting(s.key) === setting).at(-1);
  if (!last) return `SET ${setting} = ${value};\n${sql}`;
  const { start, end } = last.value;
  return `${sql.slice(0, start)}${value}${sql.slice(end)}`;
}
