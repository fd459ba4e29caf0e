// @no-services
/**
 * The executor's own rules over a record source in memory, in milliseconds and without a broker:
 * how records are sliced and handed on, the caps and stop reasons, the idle rule, resume tokens,
 * offline partitions and the cluster wait of the planning, and what its observer is told. The
 * same rules against the real broker: test/sql-exec (stops, push-down, scan limits, faults).
 */

import { describe, expect, test } from "bun:test";
import { DecodeError, type Decoder, DecoderFactory } from "../../src/engine/decoders.ts";
import { type ExecuteOptions, executeQuery, followPlan, type QueryEnd, type QueryEvent } from "../../src/engine/executor.ts";
import { RecordText } from "../../src/engine/record-text.ts";
import { parseResume, type Resume } from "../../src/engine/resume.ts";
import { AppError } from "../../src/errors.ts";
import { compileQuery, type QueryPlan } from "../../src/sql/index.ts";
import { MemorySource } from "./memory-source.ts";

const factory = new DecoderFactory({ registry: null });
const LINE = { before: "", after: "\n" };

interface Answer {
  /** Each event's type, with the record count of `records` events: ["records:5", "end"]. */
  events: string[];
  /** The records of the answer, as `partition:offset`. */
  records: string[];
  values: unknown[];
  end?: QueryEnd;
  error?: { message: string; status: number };
}

interface RunOptions extends Partial<Omit<ExecuteOptions, "sink">> {
  /** Changes the compiled plan (settings, follow). */
  plan?: (plan: QueryPlan) => QueryPlan;
  valueDecoder?: Decoder;
  /** Called with each event as it arrives (before the next is pulled). */
  onEvent?: (ev: QueryEvent) => void;
}

async function run(source: MemorySource, sql: string, opts: RunOptions = {}): Promise<Answer> {
  const compiled = compileQuery(sql.replace("$T", `\`${source.topic}\``));
  const plan = opts.plan ? opts.plan(compiled) : compiled;
  const sink = new RecordText(JSON.stringify(source.topic), LINE);
  const deps = {
    source,
    keyDecoder: factory.create(undefined, undefined, "key"),
    valueDecoder: opts.valueDecoder ?? factory.create(undefined, undefined, "value"),
  };
  const answer: Answer = { events: [], records: [], values: [] };
  const { plan: _p, valueDecoder: _v, onEvent, ...rest } = opts;
  for await (const ev of executeQuery(deps, plan, { signal: new AbortController().signal, ...rest, sink })) {
    onEvent?.(ev);
    if (ev.type === "records") {
      answer.events.push(`records:${ev.count}`);
      for (const line of new TextDecoder().decode(ev.bytes).split("\n")) {
        if (line === "") continue;
        const r = JSON.parse(line) as { partition: number; offset: number; value: string };
        answer.records.push(`${r.partition}:${r.offset}`);
        answer.values.push(JSON.parse(r.value));
      }
    } else if (ev.type === "end") {
      answer.events.push("end");
      answer.end = ev.end;
    } else {
      answer.events.push("error");
      answer.error = { message: ev.error.message, status: ev.error.status };
    }
  }
  return answer;
}

/** A topic of `partitions` partitions with `perPartition` records each: values {n, p}. */
function filled(partitions: number, perPartition: number, name = "t"): MemorySource {
  const source = new MemorySource(name, partitions);
  for (let p = 0; p < partitions; p++) for (let n = 0; n < perPartition; n++) source.append(p, { n, p });
  return source;
}

/** The resume token of an end record, parsed. */
function resumeOf(text: string): Resume {
  const resume = parseResume(text);
  if (typeof resume === "string") throw new Error(resume);
  return resume;
}

const settings = (s: Partial<QueryPlan["settings"]>) => (plan: QueryPlan) => ({ ...plan, settings: { ...plan.settings, ...s } });

/** A clock the test moves. */
function manualClock(start = 1_000) {
  const clock = { now: start, read: () => clock.now };
  return clock;
}

