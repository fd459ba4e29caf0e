/**
 * Issue 23, producing from the UI (POST /api/topics/{t}/records): INSERT writes no headers and
 * picks no partition, so the topic page could not produce what a peer's does. The route writes
 * records given as text in their formats (string, JSON, Avro from the registry subject, the
 * numbers, base64 bytes) with headers and an explicit partition or by key, every record encoded
 * before any is sent; scoped, refused on internal topics and audited as INSERT is.
 * GET .../records/formats says how records would be written (the dialog's starting point).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { WRITE_FORMATS } from "../../src/domains/topics/schemas.ts";
import { partitionForKey } from "../../src/kafka/index.ts";
import { INSERT_FORMATS } from "../../src/sql/insert.ts";
import { registryEnv, uniqueTopic } from "../cluster/cluster.ts";
import { registerSchema } from "../helpers/registry.ts";
import { ROLE_USERS, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { scopedUser, topicGroup } from "../helpers/scoped.ts";
import { createReadyTopic } from "../helpers/topics.ts";

let rt: TestRuntime;
const made: string[] = [];

beforeAll(async () => {
  rt = await testRuntime({ schemaRegistry: registryEnv() });
});
afterAll(async () => {
  await rt.dispose({ topics: made });
});

type Caller = { role?: "nodata" | "read" | "write" | "admin"; token?: string };
const post = (topic: string, body: unknown, who: Caller = { role: "write" }) =>
  rt.request(`/api/topics/${topic}/records`, { method: "POST", body: JSON.stringify(body), ...who });
const messageOf = async (res: Response) => ((await res.json()) as { message: string }).message;

/** Every record of the topic, oldest first, as the message browser reads it. */
async function readBack(topic: string) {
  const res = await rt.request(`/api/topics/${topic}/records?seek=oldest&limit=500`, { role: "read" });
  expect(res.status).toBe(200);
  return (
    (await res.json()) as {
      records: Array<{
        partition: number;
        offset: number;
        key: { text: string; base64: string } | null;
        value: { text: string; format: string; base64: string } | null;
        headers: Array<{ key: string; value: string }>;
      }>;
    }
  ).records;
}

async function endOffsets(topic: string): Promise<number[]> {
  const kafka = rt.kafka.default();
  const [d] = await kafka.topics.describe([topic]);
  return (
    await kafka.offsets.list(
      d!.partitionDetails.map((p) => ({ topic, partition: p.partition })),
      "latest",
    )
  ).map((e) => e.offset);
}

async function newestAudit(user: string) {
  const res = await rt.request(`/api/audit?type=TOPIC_DATA&user=${user}&limit=1`, { role: "admin" });
  return ((await res.json()) as Array<{ type: string; change: string; content: Record<string, string> }>)[0]!;
}

