/**
 * INSERT statements against the real broker and the real schema registry: each encoder writes
 * the bytes its decoder (and Kafka's own serializers) read, the records are readable through
 * /api/sql/data, values that do not fit are refused at their position before anything is
 * written, and every insert leaves a TOPIC_DATA INSERT audit entry. Statements are sent as the
 * JDBC driver sends them: text/plain, `SET _ktype='STRING';` first.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import avro from "avsc";
import type { Role } from "../../src/config/schema.ts";
import { readTail } from "../../src/domains/topics/sample.ts";
import { encoderFor, parseAvroSchema, toAvro } from "../../src/engine/encoders.ts";
import type { RawRecord } from "../../src/kafka/index.ts";
import { registryEnv } from "../cluster/cluster.ts";
import { registerSchema } from "../helpers/registry.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { createReadyTopic } from "../helpers/topics.ts";

let rt: TestRuntime;
const created: string[] = [];

beforeAll(async () => {
  rt = await testRuntime({ sql: { schemaRegistry: { urls: registryEnv().urls } } });
});
afterAll(async () => {
  await rt.dispose({ topics: created });
});

const topic = (prefix: string) => createReadyTopic(rt.kafka.default(), { prefix: `ins-${prefix}`, track: created });

/** POST /api/jdbc/insert as the driver sends it: text/plain, ISO-8859-1 bytes, no Accept. */
function insert(sql: string, role: Role = "write"): Promise<Response> {
  return rt.request("/api/jdbc/insert", {
    method: "POST",
    role,
    headers: { "content-type": "text/plain" },
    body: Buffer.from(sql, "latin1"),
  });
}

/** Every record of the topic's partition 0, raw. */
async function raw(name: string): Promise<RawRecord[]> {
  const kafka = rt.kafka.default();
  const bounds = await kafka.offsets.bounds([name]);
  return readTail(
    kafka,
    name,
    bounds.map((b) => ({ partition: b.partition, begin: b.earliest, end: b.latest })),
    { perPartition: 10_000 },
  );
}

async function endOffset(name: string): Promise<number> {
  return (await rt.kafka.default().offsets.bounds([name])).reduce((n, b) => n + b.latest, 0);
}

/** The records of a query, through the JSON answer of /api/sql/data. */
async function select(sql: string): Promise<Array<{ key: string | null; value: string; partition: number; offset: number }>> {
  const res = await rt.request(`/api/sql/data?${new URLSearchParams({ sql })}`, { role: "read", headers: { accept: "application/json" } });
  const body = (await res.json()) as { messages: Array<{ key: string | null; value: string; partition: number; offset: number }> };
  expect(res.status).toBe(200);
  return body.messages;
}

/** The newest audit entries of the write user of type TOPIC_DATA. */
async function audits(): Promise<Array<{ type: string; change: string; userId: string; content: Record<string, string> }>> {
  const res = await rt.request("/api/audit?type=TOPIC_DATA&user=wanda&limit=20", { role: "admin" });
  expect(res.status).toBe(200);
  return (await res.json()) as Array<{ type: string; change: string; userId: string; content: Record<string, string> }>;
}

const utf8 = (b: Uint8Array | null) => (b === null ? null : Buffer.from(b).toString("utf8"));

