/**
 * The JDBC driver's HTTP calls, sent exactly as lenses-jdbc 2.1.0 sends them (CLIENTS.md §5.6):
 * the table listing, the prepared insert (GET with the statement URL-encoded by Java's
 * URLEncoder, then POST of `{key, value}` batches built as its RecordBuilder builds them), and
 * the plain insert (text/plain, ISO-8859-1, `SET _ktype='STRING';` first). Answers are decoded
 * as strictly as the driver's Kotlin classes: required strings must be strings. What was
 * inserted is then read back through /api/sql/data.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import avro from "avsc";
import { registryEnv, uniqueTopic } from "../cluster/cluster.ts";
import { registerSchema } from "../helpers/registry.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { createReadyTopic } from "../helpers/topics.ts";

let rt: TestRuntime;
let token: string;
const created: string[] = [];
const group = uniqueTopic("jdbc-group");

const movieSchema = {
  type: "record",
  name: "Movie",
  namespace: "loupe.jdbc",
  fields: [
    { name: "name", type: "string" },
    { name: "year", type: "int" },
    { name: "director", type: "string" },
    {
      name: "imdb",
      type: {
        type: "record",
        name: "Imdb",
        fields: [
          { name: "url", type: "string" },
          { name: "ranking", type: "int" },
          { name: "rating", type: "double" },
        ],
      },
    },
  ],
};
let movies: string;
let plain: string;

beforeAll(async () => {
  rt = await testRuntime({ sql: { schemaRegistry: { urls: registryEnv().urls } } });
  token = await rt.token("write");
  const kafka = rt.kafka.default();
  movies = await createReadyTopic(kafka, { prefix: "jdbc-movies", track: created });
  plain = await createReadyTopic(kafka, { prefix: "jdbc-plain", track: created });
  await registerSchema(`${movies}-value`, movieSchema);
  // Committed offsets make sure Kafka's own __consumer_offsets topic exists.
  await kafka.groups.alterOffsets(group, [{ topic: plain, partition: 0, offset: 0 }]);
});
afterAll(async () => {
  await rt.dispose({ topics: created, groups: [group] });
});

/** java.net.URLEncoder.encode(s, "UTF-8"): what the driver's `escape` does to a statement. */
function javaUrlEncode(s: string): string {
  let out = "";
  for (const byte of Buffer.from(s, "utf8")) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9.\-*_]/.test(c)) out += c;
    else if (c === " ") out += "+";
    else out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** The driver's jsonGet: Accept application/json and the token header, nothing else. */
function jsonGet(path: string): Promise<Response> {
  return rt.request(path, { headers: { accept: "application/json", "x-service-token": token } });
}

/** The driver's jsonPost. */
function jsonPost(path: string, body: unknown): Promise<Response> {
  return rt.request(path, {
    method: "POST",
    headers: { accept: "application/json", "content-type": "application/json", "x-service-token": token },
    body: JSON.stringify(body),
  });
}

/** The driver's plainTextPost of `StringEntity(sql)`: ISO-8859-1 bytes, Content-type text/plain. */
function plainTextPost(sql: string): Promise<Response> {
  return rt.request("/api/jdbc/insert", {
    method: "POST",
    headers: { "content-type": "text/plain", "x-service-token": token },
    body: Buffer.from(sql, "latin1"),
  });
}

const requireString = (v: unknown, what: string): string => {
  if (typeof v !== "string") throw new Error(`${what} must be a string, found ${JSON.stringify(v)}`);
  return v;
};
const optionalString = (v: unknown, what: string): string | undefined =>
  v === undefined || v === null ? undefined : requireString(v, what);

interface Field {
  name: string;
  parents: string[];
  isKey: boolean;
}
interface Info {
  topic: string;
  fields: Field[];
  keyType: string;
  valueType: string;
  keySchema?: string;
  valueSchema: string;
}

