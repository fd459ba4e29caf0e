/**
 * Issue 23, the message browser's read (GET /api/topics/{t}/records): record headers were
 * shown nowhere, and the topic page had no records at all ("Data →" opened an empty workbench).
 * The route answers a page of records newest first, or from an offset or a time, with key,
 * value (decoded and raw), headers, timestamp and its type, partition and offset; bounded in
 * records, bytes and time and saying which bound cut it; scoped like a query.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RecordBrowser, topicDecoders } from "../../src/domains/topics/browse-records.ts";
import type { BrowseAnswer } from "../../src/domains/topics/schemas.ts";
import { registryEnv, uniqueTopic } from "../cluster/cluster.ts";
import { confluentWire, registerSchema } from "../helpers/registry.ts";
import { ROLE_USERS, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { scopedUser, topicGroup } from "../helpers/scoped.ts";
import { createReadyTopic } from "../helpers/topics.ts";

let rt: TestRuntime;
const made: string[] = [];
/** Two partitions: 6 records in 0, 4 in 1, timestamps 1,000 ms apart from T0, headers on some. */
let topic: string;
const T0 = Date.UTC(2024, 0, 1);

beforeAll(async () => {
  rt = await testRuntime({ schemaRegistry: registryEnv() });
  const kafka = rt.kafka.default();
  topic = await createReadyTopic(kafka, { prefix: "browse", partitions: 2, track: made });
  let t = T0;
  for (let i = 0; i < 10; i++) {
    await kafka.writes.produce(topic, [
      {
        partition: i < 6 ? 0 : 1,
        key: `k${i}`,
        value: JSON.stringify({ n: i, name: `record ${i}` }),
        timestamp: (t += 1_000),
        ...(i % 2 === 0 ? { headers: { trace: `t-${i}`, bin: new Uint8Array([0xff, 0xfe, 0x00]) } } : {}),
      },
    ]);
  }
});
afterAll(async () => {
  await rt.dispose({ topics: made });
});

async function browse(query: Record<string, string>, role: "read" | "admin" = "read", on = topic): Promise<BrowseAnswer> {
  const res = await rt.request(`/api/topics/${on}/records?${new URLSearchParams(query)}`, { role });
  if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
  return (await res.json()) as BrowseAnswer;
}
const numbers = (a: BrowseAnswer) => a.records.map((r) => (JSON.parse(r.value!.text) as { n: number }).n);

