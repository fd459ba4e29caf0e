/**
 * Lists and per-topic figures under a topic scope, against the real broker: a user scoped to
 * `payments.*` (with a deny pattern, which wins) sees only those topics in the topic list, the
 * stored metadata, the cluster overview's counts, the consumer groups and their lag, and may
 * change offsets only there; an unrestricted user still sees everything.
 *
 * Other tests make topics and groups on the same broker at the same time: assertions are about
 * this file's own topics and groups being present or absent, never about whole lists.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { uniqueTopic } from "../cluster/cluster.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { scopedUser, topicGroup } from "../helpers/scoped.ts";
import { createReadyTopic } from "../helpers/topics.ts";
import { waitFor } from "../helpers/wait.ts";
import { joinGroup } from "../kafka/helpers.ts";

let rt: TestRuntime;
const topics: string[] = [];
const groups: string[] = [];
const CLUSTER = "local";

/** Unique to this run, so that the scope's patterns and this file's names cannot meet other tests'. */
const run = uniqueTopic("sl");
const T = {
  eu: `payments.${run}.eu`,
  us: `payments.${run}.us`,
  secret: `payments.${run}.secret`,
  orders: `orders.${run}`,
};
const G = {
  pay: `${run}-pay`,
  mixed: `${run}-mixed`,
  orders: `${run}-orders`,
  secret: `${run}-secret`,
  missing: `${run}-missing`,
};
/** In scope: `payments.*` except `*.secret`. */
const inScope = (topic: string) => topic.startsWith("payments.") && !topic.endsWith(".secret");

let scoped: string;

beforeAll(async () => {
  rt = await testRuntime({ lag: { cacheTtl: 0, sampleInterval: 0 } });
  const kafka = rt.kafka.default();
  await Promise.all([
    createReadyTopic(kafka, { name: T.eu, partitions: 2, track: topics }),
    createReadyTopic(kafka, { name: T.us, partitions: 1, track: topics }),
    createReadyTopic(kafka, { name: T.secret, partitions: 1, track: topics }),
    createReadyTopic(kafka, { name: T.orders, partitions: 1, track: topics }),
  ]);
  const records = (n: number, partitions = 1) =>
    Array.from({ length: n * partitions }, (_, i) => ({ partition: i % partitions, value: `v${i}` }));
  await Promise.all([
    kafka.writes.produce(T.eu, records(5, 2)),
    kafka.writes.produce(T.us, records(4)),
    kafka.writes.produce(T.secret, records(3)),
    kafka.writes.produce(T.orders, records(6)),
  ]);
  groups.push(...Object.values(G));
  // Lags: pay 2 on eu; mixed 1 on us, 4 on orders, 3 on secret; orders 6; secret 1.
  await kafka.groups.alterOffsets(G.pay, [
    { topic: T.eu, partition: 0, offset: 3 },
    { topic: T.eu, partition: 1, offset: 5 },
  ]);
  await kafka.groups.alterOffsets(G.mixed, [
    { topic: T.us, partition: 0, offset: 3 },
    { topic: T.orders, partition: 0, offset: 2 },
    { topic: T.secret, partition: 0, offset: 0 },
  ]);
  await kafka.groups.alterOffsets(G.orders, [{ topic: T.orders, partition: 0, offset: 0 }]);
  await kafka.groups.alterOffsets(G.secret, [{ topic: T.secret, partition: 0, offset: 2 }]);
  scoped = await scopedUser(rt, "payer", [topicGroup("payments-team", ["payments.*"], ["payments.*.secret"], ["write"])]);
});
afterAll(async () => {
  await rt.dispose({ topics, groups });
});

const get = async <T>(path: string, auth: { token: string } | { role: "read" | "admin" }): Promise<T> => {
  const res = await rt.request(path, auth);
  expect(`${res.status} ${res.status === 200 ? "" : await res.text()}`).toBe("200 ");
  return (await res.json()) as T;
};
const asScoped = () => ({ token: scoped });

type ListItem = { topicName: string; partitions: number; isControlTopic: boolean; lag: number | null };
type GroupSummary = { id: string; topics: string[]; lag: number };
type Detail = {
  lag: number;
  members: Array<{ assignments: Array<{ topic: string; partition: number }> }>;
  offsets: Array<{ topic: string; partition: number; lag: number }>;
};
type Overview = {
  topics: number;
  internalTopics: number;
  partitions: number;
  brokers: Array<{ id: number; host: string; port: number; leaders: number; replicas: number }>;
  lag: { total: number; groups: number } | null;
};

