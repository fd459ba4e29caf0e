/**
 * Condition expressions of the settings that take them (today: 2000, consumer lag), checked
 * against the setting's `conditionRegex` and read into what the evaluation needs.
 */
import { AppError } from "../../errors.ts";
import { type AlertDefinition, LAG_REGEX } from "./catalogue.ts";
import { conditionText } from "./schemas.ts";

export interface LagCondition {
  metric: "lag" | "lag-seconds";
  threshold: number;
  group: Pattern;
  topic: Pattern;
  /** How long the lag must stay at or over the threshold before it is raised; 0 at once. */
  holdMs: number;
}

/** A name or a pattern: `*` any characters, `?` one; other characters as they are. */
export interface Pattern {
  text: string;
  matches(name: string): boolean;
}

export function pattern(text: string): Pattern {
  if (!/[*?]/.test(text)) return { text, matches: (name) => name === text };
  const re = new RegExp(
    `^${text
      .split("")
      .map((ch) => (ch === "*" ? ".*" : ch === "?" ? "." : ch.replace(/[.+^${}()|[\]\\]/g, "\\$&")))
      .join("")}$`,
    "s",
  );
  return { text, matches: (name) => re.test(name) };
}

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000 } as const;

/**
 * The condition as it will be stored (trimmed), or a 400 that names the template. A setting
 * without a template takes no condition. The rule is the request schema the UI checks with.
 */
export function checkCondition(setting: AlertDefinition, text: string): string {
  const checked = conditionText(setting).safeParse(text);
  if (checked.success) return checked.data;
  const issue = checked.error.issues[0]!;
  const named = issue.code === "custom" ? (issue.params as { template: string; regex: string } | undefined) : undefined;
  throw new AppError("VALIDATION_FAILED", issue.message, named ? { details: named } : undefined);
}

/** A stored lag condition, read; undefined for one that no longer parses. */
export function parseLagCondition(expression: string): LagCondition | undefined {
  const m = new RegExp(LAG_REGEX).exec(expression);
  if (!m) return undefined;
  const [, metric, threshold, group, topic, hold, unit] = m;
  return {
    metric: metric as LagCondition["metric"],
    threshold: Number(threshold),
    group: pattern(group!),
    topic: pattern(topic!),
    holdMs: hold ? Number(hold) * UNIT_MS[unit as keyof typeof UNIT_MS] : 0,
  };
}
