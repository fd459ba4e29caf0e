/**
 * Prometheus text exposition format 0.0.4: `# HELP` and `# TYPE` once per metric, then one
 * line per series. Label values escape backslash, double quote and line feed; HELP text
 * escapes backslash and line feed.
 */

export type MetricType = "gauge" | "counter";

export function escapeLabelValue(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function escapeHelp(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

function formatValue(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  return String(v);
}

export class MetricsText {
  readonly #lines: string[] = [];

  /** Declares a metric; series follow with sample(). */
  metric(name: string, type: MetricType, help: string): this {
    this.#lines.push(`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`);
    return this;
  }

  sample(name: string, labels: Record<string, string | number>, value: number): this {
    const entries = Object.entries(labels);
    const text = entries.length ? `{${entries.map(([k, v]) => `${k}="${escapeLabelValue(String(v))}"`).join(",")}}` : "";
    this.#lines.push(`${name}${text} ${formatValue(value)}`);
    return this;
  }

  toString(): string {
    return this.#lines.join("\n") + "\n";
  }
}