describe("STRING", () => {
  test("key and value as UTF-8 text, several rows, readable through /api/sql/data", async () => {
    const t = await topic("string");
    const res = await insert(
      `SET _ktype='STRING'; SET _vtype=STRING;\nINSERT INTO \`${t}\` (_key, _value) VALUES ('k1', 'hello'), ('k2', 'it''s'), (NULL, 'no key')`,
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ topic: t, records: 3, keyType: "STRING", valueType: "STRING", offsets: expect.any(Array) });
    const records = await raw(t);
    expect(records.map((r) => [utf8(r.key), utf8(r.value)])).toEqual([
      ["k1", "hello"],
      ["k2", "it's"],
      [null, "no key"],
    ]);
    // The answer's value is the JSON text of the decoded value.
    const rows = await select(`SELECT * FROM \`${t}\``);
    expect(rows.map((r) => [r.key, JSON.parse(r.value)])).toEqual([
      ["k1", "hello"],
      ["k2", "it's"],
      [null, "no key"],
    ]);
  });

  test("ISO-8859-1 bytes, as the JDBC driver sends them, are read as such", async () => {
    const t = await topic("latin1");
    const res = await insert(`SET _ktype='STRING'; SET _vtype='STRING'; INSERT INTO \`${t}\` (_key, _value) VALUES ('clé', 'café')`);
    expect(res.status).toBe(200);
    const [r] = await raw(t);
    expect([utf8(r!.key), utf8(r!.value)]).toEqual(["clé", "café"]);
  });

  test("a field of a STRING value is refused at the column", async () => {
    const t = await topic("string-field");
    const sql = `SET _vtype='STRING'; INSERT INTO \`${t}\` (name) VALUES ('x')`;
    const column = sql.indexOf("name") + 1;
    const res = await insert(sql);
    expect(res.status).toBe(400);
    const err = await errorOf(res);
    expect(err.message).toBe(
      `Column 'name' sets a field, but the value of topic '${t}' is written as STRING at line 1, column ${column}. Expected _value for the whole value.`,
    );
    expect(err.details).toMatchObject({ line: 1, column });
  });
});

describe("JSON", () => {
  test("the default for a topic without metadata or subject: nested objects from dotted and backquoted paths", async () => {
    const t = await topic("json");
    const sql = `SET _ktype='STRING';INSERT INTO \`${t}\` (_key, id, address.street, \`imdb\`.\`url\`, address.zip, big, ok, none, ratio)
      VALUES ('m1', 1, 'Main St', 'https://www.imdb.com/title/tt0372784/', 'N1', 9223372036854775807, true, NULL, -0.5)`;
    const res = await insert(sql);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ topic: t, records: 1, keyType: "STRING", valueType: "JSON", offsets: expect.any(Array) });
    const [r] = await raw(t);
    expect(utf8(r!.key)).toBe("m1");
    expect(utf8(r!.value)).toBe(
      '{"id":1,"address":{"street":"Main St","zip":"N1"},"imdb":{"url":"https://www.imdb.com/title/tt0372784/"},"big":9223372036854775807,"ok":true,"none":null,"ratio":-0.5}',
    );
    const [row] = await select(`SELECT * FROM \`${t}\``);
    expect(JSON.parse(row!.value)).toMatchObject({
      id: 1,
      address: { street: "Main St" },
      imdb: { url: "https://www.imdb.com/title/tt0372784/" },
    });
  });

  test("the topic metadata's types are used when no SET names one", async () => {
    const t = await topic("json-meta");
    expect((await rt.request(`/api/metadata/topics/${t}?keyType=INT&valueType=JSON`, { method: "POST", role: "write" })).status).toBe(200);
    const res = await insert(`INSERT INTO \`${t}\` (_key, a) VALUES (7, 'x')`);
    expect(await res.json()).toEqual({ topic: t, records: 1, keyType: "INT", valueType: "JSON", offsets: expect.any(Array) });
    const [r] = await raw(t);
    expect(Buffer.from(r!.key!).readInt32BE()).toBe(7);
  });
});

