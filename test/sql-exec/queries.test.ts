/**
 * Projections, operators and functions through GET /api/sql/data against the real broker, in
 * both answer forms (event stream and one JSON object).
 */
import { beforeAll, describe, expect, test } from "bun:test";
import type { z } from "zod";
import { sqlApi } from "../../src/domains/sql/routes.ts";
import { json, parseStream, q, sqlFixture, stream } from "./helpers.ts";

const f = sqlFixture();
let topic: string;

const people = [
  { id: 0, name: "Ada", age: 36, city: { name: "London", zip: "N1" }, tags: ["math", "code"], score: 9.5 },
  { id: 1, name: "bob", age: 17, city: { name: "Paris", zip: "75001" }, tags: ["art"], score: -2.25 },
  { id: 2, name: "  Cleo ", age: 52, city: null, tags: [], score: 7 },
  { id: 3, name: "Dan", age: null, city: { name: "Berlin", zip: "10115" }, tags: ["code"], score: 0 },
  { id: 4, name: "Eve", age: 29, city: { name: "London", zip: "E2" }, tags: ["sec", "code", "math"], score: 3.75 },
];

beforeAll(async () => {
  topic = await f.topic("queries", 1);
  await f.produce(
    topic,
    people.map((p) => ({ key: `p${p.id}`, value: JSON.stringify(p), timestamp: 1_700_000_000_000 + p.id * 1000 })),
  );
});

const values = async (sql: string) => {
  const s = await stream(f.rt, sql.replaceAll("$T", `\`${topic}\``));
  expect(s.res.status).toBe(200);
  if (s.error) throw new Error(JSON.stringify(s.error));
  expect(s.lines.at(-1)!.type).toBe(2);
  return s.records.map((r: { value: string }) => JSON.parse(r.value));
};

describe("projections", () => {
  test("SELECT * returns each value as JSON text, key as text, with metadata", async () => {
    const s = await stream(f.rt, `SELECT * FROM \`${topic}\``);
    expect(s.res.headers.get("content-type")).toContain("text/event-stream");
    expect(s.records).toHaveLength(5);
    const r0 = s.records[0];
    expect(Object.keys(r0)).toEqual(["timestamp", "partition", "key", "offset", "topic", "value"]);
    expect(r0).toMatchObject({ timestamp: 1_700_000_000_000, partition: 0, key: "p0", offset: 0, topic });
    expect(typeof r0.value).toBe("string");
    expect(JSON.parse(r0.value)).toEqual(people[0]!);
    // framing: data:<digit><json>, no space, no other kinds of line
    for (const line of s.text.split("\n").filter(Boolean)) expect(line).toMatch(/^data:[0-4]/);
    expect(s.text).not.toContain("data: ");
  });

  test("fields, nested paths, array indexes, aliases and duplicate names", async () => {
    expect(await values("SELECT name, city.name, tags[0] AS first, _key FROM $T LIMIT 2")).toEqual([
      { name: "Ada", name_2: "London", first: "math", _key: "p0" },
      { name: "bob", name_2: "Paris", first: "art", _key: "p1" },
    ]);
  });

  test("_value, _meta.* and metadata fields", async () => {
    const [v] = await values("SELECT _value.id, _meta.* FROM $T WHERE id = 4");
    expect(v).toEqual({
      id: 4,
      partition: 0,
      offset: 4,
      timestamp: 1_700_000_004_000,
      __keysize: 2,
      __valuesize: JSON.stringify(people[4]).length,
    });
    expect(await values("SELECT _offset, _partition, _ts FROM $T LIMIT 1")).toEqual([
      { offset: 0, partition: 0, timestamp: 1_700_000_000_000 },
    ]);
  });

  test("a missing field is null", async () => {
    expect(await values("SELECT nope, city.nope FROM $T LIMIT 1")).toEqual([{ nope: null, nope_2: null }]);
  });
});

