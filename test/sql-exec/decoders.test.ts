/**
 * Decoding through the API: Avro in the registry wire format (schemas registered in the real
 * Apicurio registry through its Confluent-compatible API), formats chosen by SET or by topic
 * metadata, per-record inference, and records that fail to decode being skipped and counted.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import avro from "avsc";
import { DecoderFactory } from "../../src/engine/decoders.ts";
import type { AppError } from "../../src/errors.ts";
import { SchemaRegistryClient } from "../../src/registry/client.ts";
import { registryEnv } from "../cluster/cluster.ts";
import { confluentWire, registerSchema } from "../helpers/registry.ts";
import { sqlFixture, stream } from "./helpers.ts";

const f = sqlFixture();

const userSchema = {
  type: "record",
  name: "User",
  namespace: "loupe.test",
  fields: [
    { name: "id", type: "long" },
    { name: "name", type: "string" },
    { name: "email", type: ["null", "string"], default: null },
    { name: "tags", type: { type: "array", items: "string" } },
    { name: "avatar", type: "bytes" },
  ],
};
const userType = avro.Type.forSchema(userSchema as avro.Schema);

const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const int64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(n);
  return b;
};
const float32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeFloatBE(n);
  return b;
};
const float64 = (n: number) => {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(n);
  return b;
};

const values = (s: { records: Array<{ value: string }> }) => s.records.map((r) => JSON.parse(r.value));

describe("AVRO through the schema registry", () => {
  let topic: string;
  let id: number;
  const users = [
    { id: 1, name: "ada", email: "ada@example.org", tags: ["a", "b"], avatar: Buffer.from([1, 2, 3]) },
    { id: 2, name: "bob", email: null, tags: [], avatar: Buffer.from("hi") },
    { id: 3, name: "cy", email: "cy@example.org", tags: ["c"], avatar: Buffer.alloc(0) },
  ];

  beforeAll(async () => {
    topic = await f.topic("avro", 1);
    id = await registerSchema(`${topic}-value`, userSchema);
    await f.produce(
      topic,
      users.map((u) => ({ key: `u${u.id}`, value: confluentWire(id, userType.toBuffer(u)) })),
    );
  });

  test("inferred from the wire format and decoded with the registry's schema", async () => {
    const s = await stream(f.rt, `SELECT * FROM \`${topic}\``);
    expect(s.end).toMatchObject({ totalRecords: 3, skippedRecords: 0 });
    expect(values(s)).toEqual([
      { id: 1, name: "ada", email: "ada@example.org", tags: ["a", "b"], avatar: "AQID" },
      { id: 2, name: "bob", email: null, tags: [], avatar: "aGk=" },
      { id: 3, name: "cy", email: "cy@example.org", tags: ["c"], avatar: "" },
    ]);
    expect(s.records[0].key).toBe("u1");
  });

  test("fields of Avro records filter and project", async () => {
    const s = await stream(f.rt, `SET value.format = AVRO; SELECT name, tags[0] AS t FROM \`${topic}\` WHERE email IS NOT NULL AND id > 1`);
    expect(values(s)).toEqual([{ name: "cy", t: "c" }]);
  });

  test("a schema id the registry does not know: skipped and counted under AVRO", async () => {
    const t = await f.topic("avro-unknown", 1);
    await f.produce(t, [
      { value: confluentWire(987654, userType.toBuffer(users[0])) },
      { value: confluentWire(id, userType.toBuffer(users[1])) },
    ]);
    const s = await stream(f.rt, `SET value.format = AVRO; SELECT name FROM \`${t}\``);
    expect(values(s)).toEqual([{ name: "bob" }]);
    expect(s.end).toMatchObject({ totalRecords: 2, skippedRecords: 1, returnedRecords: 1, undecodableRecords: 1 });
  });

  test("the registry client fetches a schema once and caches it", async () => {
    let calls = 0;
    const client = new SchemaRegistryClient({
      urls: ["http://127.0.0.1:1/dead", ...registryEnv().urls],
      fetch: ((input: string, init?: RequestInit) => {
        calls++;
        return fetch(input, init);
      }) as typeof fetch,
    });
    const s = await client.schemaById(id);
    expect(JSON.parse(s.schema)).toMatchObject({ name: "User" });
    expect(s.schemaType).toBe("AVRO");
    expect(calls).toBe(2); // the dead URL first, then the live one
    await client.schemaById(id);
    expect(calls).toBe(2);
    expect(client.cached(id)?.id).toBe(id);
    const missing = await client.schemaById(987654).catch((e) => e);
    expect(missing.code).toBe("NOT_FOUND");
  });

  test("all URLs dead: BAD_GATEWAY naming them", async () => {
    const client = new SchemaRegistryClient({ urls: ["http://127.0.0.1:1", "http://127.0.0.1:2"], timeoutMs: 2_000 });
    const err = await client.schemaById(1).catch((e) => e);
    expect(err.code).toBe("BAD_GATEWAY");
    expect(err.message).toContain("127.0.0.1:1");
    expect(err.message).toContain("127.0.0.1:2");
  });
});

describe("formats chosen with SET", () => {
  let topic: string;
  beforeAll(async () => {
    topic = await f.topic("numbers", 1);
    await f.produce(topic, [
      { key: int32(7), value: int32(-42) },
      { key: int32(8), value: int32(2_000_000_000) },
      { key: Buffer.from("x"), value: Buffer.from("not an int") },
    ]);
  });

  test("INT key and value; wrong sizes are skipped and counted", async () => {
    const s = await stream(f.rt, `SET key.format = INT; SET value.format = INT; SELECT * FROM \`${topic}\``);
    expect(s.records.map((r: { key: string; value: string }) => [r.key, r.value])).toEqual([
      ["7", "-42"],
      ["8", "2000000000"],
    ]);
    expect(s.end).toMatchObject({ totalRecords: 3, skippedRecords: 1, returnedRecords: 2, undecodableRecords: 1 });
    const filtered = await stream(f.rt, `SET value.format = INT; SELECT _value FROM \`${topic}\` WHERE _value < 0`);
    expect(values(filtered)).toEqual([{ _value: -42 }]);
  });

  test("LONG, DOUBLE, FLOAT, BYTES, STRING", async () => {
    const t = await f.topic("formats", 1);
    await f.produce(t, [{ value: int64(9_007_199_254_740_993n) }, { value: int64(-5n) }]);
    expect(values(await stream(f.rt, `SET value.format = LONG; SELECT * FROM \`${t}\``))).toEqual(["9007199254740993", -5]);
    const d = await f.topic("double", 1);
    await f.produce(d, [{ value: float64(3.25) }, { value: float32(1.5) }]);
    const ds = await stream(f.rt, `SET value.format = DOUBLE; SELECT * FROM \`${d}\``);
    expect(values(ds)).toEqual([3.25]);
    expect(ds.end.skippedRecords).toBe(1);
    expect(values(await stream(f.rt, `SET value.format = FLOAT; SELECT * FROM \`${d}\``))).toEqual([1.5]);
    expect(values(await stream(f.rt, `SET value.format = BYTES; SELECT * FROM \`${d}\``))).toEqual([
      float64(3.25).toString("base64"),
      float32(1.5).toString("base64"),
    ]);
    expect(values(await stream(f.rt, `SET value.format = STRING; SELECT * FROM \`${topic}\` LIMIT 2, 1`))).toEqual(["not an int"]);
  });

  test("JSON: records that are not JSON are skipped and counted, never fatal", async () => {
    const t = await f.topic("badjson", 2);
    await f.produce(t, [
      { partition: 0, value: '{"ok":1}' },
      { partition: 0, value: "{broken" },
      { partition: 1, value: "plain text" },
      { partition: 1, value: '{"ok":2}' },
      { partition: 1, value: Buffer.from([0xff, 0xfe, 0x00]) },
    ]);
    const s = await stream(f.rt, `SET value.format = JSON; SELECT ok FROM \`${t}\``, { params: { stats: "100" } });
    expect(values(s).sort((a, b) => a.ok - b.ok)).toEqual([{ ok: 1 }, { ok: 2 }]);
    expect(s.end).toMatchObject({ totalRecords: 5, skippedRecords: 3, returnedRecords: 2, undecodableRecords: 3, isTopicEnd: true });
  });

  test("PROTOBUF without a registry or a descriptor set is refused with a clear error", async () => {
    const err = (() => {
      try {
        new DecoderFactory({ registry: null }).create("PROTOBUF", undefined, "value");
      } catch (e) {
        return e as AppError;
      }
    })();
    expect(err?.code).toBe("UNSUPPORTED");
    expect(err?.message).toContain("PROTOBUF");
    // With a registry, records that are not in its wire format are skipped and counted.
    const s = await stream(f.rt, `SET value.format = PROTOBUF; SELECT * FROM \`${topic}\``);
    expect(s.end).toMatchObject({ totalRecords: 3, undecodableRecords: 3 });
  });
});

describe("inference without metadata or SET", () => {
  test("JSON, text, bytes and tombstones, each record on its own", async () => {
    const t = await f.topic("infer", 1);
    await f.produce(t, [
      { key: "a", value: '{"x":1}' },
      { key: "b", value: "hello world" },
      { key: "c", value: "42" },
      { key: null, value: Buffer.from([0xc3, 0x28, 0xa0]) },
      { key: "e", value: null },
      { key: '{"k":1}', value: "[1,2]" },
    ]);
    const s = await stream(f.rt, `SELECT * FROM \`${t}\``);
    expect(s.records.map((r: { key: string | null; value: string }) => [r.key, r.value])).toEqual([
      ["a", '{"x":1}'],
      ["b", '"hello world"'],
      ["c", "42"],
      [null, JSON.stringify(Buffer.from([0xc3, 0x28, 0xa0]).toString("base64"))],
      ["e", "null"],
      ['{"k":1}', "[1,2]"],
    ]);
    const sel = await stream(f.rt, `SELECT _key.k AS k FROM \`${t}\` WHERE _key.k = 1`);
    expect(values(sel)).toEqual([{ k: 1 }]);
  });
});

describe("formats from topic metadata", () => {
  test("the topic_metadata table chooses the decoders; SET overrides it", async () => {
    const t = await f.topic("meta", 1);
    await f.produce(t, [
      { key: int32(5), value: userType.toBuffer({ id: 9, name: "raw", email: null, tags: [], avatar: Buffer.alloc(0) }) },
    ]);
    await f.rt.store.db
      .insertInto("topic_metadata")
      .values({
        cluster: "local",
        topic: t,
        key_type: "INT",
        value_type: "AVRO",
        key_schema: null,
        value_schema: JSON.stringify(userSchema),
        updated_by: "test",
        updated_at: Date.now(),
      })
      .execute();
    const s = await stream(f.rt, `SELECT _key, name FROM \`${t}\``);
    expect(values(s)).toEqual([{ _key: 5, name: "raw" }]);
    const overridden = await stream(f.rt, `SET key.format = BYTES; SELECT _key FROM \`${t}\``);
    expect(values(overridden)).toEqual([{ _key: int32(5).toString("base64") }]);
  });
});
