// @no-services
/**
 * Valid queries and the plan (or tree) each must give. Only the fields listed
 * for a case are compared, each one exactly.
 */
import { describe, expect, test } from "bun:test";
import { compileQuery, parse, QUERY_LIMITS, type QueryOptions, type QueryPlan, validateSql } from "../../src/sql/index.ts";
import { catalog, NOW, planData, sexpr } from "./helpers.ts";

type PlanData = ReturnType<typeof planData>;
type Case = [sql: string, expected: Partial<PlanData>, options?: QueryOptions];

/** A query that SETs nothing reads on until its end, its LIMIT or 5 minutes; only its answer is bounded by size. */
const DEFAULTS = { maxSizeBytes: 20 * 1024 * 1024, maxReadBytes: Number.MAX_SAFE_INTEGER, maxQueryTimeMs: 300_000, maxIdleTimeMs: 5_000 };
/** SET max.size bounds both the bytes read and the bytes returned. */
const size = (n: number) => ({ maxSizeBytes: n, maxReadBytes: n });
const META_COLUMNS = ["partition", "offset", "timestamp", "__keysize", "__valuesize"];

const VALID: Case[] = [
  // Shape of the statement, keywords, topics
  [
    "SELECT * FROM t",
    {
      topic: "t",
      limit: 10_000,
      skip: 0,
      limitClamped: false,
      partitions: null,
      offsetRange: {},
      timeRange: {},
      settings: DEFAULTS,
      projectionIsStar: true,
      columns: null,
      hasFilter: false,
    },
  ],
  ["select * from t", { topic: "t", projectionIsStar: true }],
  ["SELECT * FROM t;", { topic: "t" }],
  ["SeLeCt * FrOm t LiMiT 5", { limit: 5 }],
  ["SELECT * FROM `my-topic`", { topic: "my-topic" }],
  ["SELECT * FROM `logs.v1` LIMIT 3", { topic: "logs.v1", limit: 3 }],
  ["SELECT * FROM `select`", { topic: "select" }],
  ["SELECT * FROM `42`", { topic: "42" }],
  ["  \n\tSELECT\n*\nFROM\nt\n\n", { topic: "t" }],

  // LIMIT
  ["SELECT * FROM t LIMIT 0", { limit: 0, skip: 0, limitClamped: false }],
  ["SELECT * FROM t LIMIT 20, 5", { limit: 5, skip: 20, limitClamped: false }],
  ["SELECT * FROM t LIMIT 50000", { limit: 10_000, limitClamped: true }],
  ["SELECT * FROM t LIMIT 10, 99999", { limit: 10_000, skip: 10, limitClamped: true }],
  ["SELECT * FROM t LIMIT 10000", { limit: 10_000, limitClamped: false }],
  ["SELECT * FROM t LIMIT 5;", { limit: 5 }],
  ["SELECT * FROM t", { limit: 500, limitClamped: false }, { maxLimit: 500 }],
  ["SELECT * FROM t LIMIT 600", { limit: 500, limitClamped: true }, { maxLimit: 500 }],

  // Projection shapes and column names
  ["SELECT name FROM t", { projectionIsStar: false, columns: ["name"] }],
  ["SELECT a.b[0].c FROM t", { columns: ["c"] }],
  ["SELECT tags[1] FROM t", { columns: ["tags[1]"] }],
  ["SELECT _key FROM t", { columns: ["_key"] }],
  ["SELECT _key.a.b FROM t", { columns: ["b"] }],
  ["SELECT _value FROM t", { columns: ["_value"] }],
  ["SELECT _value.a FROM t", { columns: ["a"] }],
  ["SELECT _value[0] FROM t", { columns: ["_value[0]"] }],
  ["SELECT _meta.* FROM t", { columns: META_COLUMNS }],
  [
    "SELECT _meta.offset, _meta.partition, _meta.timestamp, _meta.__keysize, _meta.__valuesize FROM t",
    {
      columns: ["offset", "partition", "timestamp", "__keysize", "__valuesize"],
    },
  ],
  ["SELECT _key, _meta.*, name FROM t", { columns: ["_key", ...META_COLUMNS, "name"] }],
  ["SELECT _offset, _partition, _ts FROM t", { columns: ["offset", "partition", "timestamp"] }],
  ["SELECT name AS n, UPPERCASE(name) AS u FROM t", { columns: ["n", "u"] }],
  ["SELECT LEN(name)  +\n  1 FROM t", { columns: ["LEN(name) + 1"] }],
  ["SELECT a.x, b.x, c.x FROM t", { columns: ["x", "x_2", "x_3"] }],
  ["SELECT `weird-key`, `from` FROM t", { columns: ["weird-key", "from"] }],
  ["SELECT name AS `display name` FROM t", { columns: ["display name"] }],
  ["SELECT _value.`from`.select FROM t", { columns: ["select"] }],
  [
    "SELECT CAST(age AS STRING) AS s, COALESCE(a, b, 'x'), ROUND(ratio, 2) FROM t",
    {
      columns: ["s", "COALESCE(a, b, 'x')", "ROUND(ratio, 2)"],
    },
  ],
  ["SELECT lowercase(name), Now() AS t, last_offset() AS e FROM t", { columns: ["lowercase(name)", "t", "e"] }],
  ["SELECT 1, 'x', TRUE, NULL FROM t", { columns: ["1", "'x'", "TRUE", "NULL"] }],
  ["SELECT constructor, __proto__, toString FROM t", { columns: ["constructor", "__proto__", "toString"] }],

  // Partition push-down
  ["SELECT * FROM t WHERE a = 1", { hasFilter: true, partitions: null, offsetRange: {}, timeRange: {} }],
  ["SELECT * FROM t WHERE _meta.partition = 3", { partitions: [3] }],
  ["SELECT * FROM t WHERE _meta.partition IN (2, 0, 1)", { partitions: [0, 1, 2] }],
  ["SELECT * FROM t WHERE _meta.partition IN (0, 1) AND _meta.partition = 1", { partitions: [1] }],
  ["SELECT * FROM t WHERE _meta.partition = 1 AND _meta.partition = 2", { partitions: [] }],
  ["SELECT * FROM t WHERE _meta.partition = 1 OR _meta.partition = 2", { partitions: null }],
  ["SELECT * FROM t WHERE 2 = _meta.partition", { partitions: [2] }],
  ["SELECT * FROM t WHERE _partition = 4", { partitions: [4] }],
  ["SELECT * FROM t WHERE _meta.partition > 1", { partitions: null }],
  ["SELECT * FROM t WHERE NOT _meta.partition = 1", { partitions: null }],
  ["SELECT * FROM t WHERE a = 1 AND (_meta.partition = 5 AND b = 2)", { partitions: [5] }],

  // Offset push-down
  ["SELECT * FROM t WHERE _meta.offset >= 100", { offsetRange: { from: { kind: "absolute", value: 100 } } }],
  [
    "SELECT * FROM t WHERE _meta.offset > 100 AND _meta.offset < 200",
    {
      offsetRange: { from: { kind: "absolute", value: 101 }, to: { kind: "absolute", value: 199 } },
    },
  ],
  [
    "SELECT * FROM t WHERE _meta.offset BETWEEN 10 AND 20",
    {
      offsetRange: { from: { kind: "absolute", value: 10 }, to: { kind: "absolute", value: 20 } },
    },
  ],
  [
    "SELECT * FROM t WHERE _meta.offset = 7",
    {
      offsetRange: { from: { kind: "absolute", value: 7 }, to: { kind: "absolute", value: 7 } },
    },
  ],
  ["SELECT * FROM t WHERE _offset <= 50", { offsetRange: { to: { kind: "absolute", value: 50 } } }],
  ["SELECT * FROM t WHERE 100 < _meta.offset", { offsetRange: { from: { kind: "absolute", value: 101 } } }],
  ["SELECT * FROM t WHERE _meta.offset >= LAST_OFFSET() - 10", { offsetRange: { from: { kind: "fromEnd", n: 10 } } }],
  ["SELECT * FROM t WHERE _meta.offset > LAST_OFFSET() - 10", { offsetRange: { from: { kind: "fromEnd", n: 9 } } }],
  ["SELECT * FROM t WHERE _meta.offset < LAST_OFFSET()", { offsetRange: { to: { kind: "fromEnd", n: 1 } } }],
  ["SELECT * FROM t WHERE LAST_OFFSET() - 3 <= _meta.offset", { offsetRange: { from: { kind: "fromEnd", n: 3 } } }],
  [
    "SELECT * FROM t WHERE _meta.offset IN (5, 9, 7)",
    {
      offsetRange: { from: { kind: "absolute", value: 5 }, to: { kind: "absolute", value: 9 } },
    },
  ],
  ["SELECT * FROM t WHERE _meta.offset >= 10 AND _meta.offset >= 20", { offsetRange: { from: { kind: "absolute", value: 20 } } }],
  ["SELECT * FROM t WHERE _meta.offset >= 100 - 10 * 2", { offsetRange: { from: { kind: "absolute", value: 80 } } }],
  ["SELECT * FROM t WHERE _meta.offset >= 10 OR a = 1", { offsetRange: {} }],
  ["SELECT * FROM t WHERE _meta.offset != 10", { offsetRange: {} }],

  // Time push-down
  ["SELECT * FROM t WHERE _meta.timestamp >= 1700000000000", { timeRange: { fromMs: 1_700_000_000_000 } }],
  [
    "SELECT * FROM t WHERE _meta.timestamp > '2024-01-01' AND _meta.timestamp < '2024-01-02T00:00:00Z'",
    {
      timeRange: { fromMs: Date.UTC(2024, 0, 1) + 1, toMs: Date.UTC(2024, 0, 2) - 1 },
    },
  ],
  [
    "SELECT * FROM t WHERE _ts BETWEEN '2024-01-01T10:00:00+02:00' AND 1704110400000",
    {
      timeRange: { fromMs: Date.UTC(2024, 0, 1, 8), toMs: 1_704_110_400_000 },
    },
  ],
  ["SELECT * FROM t WHERE _meta.timestamp <= '2024-02-29 23:59:59.5'", { timeRange: { toMs: Date.UTC(2024, 1, 29, 23, 59, 59, 500) } }],
  ["SELECT * FROM t WHERE _meta.timestamp > NOW() - 3600000", { timeRange: { fromMs: NOW - 3_600_000 + 1 } }],
  [
    "SELECT * FROM t WHERE _meta.partition = 0 AND _meta.offset >= LAST_OFFSET() - 5 AND _meta.timestamp <= 2000",
    {
      partitions: [0],
      offsetRange: { from: { kind: "fromEnd", n: 5 } },
      timeRange: { toMs: 2000 },
    },
  ],

  // SET statements
  ["SET max.size = 1m; SELECT * FROM t", { settings: { ...DEFAULTS, ...size(1_048_576) } }],
  ["SET max.size = '500k'; SELECT * FROM t", { settings: { ...DEFAULTS, ...size(512_000) } }],
  ["SET max.size = 2g; SELECT * FROM t", { settings: { ...DEFAULTS, ...size(2 * 1024 ** 3) } }],
  ["SET max.size = 1048576; SELECT * FROM t", { settings: { ...DEFAULTS, ...size(1_048_576) } }],
  ["SET MAX.SIZE = 10MB; SELECT * FROM t", { settings: { ...DEFAULTS, ...size(10 * 1024 ** 2) } }],
  ["SET max.query.time = 30s; SELECT * FROM t", { settings: { ...DEFAULTS, maxQueryTimeMs: 30_000 } }],
  [
    "SET max.query.time = '5m'; SET max.idle.time = 60000ms; SELECT * FROM t",
    {
      settings: { ...DEFAULTS, maxQueryTimeMs: 300_000, maxIdleTimeMs: 60_000 },
    },
  ],
  [
    "SET max.query.time = 1h; SET max.idle.time = 2500; SELECT * FROM t",
    {
      settings: { ...DEFAULTS, maxQueryTimeMs: 3_600_000, maxIdleTimeMs: 2500 },
    },
  ],
  ["SET max.size = 1m; SET max.size = 2m; SELECT * FROM t", { settings: { ...DEFAULTS, ...size(2 * 1024 ** 2) } }],
  [
    "SET key.format = STRING; SET value.format = 'avro'; SELECT * FROM t",
    {
      settings: { ...DEFAULTS, keyFormat: "STRING", valueFormat: "AVRO" },
    },
  ],
  ["SET value.format = PROTOBUF; SELECT * FROM t", { settings: { ...DEFAULTS, valueFormat: "PROTOBUF" } }],

  // Decoders chosen the old way
  [
    "SELECT * FROM t WHERE _ktype = 'STRING' AND _vtype = 'JSON'",
    {
      settings: { ...DEFAULTS, keyFormat: "STRING", valueFormat: "JSON" },
      hasFilter: false,
    },
  ],
  ["SELECT * FROM t WHERE _vtype = 'AVRO' AND total > 10", { settings: { ...DEFAULTS, valueFormat: "AVRO" }, hasFilter: true }],
  ["SET value.format = JSON; SELECT * FROM t WHERE _vtype = 'AVRO'", { settings: { ...DEFAULTS, valueFormat: "JSON" } }],
  ["SELECT * FROM t WHERE 'bytes' = _ktype", { settings: { ...DEFAULTS, keyFormat: "BYTES" } }],
  ["SELECT * FROM t WHERE _VTYPE = json AND _meta.partition = 1", { settings: { ...DEFAULTS, valueFormat: "JSON" }, partitions: [1] }],

  // Comments, line breaks, catalog schemas
  [
    "-- latest orders\nSET max.size = 5m; /* scan at\nmost 5 MiB */\nSELECT id, total -- two columns\nFROM orders\nWHERE status = 'PAID' /* only paid */\nLIMIT 100;",
    { topic: "orders", columns: ["id", "total"], limit: 100, settings: { ...DEFAULTS, ...size(5 * 1024 ** 2) } },
  ],
  ["SELECT id\r\nFROM orders\r\nWHERE total > 1", { topic: "orders", hasFilter: true }],
  [
    "SELECT customer.address.city, items[0].sku, payload.anything.deep, _key.id FROM orders",
    {
      columns: ["city", "sku", "deep", "id"],
    },
  ],
  ["SELECT _key.whatever, _value FROM payments", { topic: "payments", columns: ["whatever", "_value"] }],
  ["SET value.format = STRING; SELECT anything FROM orders", { columns: ["anything"] }],
  ["SELECT * FROM t WHERE name LIKE 'A%' AND NOT (age BETWEEN 1 AND 2) AND city IS NULL AND x IN ('a', \"b\")", { hasFilter: true }],
];