describe("snapshot and slicing", () => {
  test("24.e1: a query reads every partition to its snapshot end and says so", async () => {
    const source = filled(3, 25);
    const a = await run(source, "SELECT * FROM $T");
    expect(a.records).toHaveLength(75);
    expect(new Set(a.records).size).toBe(75);
    expect(a.end).toMatchObject({
      stopReason: "END",
      isTopicEnd: true,
      isTimeRemaining: true,
      isStopped: false,
      totalRecords: 75,
      returnedRecords: 75,
      skippedRecords: 0,
      undecodableRecords: 0,
    });
    expect(a.end!.ranges).toEqual([0, 1, 2].map((partition) => ({ partition, from: 0, to: 25, next: 25 })));
    expect(a.end!.offsets).toEqual([0, 1, 2].map((partition) => ({ partition, min: 0, max: 24 })));
    expect(a.end!.resume).toBeUndefined();
    expect(a.end!.stopLimit).toBeUndefined();
  });

  test("24.e2: small fetched batches are merged into records events of batchSize; the rest comes before the end", async () => {
    const source = filled(1, 23);
    source.batchRecords = 1;
    const a = await run(source, "SELECT * FROM $T", { batchSize: 5 });
    expect(a.events).toEqual(["records:5", "records:5", "records:5", "records:5", "records:3", "end"]);
    expect(a.records).toEqual(Array.from({ length: 23 }, (_, i) => `0:${i}`));
  });

  test("24.e3: records that waited longer than the flush interval are handed on before the batch is full", async () => {
    const source = filled(1, 200);
    const clock = manualClock();
    // Each look at the clock (every 64 records) finds 300 ms more: what waits is handed on.
    const a = await run(source, "SELECT * FROM $T", {
      batchSize: 10_000,
      now: () => {
        clock.now += 300;
        return clock.now;
      },
      plan: settings({ maxQueryTimeMs: 1e12 }),
    });
    expect(a.events).toEqual(["records:63", "records:64", "records:64", "records:9", "end"]);
    expect(a.end!.returnedRecords).toBe(200);
  });

  test("24.e4: a snapshot does not read records appended after it began", async () => {
    const source = filled(1, 10);
    const a = await run(source, "SELECT * FROM $T", {
      observer: { onReading: () => void source.append(0, { late: true }) },
    });
    expect(a.records).toHaveLength(10);
    expect(a.end!.stopReason).toBe("END");
  });

  test("24.e5: partitions, offsets and time are pushed down to the ranges read", async () => {
    const source = filled(3, 30);
    const a = await run(source, "SELECT * FROM $T WHERE _meta.partition = 1 AND _meta.offset >= 10 AND _meta.offset < 20");
    expect(a.records).toEqual(Array.from({ length: 10 }, (_, i) => `1:${10 + i}`));
    expect(source.reads[0]!.partitions).toEqual([{ partition: 1, from: 10, to: 20 }]);
    const t = 1_700_000_000_000 + 25;
    const b = await run(source, `SELECT * FROM $T WHERE _meta.timestamp >= ${t}`);
    expect(b.records).toHaveLength(15);
    expect(source.reads[1]!.partitions).toEqual([0, 1, 2].map((partition) => ({ partition, from: 25, to: 30 })));
  });
});

