/**
 * Push-down: what a query fetches from the broker, not only what it answers. Records are
 * produced in batches of 10, so a fetch starting inside the range returns at most the batch
 * holding its first offset; the executor's scans report every fetched batch.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import type { PartitionScan } from "../../src/engine/executor.ts";
import { sqlFixture, streamWithScan } from "./helpers.ts";

const f = sqlFixture();
const PARTITIONS = 3;
const PER_PARTITION = 200;
const BATCH = 10;
const T0 = 1_750_000_000_000;
let topic: string;

beforeAll(async () => {
  topic = await f.topic("pushdown", PARTITIONS);
  // Offsets i per partition p; timestamps T0 + i seconds; batches of 10 per partition.
  for (let i = 0; i < PER_PARTITION; i += BATCH) {
    const records = [];
    for (let p = 0; p < PARTITIONS; p++)
      for (let j = i; j < i + BATCH; j++)
        records.push({ partition: p, key: `${p}-${j}`, value: JSON.stringify({ p, i: j }), timestamp: T0 + j * 1000 });
    await f.rt.kafka.default().writes.produce(topic, records);
  }
});

const run = (where: string, params: Record<string, string> = {}) =>
  streamWithScan(f.rt, `SELECT * FROM \`${topic}\` WHERE ${where}`, params);
const scan = (scans: PartitionScan[], p: number) => scans.find((s) => s.partition === p);
const fetchedTotal = (scans: PartitionScan[]) => scans.reduce((n, s) => n + s.fetchedRecords, 0);

describe("partitions", () => {
  test("_meta.partition = n reads only that partition", async () => {
    const r = await run("_meta.partition = 1");
    expect(r.records).toHaveLength(PER_PARTITION);
    expect(new Set(r.records.map((x: { partition: number }) => x.partition))).toEqual(new Set([1]));
    expect(r.finished.scans.map((s) => s.partition)).toEqual([1]);
    expect(fetchedTotal(r.finished.scans)).toBe(PER_PARTITION);
    expect(r.finished.readRecords).toBe(PER_PARTITION);
  });

  test("_meta.partition IN (...) reads only those; a partition beyond the topic is ignored", async () => {
    const r = await run("_meta.partition IN (0, 2, 7)");
    expect(r.records).toHaveLength(2 * PER_PARTITION);
    expect(r.finished.scans.map((s) => s.partition)).toEqual([0, 2]);
    expect(fetchedTotal(r.finished.scans)).toBe(2 * PER_PARTITION);
  });

  test("no partition can match: nothing is fetched, the topic end is reached", async () => {
    const r = await run("_meta.partition = 1 AND _meta.partition = 2");
    expect(r.records).toHaveLength(0);
    expect(r.finished.scans).toEqual([]);
    expect(r.end).toMatchObject({ isTopicEnd: true, totalRecords: 0 });
  });
});

describe("offsets", () => {
  test("_meta.offset >= n seeks: the fetch starts at the batch holding n", async () => {
    const r = await run("_meta.partition = 0 AND _meta.offset >= 155");
    expect(r.records.map((x: { offset: number }) => x.offset)).toEqual(Array.from({ length: 45 }, (_, i) => 155 + i));
    const s = scan(r.finished.scans, 0)!;
    expect(s).toMatchObject({ from: 155, to: PER_PARTITION });
    expect(s.firstFetched).toBe(150);
    expect(s.fetchedRecords).toBe(50);
  });

  test("an offset range stops fetching past its end (at most one fetch beyond)", async () => {
    const r = await run("_meta.offset > 20 AND _meta.offset < 35");
    expect(r.records).toHaveLength(PARTITIONS * 14);
    for (let p = 0; p < PARTITIONS; p++) {
      const s = scan(r.finished.scans, p)!;
      expect(s).toMatchObject({ from: 21, to: 35 });
      expect(s.firstFetched).toBe(20);
      // One fetch answers several batches: what it fetched beyond 34 ends with that fetch.
      expect(s.fetches).toBe(1);
      expect(s.fetchedRecords).toBeLessThan(PER_PARTITION);
    }
    expect(r.finished.readRecords).toBe(PARTITIONS * 14);
  });

  test("BETWEEN and = on offsets", async () => {
    const r = await run("_meta.partition = 2 AND _meta.offset BETWEEN 100 AND 104");
    expect(r.records.map((x: { offset: number }) => x.offset)).toEqual([100, 101, 102, 103, 104]);
    expect(scan(r.finished.scans, 2)).toMatchObject({ from: 100, to: 105, firstFetched: 100, fetches: 1 });
    const one = await run("_meta.partition = 2 AND _meta.offset = 42");
    expect(one.records.map((x: { offset: number }) => x.offset)).toEqual([42]);
    expect(scan(one.finished.scans, 2)).toMatchObject({ from: 42, to: 43, firstFetched: 40 });
  });

  test("LAST_OFFSET() - n reads the last n of each partition", async () => {
    const r = await run("_meta.offset >= LAST_OFFSET() - 5");
    expect(r.records).toHaveLength(PARTITIONS * 5);
    for (let p = 0; p < PARTITIONS; p++) {
      expect(scan(r.finished.scans, p)).toMatchObject({ from: 195, to: 200, firstFetched: 190, fetchedRecords: 10 });
    }
  });

  test("an offset range beyond the end fetches nothing", async () => {
    const r = await run("_meta.offset >= 5000");
    expect(r.records).toHaveLength(0);
    expect(r.finished.scans).toEqual([]);
    expect(r.end.isTopicEnd).toBe(true);
  });
});

describe("timestamps", () => {
  test("_meta.timestamp >= t seeks by time (ListOffsets by timestamp)", async () => {
    const r = await run(`_meta.partition = 0 AND _meta.timestamp >= ${T0 + 180_000}`);
    expect(r.records.map((x: { offset: number }) => x.offset)).toEqual(Array.from({ length: 20 }, (_, i) => 180 + i));
    expect(scan(r.finished.scans, 0)).toMatchObject({ from: 180, to: 200, firstFetched: 180, fetchedRecords: 20 });
  });

  test("a time window bounds both ends", async () => {
    const r = await run(`_meta.timestamp > ${T0 + 49_000} AND _meta.timestamp <= ${T0 + 59_000}`);
    expect(r.records).toHaveLength(PARTITIONS * 10);
    for (let p = 0; p < PARTITIONS; p++)
      expect(scan(r.finished.scans, p)).toMatchObject({ from: 50, to: 60, firstFetched: 50, fetches: 1 });
  });

  test("timestamps as text", async () => {
    const iso = new Date(T0 + 195_000).toISOString();
    const r = await run(`_meta.partition = 1 AND _meta.timestamp >= '${iso}'`);
    expect(r.records.map((x: { offset: number }) => x.offset)).toEqual([195, 196, 197, 198, 199]);
    expect(scan(r.finished.scans, 1)).toMatchObject({ from: 195 });
  });

  test("a time after every record fetches nothing", async () => {
    const r = await run(`_meta.timestamp > ${T0 + 10_000_000}`);
    expect(r.records).toHaveLength(0);
    expect(r.finished.scans).toEqual([]);
  });
});

describe("no push-down", () => {
  test("OR across partitions reads everything, the filter still applies", async () => {
    const r = await run("_meta.partition = 0 OR i = 3");
    expect(r.records).toHaveLength(PER_PARTITION + 2);
    expect(r.finished.scans.map((s) => s.partition)).toEqual([0, 1, 2]);
    expect(fetchedTotal(r.finished.scans)).toBe(PARTITIONS * PER_PARTITION);
  });
});