describe("operators", () => {
  const ids = async (where: string) => (await values(`SELECT id FROM $T WHERE ${where}`)).map((v: { id: number }) => v.id);
  test.each([
    ["age = 36", [0]],
    ["age != 36", [1, 2, 4]],
    ["age > 29", [0, 2]],
    ["age >= 29", [0, 2, 4]],
    ["age < 29", [1]],
    ["age <= 29", [1, 4]],
    ["age BETWEEN 20 AND 40", [0, 4]],
    ["age NOT BETWEEN 20 AND 40", [1, 2]],
    ["id IN (1, 3, 9)", [1, 3]],
    ["id NOT IN (1, 3)", [0, 2, 4]],
    ["age IS NULL", [3]],
    ["city IS NULL", [2]],
    ["age IS NOT NULL AND city IS NOT NULL", [0, 1, 4]],
    ["city.name = 'London' OR age < 18", [0, 1, 4]],
    ["NOT (city.name = 'London')", [1, 3]],
    ["name LIKE 'E%'", [4]],
    ["name LIKE '_ob'", [1]],
    ["name NOT LIKE '%a%'", [1, 2, 4]],
    ["age + 1 = 37", [0]],
    ["age * 2 - 4 > 70", [2]],
    ["age % 2 = 1", [1, 4]],
    ["score / 2 < 0", [1]],
    ["-score > 0", [1]],
    ["tags[1] = 'code'", [0, 4]],
    ["_key = 'p2'", [2]],
    ["_meta.offset > 2", [3, 4]],
    ["CAST(age AS STRING) = '17'", [1]],
  ] as const)("%s", async (where, expected) => {
    expect(await ids(where)).toEqual([...expected]);
  });
});

describe("functions", () => {
  test("string functions", async () => {
    const [v] = await values(
      "SELECT UPPERCASE(name) AS u, LOWERCASE(name) AS l, LEN(name) AS n, CONCAT(name, '-', city.zip) AS c, SUBSTRING(name, 1, 2) AS s, TRIM(name) AS t, REPLACE(name, 'A', 'E') AS r FROM $T WHERE id = 0",
    );
    expect(v).toMatchObject({ u: "ADA", l: "ada", n: 3, c: "Ada-N1", t: "Ada", r: "Eda" });
    expect(typeof v.s).toBe("string");
    const [w] = await values("SELECT TRIM(name) AS t FROM $T WHERE id = 2");
    expect(w).toEqual({ t: "Cleo" });
  });

  test("number functions, COALESCE, NOW, LAST_OFFSET", async () => {
    const [v] = await values(
      "SELECT ABS(score) AS a, CEIL(score) AS c, FLOOR(score) AS f, ROUND(score, 1) AS r, COALESCE(age, -1) AS g FROM $T WHERE id = 1",
    );
    expect(v).toEqual({ a: 2.25, c: -2, f: -3, r: expect.any(Number), g: 17 });
    const [d] = await values("SELECT COALESCE(age, -1) AS g, LAST_OFFSET() AS e, NOW() > 0 AS n FROM $T WHERE id = 3");
    expect(d).toEqual({ g: -1, e: 5, n: true });
  });

  test("functions in WHERE", async () => {
    expect(
      (await values("SELECT id FROM $T WHERE LEN(TRIM(name)) = 4 OR UPPERCASE(city.name) = 'PARIS'")).map((v: { id: number }) => v.id),
    ).toEqual([1, 2]);
  });
});

