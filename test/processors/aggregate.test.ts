/**
 * Aggregating processors against the real broker, with outputs computed by hand: tumbling and
 * hopping windows emitted once when they close, late records within and beyond the grace
 * period, and tables (the latest aggregate per key) grouped by a value field, so through the
 * repartition topic, whose state survives a pause through its changelog.
 */
import { describe, expect, test } from "bun:test";
import { pollFor } from "../helpers/wait.ts";
import {
  action,
  createProcessor,
  getProcessor,
  jsonTopic,
  type OutRecord,
  outputOf,
  processorFixture,
  produce,
  readAll,
  sourceAndTarget,
  untilFigures,
  untilState,
} from "./helpers.ts";

const f = processorFixture();
const { kafka, made } = f;
/** A minute boundary: windows of 1 minute start here. */
const T0 = Math.floor(1_700_000_000_000 / 60_000) * 60_000;
const s = (seconds: number) => T0 + seconds * 1000;

const byWindowThenKey = (a: OutRecord, b: OutRecord) => {
  const va = a.value as { windowStart: number };
  const vb = b.value as { windowStart: number };
  return va.windowStart - vb.windowStart || String(a.key).localeCompare(String(b.key));
};

describe("windows", () => {
  test("tumbling COUNT and SUM by key: each window emitted once, when the stream time passes its end", async () => {
    const { source, target } = await sourceAndTarget(kafka(), "agg", made);
    const id = await createProcessor(
      f.rt(),
      `tumble-${source}`,
      `INSERT INTO \`${target}\` SELECT STREAM _key AS customer, COUNT(*) AS orders, SUM(amount) AS total FROM \`${source}\` GROUP BY TUMBLE(1, m), _key`,
    );
    await produce(kafka(), source, [
      { key: "a", value: { amount: 1 }, timestamp: s(1) },
      { key: "b", value: { amount: 2 }, timestamp: s(2) },
      { key: "a", value: { amount: 3 }, timestamp: s(30) },
      { key: "a", value: { amount: 5 }, timestamp: s(61) },
      { key: "b", value: { amount: 7 }, timestamp: s(90) },
      { key: "b", value: { amount: null }, timestamp: s(95) },
      // Moves the stream time past the second window's end: both first windows are closed.
      { key: "c", value: { amount: 0 }, timestamp: s(125) },
    ]);
    const out = (await outputOf(kafka(), target, 4)).sort(byWindowThenKey);
    const w = (start: number) => ({ windowStart: s(start), windowEnd: s(start + 60) });
    expect(out.map((r) => [r.key, r.value])).toEqual([
      ["a", { customer: "a", orders: 2, total: 4, ...w(0) }],
      ["b", { customer: "b", orders: 1, total: 2, ...w(0) }],
      ["a", { customer: "a", orders: 1, total: 5, ...w(60) }],
      ["b", { customer: "b", orders: 2, total: 7, ...w(60) }],
    ]);
    const p = await getProcessor(f.rt(), id);
    expect(p.operations).toEqual(["AGGREGATE TUMBLE 1m"]);
    // The window of c is still open: nothing more is written.
    await pollFor("the input counted", async () => (await getProcessor(f.rt(), id)).figures.recordsIn === 7, 30_000);
    expect(await readAll(kafka(), target)).toHaveLength(4);
  }, 60_000);

  test("late records: within the grace period they count; past it they are counted as late and dropped", async () => {
    const { source, target } = await sourceAndTarget(kafka(), "late", made);
    const id = await createProcessor(
      f.rt(),
      `late-${source}`,
      `SET window.grace = 10s; INSERT INTO \`${target}\` SELECT STREAM COUNT(*) AS n, MAX(v) AS top FROM \`${source}\` GROUP BY TUMBLE(1, m), _key`,
    );
    await produce(kafka(), source, [
      { key: "k", value: { v: 1 }, timestamp: s(10) },
      { key: "k", value: { v: 2 }, timestamp: s(61) },
      // Late for [0, 60) by 6 s, within the 10 s grace: counted.
      { key: "k", value: { v: 9 }, timestamp: s(55) },
      // Stream time 75: [0, 60) closes (60 + 10 <= 75).
      { key: "k", value: { v: 3 }, timestamp: s(75) },
      // Past the grace: dropped.
      { key: "k", value: { v: 100 }, timestamp: s(20) },
      // Stream time 131: [60, 120) closes.
      { key: "k", value: { v: 4 }, timestamp: s(131) },
    ]);
    const out = (await outputOf(kafka(), target, 2)).sort(byWindowThenKey);
    expect(out.map((r) => r.value)).toEqual([
      { n: 2, top: 9, windowStart: s(0), windowEnd: s(60) },
      { n: 2, top: 3, windowStart: s(60), windowEnd: s(120) },
    ]);
    await pollFor("one late record", async () => (await getProcessor(f.rt(), id)).figures.late === 1, 30_000);
  }, 60_000);

  test("hopping windows: a record counts in every window it falls in", async () => {
    const { source, target } = await sourceAndTarget(kafka(), "hop", made);
    await createProcessor(
      f.rt(),
      `hop-${source}`,
      `INSERT INTO \`${target}\` SELECT STREAM COUNT(*) AS n, AVG(v) AS mean FROM \`${source}\` WINDOW BY HOP 2m, 1m GROUP BY _key`,
    );
    await produce(kafka(), source, [
      { key: "k", value: { v: 2 }, timestamp: s(30) },
      { key: "k", value: { v: 4 }, timestamp: s(90) },
      { key: "k", value: { v: 9 }, timestamp: s(300) },
    ]);
    // Windows of 2 minutes every minute: 30 s is in [-60, 60) and [0, 120); 90 s in [0, 120) and [60, 180).
    const out = (await outputOf(kafka(), target, 3)).sort(byWindowThenKey);
    expect(out.map((r) => r.value)).toEqual([
      { n: 1, mean: 2, windowStart: s(-60), windowEnd: s(60) },
      { n: 2, mean: 3, windowStart: s(0), windowEnd: s(120) },
      { n: 1, mean: 4, windowStart: s(60), windowEnd: s(180) },
    ]);
  }, 60_000);
});