describe("valid queries give their plan", () => {
  test("the table has at least 60 cases", () => {
    expect(VALID.length).toBeGreaterThanOrEqual(60);
  });

  // A rest parameter: bun would take a third named parameter for a done callback.
  test.each(VALID)("%p", (...[sql, expected, options]: Case) => {
    expect(validateSql(sql, catalog, options)).toEqual({ isValid: true, line: 0, column: 0, message: null });
    const plan: QueryPlan = compileQuery(sql, catalog, { now: NOW, ...options });
    const data = planData(plan);
    for (const [field, value] of Object.entries(expected)) {
      expect({ field, value: data[field as keyof PlanData] }).toEqual({ field, value });
    }
  });
});

/** WHERE clauses and the tree they parse to, written as s-expressions. */
const TREES: [where: string, tree: string][] = [
  ["a + b * c", "(+ a (* b c))"],
  ["(a + b) * c", "(* (+ a b) c)"],
  ["a - b - c", "(- (- a b) c)"],
  ["a / b % c", "(% (/ a b) c)"],
  ["a OR b AND c", "(OR a (AND b c))"],
  ["(a OR b) AND c", "(AND (OR a b) c)"],
  ["NOT a = 1 AND b", "(AND (NOT (= a 1)) b)"],
  ["NOT NOT a", "(NOT (NOT a))"],
  ["a NOT LIKE 'x%'", "(NOT LIKE a 'x%')"],
  ["a NOT IN (1, 2)", "(NOT IN a 1 2)"],
  ["a IN (1 + 1, b)", "(IN a (+ 1 1) b)"],
  ["a NOT BETWEEN 1 AND 2 AND b", "(AND (NOT BETWEEN a 1 2) b)"],
  ["a BETWEEN b + 1 AND c * 2", "(BETWEEN a (+ b 1) (* c 2))"],
  ["a IS NOT NULL OR b IS NULL", "(OR (IS NOT NULL a) (IS NULL b))"],
  ["-a * 2", "(* (- a) 2)"],
  ["- -a", "(- (- a))"],
  ["+a", "(+ a)"],
  ["_key.x = _value.y", "(= _key.x _value.y)"],
  ["a.b[0].c <> 'it''s'", "(!= a.b[0].c 'it's')"],
  ['"double ""quoted""" = x', `(= 'double "quoted"' x)`],
  ["`_key` = _key", "(= _key _key)"],
  ["`a b`.`c-d`[3] = 1", "(= a b.c-d[3] 1)"],
  ["CAST(a AS int) > 1.5e2", "(> CAST(a AS INT) 150)"],
  ["_offset = 1 AND _ts > 2 AND _partition < 3", "(AND (AND (= _meta.offset 1) (> _meta.timestamp 2)) (< _meta.partition 3))"],
  ["LEN(a) + 1 >= 2", "(>= (+ LEN(a) 1) 2)"],
  ["concat(a, '-', b) = 'x-y'", "(= CONCAT(a, '-', b) 'x-y')"],
  ["a = TRUE OR b = false OR c = NULL", "(OR (OR (= a true) (= b false)) (= c null))"],
  ["_ktype = 'STRING'", "(= _ktype 'STRING')"],
  ["a.from.where = 1", "(= a.from.where 1)"],
  ["x < 1 AND y <= 2 AND z > 3 AND w >= 4 AND v != 5", "(AND (AND (AND (AND (< x 1) (<= y 2)) (> z 3)) (>= w 4)) (!= v 5))"],
];

