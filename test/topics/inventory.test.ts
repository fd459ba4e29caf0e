/**
 * 28: the inventory of a large cluster. Topics and groups are listed on a cadence, not per
 * request (a topic made behind Loupe's back appears at the next refresh, Loupe's own changes at
 * once), and GET /api/topics and GET /api/consumers are searched, sorted and paged on the
 * server, with the totals in headers, while a request without parameters gets every item.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { LagEngine } from "../../src/lag/engine.ts";
import { Inventory } from "../../src/lag/inventory.ts";
import { uniqueTopic } from "../cluster/cluster.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { scopedUser, topicGroup } from "../helpers/scoped.ts";
import { createReadyTopic } from "../helpers/topics.ts";

let rt: TestRuntime;
const topics: string[] = [];
const groups: string[] = [];
/** A prefix of this file's topics and groups: the searches find exactly them. */
const prefix = uniqueTopic("inv");

type TopicItem = { topicName: string; partitions: number; totalMessages: number };
type GroupItem = { id: string; lag: number; topics: string[] };

beforeAll(async () => {
  // A real cadence, longer than the file runs: only Loupe's own changes refresh the inventory.
  rt = await testRuntime({ inventory: { refreshInterval: "60s" }, lag: { cacheTtl: 0, sampleInterval: 0 } });
  // Three topics of 1, 2 and 3 partitions holding 6, 2 and 4 records, made through Loupe.
  const kafka = rt.kafka.default();
  for (const [i, records] of [6, 2, 4].entries()) {
    const name = `${prefix}-t${i + 1}`;
    topics.push(name);
    const res = await rt.request("/api/topics", {
      method: "POST",
      role: "admin",
      body: JSON.stringify({ topicName: name, partitions: i + 1, replication: 1 }),
    });
    expect(res.status).toBe(201);
    await kafka.writes.produce(
      name,
      Array.from({ length: records }, () => ({ partition: 0, value: "x" })),
    );
  }
  // Three groups on t1 lagging 5, 1 and 3 records, given their offsets through Loupe.
  for (const [i, offset] of [1, 5, 3].entries()) {
    const group = `${prefix}-g${i + 1}`;
    groups.push(group);
    const res = await rt.request(`/api/consumers/${group}/offsets`, {
      method: "PUT",
      role: "admin",
      body: JSON.stringify({ offsets: [{ topic: `${prefix}-t1`, partition: 0, offset }] }),
    });
    expect(res.status).toBe(200);
  }
}, 60_000);

afterAll(async () => {
  await rt.dispose({ topics, groups });
});

async function list<T>(path: string, role: "admin" | "nodata" | "read" = "read", token?: string) {
  const res = await rt.request(path, token ? { token } : { role });
  expect(res.status).toBe(200);
  const total = Number(res.headers.get("x-total-count"));
  return { items: (await res.json()) as T[], total, res };
}
const names = (items: TopicItem[]) => items.map((t) => t.topicName.slice(prefix.length + 1));
const ids = (items: GroupItem[]) => items.map((g) => g.id.slice(prefix.length + 1));

