// @no-services
/**
 * Stream programs: the exact answer of validation (message, line, column) for every rule, and
 * what a valid program compiles to (topics, settings, operations, columns, window).
 */
import { describe, expect, test } from "bun:test";
import {
  type Catalog,
  compileStream,
  isStreamStatement,
  SqlError,
  type StreamOptions,
  type StreamProgram,
  type StreamSettings,
  validateSql,
  validateStream,
} from "../../src/sql/index.ts";
import { streamCatalog } from "./stream-helpers.ts";

/** The client's program, exactly as it sends it (leading space included). */
const CLIENT_SQL = " SET autocreate=true; INSERT INTO target SELECT STREAM * FROM source WHERE _ktype=AVRO and _vtype=AVRO";

const SETTINGS =
  "_ktype, _vtype, auto.offset.reset, autocreate, commit.interval, error.policy, key.format, output.format, partitions, replication, value.format, window.grace";
const FORMATS = "AVRO, BYTES, DOUBLE, FLOAT, INT, JSON, LONG, PROTOBUF, STRING";
const AGGREGATES = "COUNT(*), COUNT, SUM, AVG, MIN or MAX in the projection";

type Case = [sql: string, line: number, column: number, message: string];

const INVALID: Case[] = [
  // Shape of the statement
  ["", 1, 1, "Unexpected end of input at line 1, column 1. Expected one of: INSERT, SET."],
  ["SELECT * FROM src", 1, 1, "Unexpected 'SELECT' at line 1, column 1. Expected one of: INSERT, SET."],
  ["INSERT INTO dst (a) VALUES (1)", 1, 17, "Unexpected '(' at line 1, column 17. Expected SELECT."],
  ["INSERT INTO dst SELECT * FROM", 1, 30, "Unexpected end of input at line 1, column 30. Expected a topic name."],
  [
    "INSERT INTO dst SELECT * FROM src x",
    1,
    35,
    "Unexpected 'x' at line 1, column 35. Expected one of: GROUP, WHERE, WINDOW, ';', end of input.",
  ],
  ["INSERT INTO dst SELECT STREAM * FROM src;;", 1, 42, "Unexpected ';' at line 1, column 42. Expected end of input."],
  [
    "INSERT INTO dst SELECT STREAM COUNT(*) FROM src GROUP BY",
    1,
    57,
    "Unexpected end of input at line 1, column 57. Expected an expression.",
  ],
  [
    "INSERT INTO dst SELECT STREAM * FROM src LIMIT 10",
    1,
    42,
    "LIMIT in a stream program at line 1, column 42. Expected no LIMIT: a program runs until it is stopped.",
  ],

  // Topics
  [
    "INSERT INTO nope SELECT * FROM src",
    1,
    13,
    "Unknown topic 'nope' at line 1, column 13. Expected an existing target topic, or SET autocreate = true; to create it.",
  ],
  [
    "SET autocreate = false; INSERT INTO nope SELECT * FROM src",
    1,
    37,
    "Unknown topic 'nope' at line 1, column 37. Expected an existing target topic, or SET autocreate = true; to create it.",
  ],
  ["INSERT INTO dst SELECT * FROM nope", 1, 31, "Unknown topic 'nope' at line 1, column 31."],
  ["INSERT INTO dst SELECT * FROM `no-such`", 1, 31, "Unknown topic 'no-such' at line 1, column 31."],
  [
    "INSERT INTO src SELECT * FROM src",
    1,
    31,
    "The source is the target topic 'src' at line 1, column 31. Expected a source other than the target.",
  ],
  [
    "SET autocreate = true; INSERT INTO `my-src` SELECT * FROM `my-src`",
    1,
    59,
    "The source is the target topic 'my-src' at line 1, column 59. Expected a source other than the target.",
  ],

  // Fields, functions, decoders: the query analyzer's rules
  [
    "INSERT INTO dst SELECT STREAM nope FROM orders",
    1,
    31,
    "Unknown field 'nope' in the value of topic 'orders' at line 1, column 31. Expected one of: customer, id, status, total.",
  ],
  [
    "INSERT INTO dst SELECT STREAM id, SUM(totl) FROM orders GROUP BY id",
    1,
    39,
    "Unknown field 'totl' in the value of topic 'orders' at line 1, column 39. Expected one of: customer, id, status, total.",
  ],
  [
    "INSERT INTO dst SELECT STREAM COUNT(*) FROM orders GROUP BY customer.zip",
    1,
    70,
    "Unknown field 'customer.zip' in the value of topic 'orders' at line 1, column 70. Expected one of: customer.city, customer.name.",
  ],
  [
    "INSERT INTO dst SELECT * FROM orders WHERE stat = 'x'",
    1,
    44,
    "Unknown field 'stat' in the value of topic 'orders' at line 1, column 44. Expected one of: customer, id, status, total.",
  ],
  [
    "INSERT INTO dst SELECT STREAM UPPERCASE(status, 1) FROM orders",
    1,
    31,
    "Wrong number of arguments to UPPERCASE at line 1, column 31. Expected 1 argument, found 2.",
  ],
  [
    "INSERT INTO dst SELECT STREAM _ktype FROM src",
    1,
    31,
    "Misplaced _ktype at line 1, column 31. Expected _ktype = '<format>' only as a condition joined by AND at the top of WHERE.",
  ],
  [
    "INSERT INTO dst SELECT * FROM src WHERE _vtype = XML",
    1,
    50,
    `Invalid value 'XML' for _vtype at line 1, column 50. Expected one of: ${FORMATS}.`,
  ],

  // What only snapshots have
  [
    "INSERT INTO dst SELECT * FROM src WHERE _meta.offset >= LAST_OFFSET() - 10",
    1,
    57,
    "LAST_OFFSET() in a stream program at line 1, column 57. Expected conditions on each record: a program has no last offset.",
  ],
  [
    "INSERT INTO dst SELECT * FROM src WHERE a = 1 AND _sample = 2 AND _sampleWindow = 1000",
    1,
    51,
    "Sampling (_sample) in a stream program at line 1, column 51. Expected every record: a program does not sample.",
  ],

  // Aggregates and GROUP BY
  [
    "INSERT INTO dst SELECT STREAM COUNT(*) FROM orders",
    1,
    31,
    "Aggregate COUNT without GROUP BY at line 1, column 31. Expected GROUP BY with the fields to aggregate by.",
  ],
  [
    "INSERT INTO dst SELECT STREAM id, AVG(total) + 1 FROM orders",
    1,
    35,
    "Aggregate AVG without GROUP BY at line 1, column 35. Expected GROUP BY with the fields to aggregate by.",
  ],
  [
    "INSERT INTO dst SELECT STREAM id FROM orders GROUP BY TUMBLE(1, m), id",
    1,
    55,
    `A window without an aggregate at line 1, column 55. Expected ${AGGREGATES}.`,
  ],
  [
    "INSERT INTO dst SELECT STREAM id FROM orders WINDOW BY TUMBLE 1m GROUP BY id",
    1,
    56,
    `A window without an aggregate at line 1, column 56. Expected ${AGGREGATES}.`,
  ],
  [
    "INSERT INTO dst SELECT STREAM id FROM orders GROUP BY id",
    1,
    46,
    `GROUP BY without an aggregate in the projection at line 1, column 46. Expected ${AGGREGATES}.`,
  ],
  [
    "INSERT INTO dst SELECT STREAM status, COUNT(*) FROM orders GROUP BY id",
    1,
    31,
    "Field 'status' is not in GROUP BY at line 1, column 31. Expected it in GROUP BY, or inside an aggregate.",
  ],
  [
    "SET autocreate = true;\nINSERT INTO dst\nSELECT STREAM status, COUNT(*)\nFROM orders\nGROUP BY id",
    3,
    15,
    "Field 'status' is not in GROUP BY at line 3, column 15. Expected it in GROUP BY, or inside an aggregate.",
  ],
  [
    "INSERT INTO dst SELECT STREAM customer.name, COUNT(*) FROM orders GROUP BY customer",
    1,
    31,
    "Field 'customer.name' is not in GROUP BY at line 1, column 31. Expected it in GROUP BY, or inside an aggregate.",
  ],
  [
    "INSERT INTO dst SELECT STREAM CONCAT(UPPERCASE(status), id), COUNT(*) FROM orders GROUP BY UPPERCASE(status)",
    1,
    57,
    "Field 'id' is not in GROUP BY at line 1, column 57. Expected it in GROUP BY, or inside an aggregate.",
  ],
  [
    "INSERT INTO dst SELECT STREAM _meta.partition, COUNT(*) FROM orders GROUP BY id",
    1,
    31,
    "Field '_meta.partition' is not in GROUP BY at line 1, column 31. Expected it in GROUP BY, or inside an aggregate.",
  ],
  [
    "INSERT INTO dst SELECT STREAM status AS _key, COUNT(*) FROM orders GROUP BY id",
    1,
    31,
    "The key 'status' is not in GROUP BY at line 1, column 31. Expected it in GROUP BY, or inside an aggregate.",
  ],
  [
    "INSERT INTO dst SELECT STREAM SUM(COUNT(*)) FROM orders GROUP BY id",
    1,
    35,
    "Nested aggregate COUNT at line 1, column 35. Expected an expression without aggregates inside SUM.",
  ],
  [
    "INSERT INTO dst SELECT STREAM id, COUNT(*) FROM orders WHERE COUNT(*) > 1 GROUP BY id",
    1,
    62,
    "Aggregate COUNT in WHERE at line 1, column 62. Expected conditions on each record, without aggregates.",
  ],
  [
    "INSERT INTO dst SELECT STREAM id, COUNT(*) FROM orders GROUP BY id, SUM(total)",
    1,
    69,
    "Aggregate SUM in GROUP BY at line 1, column 69. Expected fields or expressions of each record.",
  ],
  [
    "INSERT INTO dst SELECT STREAM COUNT(*) AS n FROM orders GROUP BY n",
    1,
    66,
    "GROUP BY 'n' names an aggregate at line 1, column 66. Expected fields or expressions of each record.",
  ],
  [
    "INSERT INTO dst SELECT STREAM * FROM orders GROUP BY id",
    1,
    31,
    "'*' with GROUP BY at line 1, column 31. Expected the GROUP BY fields and aggregates.",
  ],
  [
    "INSERT INTO dst SELECT STREAM _meta.*, COUNT(*) FROM orders GROUP BY id",
    1,
    31,
    "_meta.* with GROUP BY at line 1, column 31. Expected the GROUP BY fields and aggregates.",
  ],
  [
    "INSERT INTO dst SELECT STREAM SUM(total, id) FROM orders GROUP BY id",
    1,
    31,
    "Wrong number of arguments to SUM at line 1, column 31. Expected 1 argument, found 2.",
  ],
  [
    "INSERT INTO dst SELECT STREAM COUNT() FROM orders GROUP BY id",
    1,
    31,
    "Wrong number of arguments to COUNT at line 1, column 31. Expected '*' or 1 argument, found 0.",
  ],
  [
    "INSERT INTO dst SELECT STREAM SUM(*) FROM orders GROUP BY id",
    1,
    35,
    "Unexpected '*' at line 1, column 35. Expected one of: ')', an expression.",
  ],
  [
    "INSERT INTO dst SELECT STREAM id AS _key, status AS _KEY FROM orders",
    1,
    53,
    "Duplicate _key at line 1, column 53. Expected one item AS _key.",
  ],

  // Windows
  [
    "INSERT INTO dst SELECT STREAM id, COUNT(*) FROM orders GROUP BY TUMBLE(0, m), id",
    1,
    72,
    "Invalid window length '0' at line 1, column 72. Expected a whole number from 1.",
  ],
  [
    "INSERT INTO dst SELECT STREAM id, COUNT(*) FROM orders GROUP BY TUMBLE(1.5, s), id",
    1,
    72,
    "Invalid window length '1.5' at line 1, column 72. Expected a whole number from 1.",
  ],
  [
    "INSERT INTO dst SELECT STREAM id, COUNT(*) FROM orders GROUP BY HOP(5, m, 0, s), id",
    1,
    75,
    "Invalid window length '0' at line 1, column 75. Expected a whole number from 1.",
  ],
  [
    "INSERT INTO dst SELECT STREAM id, COUNT(*) FROM orders GROUP BY HOP(5, m, 10, m), id",
    1,
    75,
    "HOP advance 10m is longer than its size 5m at line 1, column 75. Expected an advance no longer than the size.",
  ],
  [
    "INSERT INTO dst SELECT STREAM id, COUNT(*) FROM orders GROUP BY HOP(5, m, 2, m), id",
    1,
    75,
    "HOP size 5m is not a multiple of its advance 2m at line 1, column 75. Expected an advance that divides the size.",
  ],
  [
    "INSERT INTO dst SELECT STREAM id, COUNT(*) FROM orders WINDOW BY HOP 1m, 40s GROUP BY id",
    1,
    74,
    "HOP size 1m is not a multiple of its advance 40s at line 1, column 74. Expected an advance that divides the size.",
  ],
  [
    "INSERT INTO dst SELECT STREAM id, COUNT(*) FROM orders GROUP BY TUMBLE(1, weeks), id",
    1,
    75,
    "Unexpected 'weeks' at line 1, column 75. Expected a time unit (ms, s, m, h, d).",
  ],
  [
    "INSERT INTO dst SELECT STREAM id, COUNT(*) FROM orders GROUP BY TUMBLE(1 m), id",
    1,
    74,
    "Unexpected 'm' at line 1, column 74. Expected ','.",
  ],
  [
    "INSERT INTO dst SELECT STREAM id, COUNT(*) FROM orders WINDOW BY TUMBLE 1w GROUP BY id",
    1,
    74,
    "Unexpected 'w' at line 1, column 74. Expected a time unit (ms, s, m, h, d).",
  ],
  [
    "INSERT INTO dst SELECT STREAM id, COUNT(*) FROM orders WINDOW BY SLIDE 1m GROUP BY id",
    1,
    66,
    "Unexpected 'SLIDE' at line 1, column 66. Expected one of: HOP, TUMBLE.",
  ],
  [
    "INSERT INTO dst SELECT STREAM id, COUNT(*) FROM orders WINDOW BY TUMBLE 1m",
    1,
    75,
    "Unexpected end of input at line 1, column 75. Expected GROUP.",
  ],
  [
    "INSERT INTO dst SELECT STREAM id, COUNT(*) FROM orders WINDOW BY TUMBLE 1m GROUP BY TUMBLE(1, m), id",
    1,
    85,
    "A second window at line 1, column 85. Expected one window per program.",
  ],
  [
    "INSERT INTO dst SELECT STREAM id, COUNT(*) FROM orders GROUP BY TUMBLE(1, m), id, HOP(2, m, 1, m)",
    1,
    83,
    "A second window at line 1, column 83. Expected one window per program.",
  ],

  // Settings
  ["SET foo = 1; INSERT INTO dst SELECT * FROM src", 1, 5, `Unknown setting 'foo' at line 1, column 5. Expected one of: ${SETTINGS}.`],
  [
    "SET max.size = 1m; INSERT INTO dst SELECT * FROM src",
    1,
    5,
    `Unknown setting 'max.size' at line 1, column 5. Expected one of: ${SETTINGS}.`,
  ],
  [
    "SET partitions = 0; INSERT INTO dst SELECT * FROM src",
    1,
    18,
    "Invalid value '0' for partitions at line 1, column 18. Expected a whole number of partitions from 1.",
  ],
  [
    "SET replication = two; INSERT INTO dst SELECT * FROM src",
    1,
    19,
    "Invalid value 'two' for replication at line 1, column 19. Expected a whole replication factor from 1.",
  ],
  [
    "SET autocreate = yes; INSERT INTO nope SELECT * FROM src",
    1,
    18,
    "Invalid value 'yes' for autocreate at line 1, column 18. Expected true or false.",
  ],
  [
    "SET output.format = XML; INSERT INTO dst SELECT * FROM src",
    1,
    21,
    "Invalid value 'XML' for output.format at line 1, column 21. Expected one of: AVRO, JSON, PROTOBUF.",
  ],
  [
    "SET commit.interval = 5ms; INSERT INTO dst SELECT * FROM src",
    1,
    23,
    "Invalid value '5ms' for commit.interval at line 1, column 23. Expected a duration from 10ms to 60s, such as 100ms or 1s.",
  ],
  [
    "SET commit.interval = 2m; INSERT INTO dst SELECT * FROM src",
    1,
    23,
    "Invalid value '2m' for commit.interval at line 1, column 23. Expected a duration from 10ms to 60s, such as 100ms or 1s.",
  ],
  [
    "SET error.policy = maybe; INSERT INTO dst SELECT * FROM src",
    1,
    20,
    "Invalid value 'maybe' for error.policy at line 1, column 20. Expected one of: skip, stop (or continue, fail).",
  ],
  [
    "SET window.grace = soon; INSERT INTO dst SELECT * FROM src",
    1,
    20,
    "Invalid value 'soon' for window.grace at line 1, column 20. Expected a duration such as 0, 500ms, 10s or 1m.",
  ],
  [
    "SET auto.offset.reset = middle; INSERT INTO dst SELECT * FROM src",
    1,
    25,
    "Invalid value 'middle' for auto.offset.reset at line 1, column 25. Expected one of: earliest, latest.",
  ],
  [
    "SET key.format = XML; INSERT INTO dst SELECT * FROM src",
    1,
    18,
    `Invalid value 'XML' for key.format at line 1, column 18. Expected one of: ${FORMATS}.`,
  ],
  [
    "SET `_vtype` = XML; INSERT INTO dst SELECT * FROM src",
    1,
    16,
    `Invalid value 'XML' for _vtype at line 1, column 16. Expected one of: ${FORMATS}.`,
  ],
];

