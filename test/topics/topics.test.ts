import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createKafkaPool } from "../../src/kafka/index.ts";
import { kafkaBootstrap, uniqueTopic } from "../cluster/cluster.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { createReadyTopic, waitForTopic } from "../helpers/topics.ts";
import { eventually, waitFor } from "../helpers/wait.ts";
import { createPartitions, describeCluster } from "../kafka/helpers.ts";

let rt: TestRuntime;
const created: string[] = [];

beforeAll(async () => {
  rt = await testRuntime({ lag: { cacheTtl: 0, sampleInterval: 250 } });
});
afterAll(async () => {
  await rt.dispose({ topics: created });
});

const json = (body: unknown) => ({ method: "POST", body: JSON.stringify(body), role: "write" as const });

async function createTopic(partitions = 1, configs?: Record<string, string>): Promise<string> {
  const name = uniqueTopic("tp");
  created.push(name);
  const res = await rt.request("/api/topics", json({ topicName: name, partitions, replication: 1, ...(configs ? { configs } : {}) }));
  expect(res.status).toBe(201);
  return name;
}

async function audits(type: string): Promise<Array<{ type: string; change: string; userId: string; content: Record<string, string> }>> {
  const res = await rt.request(`/api/audit?type=${type}`, { role: "admin" });
  expect(res.status).toBe(200);
  return (await res.json()) as Array<{ type: string; change: string; userId: string; content: Record<string, string> }>;
}

async function notifications(alertId: number): Promise<
  Array<{
    alertId: number;
    labels: Record<string, string>;
    annotations: Record<string, string>;
    startsAt: string;
    endsAt: null;
    generatorURL: string;
  }>
> {
  const res = await rt.request(`/api/alerts?alertId=${alertId}`, { role: "read" });
  expect(res.status).toBe(200);
  return (await res.json()) as never;
}

