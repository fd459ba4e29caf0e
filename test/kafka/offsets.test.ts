import { afterAll, describe, expect, test } from "bun:test";
import { uniqueTopic } from "../cluster/cluster.ts";
import { eventually, kafkaFixture, rejection } from "./helpers.ts";

const { kafka, topic } = kafkaFixture();
const many: string[] = [];
afterAll(async () => {
  await Promise.all(many.map((t) => kafka.topics.delete(t).catch(() => {})));
});

describe("offsets", () => {
  // The client's own error names the topic found at the missing one's place in the broker's
  // answer, which is not its place in the request.
  test.each([
    ["the first", 0],
    ["the second", 1],
  ])("regression: with %s of two topics deleted, ListOffsets named the other topic", async (_, deleted) => {
    const asked = [await topic("offsets-pair-a"), await topic("offsets-pair-b")];
    const gone = asked[deleted]!;
    const kept = asked[1 - deleted]!;
    const refs = asked.map((t) => ({ topic: t, partition: 0 }));
    expect((await kafka.offsets.list(refs, "latest")).map((o) => o.offset)).toEqual([0, 0]);

    await kafka.topics.delete(gone);
    let err: Awaited<ReturnType<typeof rejection>> | undefined;
    // The deletion reaches the broker's metadata a moment after DeleteTopics answers.
    const failed = await eventually(async () => {
      err = await rejection(kafka.offsets.list(refs, "latest")).catch(() => undefined);
      return err !== undefined;
    }, 15_000);
    expect(failed).toBe(true);
    expect(err!.code).toBe("NOT_FOUND");
    expect(err!.message).toBe(`Cannot list offsets: Topic '${gone}' does not exist.`);
    expect(err!.message).not.toContain(kept);
    expect(err!.details).toMatchObject({ kafkaError: "UNKNOWN_TOPIC_OR_PARTITION", kafkaErrorCode: 3 });
  });

  test("28: more topics than one client call are asked with one Metadata and one ListOffsets per leader, and a topic the cluster lacks is NOT_FOUND", async () => {
    many.push(...Array.from({ length: 300 }, () => uniqueTopic("offsets-many")));
    await kafka.topics.createMany(many.map((name) => ({ name, partitions: 1, replication: 1 })));
    const refs = many.map((t) => ({ topic: t, partition: 0 }));
    // Every partition has its leader once each answers an offset.
    expect(
      await eventually(async () => (await kafka.offsets.list(refs, "latest").catch(() => [])).every((o) => o.offset === 0), 30_000),
    ).toBe(true);
    await kafka.writes.produce(many[0]!, [{ key: "a", value: "1" }]);
    await kafka.writes.produce(many[299]!, [
      { key: "a", value: "1" },
      { key: "b", value: "2" },
    ]);

    const before = kafka.requestCount();
    const latest = await kafka.offsets.list(refs, "latest");
    const requests = kafka.requestCount() - before;
    expect(latest.map((o) => o.offset)).toEqual(many.map((_, i) => (i === 0 ? 1 : i === 299 ? 2 : 0)));
    expect(latest.map((o) => o.topic)).toEqual(many);
    // One Metadata and one ListOffsets for the one broker (the client's path took two of each for 300 topics).
    expect(requests).toBeLessThanOrEqual(2);
    expect((await kafka.offsets.list(refs, "earliest")).every((o) => o.offset === 0)).toBe(true);

    const missing = uniqueTopic("offsets-never-made");
    const err = await rejection(kafka.offsets.list([...refs, { topic: missing, partition: 0 }], "latest"));
    expect(err.code).toBe("NOT_FOUND");
    expect(err.message).toBe(`Cannot list offsets: Topic '${missing}' does not exist.`);
  }, 60_000);
});
