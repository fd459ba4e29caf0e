/**
 * `_sample = N AND _sampleWindow = M` (lenses-python's REST test, the clients' live views): at
 * most N matching records per window of M ms of the query's clock. The executor runs against the
 * real broker with a clock the test advances, so the windows are exact.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { RECORD_LINE } from "../../src/domains/sql/stream-answer.ts";
import { RecordText } from "../../src/engine/record-text.ts";
import { jsonRecords, parseStream, sqlFixture } from "../sql-exec/helpers.ts";

const f = sqlFixture();
let topic: string;

beforeAll(async () => {
  topic = await f.topic("clients-sample", 1);
  await f.produce(
    topic,
    jsonRecords(20, (i) => ({ i, odd: i % 2 === 1 })),
  );
});

/** Runs the query; each record written to the answer moves the clock on by `stepMs`. */
async function run(sql: string, stepMs: number) {
  let now = 0;
  const sink = new RecordText('"t"', RECORD_LINE);
  const add = sink.add.bind(sink);
  const addJson = sink.addJson.bind(sink);
  sink.add = (...args) => {
    now += stepMs;
    add(...args);
  };
  sink.addJson = (...args) => {
    now += stepMs;
    return addJson(...args);
  };
  const { text, end } = await f.execute(sql, sink, () => now);
  const values = parseStream(text).map((l) => JSON.parse(l.body.value).i as number);
  return { values, end: end! };
}

describe("sampling", () => {
  // A record every 50 ms: windows of 200 ms hold 4 records, of which 2 are kept.
  test.each([
    ["_sample=2 AND _sampleWindow=200", [0, 1, 4, 5, 8, 9, 12, 13, 16, 17]],
    ["_sampleWindow=100 AND _sample=1", [0, 2, 4, 6, 8, 10, 12, 14, 16, 18]],
    // The default window is 1000 ms: the 20 records span 950 ms, one window.
    ["_sample=3", [0, 1, 2]],
  ])("%s", async (hint, expected) => {
    const { values, end } = await run(`SELECT * FROM \`${topic}\` WHERE ${hint}`, 50);
    expect(values).toEqual(expected);
    expect(end).toMatchObject({
      totalRecords: 20,
      returnedRecords: expected.length,
      skippedRecords: 20 - expected.length,
      isTopicEnd: true,
    });
  });

  test("with a filter: the window counts matching records only", async () => {
    const { values } = await run(`SELECT * FROM \`${topic}\` WHERE odd = true AND _sample=1 AND _sampleWindow=100`, 50);
    // Odd records each move the clock 50 ms: one of every two matching records is kept.
    expect(values).toEqual([1, 5, 9, 13, 17]);
  });
});