describe("POST /api/topics", () => {
  test("creates with 201, an audit entry and notification 4000", async () => {
    const name = uniqueTopic("tp-create");
    created.push(name);
    const res = await rt.request(
      "/api/topics",
      json({ topicName: name, partitions: 3, replication: 1, configs: { "cleanup.policy": "compact" } }),
    );
    expect(res.status).toBe(201);
    expect(await res.text()).toBe(`Topic '${name}' created`);
    const [t] = await rt.kafka.default().topics.describe([name]);
    expect(t!.partitions).toBe(3);
    const cfg = await rt.kafka.default().configs.describeTopic(name);
    expect(cfg.find((c) => c.name === "cleanup.policy")!.value).toBe("compact");

    const entry = (await audits("TOPIC")).find((e) => e.content.topicName === name && e.change === "ADD");
    expect(entry).toMatchObject({ userId: "wanda", content: { outcome: "SUCCESS", partitions: "3" } });
    const n = (await notifications(4000)).find((x) => x.labels.instance === name);
    expect(n).toMatchObject({
      alertId: 4000,
      endsAt: null,
      labels: { category: "Topics", severity: "INFO" },
      annotations: { source: "wanda" },
    });
    expect(n!.startsAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
  });

  test("broker defaults when partitions and replication are absent", async () => {
    const name = uniqueTopic("tp-defaults");
    created.push(name);
    expect((await rt.request("/api/topics", json({ topicName: name }))).status).toBe(201);
    const [t] = await rt.kafka.default().topics.describe([name]);
    expect(t!.partitions).toBe(1);
    expect(t!.replicationFactor).toBe(1);
  });

  test("an existing topic is 409", async () => {
    const name = await createTopic();
    const res = await rt.request("/api/topics", json({ topicName: name }));
    expect(res.status).toBe(409);
    expect((await errorOf(res)).message).toContain("already exists");
  });

  test.each([".", "..", "a b", "ü", "x".repeat(250), ""])("name %p is 400", async (bad) => {
    const res = await rt.request("/api/topics", json({ topicName: bad }));
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toContain("topicName");
  });

  test("a 249-character name is fine", async () => {
    const name = `tp-long-${Date.now()}-`.padEnd(249, "x");
    created.push(name);
    expect((await rt.request("/api/topics", json({ topicName: name }))).status).toBe(201);
  });

  test("bad shapes are 400", async () => {
    for (const body of [
      {},
      { topicName: uniqueTopic("x"), partitions: 0 },
      { topicName: uniqueTopic("x"), partitions: "two" },
      { topicName: uniqueTopic("x"), replication: -1 },
    ]) {
      expect((await rt.request("/api/topics", json(body))).status).toBe(400);
    }
    const res = await rt.request("/api/topics", { method: "POST", body: "{not json", role: "write" });
    expect(res.status).toBe(400);
  });

  test("an unknown config key or a bad value is 400 with the broker's reason, and nothing is created", async () => {
    const a = uniqueTopic("tp-badcfg");
    const res = await rt.request("/api/topics", json({ topicName: a, configs: { "no.such.config": "1" } }));
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toContain("no.such.config");
    const b = uniqueTopic("tp-badval");
    const res2 = await rt.request("/api/topics", json({ topicName: b, configs: { "retention.ms": "soon" } }));
    expect(res2.status).toBe(400);
    expect((await errorOf(res2)).message).toContain("retention.ms");
    const names = (await rt.kafka.default().topics.list()).map((t) => t.name);
    expect(names).not.toContain(a);
    expect(names).not.toContain(b);
  });

  test("replication above the broker count is 400", async () => {
    const res = await rt.request("/api/topics", json({ topicName: uniqueTopic("tp-repl"), replication: 3 }));
    expect(res.status).toBe(400);
  });

  test("read and nodata may not create", async () => {
    for (const role of ["read", "nodata"] as const) {
      const res = await rt.request("/api/topics", { method: "POST", body: JSON.stringify({ topicName: uniqueTopic("x") }), role });
      expect(res.status).toBe(403);
    }
  });
});

describe("GET /api/topics and /api/topics/{t}", () => {
  test("the full resource: offsets, messages, timestamp, configs, types, consumers with exact lag", async () => {
    const name = await createTopic(3);
    const kafka = rt.kafka.default();
    const base = Date.now() - 60_000;
    // 5, 3 and 0 records; the newest record has timestamp base + 7.
    await kafka.writes.produce(name, [
      ...Array.from({ length: 5 }, (_, i) => ({ partition: 0, key: `k${i}`, value: JSON.stringify({ n: i }), timestamp: base + i })),
      ...Array.from({ length: 3 }, (_, i) => ({ partition: 1, key: `k${i}`, value: JSON.stringify({ n: i }), timestamp: base + 5 + i })),
    ]);
    const group = uniqueTopic("grp-topic");
    await kafka.groups.alterOffsets(group, [
      { topic: name, partition: 0, offset: 2 },
      { topic: name, partition: 1, offset: 3 },
    ]);

    const res = await rt.request(`/api/topics/${name}`, { role: "nodata" });
    expect(res.status).toBe(200);
    const t = (await res.json()) as Record<string, unknown> & {
      config: Array<{ configuration: string; value: string; defaultValue: string; documentation: string }>;
      consumers: Array<Record<string, unknown>>;
    };
    // The leader is a live broker holding a replica, in sync.
    for (const p of t.messagesPerPartition as Array<{ leader: number; replicas: number[]; isr: number[] }>) {
      expect(p.leader).toBeGreaterThanOrEqual(0);
      expect(p.replicas).toContain(p.leader);
      expect(p.isr).toContain(p.leader);
    }
    expect(t).toMatchObject({
      topicName: name,
      partitions: 3,
      replication: 1,
      isControlTopic: false,
      isMarkedForDeletion: false,
      keyType: "STRING",
      valueType: "JSON",
      inferred: true,
      keySchema: null,
      valueSchema: null,
      totalMessages: 8,
      timestamp: base + 7,
      messagesPerPartition: [
        { partition: 0, messages: 5, begin: 0, end: 5 },
        { partition: 1, messages: 3, begin: 0, end: 3 },
        { partition: 2, messages: 0, begin: 0, end: 0 },
      ],
    });
    expect(typeof t.messagesPerSecond).toBe("number");
    const retention = t.config.find((c) => c.configuration === "retention.ms")!;
    expect(retention.value).toBe("604800000");
    expect(retention.defaultValue).toBe("604800000");
    expect(retention.documentation.length).toBeGreaterThan(10);
    expect(t.config.length).toBeGreaterThan(20);

    const broker = (await describeCluster(rt.kafka.default())).brokers[0]!;
    // The test cluster gives each node a rack (a running broker named by KAFKA_BOOTSTRAP may have none).
    if (process.env.LOUPE_TEST_OWN_KAFKA === "1") expect(broker.rack).toBe(`rack-${broker.id}`);
    expect(t.consumers).toEqual([
      {
        id: group,
        type: "classic",
        // regression: the coordinator's rack was always null.
        coordinator: { id: broker.id, host: broker.host, port: broker.port, rack: broker.rack },
        active: false,
        state: "NoActiveMembers",
        kafkaState: "Empty",
        consumers: [],
        consumersCount: 0,
        topicPartitionsCount: 2,
        lag: 3,
        minLag: 0,
        maxLag: 3,
        partitions: [
          { topic: name, partition: 0, currentOffset: 2, logEndOffset: 5, lag: 3, consumerId: null, clientId: null, host: null },
          { topic: name, partition: 1, currentOffset: 3, logEndOffset: 3, lag: 0, consumerId: null, clientId: null, host: null },
        ],
      },
    ]);

    const list = (await (await rt.request("/api/topics", { role: "nodata" })).json()) as Array<Record<string, unknown>>;
    expect(list.find((x) => x.topicName === name)).toMatchObject({
      partitions: 3,
      replication: 1,
      totalMessages: 8,
      isControlTopic: false,
    });
    expect(list.find((x) => x.topicName === "__consumer_offsets")).toMatchObject({ isControlTopic: true });
    await kafka.groups.delete([group]);
  });

  test("an empty topic has timestamp 0 and BYTES types, inferred", async () => {
    const name = await createTopic(2);
    const t = (await (await rt.request(`/api/topics/${name}`, { role: "read" })).json()) as Record<string, unknown>;
    expect(t).toMatchObject({ timestamp: 0, totalMessages: 0, keyType: "BYTES", valueType: "BYTES", inferred: true, consumers: [] });
  });

  test("stored metadata wins over inference", async () => {
    const name = await createTopic(1);
    await rt.kafka.default().writes.produce(name, [{ key: "a", value: "plain text" }]);
    const schema = JSON.stringify({ type: "record", name: "R", fields: [{ name: "a", type: "int" }] });
    const post = await rt.request(`/api/metadata/topics/${name}?keyType=string&valueType=avro&valueSchema=${encodeURIComponent(schema)}`, {
      method: "POST",
      role: "write",
    });
    expect(post.status).toBe(200);
    const t = (await (await rt.request(`/api/topics/${name}`, { role: "read" })).json()) as Record<string, unknown>;
    expect(t).toMatchObject({ keyType: "STRING", valueType: "AVRO", valueSchema: schema, keySchema: null, inferred: false });
  });

  test("messagesPerSecond comes from the background sampler", async () => {
    const name = await createTopic(2);
    const kafka = rt.kafka.default();
    const batch = () =>
      kafka.writes.produce(
        name,
        Array.from({ length: 20 }, (_, i) => ({ partition: i % 2, value: `v${i}` })),
      );
    await batch();
    // A background sample that has the topic, then more records after it.
    await waitFor(() => rt.sampler.samples("local").some((x) => x.ends.get(`${name}\u00000`) === 10), {
      what: "a sample of the topic",
    });
    await batch();
    // The rate spans at least half a second of history: poll until that much has passed.
    const rate = await waitFor(
      async () => {
        const res = await rt.request(`/api/topics/${name}`, { role: "read" });
        const { messagesPerSecond } = (await res.json()) as { messagesPerSecond: number };
        return messagesPerSecond > 0 && messagesPerSecond;
      },
      { what: "a messagesPerSecond above 0" },
    );
    expect(rate).toBeGreaterThan(0);
    expect(rt.sampler.samples("local").length).toBeGreaterThan(1);
  });

  test("unknown topic is 404, a bad name 400", async () => {
    const res = await rt.request(`/api/topics/${uniqueTopic("missing")}`, { role: "read" });
    expect(res.status).toBe(404);
    await errorOf(res);
    expect((await rt.request(`/api/topics/${encodeURIComponent("a b")}`, { role: "read" })).status).toBe(400);
  });

  test("a 100-partition topic answers in well under a second", async () => {
    const name = await createTopic(100);
    await rt.kafka.default().writes.produce(
      name,
      Array.from({ length: 1000 }, (_, i) => ({ partition: i % 100, value: JSON.stringify({ i }) })),
    );
    await rt.request(`/api/topics/${name}`, { role: "read" }); // connections warm
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      const res = await rt.request(`/api/topics/${name}`, { role: "read" });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { messagesPerPartition: unknown[]; totalMessages: number };
      times.push(performance.now() - t0);
      expect(body.messagesPerPartition.length).toBe(100);
      expect(body.totalMessages).toBe(1000);
    }
    const best = Math.min(...times);
    console.error(`GET /api/topics/{t} with 100 partitions: ${times.map((t) => t.toFixed(0)).join(", ")} ms`);
    expect(best).toBeLessThan(500);
  }, 30_000);
});

