/**
 * The JDBC driver's prepared inserts. The driver sends `INSERT ... VALUES (?, ?, ...)` once and
 * gets back where each `?` goes (a field name below its parents, or the key) and the types the
 * records are written in; it then posts each batch as `{key, value}` records, the value being
 * the nested object it built from those fields.
 */
import { columnName, type InsertPlan } from "../../sql/insert.ts";
import type { TopicEncoding } from "../insert/service.ts";
import type { PreparedField, PreparedInfo } from "./schemas.ts";

export type { PreparedField, PreparedInfo };

/** The name the driver puts a whole key or value under (`_value` in its value object). */
export const WHOLE_VALUE = "_value";

export function preparedInfo(plan: InsertPlan, encoding: TopicEncoding): PreparedInfo {
  const fields = plan.columns.map((c) => {
    if (c.path.length === 0) return { name: columnName(c), parents: [], isKey: c.target === "key" };
    return { name: c.path[c.path.length - 1]!, parents: c.path.slice(0, -1), isKey: c.target === "key" };
  });
  const keySchema = encoding.key.avro?.text;
  return {
    topic: plan.topic,
    fields,
    keyType: encoding.key.format,
    valueType: encoding.value.format,
    ...(keySchema ? { keySchema } : {}),
    valueSchema: encoding.value.avro?.text ?? describeFields(plan, encoding.value.format),
  };
}

/**
 * An Avro record schema of the statement's value fields, for a value that has no Avro schema
 * of its own (JSON, STRING...): the driver parses `valueSchema` to describe its parameters.
 * Leaves are strings, and text it does not know the type of; a whole scalar value is a record
 * of one field, `_value`, typed after the format.
 */
function describeFields(plan: InsertPlan, format: string): string {
  type Tree = Map<string, Tree | null>;
  const root: Tree = new Map();
  for (const c of plan.columns) {
    if (c.target !== "value") continue;
    const path = c.path.length === 0 ? [WHOLE_VALUE] : c.path;
    let node = root;
    for (const name of path.slice(0, -1)) {
      let child = node.get(name);
      if (!child) node.set(name, (child = new Map()));
      node = child;
    }
    node.set(path[path.length - 1]!, null);
  }
  const leaf =
    format === "INT"
      ? "int"
      : format === "LONG"
        ? "long"
        : format === "FLOAT"
          ? "float"
          : format === "DOUBLE"
            ? "double"
            : format === "BYTES"
              ? "bytes"
              : "string";
  const used = new Set<string>();
  const recordName = (base: string) => {
    let name = avroName(base);
    for (let i = 2; used.has(name); i++) name = `${avroName(base)}_${i}`;
    used.add(name);
    return name;
  };
  const record = (tree: Tree, name: string): object => ({
    type: "record",
    name: recordName(name),
    fields: [...tree].map(([field, child]) => ({
      name: avroName(field),
      type: child ? record(child, field) : ["null", leaf],
      default: child ? undefined : null,
    })),
  });
  return JSON.stringify(record(root, plan.topic));
}

/** A valid Avro name: letters, digits and `_`, not starting with a digit. */
function avroName(text: string): string {
  const name = text.replace(/[^A-Za-z0-9_]/g, "_");
  return /^[A-Za-z_]/.test(name) ? name : `_${name}`;
}
