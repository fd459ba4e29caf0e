import { describe, expect, test } from "bun:test";
import { eventually, kafkaFixture, rejection } from "./helpers.ts";

const { kafka, topic } = kafkaFixture();

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
});