/**
 * ListOffsets requests one cluster connection needs to read the end offsets of every partition
 * of `name`: one per partition leader when all are served, more when the client has to retry
 * partitions whose leader does not serve them yet.
 */
async function listOffsetsRequests(name: string): Promise<{ requests: number; leaders: number; partitions: number }> {
  const pool = createKafkaPool([{ name: "probe", bootstrapServers: [kafkaBootstrap()], clientId: "loupe-test", default: true }]);
  try {
    const kafka = pool.default();
    const [t] = await kafka.topics.describe([name]);
    const leaders = new Set(t!.partitionDetails.map((p) => p.leader)).size;
    const ends = await kafka.offsets.list(
      t!.partitionDetails.map((p) => ({ topic: name, partition: p.partition })),
      "latest",
    );
    expect(ends.every((e) => e.offset >= 0)).toBe(true);
    return { requests: kafka.stats().byApi.ListOffsets ?? 0, leaders, partitions: t!.partitions };
  } finally {
    await pool.close();
  }
}

describe("topics are usable once created", () => {
  test("regression: producing right after creating a 100-partition topic met partitions without a leader", async () => {
    const name = uniqueTopic("tp-hundred");
    created.push(name);
    expect((await rt.request("/api/topics", json({ topicName: name, partitions: 100, replication: 1 }))).status).toBe(201);
    // Nothing waits here: the 201 itself means every partition is led and served.
    const [t] = await rt.kafka.default().topics.describe([name]);
    expect(t!.partitions).toBe(100);
    expect(t!.partitionDetails.filter((p) => p.leader < 0)).toEqual([]);
    const probe = await listOffsetsRequests(name);
    expect(probe).toEqual({ requests: probe.leaders, leaders: probe.leaders, partitions: 100 });
    const written = await rt.kafka.default().writes.produce(
      name,
      Array.from({ length: 100 }, (_, p) => ({ partition: p, value: `p${p}` })),
    );
    expect(written.map((w) => w.offset)).toEqual(Array.from({ length: 100 }, () => 0));
  }, 60_000);

  test("regression: createPartitions then describe answered the old partition count", async () => {
    // Kafka answers CreatePartitions once its controller committed the change; the broker's
    // metadata and the new partitions' leaders follow later. The fixture waits for both.
    const kafka = rt.kafka.default();
    const name = await createReadyTopic(kafka, { prefix: "tp-grow", partitions: 1, track: created });
    await createPartitions(kafka, name, 3);
    const grown = await waitForTopic(kafka, name, { partitions: 3 });
    expect(grown.partitionDetails.map((p) => p.partition)).toEqual([0, 1, 2]);
    expect((await kafka.topics.describe([name]))[0]!.partitions).toBe(3);
    const probe = await listOffsetsRequests(name);
    expect(probe).toEqual({ requests: probe.leaders, leaders: probe.leaders, partitions: 3 });
    expect(((await (await rt.request(`/api/topics/${name}`, { role: "read" })).json()) as { partitions: number }).partitions).toBe(3);
  });
});

