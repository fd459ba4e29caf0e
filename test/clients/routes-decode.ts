/**
 * Decoding as the real clients decode (CLIENTS.md): a present key of the wrong JSON type fails
 * the Go client's whole decode; absent keys are fine. Integers must be JSON integers.
 */

export type GoType = "string" | "int" | "bool" | "string[]" | { array: Record<string, GoType> } | { object: Record<string, GoType> };

/** The problems Go's json.Unmarshal would have decoding `value` into a struct of `shape`; [] when none. */
export function goDecodeProblems(value: unknown, shape: Record<string, GoType>, at = ""): string[] {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return [`${at || "(root)"}: not an object`];
  const problems: string[] = [];
  for (const [key, type] of Object.entries(shape)) {
    if (!(key in value)) continue;
    const v = (value as Record<string, unknown>)[key];
    const path = at ? `${at}.${key}` : key;
    if (v === null) continue;
    if (type === "string" && typeof v !== "string") problems.push(`${path}: ${JSON.stringify(v)} is not a string`);
    else if (type === "int" && !(typeof v === "number" && Number.isInteger(v)))
      problems.push(`${path}: ${JSON.stringify(v)} is not an integer`);
    else if (type === "bool" && typeof v !== "boolean") problems.push(`${path}: ${JSON.stringify(v)} is not a boolean`);
    else if (type === "string[]" && !(Array.isArray(v) && v.every((x) => typeof x === "string")))
      problems.push(`${path}: ${JSON.stringify(v)} is not an array of strings`);
    else if (typeof type === "object" && "array" in type) {
      if (!Array.isArray(v)) problems.push(`${path}: not an array`);
      else for (const [i, item] of v.entries()) problems.push(...goDecodeProblems(item, type.array, `${path}[${i}]`));
    } else if (typeof type === "object" && "object" in type) problems.push(...goDecodeProblems(v, type.object, path));
  }
  return problems;
}