describe("expression trees", () => {
  test.each(TREES)("%p", (where, tree) => {
    const document = parse(`SELECT * FROM t WHERE ${where}`);
    const node = document.select.where;
    if (node === null) throw new Error("no WHERE");
    expect(sexpr(node)).toBe(tree);
  });

  test("nodes keep their source spans", () => {
    const sql = "SELECT * FROM t WHERE a.b = 1";
    const where = parse(sql).select.where;
    expect(where?.kind).toBe("Binary");
    if (where?.kind !== "Binary") return;
    expect(sql.slice(where.loc.start, where.loc.end)).toBe("a.b = 1");
    expect(sql.slice(where.left.loc.start, where.left.loc.end)).toBe("a.b");
  });

  test("a document holds its SET statements in order", () => {
    const document = parse("SET max.size = 1m; SET value.format = 'JSON';\nSELECT * FROM t");
    expect(document.settings.map((s) => [s.key, s.value.text, s.value.quoted])).toEqual([
      ["max.size", "1m", false],
      ["value.format", "JSON", true],
    ]);
  });

  test("deep but allowed nesting parses", () => {
    // The WHERE expression is one level; each parenthesis another.
    const sql = `SELECT * FROM t WHERE ${"(".repeat(QUERY_LIMITS.depth - 1)}a${")".repeat(QUERY_LIMITS.depth - 1)} = 1`;
    expect(validateSql(sql).isValid).toBe(true);
  });

  test("a long chain of operators within the token cap compiles and runs", () => {
    const sql = `SELECT * FROM t WHERE ${Array.from({ length: 2000 }, () => "a").join(" + ")} = 2000`;
    const plan = compileQuery(sql, null);
    expect(
      plan.filter({ key: null, value: { a: 1 }, partition: 0, offset: 0, timestamp: 0, keySize: 0, valueSize: 0, lastOffset: () => 0 }),
    ).toBe(true);
  });
});
