import { describe, expect, test } from "bun:test";
import { createPartitions, kafkaFixture, waitForLeaders } from "./helpers.ts";

const { kafka, topic } = kafkaFixture();

describe("writes", () => {
  test("regression: a write to a partition added in the last 5 s failed with 'names partition 2, but the topic has 1'", async () => {
    const name = await topic("writes-grown", 1);
    // The producer now holds the topic's metadata (one partition) for its metadata max age.
    expect(await kafka.writes.produce(name, [{ value: "before" }])).toEqual([{ topic: name, partition: 0, offset: 0 }]);
    await createPartitions(kafka, name, 3);
    await waitForLeaders(kafka, name, 3);
    const written = await kafka.writes.produce(name, [
      { partition: 2, value: "new" },
      { partition: 1, value: "also new" },
    ]);
    expect(written).toEqual([
      { topic: name, partition: 2, offset: 0 },
      { topic: name, partition: 1, offset: 0 },
    ]);
    // A partition that does not exist after the refresh is still refused.
    const beyond = await kafka.writes.produce(name, [{ partition: 3, value: "x" }]).catch((e: { code: string; message: string }) => e);
    expect(beyond).toMatchObject({ code: "BAD_REQUEST" });
    expect((beyond as { message: string }).message).toContain("names partition 3, but the topic has 3");
  });
});
