// @no-services
/**
 * A transaction's output encoded as it is added: record batches that the fetch decoder reads
 * back as written (keys, values, headers, timestamps), with the header the producer's send
 * fills in and Kafka's CRC-32C, split under the batch limit. The broker checks the same
 * batches in test/kafka/processing.test.ts and every processor test.
 */
import { describe, expect, test } from "bun:test";
import { nextSequence, outputOf } from "../../src/kafka/processing.ts";
import { decodeRecordSet } from "../../src/kafka/record-set.ts";
import { TxnOutput } from "../../src/kafka/txn-output.ts";
import type { RawRecord } from "../../src/kafka/types.ts";

/** CRC-32C (Castagnoli), bit by bit: the reference the batch's CRC is checked against. */
function crc32c(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const b of bytes) {
    crc ^= b;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function decode(batch: Buffer, topic = "t"): RawRecord[] {
  const out: RawRecord[] = [];
  decodeRecordSet(batch, topic, { partition: 0, next: 0, end: null }, null, out);
  return out;
}

const text = (b: Uint8Array | null) => (b === null ? null : Buffer.from(b).toString("utf8"));

describe("TxnOutput", () => {
  test("records read back as written: string and byte keys and values, nulls, headers, timestamps out of order", () => {
    const out = new TxnOutput();
    out.add("t", 0, "k1", '{"a":1}', 1_700_000_000_000);
    out.add("t", 0, Buffer.from("k2"), null, 1_699_999_999_000, [
      ["h", Buffer.from("v")],
      ["n", null],
    ]);
    out.add("t", 0, null, "ünïcödé ✓", 1_700_000_005_000);
    out.add("t", 0, "", "", 0);
    expect(out.records).toBe(4);
    const [p] = out.partitions();
    expect(p!.batches).toHaveLength(1);
    const batch = p!.batches[0]!.finish(42n, 3, 7, true);
    const got = decode(batch);
    expect(got.map((r) => [r.offset, r.timestamp, text(r.key), text(r.value)])).toEqual([
      [0, 1_700_000_000_000, "k1", '{"a":1}'],
      [1, 1_699_999_999_000, "k2", null],
      [2, 1_700_000_005_000, null, "ünïcödé ✓"],
      [3, 0, "", ""],
    ]);
    expect(got[1]!.headers.map((h) => [h.key, text(h.value)])).toEqual([
      ["h", "v"],
      ["n", null],
    ]);
    // The header: no leader epoch, magic 2, transactional, the producer, its sequence, the count, the CRC.
    expect(batch.readInt32BE(12)).toBe(-1);
    expect(batch[16]).toBe(2);
    expect(batch.readInt16BE(21)).toBe(1 << 4);
    expect(batch.readInt32BE(23)).toBe(3);
    expect(Number(batch.readBigInt64BE(27))).toBe(1_700_000_000_000);
    expect(Number(batch.readBigInt64BE(35))).toBe(1_700_000_005_000);
    expect(batch.readBigInt64BE(43)).toBe(42n);
    expect(batch.readInt16BE(51)).toBe(3);
    expect(batch.readInt32BE(53)).toBe(7);
    expect(batch.readInt32BE(57)).toBe(4);
    expect(batch.readInt32BE(8)).toBe(batch.length - 12);
    expect(batch.readUInt32BE(17)).toBe(crc32c(batch.subarray(21)));
  });

  test("partitions apart; a partition past the limit starts its next batch, in order; a record over the limit goes alone", () => {
    const out = new TxnOutput(1000);
    out.add("t", 0, "0", "x".repeat(400), 1);
    out.add("t", 1, "1", "x".repeat(400), 1);
    out.add("t", 0, "2", "x".repeat(400), 1);
    out.add("t", 0, "3", "x".repeat(2000), 1);
    out.add("t", 0, "4", "x".repeat(10), 1);
    out.add("u", 0, "5", "y", 1);
    const parts = out.partitions();
    expect(parts.map((p) => [p.topic, p.partition, p.batches.length])).toEqual([
      ["t", 0, 3],
      ["t", 1, 1],
      ["u", 0, 1],
    ]);
    const keys = parts[0]!.batches.map((b) => decode(b.finish(1n, 0, 0, true)).map((r) => text(r.key)));
    expect(keys).toEqual([["0", "2"], ["3"], ["4"]]);
    for (const b of parts[0]!.batches) expect(b.size).toBeLessThanOrEqual(2100);
    expect(out.bytes).toBe(6 + 400 * 3 + 2000 + 10 + 1);
  });

  test("many records grow the batch's buffer and keep every byte", () => {
    const out = new TxnOutput();
    for (let i = 0; i < 5000; i++) out.add("t", 0, `k${i}`, JSON.stringify({ i, pad: "p".repeat(i % 50) }), 1_000 + i);
    const [p] = out.partitions();
    const got = p!.batches.flatMap((b) => decode(b.finish(1n, 0, 0, true)));
    expect(got).toHaveLength(5000);
    expect(got.every((r, i) => text(r.key) === `k${i}` && JSON.parse(text(r.value)!).i === i && r.timestamp === 1_000 + i)).toBe(true);
  });

  test("a list of records is the same output", () => {
    const out = outputOf([
      { topic: "t", partition: 2, key: Buffer.from("a"), value: Buffer.from("b"), timestamp: 5, headers: [["h", Buffer.from("x")]] },
    ]);
    const [p] = out.partitions();
    expect(p!.partition).toBe(2);
    const [r] = decode(p!.batches[0]!.finish(1n, 0, 0, true));
    expect([text(r!.key), text(r!.value), r!.timestamp, r!.headers[0]!.key]).toEqual(["a", "b", 5, "h"]);
  });

  test("sequences wrap past 2^31 - 1 to 0, as Kafka's", () => {
    expect(nextSequence(0, 10)).toBe(10);
    expect(nextSequence(0x7fffffff - 5, 5)).toBe(0x7fffffff);
    expect(nextSequence(0x7fffffff - 5, 6)).toBe(0);
    expect(nextSequence(0x7fffffff, 3)).toBe(2);
  });
});
