import { describe, expect, test } from "bun:test";
import type { KafkaPool } from "../../src/kafka/index.ts";
import { OffsetSampler } from "../../src/lag/sampler.ts";

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

  test("samples older than the window are dropped, keeping two", () => {
    const s = sampler(10_000);
    for (let t = 0; t <= 60_000; t += 5_000) s.record("c", t, ends("t", t));
    expect(s.samples("c").map((x) => x.t)).toEqual([50_000, 55_000, 60_000]);
  });
});