describe("tables", () => {
  test("GROUP BY a value field: records meet through the repartition topic; the latest output per key is exact, and survives a pause", async () => {
    const source = await jsonTopic(kafka(), "tbl-src", 3, made);
    const target = `${source}-totals`;
    made.push(target);
    // A table's topic is compacted: its key may not be null (a record without a customer).
    const id = await createProcessor(
      f.rt(),
      `table-${source}`,
      `SET autocreate = true; INSERT INTO \`${target}\` SELECT STREAM COALESCE(customer, 'none') AS _key, customer, COUNT(*) AS n, SUM(amount) AS total, MIN(amount) AS low, MAX(amount) AS high FROM \`${source}\` GROUP BY customer`,
    );
    const orders = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, i) => {
        const n = from + i;
        return { key: `o${n}`, value: { customer: `c${n % 4}`, amount: n % 10 }, partition: n % 3 };
      });
    const expected = (upTo: number) => {
      const totals = new Map<string, { customer: string; n: number; total: number; low: number; high: number }>();
      for (const o of orders(0, upTo)) {
        const t = totals.get(o.value.customer) ?? { customer: o.value.customer, n: 0, total: 0, low: Infinity, high: -Infinity };
        t.n++;
        t.total += o.value.amount;
        t.low = Math.min(t.low, o.value.amount);
        t.high = Math.max(t.high, o.value.amount);
        totals.set(o.value.customer, t);
      }
      return Object.fromEntries([...totals].sort());
    };
    const latest = async () => {
      const last = new Map<string, unknown>();
      for (const r of await readAll(kafka(), target)) last.set(r.key!, r.value);
      return Object.fromEntries([...last].sort());
    };
    await produce(kafka(), source, orders(0, 400));
    await pollFor("the totals of 400 orders", async () => JSON.stringify(await latest()) === JSON.stringify(expected(400)), 60_000);
    const p = await getProcessor(f.rt(), id);
    expect(p.operations).toEqual(["REPARTITION", "AGGREGATE"]);
    // Records in are the source's 400: their reading back from the repartition topic is not counted.
    const counted = await untilFigures(f.rt(), id, "the input counted", (x) => x.recordsIn >= 400);
    expect(counted.figures.recordsIn).toBe(400);
    // Caught up, the group has no lag, though the repartition topic ends with a transaction
    // marker: the runner commits its read position past it.
    await untilFigures(f.rt(), id, "no lag once caught up", (x) => x.lag === 0);
    // autocreate made the table's topic compacted: the latest aggregate per key is what it keeps.
    const configs = await kafka().configs.describeTopic(target);
    expect(configs.find((c) => c.name === "cleanup.policy")?.value).toBe("compact");

    expect((await action(f.rt(), id, "pause")).status).toBe(200);
    await untilState(f.rt(), id, "PAUSED");
    await produce(kafka(), source, orders(400, 700));
    expect((await action(f.rt(), id, "resume")).status).toBe(200);
    await pollFor("the totals of 700 orders", async () => JSON.stringify(await latest()) === JSON.stringify(expected(700)), 60_000);
  }, 120_000);
});