describe("numeric types, big-endian as Kafka's serializers write them", () => {
  test("INT key, LONG value with all 64 bits", async () => {
    const t = await topic("long");
    const res = await insert(
      `SET _ktype='INT'; SET _vtype='LONG'; INSERT INTO \`${t}\` (_key, _value) VALUES (42, 9223372036854775807), (-1, -9223372036854775808), (0, '17')`,
    );
    expect(res.status).toBe(200);
    const records = await raw(t);
    expect(records.map((r) => [Buffer.from(r.key!).readInt32BE(), Buffer.from(r.value!).readBigInt64BE()])).toEqual([
      [42, 9223372036854775807n],
      [-1, -9223372036854775808n],
      [0, 17n],
    ]);
    expect(records.every((r) => r.key!.byteLength === 4 && r.value!.byteLength === 8)).toBe(true);
    const rows = await select(`SET key.format='INT'; SET value.format='LONG'; SELECT * FROM \`${t}\``);
    expect(rows.map((r) => r.key)).toEqual(["42", "-1", "0"]);
  });

  test("DOUBLE key, FLOAT value", async () => {
    const t = await topic("double");
    const res = await insert(`SET _ktype='DOUBLE'; SET _vtype='FLOAT'; INSERT INTO \`${t}\` (_key, _value) VALUES (0.1, 1.5), (-2e300, 3)`);
    expect(res.status).toBe(200);
    const records = await raw(t);
    expect(records.map((r) => [Buffer.from(r.key!).readDoubleBE(), Buffer.from(r.value!).readFloatBE()])).toEqual([
      [0.1, 1.5],
      [-2e300, 3],
    ]);
  });

  test("BYTES are written from base64", async () => {
    const t = await topic("bytes");
    const res = await insert(`SET _ktype='STRING'; SET _vtype='BYTES'; INSERT INTO \`${t}\` (_key, _value) VALUES ('b', 'AAEC/w==')`);
    expect(res.status).toBe(200);
    const [r] = await raw(t);
    expect([...r!.value!]).toEqual([0, 1, 2, 255]);
  });

  test.each([
    [
      "SET _ktype='INT'; INSERT INTO `T` (_key, a) VALUES (2147483648, 1)",
      "2147483648",
      "Row 1: _key: 2147483648 is out of range for INT (-2147483648 to 2147483647)",
    ],
    ["SET _vtype='LONG'; INSERT INTO `T` (_value) VALUES ('12x')", "'12x'", 'Row 1: _value: string "12x" is not a whole number (LONG)'],
    ["SET _vtype='DOUBLE'; INSERT INTO `T` (_value) VALUES (true)", "true", "Row 1: _value: boolean true is not a number (DOUBLE)"],
    ["SET _vtype='FLOAT'; INSERT INTO `T` (_value) VALUES (1e39)", "1e39", "Row 1: _value: 1e+39 is out of range for FLOAT"],
    [
      "SET _vtype='BYTES'; INSERT INTO `T` (_value) VALUES ('not base64!')",
      "'not base64!'",
      'Row 1: _value: string "not base64!" is not base64 text (BYTES are written as base64)',
    ],
  ])("%p is refused at its value", async (template, at, what) => {
    const t = await topic("num-bad");
    const sql = template.replace("`T`", `\`${t}\``);
    const col = sql.lastIndexOf(at) + 1;
    const res = await insert(sql);
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toBe(`${what} at line 1, column ${col}.`);
    expect(await endOffset(t)).toBe(0);
    // The validation route says the same.
    const v = await rt.request(`/api/sql/validation?${new URLSearchParams({ sql })}`, { role: "read" });
    expect(await v.json()).toEqual({ isValid: false, line: 1, column: col, message: `${what} at line 1, column ${col}.` });
  });
});