/** PreparedInsertResponse as Jackson reads it: `info` or null, `error` a string or null. */
function decodePrepared(body: unknown): { info: Info | null; error: string | undefined } {
  const b = body as { info?: Record<string, unknown> | null; error?: unknown };
  const error = optionalString(b.error, "error");
  if (b.info === null || b.info === undefined) return { info: null, error };
  const i = b.info;
  if (!Array.isArray(i.fields)) throw new Error("fields must be an array");
  return {
    error,
    info: {
      topic: requireString(i.topic, "topic"),
      keyType: requireString(i.keyType, "keyType"),
      valueType: requireString(i.valueType, "valueType"),
      valueSchema: requireString(i.valueSchema, "valueSchema"),
      ...(optionalString(i.keySchema, "keySchema") ? { keySchema: i.keySchema as string } : {}),
      fields: (i.fields as Array<Record<string, unknown>>).map((f) => {
        if (typeof f.isKey !== "boolean" || !Array.isArray(f.parents) || !f.parents.every((p) => typeof p === "string"))
          throw new Error(`bad field ${JSON.stringify(f)}`);
        return { name: requireString(f.name, "field name"), parents: f.parents as string[], isKey: f.isKey };
      }),
    },
  };
}

/** RecordBuilder.build() of the driver: the key as text (or null), the value nested by parents. */
function buildRecord(info: Info, values: unknown[]): { key: string | null; value: Record<string, unknown> } {
  const root: Record<string, unknown> = {};
  let key: string | null = null;
  info.fields.forEach((f, i) => {
    if (f.isKey) {
      key ??= values[i] === null ? null : String(values[i]);
      return;
    }
    let node = root;
    for (const p of f.parents) node = (node[p] ??= {}) as Record<string, unknown>;
    node[f.name] = values[i];
  });
  return { key, value: root };
}

async function prepare(sql: string): Promise<{ status: number; info: Info | null; error: string | undefined }> {
  const res = await jsonGet(`/api/jdbc/insert/prepared?sql=${javaUrlEncode(sql)}`);
  return { status: res.status, ...decodePrepared(await res.json()) };
}

