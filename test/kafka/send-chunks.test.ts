/** A transaction's records split into sends that keep each partition's batch under the limit, in order. */
import { describe, expect, test } from "bun:test";
import type { MessageToProduce } from "@platformatic/kafka";
import { sendChunks } from "../../src/kafka/processing.ts";

const msg = (partition: number, bytes: number, n: number): MessageToProduce => ({
  topic: "t",
  partition,
  key: Buffer.from(String(n)),
  value: Buffer.alloc(bytes),
});

describe("sendChunks", () => {
  test("small transactions go in one send", () => {
    const messages = Array.from({ length: 100 }, (_, n) => msg(n % 3, 100, n));
    expect(sendChunks(messages)).toEqual([messages]);
  });

  test("a partition over the limit starts a new send; order and every record kept; a record over the limit goes (with other partitions' records)", () => {
    const messages = [msg(0, 400, 0), msg(1, 400, 1), msg(0, 400, 2), msg(0, 2000, 3), msg(1, 10, 4)];
    const chunks = sendChunks(messages, 1000);
    expect(chunks.map((c) => c.map((m) => Number(String(m.key))))).toEqual([
      [0, 1, 2],
      [3, 4],
    ]);
    expect(chunks.flat()).toEqual(messages);
  });
});
