import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { inferType } from "../../src/domains/metadata/infer.ts";
import { uniqueTopic } from "../cluster/cluster.ts";
import { bootstrap, errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { createReadyTopic } from "../helpers/topics.ts";

const bytes = (...b: number[]) => new Uint8Array(b);
const text = (s: string) => new TextEncoder().encode(s);
const long = (n: bigint) => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigInt64(0, n);
  return b;
};
const int = (n: number) => {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setInt32(0, n);
  return b;
};
/** Registry wire format: magic 0, schema id, payload. */
const wire = (id: number, ...payload: number[]) => bytes(0, (id >> 24) & 255, (id >> 16) & 255, (id >> 8) & 255, id & 255, ...payload);

describe("type inference", () => {
  test.each([
    ["JSON objects", [text('{"a":1}'), text("[1,2]")], "JSON"],
    ["text", [text("hello"), text("{not json")], "STRING"],
    ["JSON and text", [text('{"a":1}'), text("plain")], "STRING"],
    ["8-byte numbers", [long(1n), long(-5n), long(1234567890123n)], "LONG"],
    ["4-byte numbers", [int(7), int(-1)], "INT"],
    ["registry wire format", [wire(3, 2, 4, 6), wire(3, 8)], "AVRO"],
    ["random bytes", [bytes(255, 0, 1), bytes(200, 201)], "BYTES"],
    ["schema id 0 is not the wire format", [bytes(0, 0, 0, 0, 0, 1, 2)], "BYTES"],
    ["nulls only", [null, null], null],
    ["nulls are skipped", [null, text("x")], "STRING"],
    ["nothing", [], null],
  ] as const)("%s", (_name, samples, want) => {
    expect(inferType([...samples])).toBe(want);
  });
});

