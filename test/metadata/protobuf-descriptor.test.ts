/**
 * Issue 29, Protobuf topics without a schema registry: an uploaded descriptor set (a binary
 * FileDescriptorSet, or base64 in JSON) and the message each side holds, stored as the topic's
 * metadata (PROTOBUF); its records, bare Protobuf written by Google's Python implementation and by
 * protobufjs, then decode in queries and the message browser. Bad uploads are clear 400s, nothing
 * stored; each change is audited (the role matrix checks who may).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { uniqueTopic } from "../cluster/cluster.ts";
import { encodeWith, orderTypes, pythonDescriptorSet, pythonEncode } from "../helpers/protobuf.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { createReadyTopic } from "../helpers/topics.ts";
import { stream } from "../sql-exec/helpers.ts";

let rt: TestRuntime;
const topics: string[] = [];
const descriptorSet = pythonDescriptorSet();
const { order, money } = orderTypes();

beforeAll(async () => {
  // No schema registry: the descriptor set is all there is.
  rt = await testRuntime({});
});
afterAll(async () => {
  await rt.dispose({ topics });
});

const upload = (t: string, side: string, body: unknown, init: { query?: string; contentType?: string } = {}) =>
  rt.request(`/api/metadata/topics/${t}/protobuf/${side}${init.query ?? ""}`, {
    method: "PUT",
    role: "write",
    headers: { "content-type": init.contentType ?? "application/json" },
    body: body instanceof Uint8Array ? body : JSON.stringify(body),
  });

describe("29: descriptor sets per topic", () => {
  test("29: uploaded as base64 JSON or binary; bare records decode in queries and the browser", async () => {
    const t = await createReadyTopic(rt.kafka.default(), { prefix: "proto-desc", partitions: 1, track: topics });
    await rt.kafka.default().writes.produce(t, [
      {
        key: encodeWith(money, { currency: "EUR", units: 1 }),
        value: pythonEncode("loupe.test.Order", { id: "p1", status: "SHIPPED", total: "5", lines: [{ sku: "cap", qty: 2 }] }),
      },
      {
        key: encodeWith(money, { currency: "USD", units: 2 }),
        value: encodeWith(order, { id: "j2", status: "PLACED", card: "4111", counts: { a: 1 } }),
      },
      { key: null, value: Buffer.from([0xff, 0xff, 0xff]) },
    ]);

    const value = await upload(t, "value", { messageType: "loupe.test.Order", descriptorSet: descriptorSet.toString("base64") });
    expect(value.status).toBe(200);
    expect(await value.json()).toMatchObject({ topicName: t, side: "value", messageType: "loupe.test.Order", valueType: "PROTOBUF" });
    const key = await upload(t, "key", descriptorSet, {
      contentType: "application/octet-stream",
      query: "?messageType=loupe.test.common.Money",
    });
    expect(key.status).toBe(200);
    expect(await key.json()).toMatchObject({ side: "key", keyType: "PROTOBUF", valueType: "PROTOBUF" });
    const meta = (await (await rt.request(`/api/metadata/topics/${t}`, { role: "read" })).json()) as { valueSchema: string };
    expect(JSON.parse(meta.valueSchema)).toMatchObject({ messageType: "loupe.test.Order" });

    const s = await stream(
      rt,
      `SELECT id, _key.currency AS c, lines[0].qty AS qty, card, total FROM \`${t}\` WHERE status = 'SHIPPED' OR counts.a = 1`,
    );
    expect(s.records.map((r: { value: string }) => JSON.parse(r.value))).toEqual([
      { id: "p1", c: "EUR", qty: 2, card: null, total: 5 },
      { id: "j2", c: "USD", qty: null, card: "4111", total: 0 },
    ]);
    expect(s.end).toMatchObject({ totalRecords: 3, undecodableRecords: 1 });

    const page = (await (await rt.request(`/api/topics/${t}/records?seek=oldest`, { role: "read" })).json()) as {
      records: Array<{ key: { format: string; text: string } | null; value: { format: string; text: string; error?: string } }>;
    };
    expect(page.records.map((r) => r.value.format)).toEqual(["PROTOBUF", "PROTOBUF", "BYTES"]);
    expect(JSON.parse(page.records[0]!.value.text)).toMatchObject({ id: "p1", status: "SHIPPED", lines: [{ sku: "cap", qty: 2 }] });
    expect(page.records[0]!.key).toMatchObject({ format: "PROTOBUF" });
    expect(page.records[2]!.value.error).toContain("not valid Protobuf");

    const audit = (await (await rt.request("/api/audit?type=TOPIC_METADATA", { role: "admin" })).json()) as Array<{
      change: string;
      content: Record<string, unknown>;
    }>;
    const mine = audit.filter((e) => e.content.topicName === t);
    expect(mine.map((e) => `${e.change} ${e.content.outcome} ${e.content.side}`)).toEqual(["UPDATE SUCCESS key", "UPDATE SUCCESS value"]);
    expect(mine[1]!.content).toMatchObject({ messageType: "loupe.test.Order", descriptorBytes: String(descriptorSet.byteLength) });
  });

  test("29: bad uploads are 400s naming what is wrong, and store nothing", async () => {
    const t = await createReadyTopic(rt.kafka.default(), { prefix: "proto-bad", partitions: 1, track: topics });
    const cases: Array<[string, Response, string]> = [
      [
        "garbage bytes",
        await upload(t, "value", Buffer.from("not a descriptor set"), {
          contentType: "application/octet-stream",
          query: "?messageType=a.B",
        }),
        "not a FileDescriptorSet",
      ],
      [
        "unknown message",
        await upload(t, "value", { messageType: "loupe.test.Nope", descriptorSet: descriptorSet.toString("base64") }),
        "loupe.test.Order",
      ],
      ["not base64", await upload(t, "value", { messageType: "loupe.test.Order", descriptorSet: "%%%" }), "descriptorSet: not base64"],
      ["no message named", await upload(t, "value", descriptorSet, { contentType: "application/octet-stream" }), "messageType"],
      ["no body", await upload(t, "value", {}), "messageType"],
      [
        "a side that is none",
        await upload(t, "header", { messageType: "loupe.test.Order", descriptorSet: descriptorSet.toString("base64") }),
        "side",
      ],
    ];
    for (const [what, res, says] of cases) {
      expect([what, res.status]).toEqual([what, 400]);
      expect((await errorOf(res)).message).toContain(says);
    }
    expect(await (await rt.request(`/api/metadata/topics/${t}`, { role: "read" })).json()).toMatchObject({ inferred: true });
    const missing = await upload(uniqueTopic("missing"), "value", {
      messageType: "loupe.test.Order",
      descriptorSet: descriptorSet.toString("base64"),
    });
    expect(missing.status).toBe(404);
    // The plain metadata route checks a PROTOBUF schema the same way.
    const plain = await rt.request(
      `/api/metadata/topics/${t}?keyType=STRING&valueType=PROTOBUF&valueSchema=${encodeURIComponent('{"messageType":"x"}')}`,
      {
        method: "POST",
        role: "write",
      },
    );
    expect(plain.status).toBe(400);
  });
});
