/**
 * What a processor copies from its input (the key; the value for `SELECT STREAM *`) is the
 * input's bytes exactly, also when the fetched record sets are large enough to arrive in many
 * network reads, which the reader joins in a buffer it reuses for the next fetch.
 */
import { describe, expect, test } from "bun:test";
import { createProcessor, jsonTopic, outputOf, processorFixture, produce, type Rec } from "./helpers.ts";

const f = processorFixture();
const { kafka, made } = f;

describe("copied bytes", () => {
  test("keys and values written as they were read, with record sets of several MiB per fetch", async () => {
    const source = await jsonTopic(kafka(), "bytes-src", 1, made);
    const whole = await jsonTopic(kafka(), "bytes-all", 1, made);
    const keyed = await jsonTopic(kafka(), "bytes-key", 1, made);
    // About 4 KiB each, every record's text its own: 3,000 records are 12 MiB of input.
    const input: Rec[] = Array.from({ length: 3000 }, (_, n) => ({
      key: `key-${n}-${"k".repeat(n % 50)}`,
      value: { n, text: `${n}:`.padEnd(4000, String.fromCharCode(97 + (n % 26))) },
    }));
    await produce(kafka(), source, input);
    await createProcessor(f.rt(), `bytes-all-${source}`, `INSERT INTO \`${whole}\` SELECT STREAM * FROM \`${source}\``);
    await createProcessor(f.rt(), `bytes-key-${source}`, `INSERT INTO \`${keyed}\` SELECT STREAM n FROM \`${source}\``);

    const all = await outputOf(kafka(), whole, input.length, 90_000);
    expect(all).toHaveLength(input.length);
    const wrong = all.filter((r, i) => r.key !== input[i]!.key || JSON.stringify(r.value) !== JSON.stringify(input[i]!.value));
    expect(wrong.length).toBe(0);

    const keys = await outputOf(kafka(), keyed, input.length, 90_000);
    expect(keys.map((r) => [r.key, r.value])).toEqual(input.map((r) => [r.key, { n: (r.value as { n: number }).n }]));
  }, 120_000);
});
