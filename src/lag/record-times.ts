/**
 * Timestamps of the oldest unread records that the end-offset sampler cannot date.
 *
 * The sampler dates an offset by the samples of end offsets around it, so only within its window
 * (`lag.sampleWindow`, 10 minutes by default): a record older than every sample was "there at the
 * first sample already", which is a lower bound of its age, not its age. A group stuck for half
 * an hour would show a lag in seconds that stops growing at the window while its page's table,
 * which reads the record at the committed offset, says 1,800 s. For those partitions the record
 * itself is read, once: the record at an offset never changes, so a timestamp read stays right for
 * as long as the group's committed offset stays there, which is exactly the stuck group's case.
 */

import type { KafkaCluster } from "../kafka/index.ts";

/** A partition of a group and its committed offset: the next record the group will read. */
export interface UnreadRef {
  topic: string;
  partition: number;
  offset: number;
  /** The partition's end offset at the time: the read goes no further. */
  end: number;
}

export const unreadKey = (r: { topic: string; partition: number; offset: number }) => `${r.topic}\u0000${r.partition}\u0000${r.offset}`;

/** At most this many partitions are read per sampler tick (the others wait for the next tick). */
export const MAX_READS_PER_TICK = 200;
/** Topics read at once, and how long a tick's reads may take. */
const CONCURRENCY = 4;
const DEADLINE_MS = 3_000;

/**
 * Reads the first record at or after each ref's offset (a transaction marker or a deleted record
 * there is stepped over, as a consumer would) and answers its timestamp by unreadKey; null for a
 * partition whose range held no record. A partition not answered by the deadline is absent.
 */
export async function readUnreadTimes(kafka: KafkaCluster, refs: UnreadRef[]): Promise<Map<string, number | null>> {
  const out = new Map<string, number | null>();
  const byTopic = new Map<string, UnreadRef[]>();
  for (const r of refs) {
    if (r.end <= r.offset) continue;
    const list = byTopic.get(r.topic) ?? [];
    list.push(r);
    byTopic.set(r.topic, list);
  }
  const deadline = AbortSignal.timeout(DEADLINE_MS);
  const queue = [...byTopic];
  const worker = async () => {
    for (let next = queue.shift(); next && !deadline.aborted; next = queue.shift()) {
      const [topic, list] = next;
      // A partition asked at several offsets (two groups) is read again for each: rare, and bounded by the tick's cap.
      const rounds: UnreadRef[][] = [];
      for (const r of list) {
        const round = rounds.find((x) => !x.some((y) => y.partition === r.partition));
        if (round) round.push(r);
        else rounds.push([r]);
      }
      for (const round of rounds) await readRound(kafka, topic, round, deadline, out);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker));
  return out;
}

async function readRound(
  kafka: KafkaCluster,
  topic: string,
  refs: UnreadRef[],
  deadline: AbortSignal,
  out: Map<string, number | null>,
): Promise<void> {
  const stop = new AbortController();
  const onDeadline = () => stop.abort();
  deadline.addEventListener("abort", onDeadline);
  const wanted = new Map(refs.map((r) => [r.partition, r]));
  try {
    for await (const record of kafka.reads.records({
      topic,
      partitions: refs.map((r) => ({ partition: r.partition, from: r.offset, to: r.end })),
      signal: stop.signal,
      maxWaitMs: 100,
    })) {
      const ref = wanted.get(record.partition);
      if (!ref) continue;
      out.set(unreadKey(ref), record.timestamp);
      wanted.delete(record.partition);
      if (wanted.size === 0) stop.abort();
    }
    // The read ended by itself: the ranges left held no record.
    if (!stop.signal.aborted) for (const ref of wanted.values()) out.set(unreadKey(ref), null);
  } catch {
    /* what was read stays; the rest is tried again at a later tick */
  } finally {
    deadline.removeEventListener("abort", onDeadline);
  }
}
