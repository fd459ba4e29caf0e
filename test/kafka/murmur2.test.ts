// @no-services
/**
 * Kafka's murmur2 as the Java producer partitions keyed records: the vectors of Kafka's own
 * UtilsTest, and every tail length (0 to 3 bytes past a multiple of 4).
 */
import { describe, expect, test } from "bun:test";
import { murmur2, partitionForKey } from "../../src/kafka/murmur2.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

describe("murmur2", () => {
  test("the values of Kafka's UtilsTest.testMurmur2", () => {
    expect(murmur2(bytes("21"))).toBe(-973932308);
    expect(murmur2(bytes("foobar"))).toBe(-790332482);
    expect(murmur2(bytes("a-little-bit-long-string"))).toBe(-985981536);
    expect(murmur2(bytes("a-little-bit-longer-string"))).toBe(-1486304829);
    expect(murmur2(bytes("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8"))).toBe(-58897971);
    expect(murmur2(new Uint8Array([97, 98, 99]))).toBe(479470107);
  });

  test("partitions are the positive hash modulo the count, for every tail length and high bytes", () => {
    for (const key of ["", "a", "ab", "abc", "abcd", "k1", "customer-42", "\u00ff\u00fe\u00fd"]) {
      const p = partitionForKey(bytes(key), 6);
      expect(p).toBe((murmur2(bytes(key)) & 0x7fffffff) % 6);
      expect(p).toBeGreaterThanOrEqual(0);
      expect(p).toBeLessThan(6);
    }
    // Kafka's Utils.toPositive(murmur2("foobar")) % 10 (-790332482 & 0x7fffffff = 1357151166).
    expect(partitionForKey(bytes("foobar"), 10)).toBe(6);
  });
});
