// @no-services
/** A request whose answer never comes is given up after its bound, as UNAVAILABLE (retried by reads). */
import { describe, expect, test } from "bun:test";
import { answerWithin } from "../../src/kafka/client.ts";

describe("answerWithin", () => {
  test("an answer in time is passed on, a failure too", async () => {
    expect(await answerWithin(Promise.resolve(7), 1_000, "Fetch")).toBe(7);
    await expect(answerWithin(Promise.reject(new Error("refused")), 1_000, "Fetch")).rejects.toThrow("refused");
  });

  test("no answer: UNAVAILABLE naming the request and the bound", async () => {
    const never = new Promise<number>(() => {});
    const err = await answerWithin(never, 20, "Fetch from Kafka broker b:9092").catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "UNAVAILABLE", message: "Fetch from Kafka broker b:9092: no answer within 20 ms" });
  });
});