describe("answer forms", () => {
  test("without text/event-stream: one JSON object with messages and offsets", async () => {
    const { res, body } = await json(f.rt, `SELECT name FROM \`${topic}\` WHERE age > 20`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(body.messages.map((m: { value: string }) => JSON.parse(m.value))).toEqual([
      { name: "Ada" },
      { name: "  Cleo " },
      { name: "Eve" },
    ]);
    expect(body.messages[0]).toMatchObject({ partition: 0, offset: 0, key: "p0", topic });
    expect(body.offsets).toEqual([{ partition: 0, min: 0, max: 4 }]);
  });

  test("an invalid query in the JSON form is 400 with the validation object", async () => {
    const { res, body } = await json(f.rt, `SELECT * FRM \`${topic}\``);
    expect(res.status).toBe(400);
    expect(body).toMatchObject({ isValid: false, line: 1, column: 10, error_code: 400 });
    expect(body.message).toContain("line 1, column 10");
  });

  test("an invalid query in the stream form is one type 3 line, the last", async () => {
    const s = await stream(f.rt, "SELECT * FROM t WHERE\n  a = ");
    expect(s.res.status).toBe(200);
    expect(s.lines.filter((l) => l.type !== 0).map((l) => l.type)).toEqual([3]);
    expect(s.error).toMatchObject({ fromLine: 2, toLine: 2, fromColumn: expect.any(Number), toColumn: expect.any(Number) });
    expect(s.error.error).toContain("line 2");
  });

  test("an unknown topic is a type 3 error at the topic name", async () => {
    const s = await stream(f.rt, "SELECT * FROM no_such_topic_sqlx");
    expect(s.lines.filter((l) => l.type !== 0).map((l) => l.type)).toEqual([3]);
    expect(s.error).toMatchObject({ fromLine: 1, fromColumn: 15 });
    expect(s.error.error).toContain("no_such_topic_sqlx");
  });

  test("a missing sql parameter is 400", async () => {
    const res = await f.rt.request("/api/sql/data", { role: "read" });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toContain("sql");
  });

  test("both answer forms and the invalid-query object are what the route declares and documents", async () => {
    const declared = (status: number, type: string) =>
      (sqlApi.data.doc.responses[status] as { content: Record<string, { schema: z.ZodType }> }).content[type]!.schema;
    const answer = await json(f.rt, `SELECT name FROM \`${topic}\` LIMIT 2`);
    expect(declared(200, "application/json").parse(answer.body)).toEqual(answer.body);
    const invalid = await json(f.rt, `SELECT * FRM \`${topic}\``);
    expect(declared(400, "application/json").parse(invalid.body)).toEqual(invalid.body);

    const doc = (await (await f.rt.app.request("/api/openapi.json")).json()) as {
      paths: Record<
        string,
        Record<string, { responses: Record<string, { content: Record<string, { schema: { required?: string[] } }> }> }>
      >;
    };
    const responses = doc.paths["/api/sql/data"]!.get!.responses;
    expect(Object.keys(responses["200"]!.content).sort()).toEqual(["application/json", "text/event-stream"]);
    expect(responses["200"]!.content["application/json"]!.schema.required).toEqual(["messages", "offsets", "stopReason", "ranges"]);
    expect(responses["400"]!.content["application/json"]!.schema.required).toContain("isValid");
    expect(Object.keys(doc.paths["/api/sql/queries/{id}"]!)).toEqual(["delete"]);
  });

  test("parseStream helper sees every line", () => {
    expect(parseStream("data:0\n\ndata:2{}\n\n").map((l) => l.type)).toEqual([0, 2]);
    expect(q("a b")).toBe("/api/sql/data?sql=a+b");
  });
});

describe("validation", () => {
  test("valid: 200 with isValid true, 0, 0, null; open to nodata", async () => {
    const res = await f.rt.request(`/api/sql/validation?sql=${encodeURIComponent(`SELECT * FROM \`${topic}\``)}`, { role: "nodata" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ isValid: true, line: 0, column: 0, message: null });
  });

  test("invalid: still 200, with the position and message", async () => {
    const res = await f.rt.request(`/api/sql/validation?sql=${encodeURIComponent("SELECT *\nFROM t LIIT 5")}`, { role: "read" });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { message: string };
    expect(body).toMatchObject({ isValid: false, line: 2, column: 8 });
    expect(body.message).toContain("line 2, column 8");
  });

  test("24: editor=true adds what the web UI's editor needs: INSERT or not, the leading SETs, the problem's token length", async () => {
    const check = async (sql: string) =>
      (await (
        await f.rt.request(`/api/sql/validation?${new URLSearchParams({ sql, editor: "true" })}`, { role: "read" })
      ).json()) as Record<string, unknown>;
    expect(await check(`SET max.size = 1m; SELECT * FROM \`${topic}\``)).toEqual({
      isValid: true,
      line: 0,
      column: 0,
      message: null,
      editor: { insert: false, settings: [{ key: "max.size", value: { start: 15, end: 17 } }] },
    });
    expect(await check(`SELECT * FROM \`${topic}\`\nWHERE id = 1 LIIT 5`)).toMatchObject({
      isValid: false,
      line: 2,
      column: 14,
      editor: { insert: false, settings: [], problemLength: 4 },
    });
    expect(await check(`INSERT INTO \`${topic}\` (_key, id) VALUES ('k', 1)`)).toMatchObject({ editor: { insert: true, settings: [] } });
  });

  test("unknown topic is reported by validation", async () => {
    const res = await f.rt.request(`/api/sql/validation?sql=${encodeURIComponent("SELECT * FROM nope_sqlx_topic")}`, { role: "read" });
    expect(await res.json()).toMatchObject({ isValid: false, line: 1, column: 15 });
  });

  test("missing sql is 400; nodata may not read data", async () => {
    expect((await f.rt.request("/api/sql/validation", { role: "read" })).status).toBe(400);
    const res = await f.rt.request(q(`SELECT * FROM \`${topic}\``), { role: "nodata" });
    expect(res.status).toBe(403);
  });
});
