import type { Catalog, ExpressionNode, QueryPlan, RecordView } from "../../src/sql/index.ts";

/** Topics the test catalog knows; `orders` has a known schema. */
export const catalog: Catalog = {
  topicExists: (name) => ["t", "orders", "payments", "my-topic", "logs.v1", "select", "42"].includes(name),
  topicFields: (name) =>
    name === "orders"
      ? {
          key: ["id"],
          value: [
            "id",
            "customer.name",
            "customer.address.city",
            "customer.address.zip",
            "items[].sku",
            "items[].qty",
            "total",
            "status",
            "payload",
          ],
        }
      : name === "payments"
        ? { key: null, value: [] }
        : null,
};

export const NOW = Date.UTC(2024, 5, 1, 12, 0, 0);

export function record(fields: Partial<Omit<RecordView, "lastOffset">> & { end?: number } = {}): RecordView {
  const end = fields.end ?? 1000;
  return {
    key: fields.key ?? null,
    value: fields.value ?? null,
    partition: fields.partition ?? 0,
    offset: fields.offset ?? 0,
    timestamp: fields.timestamp ?? 0,
    keySize: fields.keySize ?? 0,
    valueSize: fields.valueSize ?? 0,
    lastOffset: () => end,
  };
}

/** The data fields of a plan (everything but the closures). */
export function planData(plan: QueryPlan): Omit<QueryPlan, "filter" | "project"> {
  const { filter: _f, project: _p, ...data } = plan;
  return data;
}

/** A compact, readable form of an expression tree: `(+ a (* b c))`. */
export function sexpr(node: ExpressionNode): string {
  switch (node.kind) {
    case "StringLiteral":
      return `'${node.value}'`;
    case "NumberLiteral":
      return String(node.value);
    case "BooleanLiteral":
      return String(node.value);
    case "NullLiteral":
      return "null";
    case "FieldPath": {
      const root = node.rooted ? `_${node.source}` : "";
      const parts = node.segments.map((s) => (s.kind === "Field" ? `.${s.name}` : `[${s.index}]`)).join("");
      return root === "" ? parts.slice(1) : root + parts;
    }
    case "MetaField":
      return `_meta.${node.field}`;
    case "DecoderType":
      return node.side === "key" ? "_ktype" : "_vtype";
    case "Unary":
      return `(${node.operator} ${sexpr(node.operand)})`;
    case "Binary":
      return `(${node.operator} ${sexpr(node.left)} ${sexpr(node.right)})`;
    case "Like":
      return `(${node.negated ? "NOT LIKE" : "LIKE"} ${sexpr(node.subject)} ${sexpr(node.pattern)})`;
    case "In":
      return `(${node.negated ? "NOT IN" : "IN"} ${sexpr(node.subject)} ${node.list.map(sexpr).join(" ")})`;
    case "Between":
      return `(${node.negated ? "NOT BETWEEN" : "BETWEEN"} ${sexpr(node.subject)} ${sexpr(node.low)} ${sexpr(node.high)})`;
    case "IsNull":
      return `(${node.negated ? "IS NOT NULL" : "IS NULL"} ${sexpr(node.subject)})`;
    case "Call":
      return `${node.name}(${node.args.map(sexpr).join(", ")})`;
    case "Cast":
      return `CAST(${sexpr(node.expression)} AS ${node.type})`;
  }
}