describe("28: the inventory's cadence", () => {
  test("28: a topic and a group made behind Loupe's back appear at the next refresh, not before; refreshes under way are joined", async () => {
    let now = 1_000_000;
    const inventory = new Inventory(rt.kafka, { intervalMs: 60_000, now: () => now });
    const before = await inventory.get("local");
    const topic = uniqueTopic(`${prefix}-behind`);
    const group = `${topic}-group`;
    const kafka = rt.kafka.default();
    await createReadyTopic(kafka, { name: topic, track: topics });
    groups.push(group);
    await kafka.groups.alterOffsets(group, [{ topic, partition: 0, offset: 0 }]);

    now += 59_999;
    const cached = await inventory.get("local");
    expect(cached).toBe(before);
    expect(cached.topics.some((t) => t.name === topic)).toBe(false);
    expect(cached.groups.some((g) => g.groupId === group)).toBe(false);

    now += 1;
    // Two readers at once get one listing: the second joined the first's refresh.
    const [fresh, joined] = await Promise.all([inventory.get("local"), inventory.get("local")]);
    expect(joined).toBe(fresh);
    expect(fresh).not.toBe(before);
    expect(fresh.topics.find((t) => t.name === topic)).toMatchObject({ partitions: 1, internal: false });
    expect(fresh.groups.some((g) => g.groupId === group)).toBe(true);

    // A change Loupe makes invalidates: the next read lists again, whatever the clock says.
    const running = inventory.refresh("local");
    inventory.invalidate("local");
    expect(inventory.refresh("local")).not.toBe(running);
    await running;
  });

  test("28: a lag snapshot over a fresh inventory sends neither Metadata nor ListGroups", async () => {
    const inventory = new Inventory(rt.kafka, { intervalMs: 60_000 });
    await inventory.get("local");
    const cold = await new LagEngine(rt.kafka, null, { ttlMs: 0 }).snapshot("local");
    const engine = new LagEngine(rt.kafka, null, { ttlMs: 0, inventory });
    const warm = await engine.snapshot("local");
    // The inventory's listing itself: no ListGroups was sent for it.
    expect(warm.groups).toBe((await inventory.get("local")).groups);
    // One Metadata request and one ListGroups per broker (one broker here) fewer. The best of two
    // snapshots: a topic deleted meanwhile by another test makes one ask Metadata again.
    const fewest = Math.min(warm.brokerRequests, (await engine.snapshot("local")).brokerRequests);
    expect(fewest).toBeLessThanOrEqual(cold.brokerRequests - 2);
  });

  test("28: the server's own changes are listed at once: a topic created, grown and deleted, a group given offsets and deleted", async () => {
    // A list fills the runtime's inventory (60 s); a topic made behind its back after that would
    // wait for the next refresh (the cadence test above; not asserted here: another test's topic
    // deleted meanwhile under a group's offsets makes the lag engine list again).
    await list<TopicItem>(`/api/topics?search=${prefix}`);
    const behind = await createReadyTopic(rt.kafka.default(), { prefix: `${prefix}-hidden`, track: topics });

    const own = `${prefix}-own`;
    topics.push(own);
    const made = await rt.request("/api/topics", {
      method: "POST",
      role: "admin",
      body: JSON.stringify({ topicName: own, partitions: 1 }),
    });
    expect(made.status).toBe(201);
    expect(names((await list<TopicItem>(`/api/topics?search=${own}`)).items)).toEqual(["own"]);
    // The creation listed the cluster again: the topic made behind Loupe's back is there now too.
    expect((await list<TopicItem>(`/api/topics?search=${behind}`)).total).toBe(1);

    const grown = await rt.request(`/api/topics/${own}/partitions`, {
      method: "PUT",
      role: "admin",
      body: JSON.stringify({ partitions: 2 }),
    });
    expect(grown.status).toBe(200);
    expect((await list<TopicItem>(`/api/topics?search=${own}`)).items[0]!.partitions).toBe(2);

    const group = `${prefix}-own-group`;
    groups.push(group);
    const reset = await rt.request(`/api/consumers/${group}/offsets`, {
      method: "PUT",
      role: "admin",
      body: JSON.stringify({ to: "earliest", topics: [own] }),
    });
    expect(reset.status).toBe(200);
    expect(ids((await list<GroupItem>(`/api/consumers?search=${group}`)).items)).toEqual(["own-group"]);
    expect((await rt.request(`/api/consumers/${group}`, { method: "DELETE", role: "admin" })).status).toBe(200);
    expect((await list<GroupItem>(`/api/consumers?search=${group}`)).total).toBe(0);

    expect((await rt.request(`/api/topics/${own}`, { method: "DELETE", role: "admin" })).status).toBe(200);
    expect((await list<TopicItem>(`/api/topics?search=${own}`)).total).toBe(0);
  }, 30_000);
});

