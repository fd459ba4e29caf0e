import { describe, expect, test } from "bun:test";
import { JSON_ANSWER_MAX_BYTES } from "../../src/domains/sql/routes.ts";
import { json, sqlFixture, stream } from "./helpers.ts";

const f = sqlFixture();

describe("the single JSON answer", () => {
  test("reads at most JSON_ANSWER_MAX_BYTES whatever max.size asks; the stream form reads on", async () => {
    const t = await f.topic("big");
    const value = JSON.stringify({ pad: "x".repeat(100_000) });
    const count = Math.ceil((JSON_ANSWER_MAX_BYTES * 1.25) / value.length);
    await f.produce(
      t,
      Array.from({ length: count }, () => ({ value })),
      5,
    );

    const sql = `SET max.size = 1g; SELECT * FROM \`${t}\``;
    const answer = await json(f.rt, sql);
    const got = (answer.body as { messages: unknown[] }).messages.length;
    expect(got).toBeGreaterThan(0);
    expect(got).toBeLessThan(count);
    expect(got * value.length).toBeLessThanOrEqual(JSON_ANSWER_MAX_BYTES + value.length);

    const streamed = await stream(f.rt, sql);
    expect(streamed.records.length).toBe(count);
  }, 60_000);
});
