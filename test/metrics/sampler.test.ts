import { afterAll, describe, expect, test } from "bun:test";
import { createKafkaPool, type KafkaPool } from "../../src/kafka/index.ts";
import { LagEngine } from "../../src/lag/engine.ts";
import { OffsetSampler } from "../../src/lag/sampler.ts";
import { kafkaBootstrap, uniqueTopic } from "../cluster/cluster.ts";
import { createReadyTopic } from "../helpers/topics.ts";

/** The history logic only: samples are recorded by hand, no cluster is asked. */
function sampler(windowMs = 600_000): OffsetSampler {
  return new OffsetSampler({} as KafkaPool, { intervalMs: 0, windowMs });
}
const ends = (topic: string, ...offsets: number[]) => offsets.map((offset, partition) => ({ topic, partition, offset }));

describe("end-offset history", () => {
  test("rate: messages over the seconds between the oldest recent sample that has the topic and the newest", () => {
    const s = sampler();
    s.record("c", 0, ends("other", 0));
    s.record("c", 10_000, ends("t", 100, 50));
    s.record("c", 20_000, ends("t", 300, 150));
    expect(s.rate("c", "t")).toBe(30); // (200 + 100) / 10 s
    expect(
      s.rate("c", "t", {
        t: 30_000,
        ends: [
          { partition: 0, offset: 700 },
          { partition: 1, offset: 150 },
        ],
      }),
    ).toBe(35); // (600 + 100) / 20 s
    expect(s.rate("c", "missing")).toBe(0);
    // A partial sample of another topic after the last full one does not hide t.
    s.record("c", 25_000, ends("other", 5));
    expect(s.rate("c", "t")).toBe(30);
  });

  test("rates of many topics, names sharing prefixes, and a topic first read between full samples", () => {
    const s = sampler();
    const names = Array.from({ length: 2_000 }, (_, i) => `t${i}`);
    s.record(
      "c",
      0,
      names.flatMap((n, i) => ends(n, i, 0)),
    );
    s.record(
      "c",
      10_000,
      names.flatMap((n, i) => ends(n, i + 10 * i, 10)),
    );
    // t1 and t10, t100, t1000 share a prefix: each counts its own partitions only.
    expect([s.rate("c", "t1"), s.rate("c", "t10"), s.rate("c", "t100"), s.rate("c", "t1999")]).toEqual([2, 11, 101, 2_000]);
    // A topic first read by a GET between full samples: its rate runs from that reading.
    s.record("c", 10_200, ends("late", 5));
    expect(s.rate("c", "late")).toBe(0);
    s.record("c", 20_000, [...names.flatMap((n, i) => ends(n, i + 10 * i, 10)), ...ends("late", 25)]);
    expect(s.rate("c", "late")).toBe(2.041); // 20 records over 9.8 s
  });

  test("rate is 0 with a single point", () => {
    const s = sampler();
    s.record("c", 0, ends("t", 10));
    expect(s.rate("c", "t")).toBe(0);
  });

  test.each([
    // committed offset, expected append time
    // End 100 at 0 s means offsets 0..99 existed; offset 100 is the first of the next 100 records,
    // appended between 0 s and 10 s, so 1/100 of the way.
    [100, 100],
    [150, 5_100],
    [199, 10_000],
    [250, 15_100],
  ])("append time of offset %p is about %p", (offset, t) => {
    const s = sampler();
    s.record("c", 0, ends("t", 100));
    s.record("c", 10_000, ends("t", 200));
    s.record("c", 20_000, ends("t", 300));
    const got = s.appendTimeOf("c", "t", 0, offset)!;
    expect(Math.abs(got.t - t)).toBeLessThanOrEqual(100);
  });

  test("older than the history: the first sample's time (a lower bound); newer than it: unknown", () => {
    const s = sampler();
    s.record("c", 5_000, ends("t", 100));
    s.record("c", 10_000, ends("t", 200));
    expect(s.appendTimeOf("c", "t", 0, 10)!.t).toBe(5_000);
    expect(s.appendTimeOf("c", "t", 0, 200)).toBeNull();
  });

  test("regression: a reading merged into the latest sample overwrote what it had read at its own time", () => {
    // Sampling every 10 s: a partial reading (one topic, from a GET) within 1 s joins the latest sample.
    const s = new OffsetSampler({} as KafkaPool, { intervalMs: 10_000, windowMs: 600_000 });
    s.record("c", 0, ends("t", 10));
    s.record("c", 100, [...ends("t", 30), { topic: "u", partition: 0, offset: 4 }]);
    expect(s.samples("c").map((x) => [x.t, Object.fromEntries(x.ends)])).toEqual([[0, { "t\u00000": 10, "u\u00000": 4 }]]);
    // The 20 records written after the sample are counted, not hidden in it.
    expect(s.rate("c", "t", { t: 1_000, ends: [{ partition: 0, offset: 30 }] })).toBe(20);
  });

  test("samples older than the window are dropped, keeping two", () => {
    const s = sampler(10_000);
    for (let t = 0; t <= 60_000; t += 5_000) s.record("c", t, ends("t", t));
    expect(s.samples("c").map((x) => x.t)).toEqual([50_000, 55_000, 60_000]);
  });
});

/**
 * Samples read from the real broker, stamped by a clock the test sets: rates and lag seconds
 * come out exact, and no test waits for time to pass.
 */