async function select(sql: string) {
  const res = await rt.request(`/api/sql/data?${new URLSearchParams({ sql })}`, { role: "read", headers: { accept: "application/json" } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { messages: Array<{ key: string | null; value: string }> }).messages;
}

describe("GET /api/jdbc/metadata/table", () => {
  test("every topic, Kafka's own included, with non-null types and the registry's Avro schema", async () => {
    const res = await jsonGet("/api/jdbc/metadata/table");
    expect(res.status).toBe(200);
    const tables = (await res.json()) as Array<Record<string, unknown>>;
    expect(Array.isArray(tables)).toBe(true);
    for (const t of tables) {
      requireString(t.name, "name");
      expect(requireString(t.keyType, "keyType").length).toBeGreaterThan(0);
      expect(requireString(t.valueType, "valueType").length).toBeGreaterThan(0);
      optionalString(t.keySchema, "keySchema");
      optionalString(t.valueSchema, "valueSchema");
    }
    const byName = new Map(tables.map((t) => [t.name as string, t]));
    const internal = (await rt.kafka.default().topics.list({ includeInternal: true })).filter((t) => t.internal);
    expect(internal.map((t) => t.name)).toContain("__consumer_offsets");
    for (const t of internal) expect(byName.get(t.name)).toMatchObject({ keyType: "BYTES", valueType: "BYTES" });

    const movie = byName.get(movies)!;
    expect(movie).toMatchObject({ name: movies, keyType: "STRING", valueType: "AVRO" });
    // The driver builds its columns from this text with Avro's schema parser.
    const type = avro.Type.forSchema(JSON.parse(movie.valueSchema as string)) as avro.types.RecordType;
    expect(type.fields.map((f) => f.name)).toEqual(["name", "year", "director", "imdb"]);
    expect(movie.keySchema).toBeUndefined();
    expect(byName.get(plain)).toEqual({ name: plain, keyType: "STRING", valueType: "JSON" });
  });

  test("stored metadata gives the types", async () => {
    const t = await createReadyTopic(rt.kafka.default(), { prefix: "jdbc-meta", track: created });
    expect((await rt.request(`/api/metadata/topics/${t}?keyType=LONG&valueType=STRING`, { method: "POST", role: "write" })).status).toBe(
      200,
    );
    const tables = (await (await jsonGet("/api/jdbc/metadata/table")).json()) as Array<Record<string, unknown>>;
    expect(tables.find((x) => x.name === t)).toEqual({ name: t, keyType: "LONG", valueType: "STRING" });
  });
});

describe("prepared inserts", () => {
  test("GET prepared then POST prepared/{topic}: nested Avro fields in placeholder order, records readable", async () => {
    const sql = `SET _ktype='STRING';INSERT INTO \`${movies}\`(_key, name, \`year\`, director, \`imdb\`.\`url\`, \`imdb\`.\`ranking\`, \`imdb\`.\`rating\`) values (?,?,?,?,?,?,?)`;
    const prepared = await prepare(sql);
    expect(prepared.status).toBe(200);
    expect(prepared.error).toBeUndefined();
    const info = prepared.info!;
    expect(info.topic).toBe(movies);
    expect(info.fields).toEqual([
      { name: "_key", parents: [], isKey: true },
      { name: "name", parents: [], isKey: false },
      { name: "year", parents: [], isKey: false },
      { name: "director", parents: [], isKey: false },
      { name: "url", parents: ["imdb"], isKey: false },
      { name: "ranking", parents: ["imdb"], isKey: false },
      { name: "rating", parents: ["imdb"], isKey: false },
    ]);
    expect([info.keyType, info.valueType]).toEqual(["STRING", "AVRO"]);
    expect(JSON.parse(info.valueSchema)).toEqual(movieSchema);
    expect(info.keySchema).toBeUndefined();

    const batch = [
      buildRecord(info, ["bb", "Batman Begins", 2005, "christopher nolan", "https://www.imdb.com/title/tt0372784/", 211, 8.3]),
      buildRecord(info, ["h", "Heat", 1995, "michael mann", "https://www.imdb.com/title/tt0113277/", 120, 8.2]),
    ];
    const res = await jsonPost(`/api/jdbc/insert/prepared/${info.topic}?kt=${info.keyType}&vt=${info.valueType}`, batch);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ topic: movies, records: 2, keyType: "STRING", valueType: "AVRO" });

    const rows = await select(`SELECT * FROM \`${movies}\` WHERE _key IN ('bb', 'h')`);
    expect(rows.map((r) => [r.key, JSON.parse(r.value)])).toEqual([
      [
        "bb",
        {
          name: "Batman Begins",
          year: 2005,
          director: "christopher nolan",
          imdb: { url: "https://www.imdb.com/title/tt0372784/", ranking: 211, rating: 8.3 },
        },
      ],
      [
        "h",
        {
          name: "Heat",
          year: 1995,
          director: "michael mann",
          imdb: { url: "https://www.imdb.com/title/tt0113277/", ranking: 120, rating: 8.2 },
        },
      ],
    ]);
  });

  test("a JSON topic gets an Avro description of its fields as valueSchema, and keyless records", async () => {
    const sql = `INSERT INTO \`${plain}\` (customerFirstName, number, address.city, blocked) values (?,?,?,?)`;
    const { info, status } = await prepare(sql);
    expect(status).toBe(200);
    expect([info!.keyType, info!.valueType]).toEqual(["STRING", "JSON"]);
    const type = avro.Type.forSchema(JSON.parse(info!.valueSchema)) as avro.types.RecordType;
    expect(type.fields.map((f) => f.name)).toEqual(["customerFirstName", "number", "address", "blocked"]);
    const batch = [buildRecord(info!, ["sammy", "4191005000501123", "London", false])];
    expect(batch[0]!.key).toBeNull();
    const res = await jsonPost(`/api/jdbc/insert/prepared/${plain}?kt=${info!.keyType}&vt=${info!.valueType}`, batch);
    expect(res.status).toBe(200);
    const rows = await select(`SELECT * FROM \`${plain}\` WHERE customerFirstName = 'sammy'`);
    expect(rows.map((r) => [r.key, JSON.parse(r.value)])).toEqual([
      [null, { customerFirstName: "sammy", number: "4191005000501123", address: { city: "London" }, blocked: false }],
    ]);
  });

  test.each([
    [
      "wrong placeholder count",
      (t: string) => `INSERT INTO \`${t}\` (name, \`year\`, director) values (?,?)`,
      /^Row 1 has 2 values for 3 columns at line 1, column \d+\./,
    ],
    [
      "unknown topic",
      () => "INSERT INTO `no-such-jdbc-topic` (a) values (?)",
      /^Unknown topic 'no-such-jdbc-topic' at line 1, column 13\.$/,
    ],
    [
      "a literal instead of '?'",
      (t: string) => `INSERT INTO \`${t}\` (name) values ('x')`,
      /^A prepared INSERT takes '\?' for every value/,
    ],
    ["not an INSERT", () => "SELECT * FROM x", /^Unexpected 'SELECT' at line 1, column 1\. Expected one of: INSERT, SET\.$/],
  ])("%s: info null and the error the driver throws", async (_what, sql, message) => {
    const res = await jsonGet(`/api/jdbc/insert/prepared?sql=${javaUrlEncode(sql(movies))}`);
    expect(res.status).toBe(200);
    const body = decodePrepared(await res.json());
    expect(body.info).toBeNull();
    expect(body.error).toMatch(message);
  });

  test("a batch of more than 1000 records is refused with 400, nothing written", async () => {
    const before = await select(`SELECT * FROM \`${plain}\``);
    const batch = Array.from({ length: 1001 }, (_, i) => ({ key: `k${i}`, value: { i } }));
    const res = await jsonPost(`/api/jdbc/insert/prepared/${plain}?kt=STRING&vt=JSON`, batch);
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toContain("at most 1000 records per request");
    expect((await select(`SELECT * FROM \`${plain}\``)).length).toBe(before.length);
  });

  test("a value that does not fit the schema is a 400 naming the record and field, nothing written", async () => {
    const batch = [
      { key: "ok", value: { name: "A", year: 1, director: "d", imdb: { url: "u", ranking: 1, rating: 1 } } },
      { key: "bad", value: { name: "B", year: 2, director: "d", imdb: { url: "u", ranking: "high", rating: 1 } } },
    ];
    const res = await jsonPost(`/api/jdbc/insert/prepared/${movies}?kt=STRING&vt=AVRO`, batch);
    expect(res.status).toBe(400);
    const err = await errorOf(res);
    expect(err.message).toBe(`Record 2: imdb.ranking: string "high" does not fit the schema's int`);
    expect(err.details).toEqual({ record: 1, field: "imdb.ranking" });
    expect(await select(`SELECT * FROM \`${movies}\` WHERE _key IN ('ok', 'bad')`)).toEqual([]);
  });

  test("the prepared batch is audited as TOPIC_DATA INSERT", async () => {
    const res = await jsonPost(`/api/jdbc/insert/prepared/${plain}?kt=STRING&vt=JSON`, [{ key: "audited", value: { a: 1 } }]);
    expect(res.status).toBe(200);
    const entries = (await (await rt.request("/api/audit?type=TOPIC_DATA&limit=1", { role: "admin" })).json()) as Array<{
      change: string;
      content: Record<string, string>;
    }>;
    expect(entries[0]).toMatchObject({
      change: "INSERT",
      content: { topic: plain, records: "1", keyType: "STRING", valueType: "JSON", outcome: "SUCCESS" },
    });
  });
});