describe("AVRO through the schema registry", () => {
  const schema = {
    type: "record",
    name: "Movie",
    namespace: "loupe.insert",
    fields: [
      { name: "name", type: "string" },
      { name: "year", type: "int" },
      { name: "rating", type: "double" },
      { name: "genre", type: { type: "enum", name: "Genre", symbols: ["ACTION", "DRAMA"] }, default: "DRAMA" },
      { name: "director", type: ["null", "string"], default: null },
      {
        name: "imdb",
        type: {
          type: "record",
          name: "Imdb",
          fields: [
            { name: "url", type: "string" },
            { name: "ranking", type: "long" },
          ],
        },
      },
    ],
  };
  const type = avro.Type.forSchema(schema as avro.Schema);
  let t: string;
  let id: number;

  beforeAll(async () => {
    t = await topic("avro");
    id = await registerSchema(`${t}-value`, schema);
  });

  test("the topic's latest value schema: magic byte, schema id, Avro binary; defaults filled", async () => {
    const res = await insert(
      `SET _ktype='STRING'; INSERT INTO \`${t}\` (_key, name, \`year\`, rating, \`imdb\`.\`url\`, imdb.ranking) VALUES ('b1', 'Batman Begins', 2005, 8.3, 'https://www.imdb.com/title/tt0372784/', 211), ('b2', 'Heat', '1995', 8, 'u', 9)`,
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ topic: t, records: 2, keyType: "STRING", valueType: "AVRO", offsets: expect.any(Array) });
    const records = await raw(t);
    for (const r of records) {
      const b = Buffer.from(r.value!);
      expect(b[0]).toBe(0);
      expect(b.readInt32BE(1)).toBe(id);
    }
    expect(records.map((r) => ({ ...type.fromBuffer(Buffer.from(r.value!).subarray(5)) }))).toEqual([
      {
        name: "Batman Begins",
        year: 2005,
        rating: 8.3,
        genre: "DRAMA",
        director: null,
        imdb: expect.objectContaining({ url: "https://www.imdb.com/title/tt0372784/", ranking: 211 }),
      },
      { name: "Heat", year: 1995, rating: 8, genre: "DRAMA", director: null, imdb: expect.objectContaining({ url: "u", ranking: 9 }) },
    ]);
    const rows = await select(`SELECT * FROM \`${t}\``);
    expect(rows.map((r) => r.key)).toEqual(["b1", "b2"]);
    expect(JSON.parse(rows[0]!.value)).toMatchObject({ name: "Batman Begins", year: 2005, imdb: { ranking: 211 } });
  });

  test.each([
    [
      "(_key, name, `year`, rating, imdb.url, imdb.ranking) VALUES ('k', 1, 2005, 8.3, 'u', 1)",
      " 1,",
      "Row 1: name: number 1 does not fit the schema's string",
    ],
    [
      "(_key, name, `year`, rating, imdb.url, imdb.ranking) VALUES ('k', 'n', 2005.5, 8.3, 'u', 1)",
      "2005.5",
      "Row 1: year: number 2005.5 does not fit the schema's int",
    ],
    [
      "(_key, name, `year`, rating, genre, imdb.url, imdb.ranking) VALUES ('k', 'n', 1, 2, 'COMEDY', 'u', 1)",
      "'COMEDY'",
      'Row 1: genre: string "COMEDY" does not fit the schema\'s enum loupe.insert.Genre (one of ACTION, DRAMA)',
    ],
    // A field never set is reported at its row.
    [
      "(_key, name, `year`, rating, imdb.url) VALUES ('k', 'n', 1, 2, 'u')",
      "'k'",
      "Row 1: imdb.ranking: not set, and the schema gives it no default",
    ],
    [
      "(_key, `year`, rating, imdb.url, imdb.ranking) VALUES ('k', 1, 2, 'u', 1)",
      "'k'",
      "Row 1: name: not set, and the schema gives it no default",
    ],
    [
      "(_key, name, `year`, rating, imdb.url, imdb.ranking, extra) VALUES ('k', 'n', 1, 2, 'u', 1, 'x')",
      "'x'",
      "Row 1: extra: the schema's record loupe.insert.Movie has no field 'extra'",
    ],
  ])("a value that does not fit is refused, naming the field: %p", async (tail, at, what) => {
    const sql = `SET _ktype='STRING'; INSERT INTO \`${t}\` ${tail}`;
    const before = await endOffset(t);
    const res = await insert(sql);
    expect(res.status).toBe(400);
    const err = await errorOf(res);
    const column = sql.indexOf(at, sql.indexOf("VALUES")) + (at.startsWith(" ") ? 2 : 1);
    expect(err.message).toBe(`${what} at line 1, column ${column}.`);
    expect(err.details).toMatchObject({ line: 1, column });
    expect(await endOffset(t)).toBe(before);
  });

  test("regression: a bad value in the last row left the rows before it written", async () => {
    const before = await endOffset(t);
    const res = await insert(
      `SET _ktype='STRING'; INSERT INTO \`${t}\` (_key, name, \`year\`, rating, imdb.url, imdb.ranking) VALUES ('a', 'A', 1, 1, 'u', 1), ('b', 'B', 2, 2, 'u', 2), ('c', 'C', 'three', 3, 'u', 3)`,
    );
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toStartWith(`Row 3: year: string "three" does not fit the schema's int`);
    expect(await endOffset(t)).toBe(before);
  });

  test("AVRO without a subject for the key is refused before anything is written", async () => {
    const res = await insert(`SET _ktype='AVRO'; INSERT INTO \`${t}\` (_key, name) VALUES ('k', 'n')`);
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toBe(`Topic '${t}' has no Avro schema for its key: the schema registry has no subject '${t}-key'`);
  });
});