describe("PUT /api/topics/config/{t}", () => {
  test("applies, audits TOPIC UPDATE, answers 200", async () => {
    const name = await createTopic();
    const res = await rt.request(`/api/topics/config/${name}`, {
      method: "PUT",
      role: "write",
      body: JSON.stringify({
        configs: [
          { key: "retention.ms", value: "3600000" },
          { key: "cleanup.policy", value: "compact" },
        ],
      }),
    });
    expect(res.status).toBe(200);
    const cfg = await rt.kafka.default().configs.describeTopic(name);
    expect(cfg.find((c) => c.name === "retention.ms")!.value).toBe("3600000");
    expect(cfg.find((c) => c.name === "cleanup.policy")!.value).toBe("compact");
    const entry = (await audits("TOPIC")).find((e) => e.content.topicName === name && e.change === "UPDATE");
    expect(entry!.content.outcome).toBe("SUCCESS");
    expect(JSON.parse(entry!.content.configs!)).toEqual({ "retention.ms": "3600000", "cleanup.policy": "compact" });
  });

  test("an unknown key or a bad value is 400 and nothing is applied", async () => {
    const name = await createTopic();
    const put = (configs: unknown) =>
      rt.request(`/api/topics/config/${name}`, { method: "PUT", role: "write", body: JSON.stringify({ configs }) });
    const unknown = await put([
      { key: "retention.ms", value: "1000" },
      { key: "no.such.key", value: "1" },
    ]);
    expect(unknown.status).toBe(400);
    expect((await errorOf(unknown)).message).toContain("no.such.key");
    const bad = await put([
      { key: "retention.ms", value: "1000" },
      { key: "min.insync.replicas", value: "many" },
    ]);
    expect(bad.status).toBe(400);
    expect((await errorOf(bad)).message).toContain("min.insync.replicas");
    const cfg = await rt.kafka.default().configs.describeTopic(name);
    expect(cfg.find((c) => c.name === "retention.ms")!.value).toBe("604800000");
    for (const body of [[], [{ key: "" }], "x"]) expect((await put(body)).status).toBe(400);
    const failed = (await audits("TOPIC")).find((e) => e.content.topicName === name && e.change === "UPDATE");
    expect(failed!.content.outcome).toBe("FAILURE");
  });

  test("23: what a change's 200 answered is what the topic's configs say at once: set, then reset to the default, ten times", async () => {
    const name = await createTopic();
    const put = (value: string | null) =>
      rt.request(`/api/topics/config/${name}`, {
        method: "PUT",
        role: "write",
        body: JSON.stringify({ configs: [{ key: "retention.ms", value }] }),
      });
    for (let i = 0; i < 10; i++) {
      const value = String(3_600_000 + i);
      expect((await put(value)).status).toBe(200);
      let cfg = await rt.kafka.default().configs.describeTopic(name);
      expect(cfg.find((c) => c.name === "retention.ms")).toMatchObject({ value, source: "DYNAMIC_TOPIC_CONFIG" });
      expect((await put(null)).status).toBe(200);
      cfg = await rt.kafka.default().configs.describeTopic(name);
      expect(cfg.find((c) => c.name === "retention.ms")!.source).not.toBe("DYNAMIC_TOPIC_CONFIG");
    }
  });

  test("unknown topic is 404", async () => {
    const res = await rt.request(`/api/topics/config/${uniqueTopic("missing")}`, {
      method: "PUT",
      role: "write",
      body: JSON.stringify({ configs: [{ key: "retention.ms", value: "1000" }] }),
    });
    expect(res.status).toBe(404);
  });
});