describe("topic metadata API", () => {
  let rt: TestRuntime;
  const topics: string[] = [];
  beforeAll(async () => {
    rt = await testRuntime({
      kafka: {
        clusters: [
          { name: "local", bootstrapServers: bootstrap(), default: true },
          { name: "other", bootstrapServers: bootstrap() },
        ],
      },
    });
  });
  afterAll(async () => {
    await rt.dispose({ topics });
  });

  async function topic(records: Array<{ key?: string | Uint8Array | null; value: string | Uint8Array | null }> = []): Promise<string> {
    const name = await createReadyTopic(rt.kafka.default(), { prefix: "md", partitions: 1, track: topics });
    if (records.length) await rt.kafka.default().writes.produce(name, records);
    return name;
  }
  const post = (t: string, query: string, headers: Record<string, string> = {}) =>
    rt.request(`/api/metadata/topics/${t}?${query}`, { method: "POST", role: "write", headers });

  const avro = JSON.stringify({ type: "record", name: "Order", fields: [{ name: "id", type: "long" }] });

  test("set (any case in, upper case out), get, list, per cluster, remove by both paths, audited", async () => {
    const t = await topic();
    const res = await post(t, `keyType=string&valueType=Avro&valueSchema=${encodeURIComponent(avro)}`);
    expect(res.status).toBe(200);
    const want = { topicName: t, keyType: "STRING", valueType: "AVRO", valueSchema: avro, inferred: false };
    expect(await res.json()).toEqual(want);
    expect(await (await rt.request(`/api/metadata/topics/${t}`, { role: "nodata" })).json()).toEqual(want);
    const list = (await (await rt.request("/api/metadata/topics", { role: "nodata" })).json()) as Array<{ topicName: string }>;
    // The list holds stored metadata only, so it leaves out `inferred` (every field a string).
    const { inferred: _, ...stored } = want;
    expect(list.find((m) => m.topicName === t)).toEqual(stored);

    // Stored per cluster: the other cluster has none for the same name.
    const other = (await (
      await rt.request("/api/metadata/topics", { role: "nodata", headers: { "x-service-cluster": "other" } })
    ).json()) as unknown[];
    expect(other).toEqual([]);
    expect((await post(t, "keyType=INT&valueType=json", { "x-service-cluster": "other" })).status).toBe(200);
    expect(await (await rt.request(`/api/metadata/topics/${t}`, { role: "read" })).json()).toEqual(want);

    // Overwrite, then remove by the SPEC path and the alias.
    expect((await post(t, "keyType=bytes&valueType=json&valueSchema=%7B%7D")).status).toBe(200);
    expect(await (await rt.request(`/api/metadata/topics/${t}`, { role: "read" })).json()).toEqual({
      topicName: t,
      keyType: "BYTES",
      valueType: "JSON",
      valueSchema: "{}",
      inferred: false,
    });
    expect((await rt.request(`/api/system/topics/metadata/${t}`, { method: "DELETE", role: "write" })).status).toBe(200);
    expect(await (await rt.request(`/api/metadata/topics/${t}`, { role: "read" })).json()).toMatchObject({ inferred: true });
    expect((await rt.request(`/api/system/topics/metadata/${t}`, { method: "DELETE", role: "write" })).status).toBe(404);
    const del = await rt.request(`/api/metadata/topics/${t}`, {
      method: "DELETE",
      role: "write",
      headers: { "x-service-cluster": "other" },
    });
    expect(del.status).toBe(200);

    const audit = (await (await rt.request("/api/audit?type=TOPIC_METADATA", { role: "admin" })).json()) as Array<{
      change: string;
      content: Record<string, string>;
    }>;
    expect(audit.filter((e) => e.content.topicName === t).map((e) => `${e.change} ${e.content.outcome}`)).toEqual([
      "REMOVE SUCCESS",
      "REMOVE FAILURE",
      "REMOVE SUCCESS",
      "UPDATE SUCCESS",
      "UPDATE SUCCESS",
      "UPDATE SUCCESS",
    ]);
  });

  test("bad input is 400 with the parser's message; unknown topic is 404", async () => {
    const t = await topic();
    const unknownType = await post(t, "keyType=STRING&valueType=XML");
    expect(unknownType.status).toBe(400);
    expect((await errorOf(unknownType)).message).toContain("AVRO, JSON, STRING, INT, LONG, DOUBLE, FLOAT, BYTES, PROTOBUF");
    const badAvro = await post(
      t,
      `keyType=STRING&valueType=AVRO&valueSchema=${encodeURIComponent('{"type":"record","name":"R","fields":[{"name":"a","type":"nope"}]}')}`,
    );
    expect(badAvro.status).toBe(400);
    expect((await errorOf(badAvro)).message).toContain("nope");
    const badJson = await post(t, `keyType=JSON&valueType=STRING&keySchema=${encodeURIComponent("{oops")}`);
    expect(badJson.status).toBe(400);
    expect((await errorOf(badJson)).message).toContain("keySchema: not valid JSON");
    expect((await post(t, "keyType=STRING")).status).toBe(400);
    expect((await post(t, "keyType=STRING&valueType=STRING&colour=red")).status).toBe(400);
    expect((await post(uniqueTopic("missing"), "keyType=STRING&valueType=STRING")).status).toBe(404);
    expect((await rt.request(`/api/metadata/topics/${uniqueTopic("missing")}`, { role: "read" })).status).toBe(404);
    expect((await rt.request(`/api/metadata/topics/${t}`, { method: "DELETE", role: "write" })).status).toBe(404);
    expect((await rt.request(`/api/metadata/topics/${t}?keyType=STRING&valueType=STRING`, { method: "POST", role: "read" })).status).toBe(
      403,
    );
    expect(await (await rt.request("/api/metadata/topics", { role: "read" })).json()).not.toContainEqual(
      expect.objectContaining({ topicName: t }),
    );
  });

  test("without stored metadata, types are inferred from records", async () => {
    const cases: Array<[Array<{ key?: string | Uint8Array | null; value: string | Uint8Array | null }>, string, string]> = [
      [
        [
          { key: "k1", value: '{"a":1}' },
          { key: "k2", value: '{"a":2}' },
        ],
        "STRING",
        "JSON",
      ],
      [[{ key: long(5n), value: int(9) }], "LONG", "INT"],
      [[{ key: null, value: wire(12, 2, 4) }], "BYTES", "AVRO"],
      [[], "BYTES", "BYTES"],
    ];
    for (const [records, keyType, valueType] of cases) {
      const t = await topic(records);
      const res = await rt.request(`/api/metadata/topics/${t}`, { role: "read" });
      expect(await res.json()).toEqual({ topicName: t, keyType, valueType, inferred: true });
    }
  });
});
