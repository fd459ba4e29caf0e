// @no-services
/**
 * The leadership findings from what the evaluation reads: leader imbalance (1014) per broker
 * from the Metadata's preferred leaders, and the controller quorum (1007) over passes. The test
 * cluster's quorum is one voter (node 1), which can neither lose its leader without taking the
 * cluster down nor change it: the quorum's answers are given here as DescribeQuorum gives them.
 */
import { describe, expect, test } from "bun:test";
import {
  IMBALANCE_PERCENT,
  imbalanceFindings,
  LEADER_CHANGE_MS,
  QuorumWatch,
  VOTER_SILENT_MS,
  voterFindings,
} from "../../src/domains/alerts/kafka-findings.ts";
import type { QuorumState } from "../../src/kafka/index.ts";

describe("leader imbalance (1014)", () => {
  const cases: [string, { broker: number; preferred: number; led: number }[], string[]][] = [
    ["every broker leads its preferred partitions", [{ broker: 1, preferred: 10, led: 10 }], []],
    [`exactly ${IMBALANCE_PERCENT} % off is not over it`, [{ broker: 1, preferred: 10, led: 9 }], []],
    [
      "more than 10 % off",
      [{ broker: 2, preferred: 10, led: 8 }],
      ["broker 2: Broker 2 leads 8 of the 10 partitions it is the preferred leader of (20 % imbalance, over 10 %)"],
    ],
    [
      "each broker on its own",
      [
        { broker: 1, preferred: 3, led: 3 },
        { broker: 3, preferred: 1, led: 0 },
      ],
      ["broker 3: Broker 3 leads 0 of the 1 partitions it is the preferred leader of (100 % imbalance, over 10 %)"],
    ],
  ];
  for (const [what, preferred, expected] of cases)
    test(what, () => {
      const found = imbalanceFindings("c", preferred);
      expect(found.map((f) => `${f.raise.instance}: ${f.raise.summary}`)).toEqual(expected);
      for (const f of found) expect(f.fingerprint).toBe(`cond/c/1014/${f.raise.instance.replace("broker ", "")}`);
    });
});

const quorum = (leaderId: number, leaderEpoch: number): QuorumState => ({
  leaderId,
  leaderEpoch,
  highWatermark: 100,
  voters: [1, 2, 3].map((id) => ({ id, logEndOffset: 100, lag: 0, lastFetchTimestamp: null, lastCaughtUpTimestamp: null })),
  observers: [],
});

describe("the controller quorum (1007)", () => {
  test("a leader found raises nothing; none raises 'no leader' while it lasts; a new leader raises a change for five minutes", () => {
    const watch = new QuorumWatch();
    const t0 = 1_000_000;
    expect(watch.findings("c", quorum(1, 5), t0)).toEqual([]);
    expect(watch.findings("c", quorum(1, 5), t0 + 1_000)).toEqual([]);
    const none = watch.findings("c", quorum(-1, 6), t0 + 2_000);
    expect(none.map((f) => f.fingerprint)).toEqual(["cond/c/1007/no-leader"]);
    expect(none[0]!.raise.summary).toBe("The KRaft controller quorum has no leader (epoch 6, voters 1, 2, 3)");
    const changed = watch.findings("c", quorum(2, 7), t0 + 3_000);
    expect(changed.map((f) => [f.fingerprint, f.raise.summary])).toEqual([
      ["cond/c/1007/leader-change/7", "The KRaft controller quorum's leader changed from node 1 to node 2 (epoch 7)"],
    ]);
    expect(watch.findings("c", quorum(2, 7), t0 + 3_000 + LEADER_CHANGE_MS - 1)).toHaveLength(1);
    expect(watch.findings("c", quorum(2, 7), t0 + 3_000 + LEADER_CHANGE_MS)).toEqual([]);
  });

  test("clusters are watched apart; a cluster without a quorum has nothing to watch", () => {
    const watch = new QuorumWatch();
    expect(watch.findings("a", quorum(1, 1), 0)).toEqual([]);
    expect(watch.findings("b", quorum(2, 1), 1)).toEqual([]);
    expect(watch.findings("a", quorum(1, 1), 2)).toEqual([]);
    expect(watch.findings("z", null, 3)).toEqual([]);
  });
});

describe("a controller of the quorum down (1001)", () => {
  const replica = (id: number, lastFetchTimestamp: number | null, lag = 0) => ({
    id,
    logEndOffset: 100 - lag,
    lag,
    lastFetchTimestamp,
    lastCaughtUpTimestamp: lastFetchTimestamp,
  });
  const quorum = (voters: ReturnType<typeof replica>[], leaderId = 1): QuorumState => ({
    leaderId,
    leaderEpoch: 4,
    highWatermark: 100,
    voters,
    observers: [replica(4, 1_000_000)],
  });
  test("26: a voter silent past the bound is down, measured on the leader's clock; the leader, a voter that fetches, and a quorum of one are not", () => {
    const t = 1_000_000;
    const found = voterFindings("c", quorum([replica(1, t), replica(2, t - 1_000), replica(3, t - VOTER_SILENT_MS - 1, 40)]));
    expect(found.map((f) => [f.fingerprint, f.holdMs, f.raise.summary])).toEqual([
      ["cond/c/1001/3", 0, "Controller 3 of the KRaft quorum has not fetched from the leader (node 1) for 30 s (40 records behind)"],
    ]);
    expect(voterFindings("c", quorum([replica(1, t)]))).toEqual([]);
    expect(voterFindings("c", quorum([replica(1, t), replica(2, t - 1_000)], -1))).toEqual([]);
    expect(voterFindings("c", null)).toEqual([]);
  });
  test("26: a voter with no fetch known is raised only after the same bound (a new leader knows none yet)", () => {
    const [f] = voterFindings("c", quorum([replica(1, 1_000_000), replica(2, null)]));
    expect(f?.holdMs).toBe(VOTER_SILENT_MS);
    expect(f?.raise.instance).toBe("controller 2");
  });
});