describe("POST /api/jdbc/insert", () => {
  test("the driver's plain insert, ISO-8859-1 text/plain; read back through the event stream", async () => {
    const t = await createReadyTopic(rt.kafka.default(), { prefix: "jdbc-insert", track: created });
    const res = await plainTextPost(
      `SET _ktype='STRING'; INSERT INTO \`${t}\` (_key, city, n) VALUES ('p1', 'Orléans', 1), ('p2', 'Zürich', 2)`,
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({ topic: t, records: 2, keyType: "STRING", valueType: "JSON", offsets: expect.any(Array) });

    const stream = await rt.request(`/api/sql/data?${new URLSearchParams({ sql: `SELECT * FROM \`${t}\`` })}`, {
      role: "read",
      headers: { accept: "text/event-stream", "content-type": "text/event-stream" },
    });
    expect(stream.status).toBe(200);
    const lines = (await stream.text()).split("\n\n").filter((l) => l.startsWith("data:1"));
    const records = lines.map((l) => JSON.parse(l.slice(6)) as { key: string; value: string; offset: number; partition: number });
    expect(records.map((r) => [r.key, JSON.parse(r.value)])).toEqual([
      ["p1", { city: "Orléans", n: 1 }],
      ["p2", { city: "Zürich", n: 2 }],
    ]);
    for (const r of records) expect(Number.isInteger(r.offset) && Number.isInteger(r.partition)).toBe(true);
  });

  test("a statement error is a 400 with the driver's message text and its position", async () => {
    const res = await plainTextPost(`SET _ktype='STRING'; INSERT INTO \`${plain}\` (a, b) VALUES (1)`);
    expect(res.status).toBe(400);
    const err = await errorOf(res);
    expect(err.message).toMatch(/^Row 1 has 1 value for 2 columns at line 1, column \d+\. Expected 2 values, one per column\.$/);
  });
});
