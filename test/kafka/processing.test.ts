/**
 * Group membership and transactions against the real broker: a transaction writes records and
 * commits a group's offsets at once; an aborted one leaves nothing a read_committed reader
 * sees; a writer made under the same transactional id fences the old one; a member whose group
 * moved on cannot commit offsets for it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { type GroupMember, type TransactionalWriter, txnFailure } from "../../src/kafka/index.ts";
import { collect, kafkaFixture, rejection, text } from "./helpers.ts";

const f = kafkaFixture();
const closing: Array<{ close(): Promise<void> }> = [];
afterAll(async () => {
  for (const c of closing.reverse()) await c.close();
});

function member(groupId: string, topics: string[], instanceId = `${groupId}-0`): GroupMember {
  const m = f.kafka.processing.member({ groupId, instanceId, topics, sessionTimeoutMs: 6_000, rebalanceTimeoutMs: 6_000 });
  closing.push(m);
  return m;
}

function writer(id: string): TransactionalWriter {
  const w = f.kafka.processing.writer(id);
  closing.push(w);
  return w;
}

const enc = (s: string) => new TextEncoder().encode(s);

/** Every record of `topic` as a read_committed reader sees it. */
async function committedValues(topic: string, partitions: number): Promise<string[]> {
  const ends = await f.kafka.offsets.list(
    Array.from({ length: partitions }, (_, partition) => ({ topic, partition })),
    "latest",
  );
  const records = await collect(
    f.kafka.reads.records({ topic, partitions: ends.map((e) => ({ partition: e.partition, from: 0, to: e.offset })) }),
  );
  return records.map((r) => text(r.value)!).sort();
}

describe("transactions over a consumer group", () => {
  test("one transaction writes the output and commits the input offsets; read stable", async () => {
    const input = await f.topic("proc-in", 2);
    const output = await f.topic("proc-out", 2);
    const group = `proc-g-${Date.now().toString(36)}`;
    const m = member(group, [input]);
    const assignment = await m.join();
    expect(assignment.partitions.get(input)).toEqual([0, 1]);
    expect(await m.committed(input, [0, 1])).toEqual(
      new Map([
        [0, null],
        [1, null],
      ]),
    );
    const w = writer(`${group}-0`);
    await w.commit(
      [
        { topic: output, partition: 0, key: enc("a"), value: enc("one") },
        { topic: output, partition: 1, key: null, value: enc("two") },
      ],
      [
        { topic: input, partition: 0, offset: 5 },
        { topic: input, partition: 1, offset: 7 },
      ],
      m,
    );
    expect(await m.committed(input, [0, 1])).toEqual(
      new Map([
        [0, 5],
        [1, 7],
      ]),
    );
    expect(await committedValues(output, 2)).toEqual(["one", "two"]);
    // The group's offsets as any tool sees them.
    const offsets = (await f.kafka.groups.committedOffsets([group])).get(group)!;
    expect(offsets.map((o) => [o.partition, o.offset])).toEqual([
      [0, 5],
      [1, 7],
    ]);
  });

  test("a writer made under the same transactional id fences the old one; its records never show", async () => {
    const input = await f.topic("proc-in", 1);
    const output = await f.topic("proc-out", 1);
    const group = `proc-g-${Date.now().toString(36)}`;
    const m = member(group, [input]);
    await m.join();
    const old = writer(`${group}-0`);
    await old.commit([{ topic: output, partition: 0, key: null, value: enc("before") }], [{ topic: input, partition: 0, offset: 1 }], m);
    const successor = writer(`${group}-0`);
    await successor.commit(
      [{ topic: output, partition: 0, key: null, value: enc("successor") }],
      [{ topic: input, partition: 0, offset: 2 }],
      m,
    );
    // The broker may still be writing the successor's commit markers: it answers
    // CONCURRENT_TRANSACTIONS (retriable) until done, then PRODUCER_FENCED for good.
    const failures: string[] = [];
    for (let i = 0; i < 20 && failures.at(-1) !== "PRODUCER_FENCED"; i++) {
      const err = await rejection(
        old.commit([{ topic: output, partition: 0, key: null, value: enc("zombie") }], [{ topic: input, partition: 0, offset: 9 }], m),
      );
      const name = (err.details as { kafkaError?: string }).kafkaError ?? err.message;
      failures.push(name);
      expect(txnFailure(err)).toBe(name === "PRODUCER_FENCED" ? "fenced" : "other");
    }
    expect(failures.at(-1)).toBe("PRODUCER_FENCED");
    expect(failures.every((f) => f === "PRODUCER_FENCED" || f === "CONCURRENT_TRANSACTIONS")).toBe(true);
    expect(await committedValues(output, 1)).toEqual(["before", "successor"]);
    expect((await m.committed(input, [0])).get(0)).toBe(2);
  });

  test("a member whose generation is gone cannot commit offsets: nothing of its transaction shows", async () => {
    const input = await f.topic("proc-in", 2);
    const output = await f.topic("proc-out", 1);
    const group = `proc-g-${Date.now().toString(36)}`;
    const first = member(group, [input], `${group}-0`);
    await first.join();
    const stale = first.fencing();
    // A second member joins: the group moves to a new generation and splits the partitions.
    const second = member(group, [input], `${group}-1`);
    const joined = second.join();
    // The first member learns of the rebalance through its heartbeat and rejoins.
    await joined;
    expect(second.generation).toBeGreaterThan(stale.generationId);
    const w = writer(`${group}-x`);
    const err = await rejection(
      w.commit(
        [{ topic: output, partition: 0, key: null, value: enc("stale") }],
        [{ topic: input, partition: 0, offset: 3 }],
        // The first member as it was before the rebalance: its old generation.
        new Proxy(first, { get: (t, p) => (p === "fencing" ? () => stale : Reflect.get(t, p, t)) }),
      ),
    );
    expect(txnFailure(err)).toBe("group");
    expect(await committedValues(output, 1)).toEqual([]);
    expect((await second.committed(input, [0, 1])).get(0)).toBeNull();
  });
});