describe("Avro values: unions, maps, arrays", () => {
  const type = parseAvroSchema(
    JSON.stringify({
      type: "record",
      name: "R",
      fields: [
        { name: "a", type: ["int", "long"] },
        { name: "b", type: ["null", "string", "double"], default: null },
        { name: "m", type: { type: "map", values: "int" } },
        { name: "arr", type: { type: "array", items: "string" } },
      ],
    }),
  );

  test("an ambiguous union is written in its first branch that fits; the others as the value itself", () => {
    const encode = encoderFor("AVRO", { type, id: 7, text: "" });
    const bytes = encode({ a: 5, b: 2.5, m: { x: 1 }, arr: ["q"] }, "_value")!;
    expect([...bytes.subarray(0, 5)]).toEqual([0, 0, 0, 0, 7]);
    const back = type.fromBuffer(bytes.subarray(5)) as { a: { int: number }; b: number; m: object; arr: string[] };
    expect([back.a.int, back.b, back.m, back.arr]).toEqual([5, 2.5, { x: 1 }, ["q"]]);
  });

  test.each([
    [{ a: "x", m: {}, arr: [] }, `a: string "x" does not fit the schema's union of int, long`],
    [{ a: 1, m: { k: "no" }, arr: [] }, `m.k: string "no" does not fit the schema's int`],
    [{ a: 1, m: {}, arr: ["s", 2] }, "arr[1]: number 2 does not fit the schema's string"],
    [{ a: 1, b: true, m: {}, arr: [] }, "b: boolean true does not fit the schema's union of null, string, double"],
  ])("a value that does not fit names its path: %#", (value, message) => {
    expect(() => toAvro(type, value, "_value")).toThrow(message);
  });
});

