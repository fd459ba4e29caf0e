/**
 * Programs to start a stream processor from (the create view's buttons). They read a topic
 * named orders, as `npm run dev` seeds it (orderId, customer, city, amount, status, keyed by
 * orderId): the names are the user's to change. The dev seed runs one of them and its test
 * runs each on the seeded data, so they stay valid and write records.
 */
export const EXAMPLES: Array<{ label: string; sql: string }> = [
  {
    label: "Filter and projection",
    sql: "SET autocreate = true;\nINSERT INTO orders_paid\nSELECT STREAM orderId, customer, amount\nFROM orders\nWHERE status = 'paid'",
  },
  {
    label: "Count per key every minute",
    sql: "SET autocreate = true;\nINSERT INTO orders_per_minute\nSELECT STREAM _key, COUNT(*) AS orders\nFROM orders\nGROUP BY TUMBLE(1, m), _key",
  },
  {
    // A table's topic is compacted, and takes no record without a key: an order without a city
    // is counted under 'unknown'.
    label: "Table of totals per city",
    sql: "SET autocreate = true;\nINSERT INTO totals_by_city\nSELECT STREAM COALESCE(city, 'unknown') AS _key, city, COUNT(*) AS orders, SUM(amount) AS total\nFROM orders\nGROUP BY city",
  },
];