describe("23: GET /api/topics/{topicName}/records", () => {
  test("23: newest first with key, value, headers, timestamp and its type, partition, offset and the raw bytes", async () => {
    const a = await browse({ limit: "3" });
    expect(a.order).toBe("newest");
    expect(numbers(a)).toEqual([9, 8, 7]);
    const r = a.records[1]!;
    expect(r).toMatchObject({ partition: 1, offset: 2, timestamp: T0 + 9_000, timestampType: "CreateTime" });
    expect(r.key).toMatchObject({ format: "STRING", text: "k8", size: 2, base64: Buffer.from("k8").toString("base64") });
    expect(r.value).toMatchObject({ format: "JSON", textCut: false, rawCut: false });
    expect(Buffer.from(r.value!.base64, "base64").toString()).toBe(JSON.stringify({ n: 8, name: "record 8" }));
    // Headers: text as text, bytes that are no UTF-8 as base64, said so.
    expect(r.headers).toEqual([
      { key: "trace", value: "t-8", base64: false },
      { key: "bin", value: Buffer.from([0xff, 0xfe, 0x00]).toString("base64"), base64: true },
    ]);
    expect(a.records[0]!.headers).toEqual([]);
    // Three of ten: the limit cut it, older records remain in both partitions.
    expect(a.stopReason).toBe("LIMIT");
    expect(a.message).toContain("Older records remain in partitions 0, 1");
    // Load older: below where each partition's answer began, without a gap or a repeat.
    const before = a.partitions.map((p) => `${p.partition}:${p.first}`).join(",");
    const older = await browse({ before, limit: "3" });
    expect(numbers(older)).toEqual([6, 5, 4]);
  });

  test("23: the whole topic newest first says END; oldest first and a partition of its own", async () => {
    const all = await browse({ limit: "50" });
    expect(numbers(all)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    expect(all.stopReason).toBe("END");
    expect(all.message).toBeNull();
    const oldest = await browse({ seek: "oldest", limit: "4" });
    expect(oldest.order).toBe("oldest");
    expect(numbers(oldest)).toEqual([0, 1, 2, 3]);
    const one = await browse({ seek: "oldest", partition: "1" });
    expect(numbers(one)).toEqual([6, 7, 8, 9]);
    expect(one.partitions.map((p) => p.partition)).toEqual([1]);
  });

  test("23: seek by offset and by time; `after` goes on from where an answer stopped (a live tail)", async () => {
    const fromOffset = await browse({ seek: "offset", offset: "4", partition: "0" });
    expect(numbers(fromOffset)).toEqual([4, 5]);
    expect(fromOffset.partitions).toEqual([{ partition: 0, begin: 0, end: 6, from: 4, next: 6, first: 4 }]);
    // From a time: each partition from its first record at or after it.
    const fromTime = await browse({ seek: "time", time: String(T0 + 5_500) });
    expect(numbers(fromTime)).toEqual([5, 6, 7, 8, 9]);
    const page = await browse({ seek: "time", time: String(T0 + 1_000), limit: "4" });
    expect(numbers(page)).toEqual([0, 1, 2, 3]);
    const after = page.partitions.map((p) => `${p.partition}:${p.next}`).join(",");
    expect(numbers(await browse({ after, limit: "4" }))).toEqual([4, 5, 6, 7]);
    // A tail: nothing new, then a record written after the answer.
    const tail = await browse({ after: all(fromTime) });
    expect(tail.records).toEqual([]);
    expect(tail.stopReason).toBe("END");
    await rt.kafka
      .default()
      .writes.produce(topic, [{ partition: 1, key: "k10", value: JSON.stringify({ n: 10 }), timestamp: T0 + 11_000 }]);
    const next = await browse({ after: all(fromTime) });
    expect(numbers(next)).toEqual([10]);
    expect(next.partitions.find((p) => p.partition === 1)?.next).toBe(5);
  });

  test("23: a topic of broker time says LogAppendTime; registry Avro is decoded; a record its metadata does not fit shows its bytes and why", async () => {
    const kafka = rt.kafka.default();
    const appended = await createReadyTopic(kafka, {
      prefix: "browse-lat",
      configs: { "message.timestamp.type": "LogAppendTime" },
      track: made,
    });
    const schema = { type: "record", name: "Reading", fields: [{ name: "celsius", type: "double" }] };
    const id = await registerSchema(`${appended}-value`, schema);
    const avsc = (await import("avsc")).default;
    const avroBytes = confluentWire(id, avsc.Type.forSchema(schema as never).toBuffer({ celsius: 21.5 }));
    await kafka.writes.produce(appended, [{ key: null, value: avroBytes, timestamp: 1_000 }]);
    const a = await browse({}, "read", appended);
    expect(a.records[0]!.timestampType).toBe("LogAppendTime");
    expect(a.records[0]!.timestamp).toBeGreaterThan(1_000);
    expect(a.records[0]!.key).toBeNull();
    expect(a.records[0]!.value).toMatchObject({ format: "AVRO", text: '{"celsius":21.5}' });
    expect(Buffer.from(a.records[0]!.value!.base64, "base64").equals(avroBytes)).toBe(true);

    // Metadata says JSON; a record that is no JSON is shown as its bytes, with the reason.
    const typed = await createReadyTopic(kafka, { prefix: "browse-typed", track: made });
    expect(
      (await rt.request(`/api/metadata/topics/${typed}?keyType=STRING&valueType=JSON`, { method: "POST", role: "write" })).status,
    ).toBe(200);
    await kafka.writes.produce(typed, [{ key: "a", value: "not json" }]);
    const t = await browse({}, "read", typed);
    expect(t.records[0]!.value).toMatchObject({
      format: "BYTES",
      text: Buffer.from("not json").toString("base64"),
      error: "not valid JSON",
    });
  });

  test("23: bounds: an answer cut by bytes says MAX_BYTES, a long value is cut and says so, and the next read goes on where it stopped", async () => {
    const kafka = rt.kafka.default();
    const big = await createReadyTopic(kafka, { prefix: "browse-big", track: made });
    const value = "x".repeat(3_000);
    await kafka.writes.produce(
      big,
      Array.from({ length: 5 }, (_, i) => ({ key: `k${i}`, value: `${i}${value}`, timestamp: T0 + i })),
    );
    const TESTER = { name: "tester", groups: [], roles: ["admin"] };
    const browser = new RecordBrowser({
      pool: rt.kafka,
      decoders: (cluster, t, viewer) => topicDecoders(rt.sql, cluster, t, viewer),
      limits: { answerBytes: 6_000, textChars: 1_000, rawBytes: 500 },
    });
    const a = await browser.browse("local", big, { seek: "oldest", limit: 50 }, TESTER);
    // Each record shows some 1,700 characters (its text cut, its bytes cut): three fit in 6,000.
    expect(a.records.length).toBe(3);
    expect(a.stopReason).toBe("MAX_BYTES");
    expect(a.message).toContain("Newer records remain in partition 0");
    const v = a.records[0]!.value!;
    expect(v).toMatchObject({ size: 3_001, textCut: true, rawCut: true });
    expect(v.text.length).toBe(1_000);
    expect(Buffer.from(v.base64, "base64").length).toBe(500);
    const rest = await browser.browse("local", big, { seek: "oldest", limit: 50, after: new Map([[0, a.partitions[0]!.next]]) }, TESTER);
    expect(rest.records.map((r) => r.offset)).toEqual([3, 4]);
    expect(rest.stopReason).toBe("END");
  });

  test("23: refused: nodata, a scoped reader outside its scope, an internal topic to a non-admin; unknown topics, partitions and bad positions are 4xx", async () => {
    const status = async (path: string, init: { role?: "nodata" | "read" | "write" | "admin"; token?: string }) => {
      const res = await rt.request(path, init);
      return `${res.status} ${((await res.json()) as { message?: string }).message ?? ""}`;
    };
    expect(await status(`/api/topics/${topic}/records`, { role: "nodata" })).toStartWith("403 Role nodata may not GET");
    const scoped = await scopedUser(rt, "rita-browse", [topicGroup("browse-readers", ["browse-only-*"])]);
    expect(await status(`/api/topics/${topic}/records`, { token: scoped })).toBe(`403 Topic '${topic}' is outside your scope`);
    // Loupe's own topic: records are an unrestricted admin's only.
    const internal = await createReadyTopic(rt.kafka.default(), { name: uniqueTopic("_loupe-browse"), track: made });
    await rt.kafka.default().writes.produce(internal, [{ key: "k", value: "v" }]);
    for (const role of ["read", "write"] as const)
      expect(await status(`/api/topics/${internal}/records`, { role })).toBe(
        `403 Topic '${internal}' is internal to Loupe: only an admin without limits may read or write its records`,
      );
    expect((await browse({}, "admin", internal)).records.length).toBe(1);
    // The refusal is audited as the denial of a route that changes nothing.
    const audit = (await (await rt.request(`/api/audit?user=${ROLE_USERS.read.name}&limit=1`, { role: "admin" })).json()) as Array<{
      type: string;
      content: Record<string, string>;
    }>;
    expect(audit[0]).toMatchObject({ type: "ACCESS", content: { outcome: "FAILURE", topicName: internal } });

    expect(await status(`/api/topics/${topic}-nope/records`, { role: "read" })).toStartWith("404");
    expect(await status(`/api/topics/${topic}/records?partition=7`, { role: "read" })).toBe(
      `404 Topic '${topic}' has no partition 7 (it has 2)`,
    );
    expect(await status(`/api/topics/${topic}/records?seek=offset`, { role: "read" })).toContain("seek=offset needs offset");
    expect(await status(`/api/topics/${topic}/records?after=0:-1`, { role: "read" })).toContain("positions are partition:offset pairs");
    expect(await status(`/api/topics/${topic}/records?limit=501`, { role: "read" })).toContain("limit is too large");
  });
});

/** `p:next` of every partition of an answer. */
function all(a: BrowseAnswer): string {
  return a.partitions.map((p) => `${p.partition}:${p.next}`).join(",");
}