describe("DELETE /api/topics/{t}/{partition}/{offset}", () => {
  test("answers at once with the COMPAT text, then audits TOPIC_DATA and notifies 4002", async () => {
    const name = await createTopic(2);
    const kafka = rt.kafka.default();
    await kafka.writes.produce(
      name,
      Array.from({ length: 10 }, (_, i) => ({ partition: 0, value: `v${i}` })),
    );
    const res = await rt.request(`/api/topics/${name}/0/4`, { method: "DELETE", role: "write" });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text.split(",")[0]).toBe(`Records from topic '${name}' and partition '0' up to offset '4'`);
    expect(
      await eventually(async () =>
        (await audits("TOPIC_DATA")).some((e) => e.content.topicName === name && e.content.outcome === "SUCCESS"),
      ),
    ).toBe(true);
    const entry = (await audits("TOPIC_DATA")).find((e) => e.content.topicName === name)!;
    expect(entry).toMatchObject({ change: "REMOVE", userId: "wanda", content: { partition: "0", offset: "4", lowWatermark: "4" } });
    expect(await eventually(async () => (await notifications(4002)).some((n) => n.labels.instance === name))).toBe(true);
    const [p0] = await kafka.offsets.bounds([name]);
    expect(p0).toMatchObject({ partition: 0, earliest: 4, latest: 10 });
  });

  test("error cases", async () => {
    const name = await createTopic(1);
    await rt.kafka.default().writes.produce(name, [{ value: "a" }, { value: "b" }]);
    const del = (path: string) => rt.request(path, { method: "DELETE", role: "write" });
    expect((await del(`/api/topics/${name}/-1/0`)).status).toBe(400);
    expect((await del(`/api/topics/${name}/0/-1`)).status).toBe(400);
    expect((await del(`/api/topics/${name}/x/1`)).status).toBe(400);
    expect((await del(`/api/topics/${name}/0/1.5`)).status).toBe(400);
    expect((await del(`/api/topics/${name}/0/abc`)).status).toBe(400);
    expect((await del(`/api/topics/${uniqueTopic("missing")}/0/1`)).status).toBe(404);
    expect((await del(`/api/topics/${name}/1/1`)).status).toBe(404);
    expect((await rt.request(`/api/topics/${name}/0/1`, { method: "DELETE", role: "read" })).status).toBe(403);
    const refused = (await audits("TOPIC_DATA")).filter((e) => e.content.topicName === name);
    expect(refused.length).toBe(6); // five malformed, the unknown partition
    expect(refused.every((e) => e.content.outcome === "FAILURE" && e.change === "REMOVE")).toBe(true);
    expect(refused.find((e) => e.content.partition === "1")!.content.reason).toStartWith("NOT_FOUND: ");
  });

  test("an offset past the end deletes every record there is, and answers as usual", async () => {
    const name = await createTopic(1);
    await rt.kafka.default().writes.produce(name, [{ value: "a" }, { value: "b" }]);
    const res = await rt.request(`/api/topics/${name}/0/10`, { method: "DELETE", role: "write" });
    expect(res.status).toBe(200);
    expect((await res.text()).split(",")[0]).toBe(`Records from topic '${name}' and partition '0' up to offset '10'`);
    expect(await eventually(async () => (await rt.kafka.default().offsets.bounds([name]))[0]!.earliest === 2)).toBe(true);
    const entry = await waitFor(async () =>
      (await audits("TOPIC_DATA")).find((e) => e.content.topicName === name && e.content.outcome === "SUCCESS"),
    );
    expect(entry.content).toMatchObject({ offset: "10", endOffset: "2", lowWatermark: "2" });
  });
});