describe("where INSERT is run, and who may run it", () => {
  test("the validation route accepts INSERT and reports errors at their positions", async () => {
    const t = await topic("valid");
    const ok = await rt.request(
      `/api/sql/validation?${new URLSearchParams({ sql: `SET _ktype='STRING'; INSERT INTO \`${t}\` (_key, a) VALUES ('k', 1)` })}`,
      {
        role: "nodata",
      },
    );
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ isValid: true, line: 0, column: 0, message: null });
    const bad = await rt.request(`/api/sql/validation?${new URLSearchParams({ sql: `INSERT INTO \`${t}\` (a, b)\nVALUES (1, 2), (3)` })}`, {
      role: "nodata",
    });
    expect(await bad.json()).toEqual({
      isValid: false,
      line: 2,
      column: 16,
      message: "Row 2 has 1 value for 2 columns at line 2, column 16. Expected 2 values, one per column.",
    });
    const unknown = await rt.request(
      `/api/sql/validation?${new URLSearchParams({ sql: "INSERT INTO `no-such-topic-x` (a) VALUES (1)" })}`,
      { role: "nodata" },
    );
    expect(await unknown.json()).toEqual({
      isValid: false,
      line: 1,
      column: 13,
      message: "Unknown topic 'no-such-topic-x' at line 1, column 13.",
    });
  });

  test("/api/sql/data does not run an INSERT: 400 pointing at the insert route, nothing written", async () => {
    const t = await topic("data");
    const res = await rt.request(
      `/api/sql/data?${new URLSearchParams({ sql: `SET _ktype='STRING'; INSERT INTO \`${t}\` (a) VALUES (1)` })}`,
      {
        role: "write",
        headers: { accept: "application/json" },
      },
    );
    expect(res.status).toBe(400);
    const body = (await res.json()) as { isValid: boolean; line: number; column: number; message: string };
    expect(body).toMatchObject({ isValid: false, line: 1, column: 22 });
    expect(body.message).toBe(
      "INSERT is not run as a query at line 1, column 22. Expected a SELECT here; INSERT statements are run by POST /api/jdbc/insert.",
    );
    expect(await endOffset(t)).toBe(0);
  });

  test("read and nodata roles may not insert; the denial is audited", async () => {
    const t = await topic("roles");
    for (const role of ["read", "nodata"] as const) {
      const res = await insert(`INSERT INTO \`${t}\` (a) VALUES (1)`, role);
      expect(res.status).toBe(403);
      const who = role === "read" ? "reed" : "nora";
      const [entry] = (await (await rt.request(`/api/audit?user=${who}&limit=1`, { role: "admin" })).json()) as Array<{
        type: string;
        change: string;
        content: Record<string, string>;
      }>;
      expect(entry).toMatchObject({ type: "ACCESS", change: "DENY", content: { path: "/api/jdbc/insert", outcome: "FAILURE" } });
    }
    expect(await endOffset(t)).toBe(0);
  });

  test("each insert is audited as TOPIC_DATA INSERT: its topic and count on success, its reason on failure", async () => {
    const t = await topic("audit");
    expect((await insert(`SET _ktype='STRING'; INSERT INTO \`${t}\` (_key, a) VALUES ('k1', 1), ('k2', 2)`)).status).toBe(200);
    expect((await insert(`SET _ktype='STRING'; INSERT INTO \`${t}\` (_key, a, a) VALUES ('k1', 1, 2)`)).status).toBe(400);
    const [failed, done] = await audits();
    expect(done).toMatchObject({
      type: "TOPIC_DATA",
      change: "INSERT",
      userId: "wanda",
      content: { topic: t, records: "2", keyType: "STRING", valueType: "JSON", outcome: "SUCCESS" },
    });
    expect(failed).toMatchObject({ type: "TOPIC_DATA", change: "INSERT", content: { outcome: "FAILURE" } });
    expect(failed!.content.reason).toStartWith("VALIDATION_FAILED: Duplicate column 'a'");
    expect(failed!.content.sql).toContain(t);
    for (const e of [failed!, done!]) for (const v of Object.values(e.content)) expect(typeof v).toBe("string");
  });

  test("1,000 rows of 600 bytes each: all written in statement order (more than one Produce request of 512 KiB); 1,001 rows are refused", async () => {
    const t = await topic("many");
    const text = "x".repeat(600);
    const rows = (n: number) => Array.from({ length: n }, (_, i) => `('k${i}', ${i}, '${text}')`).join(",\n");
    const res = await insert(`SET _ktype='STRING'; INSERT INTO \`${t}\` (_key, i, text) VALUES ${rows(1000)}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ records: 1000 });
    const records = await raw(t);
    expect(records.map((r) => JSON.parse(utf8(r.value)!).i)).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    const tooMany = await insert(`SET _ktype='STRING'; INSERT INTO \`${t}\` (_key, i, text) VALUES ${rows(1001).replaceAll(text, "y")}`);
    expect(tooMany.status).toBe(400);
    expect((await errorOf(tooMany)).message).toBe(`Too many rows at line 1001, column 1. Expected at most 1000 rows in one INSERT.`);
    expect(await endOffset(t)).toBe(1000);
  });

  test("an empty body is a 400", async () => {
    const res = await insert("  ");
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toStartWith("The body holds no statement");
  });
});
