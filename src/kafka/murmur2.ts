/**
 * Kafka's murmur2 hash (org.apache.kafka.common.utils.Utils.murmur2), in 32-bit integer
 * arithmetic: the partition of a keyed record is `murmur2(key) & 0x7fffffff` modulo the
 * partition count, as the Java producer's default partitioner picks it.
 */
const SEED = 0x9747b28c;
const M = 0x5bd1e995;

export function murmur2(data: Uint8Array, length: number = data.length): number {
  let h = SEED ^ length;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  // The last 1 to 3 bytes, as Kafka's switch that falls through from the highest.
  const rest = length & 3;
  if (rest > 0) {
    if (rest === 3) h ^= data[whole + 2]! << 16;
    if (rest >= 2) h ^= data[whole + 1]! << 8;
    h ^= data[whole]!;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** Where a string key is encoded for hashing (grown as needed): no buffer per key. */
let scratch = Buffer.allocUnsafe(256);

/** The partition of `partitions` that Kafka's Java producer picks for `key` (murmur2, positive); a string is its UTF-8 bytes. */
export function partitionForKey(key: Uint8Array | string, partitions: number): number {
  if (typeof key !== "string") return (murmur2(key) & 0x7fffffff) % partitions;
  const need = Buffer.byteLength(key, "utf8");
  if (need > scratch.length) scratch = Buffer.allocUnsafe(Math.max(need, scratch.length * 2));
  const length = scratch.write(key, 0, "utf8");
  return (murmur2(scratch, length) & 0x7fffffff) % partitions;
}