describe("DELETE /api/topics/{t}", () => {
  test("deletes with 200, audits REMOVE, notifies 4001; unknown is 404", async () => {
    const name = await createTopic();
    const res = await rt.request(`/api/topics/${name}`, { method: "DELETE", role: "write" });
    expect(res.status).toBe(200);
    expect((await rt.kafka.default().topics.list()).some((t) => t.name === name)).toBe(false);
    expect((await audits("TOPIC")).find((e) => e.content.topicName === name && e.change === "REMOVE")!.content.outcome).toBe("SUCCESS");
    expect((await notifications(4001)).some((n) => n.labels.instance === name)).toBe(true);
    const again = await rt.request(`/api/topics/${name}`, { method: "DELETE", role: "write" });
    expect(again.status).toBe(404);
    await errorOf(again);
  });

  test("regression: a topic deleted with 200 could still be listed right after", async () => {
    // DeleteTopics answers once the controller has committed the deletion, before the broker's
    // metadata drops the topic; seen in 3 of 10 tries, more often with several deletions at once.
    // Not left to afterAll: deleting a topic that is gone again costs the client's retries.
    const names = Array.from({ length: 8 }, () => uniqueTopic("tp-gone"));
    for (const name of names)
      expect((await rt.request("/api/topics", json({ topicName: name, partitions: 1, replication: 1 }))).status).toBe(201);
    const listedAfter = await Promise.all(
      names.map(async (name) => {
        expect((await rt.request(`/api/topics/${name}`, { method: "DELETE", role: "write" })).status).toBe(200);
        return (await rt.kafka.default().topics.list({ includeInternal: true })).some((t) => t.name === name);
      }),
    );
    expect(listedAfter).toEqual(names.map(() => false));
    const listed = await rt.request("/api/topics", { role: "read" });
    expect(listed.status).toBe(200);
    const shown = new Set(((await listed.json()) as Array<{ topicName: string }>).map((t) => t.topicName));
    expect(names.filter((n) => shown.has(n))).toEqual([]);
  });
});