describe("28: GET /api/topics searched, sorted and paged on the server", () => {
  test("28: search ignores case; orderBy and sortOrder sort; page and perPage cut; the headers count the matches", async () => {
    const search = `search=${prefix.toUpperCase()}-T`;
    const byName = await list<TopicItem>(`/api/topics?${search}`);
    expect(names(byName.items)).toEqual(["t1", "t2", "t3"]);
    expect(byName.total).toBe(3);

    const first = await list<TopicItem>(`/api/topics?${search}&orderBy=partitions&sortOrder=desc&page=1&perPage=2`);
    expect(names(first.items)).toEqual(["t3", "t2"]);
    expect(first.total).toBe(3);
    expect(Number(first.res.headers.get("x-unfiltered-count"))).toBeGreaterThanOrEqual(3);
    expect(Number(first.res.headers.get("x-control-topics"))).toBeGreaterThanOrEqual(1);
    expect(names((await list<TopicItem>(`/api/topics?${search}&orderBy=partitions&sortOrder=desc&page=2&perPage=2`)).items)).toEqual([
      "t1",
    ]);

    // Figures that need offsets: the page's rows carry them fresh.
    const messages = await list<TopicItem>(`/api/topics?${search}&orderBy=messages`);
    expect(messages.items.map((t) => [t.topicName.slice(-2), t.totalMessages])).toEqual([
      ["t2", 2],
      ["t3", 4],
      ["t1", 6],
    ]);
    expect(names((await list<TopicItem>(`/api/topics?${search}&orderBy=lag&sortOrder=desc&perPage=1`)).items)).toEqual(["t1"]);

    // Control topics: shown by default, left out by internal=0.
    expect((await list<TopicItem>("/api/topics?search=__consumer_offsets")).total).toBe(1);
    expect((await list<TopicItem>("/api/topics?search=__consumer_offsets&internal=0")).total).toBe(0);
  });

  test("28: without parameters the answer is every topic, as before", async () => {
    const all = await list<TopicItem>("/api/topics");
    expect(all.items.length).toBe(all.total);
    expect(all.items.length).toBeGreaterThan(3);
    const ours = all.items.filter((t) => t.topicName.startsWith(`${prefix}-t`));
    expect(names(ours)).toEqual(["t1", "t2", "t3"]);
  });

  test("28: bad parameters are 400 with the error body, for both lists", async () => {
    for (const q of ["page=0", "page=abc", "perPage=1001", "perPage=0", "orderBy=owner", "sortOrder=up", "internal=2"]) {
      const res = await rt.request(`/api/topics?${q}`, { role: "read" });
      expect(`${q}: ${res.status}`).toBe(`${q}: 400`);
      expect((await errorOf(res)).message).toContain(q.split("=")[0]!);
    }
    for (const q of ["page=-1", "perPage=5000", "orderBy=partitions", "sortOrder=random"]) {
      const res = await rt.request(`/api/consumers?${q}`, { role: "read" });
      expect(`${q}: ${res.status}`).toBe(`${q}: 400`);
      await errorOf(res);
    }
  });
});

describe("28: GET /api/consumers searched, sorted and paged on the server", () => {
  test("28: search, orderBy lag and name, paging and the total", async () => {
    const search = `search=${prefix}-G`;
    const byLag = await list<GroupItem>(`/api/consumers?${search}&orderBy=lag&sortOrder=desc&perPage=2`);
    expect(byLag.items.map((g) => [g.id.slice(-2), g.lag])).toEqual([
      ["g1", 5],
      ["g3", 3],
    ]);
    expect(byLag.total).toBe(3);
    expect(ids((await list<GroupItem>(`/api/consumers?${search}&orderBy=lag&sortOrder=desc&perPage=2&page=2`)).items)).toEqual(["g2"]);
    expect(ids((await list<GroupItem>(`/api/consumers?${search}&sortOrder=desc`)).items)).toEqual(["g3", "g2", "g1"]);
    expect(ids((await list<GroupItem>(`/api/consumers?${search}&orderBy=members`)).items)).toEqual(["g1", "g2", "g3"]);
    const all = await list<GroupItem>("/api/consumers");
    expect(all.items.length).toBe(all.total);
    expect(ids(all.items.filter((g) => g.id.startsWith(`${prefix}-g`)))).toEqual(["g1", "g2", "g3"]);
  });

  test("28: a scoped user sees only their topics and groups, and the totals count only those", async () => {
    const token = await scopedUser(rt, `${prefix}-user`, [topicGroup(`${prefix}-readers`, [`${prefix}-t2`, `${prefix}-t3`])]);
    const seen = await list<TopicItem>(`/api/topics?search=${prefix}-t&perPage=1`, "read", token);
    expect(names(seen.items)).toEqual(["t2"]);
    expect(seen.total).toBe(2);
    expect(Number(seen.res.headers.get("x-unfiltered-count"))).toBe(2);
    // The groups read t1 only: none is theirs.
    const groupsSeen = await list<GroupItem>(`/api/consumers?search=${prefix}`, "read", token);
    expect(groupsSeen.total).toBe(0);
    expect(Number(groupsSeen.res.headers.get("x-unfiltered-count"))).toBe(0);
  });
});
