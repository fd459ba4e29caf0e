/**
 * A connector config value as text, whatever JSON type the client sent it as (`"tasks.max": 5`
 * reads as `"5"`); undefined for null and undefined. Connect itself reads every value as text.
 */
export function configText(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  return typeof value === "string" ? value : JSON.stringify(value);
}
