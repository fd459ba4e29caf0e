// @no-services
/**
 * The one rule for partitions without a leader (src/kafka/partition-plan.ts), used by the read
 * loop and by the planning of a query's reads. Against a real broker with a node stopped:
 * test/sql-exec/faults.test.ts.
 */

import { describe, expect, test } from "bun:test";
import { AppError } from "../../src/errors.ts";
import { LeaderlessPartitions, OFFLINE_GRACE_ROUNDS, partitionsAround } from "../../src/kafka/partition-plan.ts";

describe("LeaderlessPartitions", () => {
  test("24.e22: a partition without a leader waits out the grace, then is left out once, while others have one", () => {
    const l = new LeaderlessPartitions();
    const leaders = [1, -1, 2];
    for (let round = 1; round <= OFFLINE_GRACE_ROUNDS; round++) {
      expect(l.observe(leaders, [0, 1, 2], true)).toEqual([]);
      expect(l.waiting).toEqual([1]);
    }
    expect(l.observe(leaders, [0, 1, 2], true)).toEqual([1]);
    expect(l.waiting).toEqual([]);
    expect([...l.leftOut]).toEqual([1]);
    expect(l.observe(leaders, [0, 1, 2], true)).toEqual([]);
  });

  test("24.e23: a leader back within the grace starts the count over; no partition is left out when none has a leader", () => {
    const l = new LeaderlessPartitions();
    for (let round = 1; round <= OFFLINE_GRACE_ROUNDS; round++) l.observe([1, -1], [0, 1], true);
    l.observe([1, 1], [0, 1], true);
    expect(l.waiting).toEqual([]);
    for (let round = 1; round <= OFFLINE_GRACE_ROUNDS; round++) expect(l.observe([1, -1], [0, 1], true)).toEqual([]);
    expect(l.observe([1, -1], [0, 1], true)).toEqual([1]);

    const none = new LeaderlessPartitions();
    for (let round = 1; round <= 10; round++) expect(none.observe([-1, -1], [0, 1], true)).toEqual([]);
    const unheard = new LeaderlessPartitions();
    for (let round = 1; round <= 10; round++) expect(unheard.observe([1, -1], [0, 1], false)).toEqual([]);
    expect(unheard.waiting).toEqual([1]);
  });
});

describe("partitionsAround", () => {
  test("24.e24: looks at the leaders until the grace is over, then names the partitions offline", async () => {
    let asked = 0;
    const pauses: number[] = [];
    const leaders = async () => {
      asked++;
      return [3, -1, 4, -1];
    };
    const r = await partitionsAround(leaders, "t", undefined, async (round) => void pauses.push(round));
    expect(r).toEqual({ all: [0, 1, 2, 3], offline: [1, 3] });
    expect(asked).toBe(OFFLINE_GRACE_ROUNDS + 1);
    expect(pauses).toEqual([1, 2, 3, 4]);
    expect(await partitionsAround(async () => [3, 4], "t")).toEqual({ all: [0, 1], offline: [] });
  });

  test("24.e25: no partition with a leader is UNAVAILABLE, not a topic with every partition skipped", async () => {
    const err = await partitionsAround(async () => [-1, -1], "t").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe("UNAVAILABLE");
    expect((err as AppError).message).toBe("no partition of topic 't' has a leader");
  });
});