describe("23: POST /api/topics/{topicName}/records", () => {
  test("23: the formats are INSERT's", () => {
    expect([...WRITE_FORMATS]).toEqual([...INSERT_FORMATS]);
  });

  test("23: a string key, a JSON value, headers and an explicit partition: each record's partition and offset, audited", async () => {
    const topic = await createReadyTopic(rt.kafka.default(), { prefix: "produce", partitions: 3, track: made });
    const value = '{"id": 12345678901234567890, "name": "ada"}';
    const res = await post(topic, {
      records: [
        {
          key: "user-1",
          value,
          headers: [
            { key: "trace", value: "abc" },
            { key: "trace", value: "def" },
          ],
          partition: 2,
        },
        { key: "user-2", value: "[1, 2]", headers: { source: "ui" }, partition: 2 },
        { value: null, key: "user-1", partition: 0 },
      ],
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      topicName: topic,
      records: 3,
      keyFormat: "STRING",
      valueFormat: "JSON",
      offsets: [
        { partition: 2, offset: 0 },
        { partition: 2, offset: 1 },
        { partition: 0, offset: 0 },
      ],
    });
    const back = await readBack(topic);
    const first = back.find((r) => r.partition === 2 && r.offset === 0)!;
    // JSON is written as typed: every digit of a number beyond 2^53 stays.
    expect(Buffer.from(first.value!.base64, "base64").toString()).toBe(value);
    expect(first.headers).toEqual([
      { key: "trace", value: "abc", base64: false },
      { key: "trace", value: "def", base64: false },
    ] as never);
    expect(back.find((r) => r.partition === 0)!.value).toBeNull();
    const audit = await newestAudit(ROLE_USERS.write.name);
    expect(audit).toMatchObject({
      type: "TOPIC_DATA",
      change: "INSERT",
      content: { outcome: "SUCCESS", topic, records: "3", keyType: "STRING", valueType: "JSON", partitions: "0,2" },
    });
  });

  test("23: without a partition, a keyed record goes where Kafka's partitioner puts it", async () => {
    const topic = await createReadyTopic(rt.kafka.default(), { prefix: "produce-keyed", partitions: 4, track: made });
    const keys = ["a", "b", "c", "d", "e"];
    const res = await post(topic, { records: keys.map((key) => ({ key, value: "{}" })) });
    expect(res.status).toBe(200);
    const { offsets } = (await res.json()) as { offsets: Array<{ partition: number }> };
    expect(offsets.map((o) => o.partition)).toEqual(keys.map((k) => partitionForKey(k, 4)));
  });

  test("23: Avro from the registry subject: written in its wire format; a value that does not fit is a 400 naming record and field, nothing written", async () => {
    const topic = await createReadyTopic(rt.kafka.default(), { prefix: "produce-avro", track: made });
    const schema = {
      type: "record",
      name: "Order",
      fields: [
        { name: "id", type: "long" },
        { name: "note", type: ["null", "string"], default: null },
      ],
    };
    const id = await registerSchema(`${topic}-value`, schema);
    const formats = await rt.request(`/api/topics/${topic}/records/formats`, { role: "write" });
    expect(await formats.json()).toEqual({
      topicName: topic,
      partitions: 1,
      key: { format: "STRING", source: "default", schema: null, subject: null, template: null },
      value: { format: "AVRO", source: "registry", schema: expect.stringContaining('"Order"'), subject: `${topic}-value`, template: null },
      problems: [],
    });

    const bad = await post(topic, {
      records: [
        { key: "1", value: '{"id": 1}' },
        { key: "2", value: '{"id": "two"}' },
      ],
    });
    expect(bad.status).toBe(400);
    expect(await messageOf(bad)).toBe('Record 2: id: string "two" does not fit the schema\'s long');
    expect(await endOffsets(topic)).toEqual([0]);
    const notJson = await post(topic, { records: [{ key: "1", value: "{id: 1}" }] });
    expect(await messageOf(notJson)).toStartWith("Record 1: _value: not valid JSON");

    const res = await post(topic, { records: [{ key: "1", value: '{"id": 7, "note": "rush"}' }] });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { valueFormat: string }).valueFormat).toBe("AVRO");
    const [r] = await readBack(topic);
    expect(r!.value).toMatchObject({ format: "AVRO", text: '{"id":7,"note":"rush"}' });
    expect(Buffer.from(r!.value!.base64, "base64").readInt32BE(1)).toBe(id);
  });

  test("23: chosen formats: numbers and bytes as their text, a format the topic has no schema for is named", async () => {
    const topic = await createReadyTopic(rt.kafka.default(), { prefix: "produce-typed", track: made });
    const res = await post(topic, {
      keyFormat: "LONG",
      valueFormat: "BYTES",
      records: [{ key: "42", value: Buffer.from([1, 2, 255]).toString("base64") }],
    });
    expect(res.status).toBe(200);
    const [r] = await readBack(topic);
    expect(Buffer.from(r!.key!.base64, "base64").readBigInt64BE()).toBe(42n);
    expect([...Buffer.from(r!.value!.base64, "base64")]).toEqual([1, 2, 255]);
    const noSchema = await rt.request(`/api/topics/${topic}/records/formats?valueFormat=AVRO`, { role: "write" });
    const body = (await noSchema.json()) as { value: { format: string | null }; problems: string[] };
    expect(body.value.format).toBe("AVRO");
    expect(body.problems).toEqual([
      `Topic '${topic}' has no Avro schema for its value: the schema registry has no subject '${topic}-value'`,
    ]);
    const refused = await post(topic, { valueFormat: "INT", records: [{ value: "1.5" }] });
    expect(await messageOf(refused)).toBe('Record 1: _value: string "1.5" is not a whole number (INT)');
  });

  test("23: bounds: a partition the topic lacks, too many records or headers are 400 and write nothing", async () => {
    const topic = await createReadyTopic(rt.kafka.default(), { prefix: "produce-bounds", partitions: 2, track: made });
    const wrongPartition = await post(topic, {
      records: [
        { value: "{}", partition: 0 },
        { value: "{}", partition: 5 },
      ],
    });
    expect(wrongPartition.status).toBe(400);
    expect(await messageOf(wrongPartition)).toContain("record 1 names partition 5, but the topic has 2");
    const many = await post(topic, { records: Array.from({ length: 1_001 }, () => ({ value: "1" })) });
    expect(many.status).toBe(400);
    expect(await messageOf(many)).toContain("at most 1000 records per request");
    const headers = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`h${i}`, "x"]));
    const tooManyHeaders = await post(topic, { records: [{ value: "1", headers }] });
    expect(await messageOf(tooManyHeaders)).toContain("at most 64 headers per record");
    expect((await post(topic, { records: [] })).status).toBe(400);
    expect(await endOffsets(topic)).toEqual([0, 0]);
    // Refusals are audited as failed inserts.
    expect(await newestAudit(ROLE_USERS.write.name)).toMatchObject({ change: "INSERT", content: { outcome: "FAILURE" } });
  });

  test("23: refused for read and nodata, a scoped writer outside its scope and an internal topic; audited as failed inserts", async () => {
    const kafka = rt.kafka.default();
    const topic = await createReadyTopic(kafka, { prefix: "produce-scope", track: made });
    const internal = await createReadyTopic(kafka, { name: uniqueTopic("_loupe-produce"), track: made });
    const body = { records: [{ key: "k", value: "{}" }] };
    for (const role of ["read", "nodata"] as const) {
      const res = await post(topic, body, { role });
      expect(res.status).toBe(403);
      expect(await messageOf(res)).toStartWith(`Role ${role} may not POST /api/topics/:topicName/records`);
    }
    const scoped = await scopedUser(rt, "wes-produce", [topicGroup("produce-writers", ["produce-own-*"], [], ["write"])]);
    const outside = await post(topic, body, { token: scoped });
    expect(outside.status).toBe(403);
    expect(await messageOf(outside)).toBe(`Topic '${topic}' is outside your scope`);
    expect(await newestAudit("wes-produce")).toMatchObject({
      type: "TOPIC_DATA",
      change: "INSERT",
      content: { outcome: "FAILURE", topicName: topic, reason: "FORBIDDEN: topic outside the identity's scope" },
    });
    const formats = await rt.request(`/api/topics/${topic}/records/formats`, { token: scoped });
    expect(formats.status).toBe(403);
    for (const who of [{ role: "write" as const }, { token: scoped }]) {
      const res = await post(internal, body, who);
      expect(res.status).toBe(403);
      expect(await messageOf(res)).toBe(
        `Topic '${internal}' is internal to Loupe: only an admin without limits may read or write its records`,
      );
    }
    expect(await endOffsets(topic)).toEqual([0]);
    expect(await endOffsets(internal)).toEqual([0]);
    expect((await post(internal, body, { role: "admin" })).status).toBe(200);
  });
});
