import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { uniqueTopic } from "../cluster/cluster.ts";
import { bootstrap, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { scopedUser, topicGroup } from "../helpers/scoped.ts";
import { startShareConsumer } from "../helpers/share-consumer.ts";
import { createReadyTopic } from "../helpers/topics.ts";
import { waitFor } from "../helpers/wait.ts";

let rt: TestRuntime;
const topics: string[] = [];
const groups: string[] = [];

beforeAll(async () => {
  rt = await testRuntime({ lag: { cacheTtl: 0, sampleInterval: 0 } });
});
afterAll(async () => {
  await rt.dispose({ topics, groups });
});

type Detail = {
  id: string;
  state: string;
  type: string;
  lag: number;
  members: Array<{ clientId: string; host: string; subscribedTopics: string[]; assignments: Array<{ topic: string; partition: number }> }>;
  offsets: Array<{ topic: string; partition: number; startOffset: number | null; logEndOffset: number | null; lag: number | null }>;
};

const path = (g: string) => `/api/share-groups/${encodeURIComponent(g)}`;
const json = (method: string, body: unknown) => ({ method, role: "write" as const, body: JSON.stringify(body) });

async function detail(g: string): Promise<Detail> {
  const res = await rt.request(path(g), { role: "read" });
  expect(res.status).toBe(200);
  return (await res.json()) as Detail;
}

/** A topic with `perPartition` records in each of its partitions. */
async function topicWith(prefix: string, partitions: number, perPartition: number): Promise<string> {
  const kafka = rt.kafka.default();
  const t = await createReadyTopic(kafka, { prefix, partitions, track: topics });
  const records = Array.from({ length: partitions * perPartition }, (_, i) => ({ partition: i % partitions, value: `v${i}` }));
  await kafka.writes.produce(t, records);
  return t;
}

function group(prefix: string): string {
  const g = uniqueTopic(prefix);
  groups.push(g);
  return g;
}

describe("share groups", () => {
  test("29: a real share consumer shows up with its state and members; a reset to earliest while empty takes effect; lag on /metrics", async () => {
    const t = await topicWith("share", 2, 3);
    const g = group("sg");
    // The group starts at the beginning of the topic: a reset of a group that does not exist yet creates it.
    const created = await rt.request(`${path(g)}/offsets`, json("PUT", { to: "earliest", topics: [t] }));
    expect(created.status).toBe(200);
    expect(await created.json()).toEqual({
      group: g,
      offsets: [
        { topic: t, partition: 0, offset: 0 },
        { topic: t, partition: 1, offset: 0 },
      ],
    });

    // share.* configs: read and changed (audited); other group configs are refused.
    const set = await rt.request(`${path(g)}/configs`, json("PUT", { configs: [{ key: "share.auto.offset.reset", value: "earliest" }] }));
    expect(set.status).toBe(200);
    const configs = (await (await rt.request(`${path(g)}/configs`, { role: "read" })).json()) as Array<{
      name: string;
      value: string;
      isDefault: boolean;
    }>;
    expect(configs.find((c) => c.name === "share.auto.offset.reset")).toMatchObject({ value: "earliest", isDefault: false });
    expect(configs.every((c) => c.name.startsWith("share."))).toBe(true);

    const consumer = startShareConsumer({ bootstrap: bootstrap(), group: g, topic: t, clientId: `loupe-test-${g}` });
    try {
      await consumer.joined();
      // Stable, one member with its client id, both partitions assigned; every record read and
      // acknowledged: no lag left (the broker's figure; the start offset it stores may stay behind
      // the acknowledged records until it persists the share-partition's state).
      const live = await waitFor(
        async () => {
          const d = await detail(g);
          const done = d.offsets.length === 2 && d.offsets.every((o) => o.startOffset !== null && o.logEndOffset === 3 && o.lag === 0);
          return d.state === "Stable" && d.members[0]?.assignments.length === 2 && consumer.records() === 6 && done && d;
        },
        { timeoutMs: 20_000, what: "the share consumer to read every record" },
      );
      expect(live).toMatchObject({ id: g, type: "share", state: "Stable", lag: 0 });
      expect(live.members).toHaveLength(1);
      expect(live.members[0]).toMatchObject({ clientId: `loupe-test-${g}`, subscribedTopics: [t] });
      expect(live.members[0]!.host).toContain("127.0.0.1");

      const list = (await (await rt.request("/api/consumers", { role: "read" })).json()) as Array<Record<string, unknown>>;
      expect(list.find((x) => x.id === g)).toMatchObject({ id: g, type: "share", state: "Stable", members: 1, topics: [t], lag: 0 });
      // The topic's page lists it among its consumers, its protocol named.
      const onTopic = await waitFor(
        async () => {
          const page = (await (await rt.request(`/api/topics/${t}`, { role: "read" })).json()) as {
            consumers: Array<Record<string, unknown>>;
          };
          return page.consumers.find((c) => c.id === g) ?? null;
        },
        { timeoutMs: 10_000, what: "the share group on the topic's page" },
      );
      expect(onTopic).toMatchObject({ id: g, type: "share", state: "Stable", consumersCount: 1, topicPartitionsCount: 2, lag: 0 });

      // A live group's start offsets stay as they are.
      const busy = await rt.request(`${path(g)}/offsets`, json("PUT", { to: "earliest" }));
      expect(busy.status).toBe(409);
      expect(((await busy.json()) as { message: string }).message).toContain("Stable with 1 member");
    } finally {
      await consumer.stop();
    }

    await waitFor(async () => (await detail(g)).state === "Empty", { what: "the group to be empty once its consumer left" });
    // Reset to earliest, naming no topic (the group's own topics): every record is to be delivered again.
    const reset = await rt.request(`${path(g)}/offsets`, json("PUT", { to: "earliest" }));
    expect(reset.status).toBe(200);
    const d = await detail(g);
    expect(d.offsets.map((o) => [o.partition, o.startOffset, o.logEndOffset, o.lag])).toEqual([
      [0, 0, 3, 3],
      [1, 0, 3, 3],
    ]);
    expect(d.lag).toBe(6);

    const lines = (await (await rt.app.request("/metrics")).text()).split("\n");
    expect(lines).toContain(`svc_partition_share_group_lag{topic="${t}",partition="0",shareGroup="${g}"} 3`);
    expect(lines).toContain(`svc_topic_share_group_lag{topic="${t}",shareGroup="${g}"} 6`);
    // How old those figures are is on the page too (the last read, when the broker was slow).
    const age = lines.find((l) => l.startsWith("loupe_share_group_lag_age_seconds "));
    expect(Number(age?.split(" ")[1])).toBeGreaterThanOrEqual(0);

    expect((await rt.request(`${path(g)}/offsets?topics=${t}`, { method: "DELETE", role: "write" })).status).toBe(200);
    expect((await detail(g)).offsets).toEqual([]);
    expect((await rt.request(path(g), { method: "DELETE", role: "write" })).status).toBe(200);
    expect((await rt.request(path(g), { role: "read" })).status).toBe(404);

    const audit = (await (await rt.request("/api/audit?type=CONSUMER_GROUP", { role: "admin" })).json()) as Array<{
      resourceName?: string;
      change?: string;
      outcome?: string;
    }>;
    const mine = audit.filter((a) => JSON.stringify(a).includes(g));
    expect(mine.length).toBeGreaterThanOrEqual(6);
  }, 60_000);

  test("29: scope and role refusals; bad input is a 400", async () => {
    const prefix = uniqueTopic("sgs");
    const kafka = rt.kafka.default();
    const mine = await createReadyTopic(kafka, { prefix: `${prefix}-mine`, track: topics });
    const hidden = await createReadyTopic(kafka, { prefix: `${prefix}-hidden`, track: topics });
    const visibleGroup = group("sgv");
    const hiddenGroup = group("sgh");
    await kafka.shareGroups.alterStartOffsets(visibleGroup, [{ topic: mine, partition: 0, offset: 0 }]);
    await kafka.shareGroups.alterStartOffsets(hiddenGroup, [{ topic: hidden, partition: 0, offset: 0 }]);
    const token = await scopedUser(rt, `${prefix}-user`, [topicGroup(`${prefix}-team`, [`${prefix}-mine*`], [], ["write"])]);

    const list = (await (await rt.request("/api/consumers", { token })).json()) as Array<{ id: string }>;
    expect(list.map((x) => x.id)).toContain(visibleGroup);
    expect(list.map((x) => x.id)).not.toContain(hiddenGroup);
    expect((await rt.request(path(visibleGroup), { token })).status).toBe(200);
    const refused: Array<[string, RequestInit]> = [
      [path(hiddenGroup), {}],
      [path(uniqueTopic("sg-none")), {}],
      [`${path(hiddenGroup)}/configs`, {}],
      [`${path(hiddenGroup)}/offsets`, { method: "PUT", body: JSON.stringify({ to: "earliest" }) }],
      [`${path(visibleGroup)}/offsets`, { method: "PUT", body: JSON.stringify({ to: "earliest", topics: [hidden] }) }],
      [`${path(hiddenGroup)}/offsets?topics=${hidden}`, { method: "DELETE" }],
      [path(hiddenGroup), { method: "DELETE" }],
      [
        `${path(hiddenGroup)}/configs`,
        { method: "PUT", body: JSON.stringify({ configs: [{ key: "share.isolation.level", value: "read_committed" }] }) },
      ],
    ];
    for (const [p, init] of refused)
      expect(`${init.method ?? "GET"} ${p} ${(await rt.request(p, { ...init, token })).status}`).toBe(`${init.method ?? "GET"} ${p} 403`);
    // A reader may look but not change.
    expect(
      (await rt.request(`${path(visibleGroup)}/offsets`, { method: "PUT", role: "read", body: JSON.stringify({ to: "latest" }) })).status,
    ).toBe(403);

    const bad: Array<[string, NonNullable<Parameters<TestRuntime["request"]>[1]>]> = [
      [`${path(visibleGroup)}/offsets`, json("PUT", { to: "middle" })],
      [`${path(visibleGroup)}/offsets`, json("PUT", { offsets: [{ topic: mine, partition: 0, offset: 5 }] })],
      [`${path(visibleGroup)}/offsets?topics=`, { method: "DELETE", role: "write" }],
      [`${path(visibleGroup)}/offsets?topics=bad%20name!`, { method: "DELETE", role: "write" }],
      [`${path(visibleGroup)}/offsets?topics=${hidden}`, { method: "DELETE", role: "write" }],
      [`${path(visibleGroup)}/configs`, json("PUT", { configs: [{ key: "consumer.session.timeout.ms", value: "45000" }] })],
      [`${path(visibleGroup)}/configs`, json("PUT", { configs: [{ key: "share.no.such.config", value: "1" }] })],
      [`${path(visibleGroup)}/configs`, json("PUT", { configs: [{ key: "share.auto.offset.reset", value: "sometimes" }] })],
    ];
    for (const [p, init] of bad) {
      const res = await rt.request(p, init);
      const body = (await res.json()) as { error_code?: unknown; message?: string };
      expect(`${init.method} ${p} ${res.status}`).toBe(`${init.method} ${p} 400`);
      expect(typeof body.message).toBe("string");
    }
    expect((await rt.request(path(uniqueTopic("sg-none")), { role: "read" })).status).toBe(404);
  }, 30_000);
});
