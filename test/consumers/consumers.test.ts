import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connectEnv, uniqueTopic } from "../cluster/cluster.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { createReadyTopic } from "../helpers/topics.ts";
import { eventually, waitFor } from "../helpers/wait.ts";
import { joinGroup } from "../kafka/helpers.ts";

let rt: TestRuntime;
const topics: string[] = [];
const groups: string[] = [];

beforeAll(async () => {
  rt = await testRuntime({ lag: { cacheTtl: 0, sampleInterval: 0 } });
});
afterAll(async () => {
  await rt.dispose({ topics, groups });
});

async function topicWith(counts: number[], timestamp?: (p: number, i: number) => number): Promise<string> {
  const kafka = rt.kafka.default();
  const name = await createReadyTopic(kafka, { prefix: "cg", partitions: counts.length, track: topics });
  const records = counts.flatMap((n, p) =>
    Array.from({ length: n }, (_, i) => ({ partition: p, value: `p${p}-${i}`, ...(timestamp ? { timestamp: timestamp(p, i) } : {}) })),
  );
  if (records.length) await kafka.writes.produce(name, records);
  return name;
}

function group(prefix = "grp"): string {
  const g = uniqueTopic(prefix);
  groups.push(g);
  return g;
}

type Detail = {
  id: string;
  state: string;
  lag: number;
  members: Array<{ clientId: string; assignments: Array<{ topic: string; partition: number }> }>;
  offsets: Array<{
    topic: string;
    partition: number;
    currentOffset: number;
    logEndOffset: number;
    lag: number;
    lagSeconds: number | null;
    clientId: string | null;
  }>;
};

async function detail(g: string): Promise<Detail> {
  const res = await rt.request(`/api/consumers/${encodeURIComponent(g)}`, { role: "read" });
  expect(res.status).toBe(200);
  return (await res.json()) as Detail;
}

const put = (g: string, body: unknown) =>
  rt.request(`/api/consumers/${encodeURIComponent(g)}/offsets`, { method: "PUT", role: "write", body: JSON.stringify(body) });