describe("caps and stop reasons", () => {
  test("24.e6: LIMIT ends the query with its stop limit and no resume", async () => {
    const source = filled(2, 50);
    const a = await run(source, "SELECT * FROM $T LIMIT 7");
    expect(a.records).toHaveLength(7);
    expect(a.end).toMatchObject({ stopReason: "LIMIT", isTopicEnd: false, stopLimit: { setting: "LIMIT", value: 7 }, recordsLimit: 7 });
    expect(a.end!.resume).toBeUndefined();
  });

  test("24.e7: LIMIT 0 reads nothing at all", async () => {
    const source = filled(1, 5);
    const a = await run(source, "SELECT * FROM $T LIMIT 0");
    expect(a.events).toEqual(["end"]);
    expect(a.end!.stopReason).toBe("LIMIT");
    expect(source.reads).toHaveLength(0);
  });

  test("24.e8: max.size on what is read stops the query; its resume token reads exactly the rest", async () => {
    const source = filled(2, 40);
    // Few records match: the bytes read reach the bound long before the answer's do.
    const sql = "SET max.size = 300; SELECT * FROM $T WHERE n >= 35";
    const first = await run(source, sql);
    expect(first.end).toMatchObject({
      stopReason: "MAX_SIZE",
      isTopicEnd: false,
      stopLimit: { setting: "max.size", value: 300, of: "read" },
    });
    expect(first.end!.totalSizeRead).toBeGreaterThanOrEqual(300);
    expect(first.end!.resume).toBeString();
    const rest = await run(source, sql.replace("300", "1m"), { resume: resumeOf(first.end!.resume!) });
    expect(rest.end!.stopReason).toBe("END");
    const all = [...first.records, ...rest.records].sort();
    expect(all).toHaveLength(10);
    expect(all).toEqual((await run(source, "SELECT * FROM $T WHERE n >= 35")).records.sort());
  });

  test("24.e9: max.size on the answer takes the record back, and a resumed query reads it again", async () => {
    const source = filled(1, 30);
    const first = await run(source, "SELECT * FROM $T", { maxOutputBytes: 500 });
    expect(first.end).toMatchObject({ stopReason: "MAX_SIZE", stopLimit: { setting: "max.size", value: 500, of: "answer" } });
    expect(first.end!.size).toBeGreaterThan(0);
    const next = first.end!.ranges[0]!.next;
    expect(first.records).toEqual(Array.from({ length: next }, (_, i) => `0:${i}`));
    const rest = await run(source, "SELECT * FROM $T", { resume: resumeOf(first.end!.resume!) });
    expect(rest.records[0]).toBe(`0:${next}`);
    expect(first.records.length + rest.records.length).toBe(30);
  });

  test("24.e10: max.query.time is checked between slices on the query's clock: isTimeRemaining false, resumable", async () => {
    const source = filled(1, 1000);
    const clock = manualClock();
    let reads = 0;
    const a = await run(source, "SET max.query.time = 1h; SELECT * FROM $T", {
      // Past the deadline at the second look at the clock after the read began.
      now: () => {
        if (reads++ === 3) clock.now += 3_600_001;
        return clock.now;
      },
    });
    expect(a.end).toMatchObject({ stopReason: "MAX_QUERY_TIME", isTimeRemaining: false, stopLimit: { setting: "max.query.time" } });
    expect(a.end!.returnedRecords).toBeLessThan(1000);
    expect(a.end!.returnedRecords).toBeGreaterThan(0);
    expect(resumeOf(a.end!.resume!).ranges[0]!.from).toBe(a.end!.returnedRecords);
  });

  test("24.e11: a record larger than the memory budget ends the query with a 413 error", async () => {
    const source = new MemorySource("big", 1);
    source.append(0, { small: 1 });
    source.append(0, new Uint8Array(200 * 1024).fill(0x41));
    const a = await run(source, "SELECT * FROM $T", { maxMemoryBytes: 100 * 1024 });
    expect(a.events.at(-1)).toBe("error");
    expect(a.error!.status).toBe(413);
    expect(a.records).toEqual(["0:0"]);
  });

  test("24.e12: OFFSET passes over matching records; undecodable ones are counted, not returned", async () => {
    const source = new MemorySource("mixed", 1);
    for (let n = 0; n < 10; n++) source.append(0, n % 3 === 0 ? new TextEncoder().encode("{not json") : { n });
    const a = await run(source, "SELECT * FROM $T WHERE n >= 0 LIMIT 3, 100", { valueDecoder: factory.create("JSON", undefined, "value") });
    expect(a.end!.undecodableRecords).toBe(4);
    expect(a.values).toEqual([{ n: 5 }, { n: 7 }, { n: 8 }]);
    expect(a.end!.skippedRecords).toBe(7);
  });

  test("24.e26: sampling keeps at most _sample matching records per _sampleWindow of the query's clock", async () => {
    const source = filled(1, 20);
    const clock = manualClock();
    // Each look at the clock is 50 ms later: a window of 200 ms spans four records, two are kept.
    const a = await run(source, "SELECT * FROM $T WHERE _sample = 2 AND _sampleWindow = 200", {
      now: () => {
        clock.now += 50;
        return clock.now;
      },
      plan: settings({ maxQueryTimeMs: 1e12 }),
    });
    expect(a.values.map((v) => (v as { n: number }).n)).toEqual([0, 1, 4, 5, 8, 9, 12, 13, 16, 17]);
    expect(a.end).toMatchObject({ stopReason: "END", returnedRecords: 10, skippedRecords: 10 });
  });

  test("24.e13: a decoder that answers with a promise gives the same answer as one that does not", async () => {
    const source = new MemorySource("async", 2);
    for (let n = 0; n < 30; n++) source.append(n % 2, n % 7 === 0 ? new TextEncoder().encode("{bad") : { n });
    const sync = factory.create("JSON", undefined, "value");
    const later: Decoder = (bytes) => Promise.resolve().then(() => sync(bytes));
    const failing: Decoder = (bytes) => {
      const d = sync(bytes);
      if (d instanceof Promise) return d;
      return (d.value as { n?: number } | null)?.n === 3 ? Promise.reject(new DecodeError("late failure")) : Promise.resolve(d);
    };
    const sql = "SELECT * FROM $T WHERE n > 1";
    const a = await run(source, sql, { valueDecoder: sync });
    const b = await run(source, sql, { valueDecoder: later });
    expect(b).toEqual(a);
    const c = await run(source, sql, { valueDecoder: failing });
    expect(c.end!.undecodableRecords).toBe(a.end!.undecodableRecords + 1);
    expect(c.values).toEqual(a.values.filter((v) => (v as { n: number }).n !== 3));
  });

  test("24.e14: a kill ends the query with STOPPED and a resume token; a client gone with CLIENT and no more records", async () => {
    const source = filled(1, 100);
    source.batchRecords = 5;
    const kill = new AbortController();
    let records = 0;
    const killed = await run(source, "SELECT * FROM $T", {
      batchSize: 10,
      stopSignal: kill.signal,
      onEvent: (ev) => {
        if (ev.type === "records" && ++records === 2) kill.abort();
      },
    });
    expect(killed.end).toMatchObject({ stopReason: "STOPPED", isStopped: true });
    expect(killed.records).toHaveLength(20);
    expect(resumeOf(killed.end!.resume!).ranges[0]!.from).toBe(20);

    const client = new AbortController();
    const gone = await run(source, "SELECT * FROM $T", {
      batchSize: 10,
      signal: client.signal,
      onEvent: (ev) => {
        if (ev.type === "records") client.abort();
      },
    });
    expect(gone.events).toEqual(["records:10", "end"]);
    expect(gone.end!.stopReason).toBe("CLIENT");
  });

  test("24.e15: the observer is told when the read begins and once when the query stops", async () => {
    const source = filled(1, 50);
    const told: string[] = [];
    await run(source, "SELECT * FROM $T LIMIT 5", {
      observer: { onReading: () => told.push("reading"), onStop: () => told.push("stop") },
      onEvent: (ev) => told.push(ev.type),
    });
    expect(told).toEqual(["reading", "stop", "records", "end"]);
  });
});