describe("sampler and lag engine on a set clock", () => {
  const pool = createKafkaPool([{ name: "c", bootstrapServers: [kafkaBootstrap()], clientId: "loupe-test", default: true }]);
  const kafka = pool.default();
  const topics: string[] = [];
  const groups: string[] = [];
  afterAll(async () => {
    await kafka.groups.delete(groups).catch(() => {});
    for (const t of topics) await kafka.topics.delete(t).catch(() => {});
    await pool.close();
  });

  /**
   * The pool's cluster, except that the first call of each operation named in `stale` (as
   * "concern.method") answers what the broker said before (a read that raced a deletion);
   * every call is counted.
   */
  function racingPool(stale: Partial<Record<"topics.list" | "groups.committedOffsets", unknown>>) {
    const calls: Record<string, number> = {};
    const counting = <T extends object>(obj: T, prefix: string): T =>
      new Proxy(obj, {
        get(target, prop) {
          const v = Reflect.get(target, prop, target);
          const name = `${prefix}${String(prop)}`;
          if (prefix === "" && typeof v === "object" && v !== null) return counting(v, `${name}.`);
          if (typeof v !== "function") return v;
          return (...args: unknown[]) => {
            calls[name] = (calls[name] ?? 0) + 1;
            if (calls[name] === 1 && name in stale) return Promise.resolve(stale[name as keyof typeof stale]);
            return v.apply(target, args);
          };
        },
      });
    const cluster = counting(kafka, "");
    const racing: KafkaPool = { ...pool, get: () => cluster, default: () => cluster, names: () => ["c"] };
    return { pool: racing, calls };
  }

  test("samples carry the clock's time; rate and lag seconds follow it", async () => {
    let now = 1_700_000_000_000;
    const s = new OffsetSampler(pool, { intervalMs: 0, windowMs: 600_000, now: () => now });
    const engine = new LagEngine(pool, s, { ttlMs: 0 });
    const t = await createReadyTopic(kafka, { prefix: "clock", partitions: 1, track: topics });
    const g = uniqueTopic("clock-grp");
    groups.push(g);
    await kafka.groups.alterOffsets(g, [{ topic: t, partition: 0, offset: 0 }]);

    await s.sampleNow("c"); // the partition is empty at t0
    await kafka.writes.produce(
      t,
      Array.from({ length: 7 }, (_, i) => ({ value: `v${i}` })),
    );
    now += 10_000;
    await s.sampleNow("c");
    expect(s.samples("c").map((x) => [x.t, x.ends.get(`${t}\u00000`)])).toEqual([
      [1_700_000_000_000, 0],
      [1_700_000_010_000, 7],
    ]);
    expect(s.rate("c", t)).toBe(0.7);

    now += 5_000;
    const snapshot = await engine.snapshot("c");
    expect(snapshot.takenAt).toBe(1_700_000_015_000);
    // Offset 0 is the first of the 7 records appended within the 10 s between the samples:
    // appended at 1/7 of the way (t0 + 1429 ms), read 13.571 s later.
    expect(snapshot.partitions.find((p) => p.group === g)).toEqual({
      group: g,
      topic: t,
      partition: 0,
      committed: 0,
      end: 7,
      lag: 7,
      lagSeconds: 13.6,
    });
  });

  test("regression: a topic deleted between the listing and ListOffsets lost the whole end-offset sample", async () => {
    // The listing is taken before the deletion (as when both race); every request still goes
    // to the broker, which no longer knows the topic.
    const gone = await createReadyTopic(kafka, { prefix: "gone", partitions: 2, track: topics });
    const kept = await createReadyTopic(kafka, { prefix: "kept", partitions: 1, track: topics });
    await kafka.writes.produce(kept, [{ value: "a" }, { value: "b" }]);
    const staleListing = await kafka.topics.list();
    await kafka.topics.delete(gone);
    const racing = racingPool({ "topics.list": staleListing });
    const s = new OffsetSampler(racing.pool, { intervalMs: 0, windowMs: 600_000, now: () => 1_000 });
    await s.sampleNow("c");
    expect(racing.calls["topics.list"]).toBe(2);
    const [sample] = s.samples("c");
    expect(sample!.ends.get(`${kept}\u00000`)).toBe(2);
    expect(sample!.ends.has(`${gone}\u00000`)).toBe(false);
  });

  test("regression: a topic deleted while lag was read failed the whole lag snapshot", async () => {
    const gone = await createReadyTopic(kafka, { prefix: "lag-gone", partitions: 1, track: topics });
    const kept = await createReadyTopic(kafka, { prefix: "lag-kept", partitions: 1, track: topics });
    await kafka.writes.produce(kept, [{ value: "a" }, { value: "b" }, { value: "c" }]);
    const g = uniqueTopic("lag-race");
    groups.push(g);
    await kafka.groups.alterOffsets(g, [
      { topic: gone, partition: 0, offset: 0 },
      { topic: kept, partition: 0, offset: 1 },
    ]);
    // Listing and committed offsets are read before the deletion, ListOffsets after it.
    const racing = racingPool({
      "topics.list": await kafka.topics.list(),
      "groups.committedOffsets": await kafka.groups.committedOffsets([g]),
    });
    await kafka.topics.delete(gone);
    const lag = await new LagEngine(racing.pool, null, { ttlMs: 0 }).groupLag("c", [g]);
    expect(racing.calls["offsets.list"]).toBe(2);
    expect(lag).toEqual([{ group: g, topic: kept, partition: 0, committed: 1, end: 3, lag: 2, lagSeconds: null }]);
  });

  test("a snapshot is shared until the clock passes its time to live", async () => {
    let now = 1_700_000_000_000;
    const engine = new LagEngine(pool, null, { ttlMs: 60_000, now: () => now });
    const first = await engine.snapshot("c");
    now += 60_000;
    expect(await engine.snapshot("c")).toBe(first);
    now += 1;
    const second = await engine.snapshot("c");
    expect(second).not.toBe(first);
    expect(second.takenAt).toBe(1_700_000_060_001);
  });
});
