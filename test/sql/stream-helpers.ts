import type { Catalog } from "../../src/sql/index.ts";

/** `orders` has a known schema; the others are known by name only. */
export const streamCatalog: Catalog = {
  topicExists: (name) => ["src", "dst", "orders", "totals", "my-src", "source"].includes(name),
  topicFields: (name) => (name === "orders" ? { key: ["id"], value: ["id", "total", "status", "customer.name", "customer.city"] } : null),
};
