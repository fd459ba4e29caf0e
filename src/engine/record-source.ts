/**
 * What the executor needs of Kafka, and nothing more: a topic's partitions and offsets (with
 * those that have no leader named), offsets by time, and reads of offset ranges a fetched
 * partition at a time. The production source is a Kafka cluster (kafkaSource); the executor's
 * own rules (slicing, caps, the idle rule, stop reasons) are tested over a source in memory.
 */

import { type KafkaCluster, type TopicOffsets, topicOffsets } from "../kafka/index.ts";
import type { FetchedBatches, RawRecord, ReadOutage, SkippedPartition } from "../kafka/types.ts";

export type { TopicOffsets };

/** What a read tells while it runs; nothing per record. */
export interface ReadObserver {
  /** What a Fetch answer carried for a partition, before its records are handed on (proof of push-down). */
  fetched(fetched: FetchedBatches): void;
  /** Date.now() when a round of fetches is sent, null once it is answered or failed. */
  fetching(since: number | null): void;
  /** The read retries a broker or cluster it lost; null once it reads again. */
  outage(outage: ReadOutage | null): void;
  /** A partition left out: no leader past a short grace while others have one. */
  skipped(skipped: SkippedPartition): void;
}

/** Offset ranges of one topic to read: [from, to) per partition. */
export interface RangeRead {
  topic: string;
  partitions: Array<{ partition: number; from: number; to: number }>;
  /** Ends the read at once. */
  signal: AbortSignal;
  /** Read on past the end offsets, waiting for new records, until aborted. */
  follow: boolean;
  /** Date.now() until which a lost broker is retried. */
  retryUntil: number;
}

export interface RecordSource {
  /** The cluster's name, as messages give it. */
  readonly name: string;
  /** Round trip of the last answered request in ms; null before the first (never reached). */
  readonly lastRoundTripMs: number | null;
  /** The topic's partitions, those offline, and the offsets of the others now. */
  offsets(topic: string, signal: AbortSignal): Promise<TopicOffsets>;
  /**
   * The records of the ranges, a fetched partition's at a time; the caller is done with a
   * batch's bytes before it pulls the next (they may live in a reused buffer).
   */
  read(req: RangeRead, observer: ReadObserver): AsyncIterable<RawRecord[]>;
}

/** The records of a Kafka cluster: what queries read in production. */
export function kafkaSource(cluster: KafkaCluster): RecordSource {
  return {
    name: cluster.name,
    get lastRoundTripMs() {
      return cluster.lastRoundTripMs;
    },
    offsets: (topic, signal) => topicOffsets(cluster, topic, signal),
    read: (req, observer) =>
      cluster.reads.batches({
        topic: req.topic,
        partitions: req.partitions,
        signal: req.signal,
        follow: req.follow,
        observer,
        reuseBuffers: true,
        retryUntil: req.retryUntil,
      }),
  };
}