describe("consumer group lag", () => {
  test("exact lag of a group that commits and advances, on detail, list, topic and /metrics", async () => {
    const base = Date.now() - 30_000;
    const t = await topicWith([10, 6], (p, i) => base + p * 100 + i);
    const g = group();
    const kafka = rt.kafka.default();
    await kafka.groups.alterOffsets(g, [
      { topic: t, partition: 0, offset: 4 },
      { topic: t, partition: 1, offset: 6 },
    ]);

    let d = await detail(g);
    expect(d).toMatchObject({ id: g, state: "Empty", lag: 6, members: [] });
    expect(d.offsets.map(({ lagSeconds: _, ...o }) => o)).toEqual([
      { topic: t, partition: 0, currentOffset: 4, logEndOffset: 10, lag: 6, memberId: null, clientId: null, host: null },
      { topic: t, partition: 1, currentOffset: 6, logEndOffset: 6, lag: 0, memberId: null, clientId: null, host: null },
    ] as never);
    // The oldest unread record of partition 0 (offset 4) was written at base + 4.
    const seconds = d.offsets[0]!.lagSeconds!;
    expect(seconds).toBeGreaterThanOrEqual(29);
    expect(seconds).toBeLessThan(40);
    expect(d.offsets[1]!.lagSeconds).toBe(0);

    // The group advances; new records arrive on partition 1.
    await kafka.groups.alterOffsets(g, [{ topic: t, partition: 0, offset: 9 }]);
    await kafka.writes.produce(t, [
      { partition: 1, value: "x" },
      { partition: 1, value: "y" },
    ]);
    d = await detail(g);
    expect(d.lag).toBe(3);
    expect(d.offsets.map((o) => [o.partition, o.currentOffset, o.logEndOffset, o.lag])).toEqual([
      [0, 9, 10, 1],
      [1, 6, 8, 2],
    ]);

    const list = (await (await rt.request("/api/consumers", { role: "read" })).json()) as Array<Record<string, unknown>>;
    expect(list.find((x) => x.id === g)).toEqual({
      id: g,
      state: "Empty",
      type: "classic",
      protocolType: "",
      protocol: "",
      members: 0,
      topics: [t],
      lag: 3,
    });

    const topic = (await (await rt.request(`/api/topics/${t}`, { role: "read" })).json()) as {
      consumers: Array<{ id: string; lag: number }>;
    };
    expect(topic.consumers.map((c) => [c.id, c.lag])).toEqual([[g, 3]]);

    const metrics = await (await rt.app.request("/metrics")).text();
    const lines = metrics.split("\n");
    expect(lines).toContain(`svc_partition_consumer_lag{topic="${t}",partition="0",consumerGroup="${g}"} 1`);
    expect(lines).toContain(`svc_partition_consumer_lag{topic="${t}",partition="1",consumerGroup="${g}"} 2`);
    expect(lines).toContain(`svc_topic_consumer_lag{topic="${t}",consumerGroup="${g}"} 3`);
  });

  test("29: a group of Kafka 4's consumer protocol (KIP-848) is listed with its type, member and lag, and on /metrics", async () => {
    const t = await topicWith([4]);
    const g = group("kip848");
    const member = joinGroup(rt.kafka.default(), { groupId: g, topics: [t], clientId: `c-${g}`, protocol: "consumer" });
    try {
      const first = await member.records()[Symbol.asyncIterator]().next();
      await first.value!.commit();
      const d = await waitFor(async () => {
        const d = await detail(g);
        return d.members.length === 1 && d.offsets.length === 1 && d;
      });
      expect(d).toMatchObject({ id: g, state: "Stable", lag: 3 });
      expect(d.members[0]).toMatchObject({ clientId: `c-${g}`, assignments: [{ topic: t, partition: 0 }] });
      const list = (await (await rt.request("/api/consumers", { role: "read" })).json()) as Array<Record<string, unknown>>;
      expect(list.find((x) => x.id === g)).toMatchObject({ id: g, type: "consumer", state: "Stable", members: 1, topics: [t], lag: 3 });
      const metrics = (await (await rt.app.request("/metrics")).text()).split("\n");
      expect(metrics).toContain(`svc_partition_consumer_lag{topic="${t}",partition="0",consumerGroup="${g}"} 3`);
    } finally {
      await member.close();
    }
  });

  test("a live member: shown with its assignments; resets and deletion are 409 with the reason", async () => {
    const t = await topicWith([3, 3]);
    const g = group("live");
    const member = joinGroup(rt.kafka.default(), {
      groupId: g,
      topics: [t],
      clientId: "loupe-test-member",
      sessionTimeoutMs: 6_000,
      heartbeatIntervalMs: 500,
      maxWaitMs: 200,
    });
    try {
      let read = 0;
      for await (const m of member.records()) {
        read++;
        if (m.partition === 0 && m.offset === 1) await m.commit();
        if (read === 6) break;
      }
      const d = await detail(g);
      expect(d.state).toBe("Stable");
      expect(d.members.length).toBe(1);
      expect(d.members[0]!.clientId).toBe("loupe-test-member");
      expect(d.members[0]!.assignments.sort((a, b) => a.partition - b.partition)).toEqual([
        { topic: t, partition: 0 },
        { topic: t, partition: 1 },
      ]);
      expect(d.offsets).toHaveLength(1);
      expect(d.offsets[0]).toMatchObject({ partition: 0, currentOffset: 2, logEndOffset: 3, lag: 1, clientId: "loupe-test-member" });

      const res = await put(g, { to: "earliest" });
      expect(res.status).toBe(409);
      expect((await errorOf(res)).message).toContain("only be changed while the group is empty");
      const del = await rt.request(`/api/consumers/${g}`, { method: "DELETE", role: "write" });
      expect(del.status).toBe(409);
    } finally {
      await member.close();
    }
    expect(await eventually(async () => (await detail(g)).state === "Empty", { timeoutMs: 15_000 })).toBe(true);
    expect((await put(g, { to: "latest" })).status).toBe(200);
    expect((await detail(g)).lag).toBe(0);
  }, 40_000);
});

describe("groups of other protocols", () => {
  test("regression: a Kafka Connect worker's group (protocol connect, with members) hung the group list and its page", async () => {
    // The run's Connect workers (test/setup.ts) form such a group on the test broker.
    expect(connectEnv().urls.length).toBe(2);
    const connectGroup = await waitFor(
      async () => (await rt.kafka.default().groups.list()).find((g) => g.protocolType === "connect" && g.state === "Stable"),
      { timeoutMs: 30_000, what: "a Connect group with live workers" },
    );
    const list = await rt.request("/api/consumers", { role: "read" });
    expect(list.status).toBe(200);
    const listed = ((await list.json()) as { id: string; protocolType: string; members: number }[]).find(
      (g) => g.id === connectGroup.groupId,
    );
    expect(listed).toMatchObject({ protocolType: "connect", members: 0 });
    const one = await rt.request(`/api/consumers/${encodeURIComponent(connectGroup.groupId)}`, { role: "read" });
    expect(one.status).toBe(200);
  });
});