describe("topics", () => {
  test("the list holds only topics in scope, deny beating allow; an unrestricted user sees all four", async () => {
    const mine = Object.values(T);
    const shown = (await get<ListItem[]>("/api/topics", asScoped())).map((t) => t.topicName);
    expect(shown.filter((t) => mine.includes(t)).sort()).toEqual([T.eu, T.us]);
    expect(shown.every(inScope)).toBe(true);
    const all = (await get<ListItem[]>("/api/topics", { role: "read" })).map((t) => t.topicName);
    expect(all.filter((t) => mine.includes(t)).sort()).toEqual([...mine].sort());
  });

  test("naming a topic out of scope is 403 naming it, reading, creating or changing", async () => {
    const cases: Array<[string, RequestInit, string]> = [
      [`/api/topics/${T.orders}`, {}, T.orders],
      [`/api/topics/${T.secret}`, {}, T.secret],
      ["/api/topics", { method: "POST", body: JSON.stringify({ topicName: `orders.${run}.new`, partitions: 1 }) }, `orders.${run}.new`],
      [
        `/api/topics/config/${T.orders}`,
        { method: "PUT", body: JSON.stringify({ configs: [{ key: "retention.ms", value: "1000" }] }) },
        T.orders,
      ],
      [`/api/metadata/topics/${T.secret}`, {}, T.secret],
    ];
    for (const [path, init, topic] of cases) {
      const res = await rt.request(path, { ...init, token: scoped });
      expect(`${init.method ?? "GET"} ${path} ${res.status}`).toBe(`${init.method ?? "GET"} ${path} 403`);
      expect((await errorOf(res)).message).toBe(`Topic '${topic}' is outside your scope`);
    }
    expect((await rt.request(`/api/topics/${T.eu}`, { token: scoped })).status).toBe(200);
    const all = (await get<ListItem[]>("/api/topics", { role: "read" })).map((t) => t.topicName);
    expect(all).not.toContain(`orders.${run}.new`);
  });

  test("a scoped writer creates a topic in its scope", async () => {
    const name = `payments.${run}.made`;
    topics.push(name);
    const res = await rt.request("/api/topics", {
      method: "POST",
      token: scoped,
      body: JSON.stringify({ topicName: name, partitions: 1 }),
    });
    expect(res.status).toBe(201);
    expect((await get<ListItem[]>("/api/topics", asScoped())).map((t) => t.topicName)).toContain(name);
  });

  test("the stored metadata list leaves out topics out of scope", async () => {
    for (const t of [T.eu, T.orders, T.secret]) {
      const res = await rt.request(`/api/metadata/topics/${t}?keyType=STRING&valueType=STRING`, { method: "POST", role: "admin" });
      expect(res.status).toBe(200);
    }
    const names = (list: Array<{ topicName: string }>) => list.map((m) => m.topicName).filter((t) => t.includes(run));
    expect(names(await get("/api/metadata/topics", asScoped()))).toEqual([T.eu]);
    expect(names(await get("/api/metadata/topics", { role: "read" })).sort()).toEqual([T.orders, T.eu, T.secret].sort());
  });
});

describe("cluster overview", () => {
  test("topic and partition counts and lag cover visible topics only; the brokers are shown, with the partitions they lead and hold of visible topics (23: not 'Leader of 46' to a user who may see 3 topics)", async () => {
    const admin = await get<Overview>("/api/cluster", { role: "admin" });
    // Other tests create topics meanwhile: the scoped overview must agree with the scoped
    // topic list read just before it, which a few tries reach.
    const agreed = await waitFor(
      async () => {
        const list = await get<ListItem[]>("/api/topics", asScoped());
        const lagOfList = list.reduce((s, t) => s + (t.lag ?? 0), 0);
        const o = await get<Overview>("/api/cluster", asScoped());
        const same =
          o.topics === list.filter((t) => !t.isControlTopic).length &&
          o.partitions === list.reduce((s, t) => s + t.partitions, 0) &&
          o.brokers.reduce((s, b) => s + b.leaders, 0) === o.partitions &&
          o.lag?.total === lagOfList;
        return same ? o : null;
      },
      { timeoutMs: 20_000, what: "the scoped overview to count what the scoped topic list shows" },
    );
    expect(agreed.internalTopics).toBe(0);
    expect(agreed.topics).toBeLessThan(admin.topics);
    // The same brokers; one replica each here, so each visible partition is led and held once.
    const where = (o: Overview) => o.brokers.map((b) => [b.id, b.host, b.port]);
    expect(where(agreed)).toEqual(where(admin));
    expect(agreed.brokers.reduce((s, b) => s + b.replicas, 0)).toBe(agreed.partitions);
    expect(agreed.brokers[0]!.leaders).toBeLessThan(admin.brokers[0]!.leaders);
    // The groups with lag on this file's visible topics are counted; those only on hidden ones are not.
    expect(agreed.lag!.groups).toBeLessThan(admin.lag!.groups);
  });
});

