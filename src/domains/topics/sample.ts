import type { KafkaCluster, RawRecord } from "../../kafka/index.ts";

export interface PartitionRange {
  partition: number;
  begin: number;
  end: number;
}

/**
 * The last `perPartition` records of each non-empty partition (at most `maxPartitions` of
 * them, the fullest first), in one read. Used for the newest record's timestamp and for
 * guessing key and value types.
 */
export async function readTail(
  kafka: KafkaCluster,
  topic: string,
  ranges: PartitionRange[],
  opts: { perPartition: number; maxPartitions?: number; timeoutMs?: number },
): Promise<RawRecord[]> {
  const wanted = ranges
    .filter((r) => r.end > r.begin)
    .sort((a, b) => b.end - b.begin - (a.end - a.begin))
    .slice(0, opts.maxPartitions ?? ranges.length)
    .map((r) => ({ partition: r.partition, from: Math.max(r.begin, r.end - opts.perPartition), to: r.end }));
  if (wanted.length === 0) return [];
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), opts.timeoutMs ?? 5_000);
  const out: RawRecord[] = [];
  try {
    for await (const rec of kafka.reads.records({ topic, partitions: wanted, signal: abort.signal, maxWaitMs: 100, maxBytes: 4 << 20 }))
      out.push(rec);
  } catch (e) {
    // A read cut short by the timeout keeps what it has; anything else is the caller's to know.
    if (!abort.signal.aborted) throw e;
  } finally {
    clearTimeout(timer);
  }
  return out;
}
