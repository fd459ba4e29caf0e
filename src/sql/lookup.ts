/**
 * Reads a table keyed by user text. Own properties only: a query that says
 * `constructor` or `__proto__` must not find what every object inherits.
 */
export function lookup<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}
