import { describe, expect, test } from "bun:test";
import { uniqueTopic } from "../cluster/cluster.ts";
import { deleteGroupOffsets, eventually, joinGroup, kafkaFixture, rejection } from "./helpers.ts";

const { kafka, topic } = kafkaFixture();

describe("consumer groups", () => {
  test("a real group's commits, members and state, then deleting it", async () => {
    const name = await topic("group", 2);
    await kafka.writes.produce(
      name,
      Array.from({ length: 10 }, (_, i) => ({ partition: i % 2, value: `v${i}` })),
    );
    const groupId = uniqueTopic("grp");
    // A live member of the group, through src/kafka like everything else.
    const member = joinGroup(kafka, {
      groupId,
      topics: [name],
      clientId: "loupe-test-member",
      sessionTimeoutMs: 6_000,
      heartbeatIntervalMs: 500,
      maxWaitMs: 200,
    });
    try {
      let read = 0;
      for await (const message of member.records()) {
        read++;
        // Commit the position after the 3rd record of partition 0 (offset 2) only.
        if (message.partition === 0 && message.offset === 2) await message.commit();
        if (read === 10) break;
      }

      const committed = await kafka.groups.committedOffsets([groupId]);
      expect(committed.get(groupId)).toEqual([{ topic: name, partition: 0, offset: 3, metadata: "" }]);

      expect((await kafka.groups.list()).find((g) => g.groupId === groupId)).toMatchObject({
        groupId,
        state: "Stable",
        protocolType: "consumer",
      });
      const [described] = await kafka.groups.describe([groupId]);
      expect(described!.state).toBe("Stable");
      expect(described!.members.length).toBe(1);
      expect(described!.members[0]!.clientId).toBe("loupe-test-member");
      expect(described!.members[0]!.assignments.sort((a, b) => a.partition - b.partition)).toEqual([
        { topic: name, partition: 0 },
        { topic: name, partition: 1 },
      ]);

      const busy = await rejection(kafka.groups.delete([groupId]));
      expect(busy.code).toBe("CONFLICT");
      expect((busy.details as { kafkaError: string }).kafkaError).toBe("NON_EMPTY_GROUP");
      const live = await rejection(kafka.groups.alterOffsets(groupId, [{ topic: name, partition: 0, offset: 1 }]));
      expect(live.code).toBe("CONFLICT");
    } finally {
      await member.close();
    }

    expect(await eventually(async () => (await kafka.groups.describe([groupId]))[0]!.state === "Empty")).toBe(true);
    await kafka.groups.alterOffsets(groupId, [{ topic: name, partition: 1, offset: 4 }]);
    expect((await kafka.groups.committedOffsets([groupId])).get(groupId)).toEqual([
      { topic: name, partition: 0, offset: 3, metadata: "" },
      { topic: name, partition: 1, offset: 4, metadata: "" },
    ]);
    await deleteGroupOffsets(kafka, groupId, [{ topic: name, partition: 0 }]);
    expect((await kafka.groups.committedOffsets([groupId])).get(groupId)!.map((o) => o.partition)).toEqual([1]);

    await kafka.groups.delete([groupId]);
    expect((await kafka.groups.list()).some((g) => g.groupId === groupId)).toBe(false);
    const gone = await rejection(kafka.groups.delete([groupId]));
    expect(gone.code).toBe("NOT_FOUND");
    expect(gone.message).toStartWith(`Cannot delete consumer group '${groupId}': `);
  }, 30_000);

  test("committed offsets of many groups come from one OffsetFetch request", async () => {
    const name = await topic("many-groups", 3);
    const groups = Array.from({ length: 5 }, (_, i) => uniqueTopic(`g${i}`));
    for (const [i, g] of groups.entries()) {
      await kafka.groups.alterOffsets(g, [{ topic: name, partition: i % 3, offset: 10 + i }]);
    }
    const before = kafka.stats().byApi.OffsetFetch ?? 0;
    const committed = await kafka.groups.committedOffsets([...groups, uniqueTopic("never-committed")]);
    expect((kafka.stats().byApi.OffsetFetch ?? 0) - before).toBe(1);
    expect(groups.map((g) => committed.get(g))).toEqual(
      groups.map((_, i) => [{ topic: name, partition: i % 3, offset: 10 + i, metadata: "" }]),
    );
    expect([...committed.values()].at(-1)).toEqual([]);
    await kafka.groups.delete(groups);
  }, 15_000);

  test("an unknown group describes as Dead", async () => {
    const [d] = await kafka.groups.describe([uniqueTopic("nobody")]);
    expect(d).toMatchObject({ state: "Dead", members: [] });
  });
});
