/**
 * Issue 23, the topic page's changes beyond configs: partitions added by a writer
 * (PUT /api/topics/{t}/partitions; Kafka never removes one, so a smaller or equal count is a
 * 400 that changes nothing), audited, scoped and refused on internal topics. And the topic's
 * answer says what the caller may do with it (`access`) and whose machinery an internal topic
 * is (`internalTo`), so the page offers only that and says so.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { uniqueTopic } from "../cluster/cluster.ts";
import { ROLE_USERS, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { scopedUser, topicGroup } from "../helpers/scoped.ts";
import { createReadyTopic } from "../helpers/topics.ts";

let rt: TestRuntime;
const made: string[] = [];

beforeAll(async () => {
  rt = await testRuntime({});
});
afterAll(async () => {
  await rt.dispose({ topics: made });
});

type Caller = { role?: "nodata" | "read" | "write" | "admin"; token?: string };
const put = (topic: string, partitions: unknown, who: Caller = { role: "write" }) =>
  rt.request(`/api/topics/${topic}/partitions`, { method: "PUT", body: JSON.stringify({ partitions }), ...who });
const messageOf = async (res: Response) => ((await res.json()) as { message: string }).message;
const count = async (topic: string) => (await rt.kafka.default().topics.describe([topic]))[0]!.partitions;

async function newestAudit(user: string) {
  const res = await rt.request(`/api/audit?type=TOPIC&user=${user}&limit=1`, { role: "admin" });
  return ((await res.json()) as Array<{ type: string; change: string; content: Record<string, string> }>)[0]!;
}

describe("23: PUT /api/topics/{topicName}/partitions", () => {
  test("23: a writer adds partitions: answered once they are led, writable at once, audited", async () => {
    const topic = await createReadyTopic(rt.kafka.default(), { prefix: "grow", partitions: 2, track: made });
    const res = await put(topic, 5);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ topicName: topic, partitions: 5, previous: 2 });
    expect(await count(topic)).toBe(5);
    // The new partition takes a record at once.
    const written = await rt.request(`/api/topics/${topic}/records`, {
      method: "POST",
      role: "write",
      body: JSON.stringify({ records: [{ value: "{}", partition: 4 }] }),
    });
    expect(written.status).toBe(200);
    expect(await newestAudit(ROLE_USERS.write.name)).toMatchObject({
      type: "TOPIC",
      change: "UPDATE",
      content: { outcome: "SUCCESS", topicName: topic, partitions: "5", previous: "2" },
    });
  });

  test("23: a smaller or equal count is 400 and changes nothing; so is a count that is no whole number", async () => {
    const topic = await createReadyTopic(rt.kafka.default(), { prefix: "shrink", partitions: 3, track: made });
    const smaller = await put(topic, 2);
    expect(smaller.status).toBe(400);
    expect(await messageOf(smaller)).toBe(`Topic '${topic}' has 3 partitions: Kafka cannot remove partitions, so the count can only grow`);
    const same = await put(topic, 3);
    expect(same.status).toBe(400);
    expect(await messageOf(same)).toBe(`Topic '${topic}' has 3 partitions already: give a larger count`);
    for (const bad of [0, 2.5, "4", 100_001]) expect((await put(topic, bad)).status).toBe(400);
    expect(await count(topic)).toBe(3);
    expect(await newestAudit(ROLE_USERS.write.name)).toMatchObject({ change: "UPDATE", content: { outcome: "FAILURE" } });
  });

  test("23: refused for read, a scoped writer outside its scope, and internal topics (Kafka's own even to an admin)", async () => {
    const kafka = rt.kafka.default();
    const topic = await createReadyTopic(kafka, { prefix: "grow-scope", track: made });
    const internal = await createReadyTopic(kafka, { name: uniqueTopic("_loupe-grow"), track: made });
    expect((await put(topic, 2, { role: "read" })).status).toBe(403);
    const scoped = await scopedUser(rt, "wes-grow", [topicGroup("grow-writers", ["grow-own-*"], [], ["write"])]);
    const outside = await put(topic, 2, { token: scoped });
    expect(outside.status).toBe(403);
    expect(await messageOf(outside)).toBe(`Topic '${topic}' is outside your scope`);
    expect(await newestAudit("wes-grow")).toMatchObject({ type: "TOPIC", change: "UPDATE", content: { outcome: "FAILURE" } });
    const inside = await put(internal, 2, { role: "write" });
    expect(inside.status).toBe(403);
    expect(await messageOf(inside)).toContain("is internal to Loupe");
    const kafkaOwn = await put("__consumer_offsets", 100, { role: "admin" });
    expect(kafkaOwn.status).toBe(400);
    expect(await messageOf(kafkaOwn)).toBe("Topic '__consumer_offsets' is internal to Kafka: its partitions are not changed by hand");
    expect(await count(topic)).toBe(1);
    expect(await count(internal)).toBe(1);
  });
});

describe("23: GET /api/topics/{topicName} says what the caller may do and whose an internal topic is", () => {
  test("23: access per role and scope; internalTo names the owner", async () => {
    const kafka = rt.kafka.default();
    const topic = await createReadyTopic(kafka, { prefix: "access", track: made });
    const internal = await createReadyTopic(kafka, { name: uniqueTopic("_loupe-access"), track: made });
    const access = async (name: string, who: Caller) => {
      const res = await rt.request(`/api/topics/${name}`, who);
      expect(res.status).toBe(200);
      const t = (await res.json()) as { access: unknown; internalTo: string | null };
      return { access: t.access, internalTo: t.internalTo };
    };
    expect(await access(topic, { role: "write" })).toEqual({ access: { read: true, write: true }, internalTo: null });
    expect(await access(topic, { role: "read" })).toEqual({ access: { read: true, write: false }, internalTo: null });
    expect(await access(topic, { role: "nodata" })).toEqual({ access: { read: false, write: false }, internalTo: null });
    expect(await access(internal, { role: "write" })).toEqual({ access: { read: false, write: false }, internalTo: "Loupe" });
    expect(await access(internal, { role: "admin" })).toEqual({ access: { read: true, write: true }, internalTo: "Loupe" });
    // Read everywhere, write on some topics only: the answer is per topic.
    const mixed = await scopedUser(rt, "mia-access", [
      topicGroup("access-readers", ["*"]),
      topicGroup("access-writers", [`${topic}`], [], ["write"]),
    ]);
    expect(await access(topic, { token: mixed })).toEqual({ access: { read: true, write: true }, internalTo: null });
    const other = await createReadyTopic(kafka, { prefix: "access-other", track: made });
    expect(await access(other, { token: mixed })).toEqual({ access: { read: true, write: false }, internalTo: null });
  });

  test("23: an override's default is the cluster's, in the key's own unit, even where its synonyms do not name it", async () => {
    const topic = await createReadyTopic(rt.kafka.default(), {
      prefix: "defaults",
      configs: { "retention.ms": "3600000", "segment.bytes": "268435456" },
      track: made,
    });
    const res = await rt.request(`/api/topics/${topic}`, { role: "read" });
    const config = ((await res.json()) as { config: Array<{ configuration: string; value: string; defaultValue: string | null }> }).config;
    const of = (name: string) => config.find((c) => c.configuration === name);
    // The broker keeps retention as log.retention.hours (168): the topic's default is 7 days in ms.
    expect(of("retention.ms")).toMatchObject({ value: "3600000", defaultValue: "604800000" });
    expect(of("segment.bytes")).toMatchObject({ value: "268435456", defaultValue: "1073741824" });
    expect(of("cleanup.policy")).toMatchObject({ value: "delete", defaultValue: "delete" });
  });
});