/** Out of scope: src cannot be read, totals cannot be written. */
const allowed: StreamOptions["topicAllowed"] = (topic, access) =>
  !(topic === "src" && access === "read") && !(topic === "totals" && access === "write");

const OUT_OF_SCOPE: Case[] = [
  ["INSERT INTO dst SELECT * FROM src", 1, 31, "Topic 'src' is outside your scope at line 1, column 31."],
  ["INSERT INTO totals SELECT * FROM orders", 1, 13, "Topic 'totals' is outside your scope at line 1, column 13."],
  // The same answer whether the topic exists or not.
  ["SET autocreate = true; INSERT INTO totals SELECT * FROM orders", 1, 36, "Topic 'totals' is outside your scope at line 1, column 36."],
];

describe("invalid stream programs", () => {
  test.each(INVALID)("%s", (sql, line, column, message) => {
    expect(validateStream(sql, streamCatalog)).toEqual({ isValid: false, line, column, message });
    let thrown: unknown;
    try {
      compileStream(sql, streamCatalog);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(SqlError);
    expect({ message: (thrown as SqlError).message, line: (thrown as SqlError).line, column: (thrown as SqlError).column }).toEqual({
      message,
      line,
      column,
    });
  });

  test.each(OUT_OF_SCOPE)("out of scope: %s", (sql, line, column, message) => {
    expect(validateStream(sql, streamCatalog, { topicAllowed: allowed })).toEqual({ isValid: false, line, column, message });
  });

  const WINDOW_BOUNDS: Case[] = [
    [
      "INSERT INTO dst SELECT STREAM id, COUNT(*) FROM orders GROUP BY HOP(1, d, 1, ms), id",
      1,
      75,
      "HOP size 1d with advance 1ms puts each record in 86400000 windows at line 1, column 75. Expected at most 100 windows per record: an advance of at least 864s.",
    ],
    [
      "INSERT INTO dst SELECT STREAM id, COUNT(*) FROM orders GROUP BY HOP(10, m, 1, ms), id",
      1,
      76,
      "HOP size 10m with advance 1ms puts each record in 600000 windows at line 1, column 76. Expected at most 100 windows per record: an advance of at least 6s.",
    ],
    [
      "INSERT INTO dst SELECT STREAM id, COUNT(*) FROM orders WINDOW BY HOP 1h, 30s GROUP BY id",
      1,
      74,
      "HOP size 1h with advance 30s puts each record in 120 windows at line 1, column 74. Expected at most 100 windows per record: an advance of at least 36s.",
    ],
  ];

  test.each(WINDOW_BOUNDS)(
    "22.3: a HOP putting a record in more than 100 windows is refused at its advance: %s",
    (sql, line, column, message) => {
      expect(validateStream(sql, streamCatalog)).toEqual({ isValid: false, line, column, message });
      expect(() => compileStream(sql, streamCatalog)).toThrow(SqlError);
    },
  );

  test("22.3: a HOP of exactly 100 windows per record is accepted", () => {
    const program = compileStream("INSERT INTO dst SELECT STREAM id, COUNT(*) FROM orders GROUP BY HOP(100, s, 1, s), id", streamCatalog);
    expect(program.aggregate?.window).toEqual({ kind: "hop", sizeMs: 100_000, advanceMs: 1000 });
  });

  test("22.3: a target that other processors copy back into the source is refused at the target", () => {
    // Processors of the cluster: totals -> orders (named 'back').
    const loop: StreamOptions["targetLoop"] = (target, source) =>
      target === "totals" && source === "orders" ? "'totals' -> 'orders' (processor 'back')" : null;
    expect(validateStream("INSERT INTO totals SELECT STREAM * FROM orders", streamCatalog, { targetLoop: loop })).toEqual({
      isValid: false,
      line: 1,
      column: 13,
      message:
        "Writing 'totals' closes a cycle of processors: 'totals' -> 'orders' (processor 'back') at line 1, column 13. Expected a target from which no processor leads back to 'orders'.",
    });
    expect(validateStream("INSERT INTO dst SELECT STREAM * FROM orders", streamCatalog, { targetLoop: loop }).isValid).toBe(true);
  });

  test("the access asked for: read of the source, write of the target", () => {
    const asked: string[] = [];
    validateStream("INSERT INTO dst SELECT * FROM src", streamCatalog, {
      topicAllowed: (topic, access) => {
        asked.push(`${access} ${topic}`);
        return true;
      },
    });
    expect(asked.sort()).toEqual(["read src", "write dst"]);
  });

  test("without a catalog, topics and fields are not checked", () => {
    expect(validateStream("INSERT INTO anything SELECT STREAM whatever FROM elsewhere").isValid).toBe(true);
  });

  test("the snapshot dialect is unchanged: a query has no COUNT(*)", () => {
    expect(validateSql("SELECT COUNT(*) FROM t")).toEqual({
      isValid: false,
      line: 1,
      column: 14,
      message: "Unexpected '*' at line 1, column 14. Expected one of: ')', an expression.",
    });
  });
});

// ------------------------------------------------------------------- valid

type Data = Omit<StreamProgram, "filter" | "project" | "aggregate"> & {
  window: StreamProgram["aggregate"] extends infer A ? (A extends { window: infer W } ? W : never) | "none" : never;
  groupedByRecordKey: boolean | "none";
};

function data(program: StreamProgram): Data {
  const { filter: _f, project: _p, aggregate, ...rest } = program;
  return { ...rest, window: aggregate === null ? "none" : aggregate.window, groupedByRecordKey: aggregate?.groupedByRecordKey ?? "none" };
}

const DEFAULTS: StreamSettings = {
  autoCreate: false,
  autoOffsetReset: "earliest",
  outputFormat: "JSON",
  errorPolicy: "skip",
  graceMs: 0,
  commitIntervalMs: 100,
};

type ValidCase = [sql: string, expected: Partial<Data>];

const VALID: ValidCase[] = [
  // The real client's program
  [
    CLIENT_SQL,
    {
      source: "source",
      target: "target",
      settings: { ...DEFAULTS, autoCreate: true, keyFormat: "AVRO", valueFormat: "AVRO" },
      operations: [],
      columns: null,
      window: "none",
    },
  ],
  // STREAM is optional; keywords in any case; backquoted topics; a trailing ';'
  ["INSERT INTO dst SELECT * FROM src", { source: "src", target: "dst", settings: DEFAULTS, operations: [], columns: null }],
  ["insert into dst select stream * from src;", { source: "src", target: "dst" }],
  ["SET autocreate = true; INSERT INTO `new-topic` SELECT * FROM `my-src`", { source: "my-src", target: "new-topic" }],
  // `stream` as a field name when nothing can follow it as a projection
  ["INSERT INTO dst SELECT stream FROM src", { columns: ["stream"], operations: ["PROJECT"] }],
  ["INSERT INTO dst SELECT STREAM stream, a FROM src", { columns: ["stream", "a"] }],
  // Filter, projection, re-key
  ["INSERT INTO dst SELECT STREAM * FROM orders WHERE total > 10", { operations: ["FILTER"], columns: null }],
  [
    "INSERT INTO dst SELECT STREAM id AS _key, total, customer.name, UPPERCASE(status) FROM orders WHERE total > 10",
    { operations: ["FILTER", "PROJECT", "REKEY"], columns: ["total", "name", "UPPERCASE(status)"] },
  ],
  ["INSERT INTO dst SELECT STREAM _value.id AS _key FROM orders", { operations: ["REKEY"], columns: null }],
  [
    "INSERT INTO dst SELECT STREAM _meta.*, _key FROM src",
    { columns: ["partition", "offset", "timestamp", "__keysize", "__valuesize", "_key"] },
  ],
  ["INSERT INTO dst SELECT STREAM a, a, b AS a FROM src", { columns: ["a", "a_2", "a_3"] }],
  // A quoted `_key` alias is an ordinary field name
  ["INSERT INTO dst SELECT STREAM id AS `_key` FROM orders", { operations: ["PROJECT"], columns: ["_key"] }],
  // Settings
  [
    "SET AutoCreate = 'TRUE'; SET partitions = 6; SET replication = 3; SET `auto.offset.reset` = latest; SET output.format = avro; " +
      "SET error.policy = fail; SET window.grace = 10s; SET commit.interval = 1s; SET _ktype = STRING; SET value.format = 'json'; " +
      "INSERT INTO dst SELECT * FROM src",
    {
      settings: {
        autoCreate: true,
        partitions: 6,
        replication: 3,
        autoOffsetReset: "latest",
        outputFormat: "AVRO",
        errorPolicy: "stop",
        graceMs: 10_000,
        commitIntervalMs: 1000,
        keyFormat: "STRING",
        valueFormat: "JSON",
      },
    },
  ],
  ["SET error.policy = continue; SET window.grace = 0; INSERT INTO dst SELECT * FROM src", { settings: { ...DEFAULTS } }],
  [
    "SET error.policy = STOP; SET window.grace = 500ms; SET commit.interval = 10ms; INSERT INTO dst SELECT * FROM src",
    {
      settings: { ...DEFAULTS, errorPolicy: "stop", graceMs: 500, commitIntervalMs: 10 },
    },
  ],
  [
    "SET commit.interval = 60s; SET window.grace = 1m; INSERT INTO dst SELECT * FROM src",
    { settings: { ...DEFAULTS, graceMs: 60_000, commitIntervalMs: 60_000 } },
  ],
  // SET overrides the WHERE decoder choice; the rest of WHERE stays the filter
  [
    "SET _vtype = STRING; INSERT INTO dst SELECT * FROM src WHERE _vtype = 'JSON' AND _ktype = string AND a = 1",
    { settings: { ...DEFAULTS, keyFormat: "STRING", valueFormat: "STRING" }, operations: ["FILTER"] },
  ],
  // Aggregates as tables
  [
    "INSERT INTO totals SELECT STREAM _key, COUNT(*) AS n FROM orders GROUP BY _key",
    { operations: ["AGGREGATE"], columns: ["_key", "n"], window: null, groupedByRecordKey: true },
  ],
  [
    "INSERT INTO totals SELECT STREAM status, COUNT(*), SUM(total), AVG(total), MIN(total), MAX(total) FROM orders WHERE total > 0 GROUP BY status",
    {
      operations: ["FILTER", "REPARTITION", "AGGREGATE"],
      columns: ["status", "COUNT(*)", "SUM(total)", "AVG(total)", "MIN(total)", "MAX(total)"],
      window: null,
      groupedByRecordKey: false,
    },
  ],
  ["INSERT INTO totals SELECT STREAM _key.id, COUNT(*) FROM orders GROUP BY _key.id", { groupedByRecordKey: false }],
  // A GROUP BY alias of the projection; an expression over the group fields and aggregates
  [
    "INSERT INTO totals SELECT STREAM UPPERCASE(status) AS s, SUM(total) / COUNT(*) AS mean FROM orders GROUP BY s",
    { columns: ["s", "mean"] },
  ],
  [
    "INSERT INTO totals SELECT STREAM CONCAT(UPPERCASE(status), '!') AS shout, COUNT(*) AS n FROM orders GROUP BY UPPERCASE((status))",
    { columns: ["shout", "n"] },
  ],
  // Windows, in every form and unit
  [
    "INSERT INTO totals SELECT STREAM customer.name, COUNT(*) FROM orders GROUP BY TUMBLE(1, m), customer.name",
    {
      operations: ["REPARTITION", "AGGREGATE TUMBLE 1m"],
      columns: ["name", "COUNT(*)", "windowStart", "windowEnd"],
      window: { kind: "tumble", sizeMs: 60_000, advanceMs: 60_000 },
    },
  ],
  [
    "INSERT INTO totals SELECT STREAM COUNT(*) FROM orders GROUP BY TUMBLE(30, s)",
    { window: { kind: "tumble", sizeMs: 30_000, advanceMs: 30_000 } },
  ],
  [
    "INSERT INTO totals SELECT STREAM _key, COUNT(*) FROM orders GROUP BY HOP(5, m, 1, m), _key",
    {
      operations: ["AGGREGATE HOP 5m ADVANCE 1m"],
      window: { kind: "hop", sizeMs: 300_000, advanceMs: 60_000 },
      groupedByRecordKey: true,
    },
  ],
  [
    "INSERT INTO totals SELECT STREAM _key, COUNT(*) FROM orders GROUP BY _key, HOP(1, HOUR, 15, Minutes)",
    {
      window: { kind: "hop", sizeMs: 3_600_000, advanceMs: 900_000 },
    },
  ],
  [
    "INSERT INTO totals SELECT STREAM _key, COUNT(*) FROM orders WINDOW BY TUMBLE 1m GROUP BY _key",
    {
      window: { kind: "tumble", sizeMs: 60_000, advanceMs: 60_000 },
    },
  ],
  [
    "INSERT INTO totals SELECT STREAM _key, COUNT(*) FROM orders window by hop 5m, 1m group by _key",
    {
      window: { kind: "hop", sizeMs: 300_000, advanceMs: 60_000 },
    },
  ],
  [
    "INSERT INTO totals SELECT STREAM _key, COUNT(*) FROM orders WINDOW BY TUMBLE 250 ms GROUP BY _key",
    {
      window: { kind: "tumble", sizeMs: 250, advanceMs: 250 },
      operations: ["AGGREGATE TUMBLE 250ms"],
    },
  ],
  [
    "INSERT INTO totals SELECT STREAM _key, COUNT(*) FROM orders WINDOW BY TUMBLE 2d GROUP BY _key",
    { window: { kind: "tumble", sizeMs: 172_800_000, advanceMs: 172_800_000 } },
  ],
  [
    "INSERT INTO totals SELECT STREAM _key, COUNT(*) FROM orders GROUP BY TUMBLE(3, SECONDS), _key",
    { window: { kind: "tumble", sizeMs: 3000, advanceMs: 3000 } },
  ],
  [
    "INSERT INTO totals SELECT STREAM _key, COUNT(*) FROM orders GROUP BY TUMBLE(1, day), _key",
    { window: { kind: "tumble", sizeMs: 86_400_000, advanceMs: 86_400_000 } },
  ],
  [
    "INSERT INTO totals SELECT STREAM _key, COUNT(*) FROM orders GROUP BY TUMBLE(100, millisecond), _key",
    { window: { kind: "tumble", sizeMs: 100, advanceMs: 100 } },
  ],
  // A HOP whose advance is its size is a tumble in effect, and accepted
  [
    "INSERT INTO totals SELECT STREAM _key, COUNT(*) FROM orders GROUP BY HOP(1, m, 60, s), _key",
    { window: { kind: "hop", sizeMs: 60_000, advanceMs: 60_000 } },
  ],
  // The projection may name windowStart itself; windowEnd is still added
  [
    "INSERT INTO totals SELECT STREAM _key, COUNT(*) AS windowStart FROM orders GROUP BY TUMBLE(1, m), _key",
    { columns: ["_key", "windowStart", "windowEnd"] },
  ],
  // Aggregates without group fields: one group
  [
    "INSERT INTO totals SELECT STREAM COUNT(*) AS n FROM orders GROUP BY TUMBLE(1, m)",
    { columns: ["n", "windowStart", "windowEnd"], groupedByRecordKey: false },
  ],
];

describe("valid stream programs", () => {
  test.each(VALID)("%s", (sql, expected) => {
    expect(validateStream(sql, streamCatalog)).toEqual({ isValid: true, line: 0, column: 0, message: null });
    const program = data(compileStream(sql, streamCatalog));
    expect(program.sql).toBe(sql);
    for (const [name, value] of Object.entries(expected)) expect([name, program[name as keyof Data]]).toEqual([name, value]);
  });
});

describe("isStreamStatement", () => {
  test.each([
    [CLIENT_SQL, true],
    ["INSERT INTO t SELECT * FROM s", true],
    ["SET a = 1; SET b = 'x'; insert into `t-1` select stream x from s where", true],
    ["INSERT INTO t (a) VALUES (1)", false],
    ["INSERT INTO t SELEC * FROM s", false],
    ["SELECT * FROM t", false],
    ["INSERT INTO select SELECT * FROM s", false],
    ["INSERT 'unterminated", false],
    ["", false],
  ] as [string, boolean][])("%s -> %p", (sql, expected) => {
    expect(isStreamStatement(sql)).toBe(expected);
  });
});

describe("23: a compacted target needs a key on every record", () => {
  /** `orders` without known fields; `latest` exists compacted, `plain` exists with delete; `fresh` does not exist. */
  const catalog: Catalog = { topicExists: (name) => ["orders", "latest", "plain"].includes(name) };
  const compacted: StreamOptions["topicCompacted"] = (topic) => (topic === "latest" ? true : topic === "plain" ? false : undefined);
  /** The UI's "Table of totals per city" as it was written before it gave its output a key. */
  const TOTALS_AS_WRITTEN =
    "SET autocreate = true;\nINSERT INTO totals_by_city\nSELECT STREAM city, COUNT(*) AS orders, SUM(amount) AS total\nFROM orders\nGROUP BY city";

  const REFUSED: Case[] = [
    [
      TOTALS_AS_WRITTEN,
      5,
      10,
      "The key 'city' may be null, and topic 'totals_by_city', created compacted for a table, takes no record without a key at line 5, column 10. Expected a key that is never null, such as COALESCE(city, 'none') AS _key in the projection.",
    ],
    [
      "INSERT INTO latest SELECT STREAM city, COUNT(*) AS n FROM orders GROUP BY TUMBLE(1, m), city",
      1,
      89,
      "The key 'city' may be null, and the compacted topic 'latest' takes no record without a key at line 1, column 89. Expected a key that is never null, such as COALESCE(city, 'none') AS _key in the projection.",
    ],
    [
      "INSERT INTO latest SELECT STREAM COUNT(*) AS n FROM orders GROUP BY TUMBLE(1, m)",
      1,
      60,
      "A GROUP BY without fields writes its results without a key, and the compacted topic 'latest' takes no record without a key at line 1, column 60. Expected a GROUP BY field, or an item AS _key that is never null.",
    ],
    [
      "INSERT INTO latest SELECT STREAM customer.id AS _key, amount FROM orders",
      1,
      34,
      "The key 'customer.id' may be null, and the compacted topic 'latest' takes no record without a key at line 1, column 34. Expected a key that is never null, such as COALESCE(customer.id, 'none') AS _key.",
    ],
    [
      "SET autocreate = true; INSERT INTO fresh SELECT STREAM UPPERCASE(city) AS _key, COUNT(*) AS n FROM orders GROUP BY city",
      1,
      56,
      "The key 'UPPERCASE(city)' may be null, and topic 'fresh', created compacted for a table, takes no record without a key at line 1, column 56. Expected a key that is never null, such as COALESCE(UPPERCASE(city), 'none') AS _key.",
    ],
  ];

  test.each(REFUSED)("refused at the key, with its position: %s", (sql, line, column, message) => {
    expect(validateStream(sql, catalog, { topicCompacted: compacted })).toEqual({ isValid: false, line, column, message });
    expect(() => compileStream(sql, catalog, { topicCompacted: compacted })).toThrow(message);
  });

  test.each([
    // The UI's example as it is now: a key for the records without a city too.
    "SET autocreate = true;\nINSERT INTO totals_by_city\nSELECT STREAM COALESCE(city, 'unknown') AS _key, city, COUNT(*) AS orders, SUM(amount) AS total\nFROM orders\nGROUP BY city",
    // Several GROUP BY fields key the output by their JSON array.
    "INSERT INTO latest SELECT STREAM city, status, COUNT(*) AS n FROM orders GROUP BY city, status",
    "INSERT INTO latest SELECT STREAM COALESCE(customer.id, _key, 'none') AS _key, amount FROM orders",
    "INSERT INTO latest SELECT STREAM _meta.partition AS _key, amount FROM orders",
    // Keeping the input's keys: records without one follow error.policy when they come.
    "INSERT INTO latest SELECT STREAM amount FROM orders",
    // Not compacted, or not known to be.
    "INSERT INTO plain SELECT STREAM city, COUNT(*) AS n FROM orders GROUP BY city",
    "SET autocreate = true; INSERT INTO fresh SELECT STREAM city, COUNT(*) AS n FROM orders GROUP BY TUMBLE(1, m), city",
  ])("accepted: %s", (sql) => {
    expect(validateStream(sql, catalog, { topicCompacted: compacted })).toEqual({ isValid: true, line: 0, column: 0, message: null });
  });

  test("without a catalog nor the target's policy (a stored program compiled by a runner), nothing is refused", () => {
    expect(validateStream(TOTALS_AS_WRITTEN).isValid).toBe(true);
  });
});