describe("idle rule", () => {
  test("24.e16: a round of fetches that brings nothing for max.idle.time ends the query as idle", async () => {
    const source = filled(1, 20);
    source.stallAfter = 1;
    const a = await run(source, "SELECT * FROM $T", { plan: settings({ maxIdleTimeMs: 40 }) });
    expect(a.end).toMatchObject({ stopReason: "MAX_IDLE_TIME", stopLimit: { setting: "max.idle.time", value: 40 } });
    expect(a.records).toHaveLength(10);
    expect(resumeOf(a.end!.resume!).ranges[0]!.from).toBe(10);
  });

  test("24.e17: a lost broker being retried is not idle time: max.query.time ends it with the outage's error", async () => {
    const source = filled(1, 20);
    source.stallAfter = 1;
    source.outageWhenStalled = true;
    const err = await run(source, "SELECT * FROM $T", {
      plan: settings({ maxIdleTimeMs: 20, maxQueryTimeMs: 300 }),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe("UNAVAILABLE");
    expect((err as AppError).message).toContain("memory:9092 unreachable");
  });
});

describe("planning and partitions", () => {
  test("24.e18: an offline partition is left out and named in the end record", async () => {
    const source = filled(3, 5);
    source.offline.add(1);
    const a = await run(source, "SELECT * FROM $T");
    expect(a.records.filter((r) => r.startsWith("1:"))).toEqual([]);
    expect(a.records).toHaveLength(10);
    expect(a.end).toMatchObject({
      stopReason: "END",
      skippedPartitions: [{ partition: 1, reason: "no leader" }],
      warnings: ["partition 1 has no leader: skipped"],
    });
  });

  test("24.e19: a cluster that does not answer is waited for, then read", async () => {
    const source = filled(1, 5);
    source.planFailures = 2;
    const a = await run(source, "SELECT * FROM $T");
    expect(a.end!.stopReason).toBe("END");
    expect(a.records).toHaveLength(5);
  });

  test("24.e20: past sql.clusterWait the query gives up with an error naming the cluster and the wait", async () => {
    const source = filled(1, 5);
    source.planFailures = 1_000;
    source.lastRoundTripMs = null;
    const err = await run(source, "SELECT * FROM $T", { clusterWaitMs: 150 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).message).toMatch(
      /^Cannot read topic 't': Kafka cluster 'memory' unreachable for \d+ s before the read began, never reached since Loupe started; the query gave up after sql.clusterWait \(150 ms\)/,
    );
  });
});

describe("continuous queries", () => {
  test("24.e21: a followed plan reads from the end offsets on, hands records on after every fetch, and ends when aborted", async () => {
    const source = filled(2, 5);
    const client = new AbortController();
    let appended = false;
    const a = await run(source, "SELECT * FROM $T", {
      plan: followPlan,
      signal: client.signal,
      observer: {
        onReading: () => {
          source.append(1, { live: 1 });
          appended = true;
        },
      },
      onEvent: (ev) => {
        if (ev.type === "records") client.abort();
      },
    });
    expect(appended).toBe(true);
    expect(a.events).toEqual(["records:1", "end"]);
    expect(a.records).toEqual(["1:5"]);
    expect(a.end).toMatchObject({ stopReason: "CLIENT", ranges: [] });
    expect(a.end!.resume).toBeUndefined();
    expect(source.reads[0]).toMatchObject({ follow: true, partitions: [0, 1].map((p) => ({ partition: p, from: 5 })) });
  });
});