describe("consumer groups", () => {
  test("the list shows groups on visible topics, with those topics and their lag only", async () => {
    const mine = (list: GroupSummary[]) => list.filter((g) => g.id.startsWith(run)).sort((a, b) => a.id.localeCompare(b.id));
    expect(mine(await get<GroupSummary[]>("/api/consumers", asScoped()))).toEqual([
      expect.objectContaining({ id: G.mixed, topics: [T.us], lag: 1 }),
      expect.objectContaining({ id: G.pay, topics: [T.eu], lag: 2 }),
    ]);
    const all = mine(await get<GroupSummary[]>("/api/consumers", { role: "read" }));
    expect(all.map((g) => g.id)).toEqual([G.mixed, G.orders, G.pay, G.secret]);
    expect(all[0]).toMatchObject({ topics: [T.orders, T.secret, T.us].sort(), lag: 8 });
  });

  test("a group's detail holds only visible partitions and lag; a group it cannot see is 403 naming it", async () => {
    const d = await get<Detail>(`/api/consumers/${G.mixed}`, asScoped());
    expect(d.offsets.map((o) => [o.topic, o.partition, o.lag])).toEqual([[T.us, 0, 1]]);
    expect(d.lag).toBe(1);
    expect((await get<Detail>(`/api/consumers/${G.mixed}`, { role: "read" })).lag).toBe(8);

    for (const g of [G.orders, G.secret, G.missing]) {
      for (const path of [`/api/consumers/${g}`, `/api/consumers/${g}/lag-history`]) {
        const res = await rt.request(path, { token: scoped });
        expect(`${path} ${res.status}`).toBe(`${path} 403`);
        expect((await errorOf(res)).message).toBe(`Consumer group '${g}' is outside your scope`);
      }
    }
    // Unrestricted, a group that does not exist is still 404.
    expect((await rt.request(`/api/consumers/${G.missing}`, { role: "read" })).status).toBe(404);
  });

  test("lag history points hold visible topics only; their age is unknown while a hidden topic lags", async () => {
    await rt.sampler.sampleNow(CLUSTER);
    type History = { points: Array<{ lag: number; lagSeconds: number | null; topics: Record<string, number> }> };
    const mixed = await get<History>(`/api/consumers/${G.mixed}/lag-history`, asScoped());
    expect(mixed.points.length).toBeGreaterThan(0);
    for (const p of mixed.points) expect(p).toEqual({ ...p, lag: 1, lagSeconds: null, topics: { [T.us]: 1 } });
    const pay = await get<History>(`/api/consumers/${G.pay}/lag-history`, asScoped());
    expect(pay.points.at(-1)).toMatchObject({ lag: 2, topics: { [T.eu]: 2 } });
    // Followed now, the groups on hidden topics only stay out of reach.
    for (const g of [G.orders, G.secret]) expect((await rt.request(`/api/consumers/${g}/lag-history`, { token: scoped })).status).toBe(403);
    const all = await get<History>(`/api/consumers/${G.mixed}/lag-history`, { role: "read" });
    expect(all.points.at(-1)).toMatchObject({ lag: 8, topics: { [T.us]: 1, [T.orders]: 4, [T.secret]: 3 } });
  });

  test("offsets of topics out of scope are not reset: 403 naming the first, and nothing moves", async () => {
    const put = (g: string, body: unknown) =>
      rt.request(`/api/consumers/${g}/offsets`, { method: "PUT", token: scoped, body: JSON.stringify(body) });
    const cases: Array<[string, unknown, string]> = [
      [G.mixed, { to: "earliest", topics: [T.us, T.orders] }, T.orders],
      [G.mixed, { to: "latest" }, T.orders],
      [G.mixed, { timestamp: 0, topics: [T.secret] }, T.secret],
      [
        G.pay,
        {
          offsets: [
            { topic: T.eu, partition: 0, offset: 0 },
            { topic: T.secret, partition: 0, offset: 0 },
          ],
        },
        T.secret,
      ],
    ];
    for (const [g, body, topic] of cases) {
      const res = await put(g, body);
      expect(`${JSON.stringify(body)} ${res.status}`).toBe(`${JSON.stringify(body)} 403`);
      expect((await errorOf(res)).message).toBe(`Topic '${topic}' is outside your scope`);
    }
    expect((await get<Detail>(`/api/consumers/${G.mixed}`, { role: "read" })).lag).toBe(8);
    expect((await get<Detail>(`/api/consumers/${G.pay}`, { role: "read" })).lag).toBe(2);

    // In scope, the same user resets.
    const ok = await put(G.mixed, { to: "latest", topics: [T.us] });
    expect(ok.status).toBe(200);
    const d = await get<Detail>(`/api/consumers/${G.mixed}`, { role: "read" });
    expect(d.offsets.find((o) => o.topic === T.us)!.lag).toBe(0);
    expect(d.lag).toBe(7);
  });

  test("a group is deleted only when all its topics are in scope", async () => {
    const del = (g: string) => rt.request(`/api/consumers/${g}`, { method: "DELETE", token: scoped });
    const cases: Array<[string, string]> = [
      [G.mixed, `Topic '${T.orders}' is outside your scope`],
      [G.secret, `Topic '${T.secret}' is outside your scope`],
      [G.missing, `Consumer group '${G.missing}' is outside your scope`],
    ];
    for (const [g, message] of cases) {
      const res = await del(g);
      expect(`${g} ${res.status}`).toBe(`${g} 403`);
      expect((await errorOf(res)).message).toBe(message);
    }
    expect((await rt.request(`/api/consumers/${G.mixed}`, { role: "read" })).status).toBe(200);
    expect((await del(G.pay)).status).toBe(200);
    expect((await rt.request(`/api/consumers/${G.pay}`, { role: "read" })).status).toBe(404);
  });

  test("a live member's assignments: a group shows by them, with only the visible ones", async () => {
    const g = `${run}-live`;
    const hidden = `${run}-live-hidden`;
    groups.push(g, hidden);
    const kafka = rt.kafka.default();
    const member = joinGroup(kafka, {
      groupId: g,
      topics: [T.us, T.orders],
      sessionTimeoutMs: 6_000,
      heartbeatIntervalMs: 500,
      maxWaitMs: 200,
    });
    const other = joinGroup(kafka, {
      groupId: hidden,
      topics: [T.orders],
      sessionTimeoutMs: 6_000,
      heartbeatIntervalMs: 500,
      maxWaitMs: 200,
    });
    // Reading one record of each topic means both members have joined and hold their partitions.
    const readBoth = async (m: typeof member, want: number) => {
      const seen = new Set<string>();
      for await (const r of m.records()) {
        seen.add(r.topic);
        if (seen.size === want) break;
      }
    };
    try {
      await Promise.all([readBoth(member, 2), readBoth(other, 1)]);
      // No commits: only the assignments can show the groups.
      const list = await get<GroupSummary[]>("/api/consumers", asScoped());
      expect(list.find((x) => x.id === g)).toMatchObject({ topics: [T.us], lag: 0 });
      expect(list.map((x) => x.id)).not.toContain(hidden);
      const d = await get<Detail>(`/api/consumers/${g}`, asScoped());
      expect(d.members).toHaveLength(1);
      expect(d.members[0]!.assignments).toEqual([{ topic: T.us, partition: 0 }]);
      expect(d.offsets).toEqual([]);
      expect((await rt.request(`/api/consumers/${hidden}`, { token: scoped })).status).toBe(403);
      const all = await get<Detail>(`/api/consumers/${g}`, { role: "read" });
      expect(all.members[0]!.assignments.map((a) => a.topic).sort()).toEqual([T.orders, T.us].sort());
    } finally {
      await Promise.all([member.close(), other.close()]);
    }
  }, 40_000);
});
