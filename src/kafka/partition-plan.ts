/**
 * Partitions without a leader, handled once for every read of a topic. A leader election takes
 * a moment, so a partition seen without a leader first waits a few rounds; past that grace,
 * while other partitions of the topic have a leader, it is left out and named (never silently),
 * and the read goes on with the others. When no partition has a leader the cluster is not
 * readable at all: that is an outage, retried like a lost broker, never a skip.
 *
 * Used by the read loop (reads.ts, which looks at the leaders again after each failure) and by
 * the planning of a query's reads (topicOffsets below, which looks until the grace is over).
 */

import { AppError } from "../errors.ts";
import { abortable } from "../util/abort.ts";
import type { ListedOffset, OffsetSpec, TopicPartitionRef } from "./types.ts";

/**
 * Rounds (metadata refreshes with backoff, some 1.5 s) a partition may show no leader while
 * others are readable before it is left out: a leader election takes less.
 */
export const OFFLINE_GRACE_ROUNDS = 4;

/** Partitions seen without a leader, across rounds of looking at a topic's leaders. */
export class LeaderlessPartitions {
  /** Rounds each partition has been seen without a leader in a row. */
  readonly #rounds = new Map<number, number>();
  /** Partitions left out for good. */
  readonly leftOut = new Set<number>();

  /**
   * One look at the topic's leaders (node per partition, -1: none) for `partitions`: counts the
   * rounds of those without one and answers those left out now, past the grace while another
   * partition has a leader. `mayLeaveOut` false keeps them waiting (a read nobody tells of a
   * skip retries them instead). Partitions the topic does not have are passed over.
   */
  observe(leader: readonly number[], partitions: Iterable<number>, mayLeaveOut: boolean): number[] {
    const readable = leader.some((l) => l >= 0);
    const now: number[] = [];
    for (const partition of partitions) {
      if (this.leftOut.has(partition) || partition >= leader.length) continue;
      if ((leader[partition] ?? -1) >= 0) {
        this.#rounds.delete(partition);
        continue;
      }
      const rounds = (this.#rounds.get(partition) ?? 0) + 1;
      this.#rounds.set(partition, rounds);
      if (readable && mayLeaveOut && rounds > OFFLINE_GRACE_ROUNDS) {
        this.leftOut.add(partition);
        this.#rounds.delete(partition);
        now.push(partition);
      }
    }
    return now;
  }

  /** Partitions without a leader still within their grace (as of the last look). */
  get waiting(): number[] {
    return [...this.#rounds.keys()];
  }
}

/** What topicOffsets needs of a cluster (KafkaCluster has it). */
interface TopicOffsetPorts {
  topics: { describe(names: string[]): Promise<Array<{ partitionDetails: Array<{ partition: number; leader: number }> }>> };
  offsets: { list(refs: TopicPartitionRef[], spec: OffsetSpec): Promise<ListedOffset[]> };
  reads: {
    leaders(topic: string): Promise<number[]>;
    offsetsOf(topic: string, partitions: number[], spec: OffsetSpec): Promise<Map<number, number>>;
  };
}

/** A topic's partitions and where their logs start and end now. */
export interface TopicOffsets {
  /** Every partition of the topic. */
  all: number[];
  /** Partitions left out: no leader (see LeaderlessPartitions). */
  offline: number[];
  /** Log start and end offsets of the partitions with a leader. */
  starts: Map<number, number>;
  ends: Map<number, number>;
  /**
   * The first offset whose timestamp is at least `timestamp`, by partition (-1 where every
   * record is older; absent where the cluster did not answer for it), asked the way that
   * worked for the offsets above.
   */
  offsetsAt(partitions: number[], timestamp: number): Promise<Map<number, number>>;
}

const isUnavailable = (err: unknown) => err instanceof AppError && (err.code === "UNAVAILABLE" || err.code === "GATEWAY_TIMEOUT");

/**
 * The topic's partitions, those offline, and the start and end offsets of the others. A
 * description names leaderless partitions (leader -1): they are offline at once. When one
 * partition without a leader fails the description (and every call of the client over the
 * topic), the plan goes around it with raw requests that answer for the others, through the
 * grace of partitionsAround.
 */
export async function topicOffsets(cluster: TopicOffsetPorts, topic: string, signal?: AbortSignal): Promise<TopicOffsets> {
  let all: number[];
  let offline: number[] = [];
  let list = async (partitions: number[], spec: OffsetSpec): Promise<Map<number, number>> => {
    const listed = await cluster.offsets.list(
      partitions.map((partition) => ({ topic, partition })),
      spec,
    );
    return new Map(listed.map((o) => [o.partition, o.offset]));
  };
  try {
    const [described] = await cluster.topics.describe([topic]);
    all = described!.partitionDetails.map((p) => p.partition);
    offline = described!.partitionDetails.filter((p) => p.leader < 0).map((p) => p.partition);
  } catch (err) {
    if (!isUnavailable(err)) throw err;
    ({ all, offline } = await partitionsAround(() => cluster.reads.leaders(topic), topic, signal));
    list = async (partitions, spec) => {
      const found = await cluster.reads.offsetsOf(topic, partitions, spec);
      return new Map(partitions.map((p) => [p, found.get(p) ?? -1]));
    };
  }
  const online = all.filter((p) => !offline.includes(p));
  const [starts, ends] = await Promise.all([list(online, "earliest"), list(online, "latest")]);
  return { all, offline, starts, ends, offsetsAt: list };
}

/** The wait between two looks at the leaders: 100 ms doubling to 2 s. */
const backoff = (round: number, signal: AbortSignal | undefined) => abortable(Bun.sleep(Math.min(2_000, 100 * 2 ** (round - 1))), signal);

/**
 * The topic's partitions and those offline, looking at the leaders until no partition waits
 * within its grace. When none has a leader the cluster is not readable at all: UNAVAILABLE.
 * `pause` waits between two looks (the backoff above; a test's clock).
 */
export async function partitionsAround(
  leadersOf: () => Promise<number[]>,
  topic: string,
  signal?: AbortSignal,
  pause: (round: number, signal: AbortSignal | undefined) => Promise<void> = backoff,
): Promise<{ all: number[]; offline: number[] }> {
  const leaderless = new LeaderlessPartitions();
  for (let round = 1; ; round++) {
    const leader = await leadersOf();
    const all = leader.map((_, p) => p);
    if (all.length > 0 && leader.every((l) => l < 0)) throw new AppError("UNAVAILABLE", `no partition of topic '${topic}' has a leader`);
    leaderless.observe(leader, all, true);
    if (leaderless.waiting.length === 0) return { all, offline: all.filter((p) => leaderless.leftOut.has(p)) };
    await pause(round, signal);
  }
}