describe("every aggregate under every window", () => {
  // Values with a null and a string among numbers: SUM and AVG skip both, COUNT(v) the null.
  const values: Array<{ key: string; v: unknown; at: number }> = [
    { key: "x", v: 4, at: 5 },
    { key: "y", v: 10, at: 20 },
    { key: "x", v: null, at: 40 },
    { key: "x", v: -2, at: 70 },
    { key: "x", v: "s", at: 80 },
    { key: "y", v: 1.5, at: 100 },
    { key: "x", v: 7, at: 130 },
  ];
  const fold = (vs: unknown[]) => {
    const nums = vs.filter((v): v is number => typeof v === "number");
    return {
      n: vs.length,
      nv: vs.filter((v) => v !== null).length,
      total: nums.length ? nums.reduce((a, b) => a + b, 0) : null,
      mean: nums.length ? nums.reduce((a, b) => a + b, 0) / nums.length : null,
      low: nums.length ? Math.min(...nums) : null,
      high: nums.length ? Math.max(...nums) : null,
    };
  };
  const select = "COUNT(*) AS n, COUNT(v) AS nv, SUM(v) AS total, AVG(v) AS mean, MIN(v) AS low, MAX(v) AS high";
  const windowsOf = (at: number, size: number, advance: number) => {
    const out: number[] = [];
    for (let start = Math.floor(at / advance) * advance; start > at - size; start -= advance) out.push(start);
    return out.sort((a, b) => a - b);
  };
  /** Expected windowed output, for windows that end by `closedBy` seconds. */
  const expectedWindows = (size: number, advance: number, closedBy: number) => {
    const groups = new Map<string, unknown[]>();
    for (const r of values) {
      for (const start of windowsOf(r.at, size, advance)) {
        const k = JSON.stringify([start, r.key]);
        groups.set(k, [...(groups.get(k) ?? []), r.v]);
      }
    }
    return [...groups]
      .map(([k, vs]) => {
        const [start, key] = JSON.parse(k) as [number, string];
        return { key, start, value: { ...fold(vs), windowStart: s(start), windowEnd: s(start + size) } };
      })
      .filter((w) => w.start + size <= closedBy)
      .sort((a, b) => a.start - b.start || a.key.localeCompare(b.key))
      .map((w) => [w.key, w.value]);
  };

  test.each([
    ["TUMBLE", "GROUP BY TUMBLE(1, m), _key", 60, 60],
    ["HOP", "GROUP BY HOP(2, m, 1, m), _key", 120, 60],
  ] as const)(
    "%s: COUNT, SUM, AVG, MIN and MAX with nulls and strings among the values",
    async (_kind, groupBy, size, advance) => {
      const { source, target } = await sourceAndTarget(kafka(), "all", made);
      await createProcessor(f.rt(), `all-${source}`, `INSERT INTO \`${target}\` SELECT STREAM ${select} FROM \`${source}\` ${groupBy}`);
      // The last record moves the stream time to 400 s: every window ending by then is closed.
      await produce(kafka(), source, [
        ...values.map((r) => ({ key: r.key, value: { v: r.v }, timestamp: s(r.at) })),
        { key: "z", value: { v: 0 }, timestamp: s(400) },
      ]);
      const expected = expectedWindows(size, advance, 400);
      const out = (await outputOf(kafka(), target, expected.length)).sort(byWindowThenKey);
      expect(out.map((r) => [r.key, r.value])).toEqual(expected);
    },
    60_000,
  );

  test("a table: the latest output per key holds every aggregate of all its records", async () => {
    const { source, target } = await sourceAndTarget(kafka(), "all", made, 2);
    await createProcessor(f.rt(), `all-${source}`, `INSERT INTO \`${target}\` SELECT STREAM ${select} FROM \`${source}\` GROUP BY _key`);
    await produce(
      kafka(),
      source,
      values.map((r) => ({ key: r.key, value: { v: r.v }, timestamp: s(r.at) })),
    );
    const expected = {
      x: fold(values.filter((r) => r.key === "x").map((r) => r.v)),
      y: fold(values.filter((r) => r.key === "y").map((r) => r.v)),
    };
    await pollFor(
      "the latest aggregates of x and y",
      async () => {
        const last = new Map<string, unknown>();
        for (const r of await readAll(kafka(), target)) last.set(r.key!, r.value);
        return JSON.stringify(Object.fromEntries([...last].sort())) === JSON.stringify(expected);
      },
      60_000,
    );
  }, 60_000);
});