describe("PUT /api/consumers/{group}/offsets", () => {
  test("earliest, latest, timestamp and explicit offsets, each audited", async () => {
    const base = Date.now() - 60_000;
    const t = await topicWith([5, 5], (_p, i) => base + i * 1_000);
    const g = group("reset");
    const kafka = rt.kafka.default();
    await kafka.groups.alterOffsets(g, [{ topic: t, partition: 0, offset: 3 }]);

    let res = await put(g, { to: "earliest" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      group: g,
      offsets: [
        { topic: t, partition: 0, offset: 0 },
        { topic: t, partition: 1, offset: 0 },
      ],
    });
    expect((await detail(g)).lag).toBe(10);

    expect((await put(g, { to: "latest", topics: [t] })).status).toBe(200);
    expect((await detail(g)).lag).toBe(0);

    res = await put(g, { timestamp: base + 2_000 });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { offsets: Array<{ offset: number }> }).offsets.map((o) => o.offset)).toEqual([2, 2]);
    expect((await detail(g)).lag).toBe(6);

    res = await put(g, { timestamp: Date.now() + 3_600_000 });
    expect(((await res.json()) as { offsets: Array<{ offset: number }> }).offsets.map((o) => o.offset)).toEqual([5, 5]);

    res = await put(g, { offsets: [{ topic: t, partition: 1, offset: 1 }] });
    expect(res.status).toBe(200);
    expect((await detail(g)).offsets.map((o) => [o.partition, o.currentOffset])).toEqual([
      [0, 5],
      [1, 1],
    ]);

    const audit = (await (await rt.request("/api/audit?type=CONSUMER_GROUP", { role: "admin" })).json()) as Array<{
      change: string;
      userId: string;
      content: Record<string, string>;
    }>;
    const mine = audit.filter((e) => e.content.group === g);
    expect(mine.length).toBe(5);
    expect(mine.every((e) => e.change === "UPDATE" && e.userId === "wanda" && e.content.outcome === "SUCCESS")).toBe(true);
  });

  test("bad input is 400, unknown partitions 404, a group without offsets needs topics", async () => {
    const t = await topicWith([2]);
    const g = group("bad");
    await rt.kafka.default().groups.alterOffsets(g, [{ topic: t, partition: 0, offset: 1 }]);
    for (const body of [
      {},
      { to: "middle" },
      { timestamp: -1 },
      { offsets: [] },
      { offsets: [{ topic: t, partition: -1, offset: 0 }] },
      { offsets: [{ topic: t, partition: 0, offset: "x" }] },
      { to: "earliest", extra: 1 },
    ]) {
      const res = await put(g, body);
      expect(res.status).toBe(400);
      await errorOf(res);
    }
    const beyond = await put(g, { offsets: [{ topic: t, partition: 0, offset: 3 }] });
    expect(beyond.status).toBe(400);
    expect((await errorOf(beyond)).message).toContain("outside 0..2");
    expect((await put(g, { offsets: [{ topic: t, partition: 5, offset: 0 }] })).status).toBe(404);
    expect((await put(g, { offsets: [{ topic: uniqueTopic("missing"), partition: 0, offset: 0 }] })).status).toBe(404);
    expect((await put(g, { to: "earliest", topics: [uniqueTopic("missing")] })).status).toBe(404);
    // Internal topics: refused to a writer (they are an unrestricted admin's), and not reset by hand by an admin.
    expect((await put(g, { to: "earliest", topics: ["__consumer_offsets"] })).status).toBe(403);
    const byAdmin = await rt.request(`/api/consumers/${encodeURIComponent(g)}/offsets`, {
      method: "PUT",
      role: "admin",
      body: JSON.stringify({ to: "earliest", topics: ["__consumer_offsets"] }),
    });
    expect(byAdmin.status).toBe(400);
    const fresh = group("fresh");
    const none = await put(fresh, { to: "earliest" });
    expect(none.status).toBe(400);
    expect((await errorOf(none)).message).toContain("name the topics");
    expect((await put(fresh, { to: "earliest", topics: [t] })).status).toBe(200);
    expect((await detail(fresh)).offsets.map((o) => o.currentOffset)).toEqual([0]);
    expect(
      (await rt.request(`/api/consumers/${g}/offsets`, { method: "PUT", role: "read", body: JSON.stringify({ to: "earliest" }) })).status,
    ).toBe(403);
  });
});

describe("GET and DELETE /api/consumers/{group}", () => {
  test("unknown group is 404; delete answers 200, is audited, then 404", async () => {
    expect((await rt.request(`/api/consumers/${uniqueTopic("nobody")}`, { role: "read" })).status).toBe(404);
    const t = await topicWith([1]);
    const g = group("del");
    await rt.kafka.default().groups.alterOffsets(g, [{ topic: t, partition: 0, offset: 0 }]);
    const res = await rt.request(`/api/consumers/${g}`, { method: "DELETE", role: "write" });
    expect(res.status).toBe(200);
    expect((await rt.request(`/api/consumers/${g}`, { role: "read" })).status).toBe(404);
    const again = await rt.request(`/api/consumers/${g}`, { method: "DELETE", role: "write" });
    expect(again.status).toBe(404);
    const audit = (await (await rt.request("/api/audit?type=CONSUMER_GROUP", { role: "admin" })).json()) as Array<{
      change: string;
      content: Record<string, string>;
    }>;
    expect(audit.filter((e) => e.content.group === g).map((e) => [e.change, e.content.outcome])).toEqual([
      ["REMOVE", "FAILURE"],
      ["REMOVE", "SUCCESS"],
    ]);
  });

  test("nodata may not see groups; read may not change them", async () => {
    expect((await rt.request("/api/consumers", { role: "nodata" })).status).toBe(403);
    expect((await rt.request("/api/consumers", { role: "read" })).status).toBe(200);
    expect((await rt.request(`/api/consumers/x`, { method: "DELETE", role: "read" })).status).toBe(403);
  });
});