describe("internal topics", () => {
  test("__consumer_offsets is shown as a control topic and refuses record deletion", async () => {
    const name = await createTopic(1);
    const group = uniqueTopic("grp-internal");
    await rt.kafka.default().groups.alterOffsets(group, [{ topic: name, partition: 0, offset: 0 }]);
    const res = await rt.request("/api/topics/__consumer_offsets", { role: "read" });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ topicName: "__consumer_offsets", isControlTopic: true, keyType: "BYTES" });
    // A writer may not touch an internal topic at all; an admin is told Kafka's own are not deleted by hand.
    const byWriter = await rt.request("/api/topics/__consumer_offsets/0/0", { method: "DELETE", role: "write" });
    expect(byWriter.status).toBe(403);
    expect(((await byWriter.json()) as { message: string }).message).toBe(
      "Topic '__consumer_offsets' is internal to Kafka: only an admin without limits may read or write its records",
    );
    expect((await rt.request("/api/topics/__consumer_offsets/0/0", { method: "DELETE", role: "admin" })).status).toBe(400);
    expect((await rt.request("/api/metadata/topics/__consumer_offsets", { role: "read" })).status).toBe(200);
    await rt.kafka.default().groups.delete([group]);
  });
});

describe("cluster capabilities used by delete-records", () => {
  test("supportsApi tells a known API from one the broker lacks (a pre-0.11 broker lacks DeleteRecords)", async () => {
    const kafka = rt.kafka.default();
    expect(await kafka.supportsApi("DeleteRecords")).toBe(true);
    expect(await kafka.supportsApi("NoSuchApi")).toBe(false);
  });
});
