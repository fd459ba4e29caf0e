/**
 * A processor that cannot write its output: it backs off between attempts, is FAILED within
 * processors.failAfter whatever the failure, says so in one log line per run of failures (with
 * the count), and what its failed attempts wrote is neither visible to read_committed readers
 * nor sent again at each attempt. A compacted target's keyless records follow error.policy
 * instead of failing every transaction.
 */
import { describe, expect, test } from "bun:test";
import { repartitionOf } from "../../src/domains/processors/engine.ts";
import type { KafkaCluster } from "../../src/kafka/index.ts";
import { errorOf } from "../helpers/runtime.ts";
import { pollFor } from "../helpers/wait.ts";
import { createProcessor, jsonTopic, makeTopic, processorFixture, produce, readAll, untilProcessor, untilState } from "./helpers.ts";

const FAIL_AFTER_MS = 12_000;
/** The wait after the n-th failure in a row: 0.5 s doubling, at most 15 s. */
const backoff = (n: number) => Math.min(15_000, 500 * 2 ** (n - 1));
const f = processorFixture({ processors: { failAfter: FAIL_AFTER_MS }, log: { level: "debug" } });
const { kafka, made } = f;

// Long names: a table row's batch is past the target's max.message.bytes, a transaction marker is not.
const CITIES = ["Lisbon", "Oslo", "Austin", "Osaka", "Lima"].map((c) => `${c} ${"-".repeat(60)}`);
const orders = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => {
    const n = from + i;
    return { key: `o${n}`, value: { n, city: CITIES[n % CITIES.length], amount: n % 9 }, partition: n % 3 };
  });

/** Records up to each partition's end, aborted ones and transaction markers included. */
async function endOffset(k: KafkaCluster, topic: string): Promise<number> {
  const [described] = await k.topics.describe([topic]);
  const ends = await k.offsets.list(
    described!.partitionDetails.map((p) => ({ topic, partition: p.partition })),
    "latest",
  );
  return ends.reduce((n, e) => n + e.offset, 0);
}

interface Line {
  time: string;
  level: string;
  msg: string;
  processor?: string;
  failures?: number;
  retryInMs?: number;
  failingForMs?: number;
  error?: string;
}

/** The processor runners' log lines about `id`, in order. */
const linesOf = (id: string): Line[] =>
  f
    .rt()
    .sink.lines.map((l) => JSON.parse(l) as Line)
    .filter((l) => l.processor === id && l.msg.startsWith("processor runner"));

describe("a processor that cannot write its output", () => {
  test("23: it backs off, is FAILED within processors.failAfter with one log line per run of failures, and re-keys each source record once", async () => {
    const source = await jsonTopic(kafka(), "fail-src", 3, made);
    // A target that refuses every batch of output it is sent (larger than its max.message.bytes),
    // yet takes the markers that end transactions (about 80 bytes).
    const target = await makeTopic(kafka(), `${source}-out`, 1, made, { "max.message.bytes": "120" });
    const before = 300;
    await produce(kafka(), source, orders(0, before));

    const sql = `INSERT INTO \`${target}\` SELECT STREAM COALESCE(city, 'none') AS _key, city, COUNT(*) AS n, SUM(amount) AS total FROM \`${source}\` GROUP BY city`;
    const id = await createProcessor(f.rt(), `failing-${source}`, sql);
    const repartition = repartitionOf("loupe-processor", id);
    made.push(repartition, `loupe-processor-${id}-changelog`);

    // The first failure; then more source records come while it retries.
    const failureLines = () => linesOf(id).filter((l) => l.msg.startsWith("processor runner failed"));
    const first = await pollFor("the first failure", async () => failureLines()[0]);
    const during = 60;
    await produce(kafka(), source, orders(before, before + during));
    const total = before + during;

    // Two attempts later every source record has been re-keyed: the repartition topic stops there.
    await pollFor("a third failure", async () => (failureLines().length >= 3 ? true : undefined), FAIL_AFTER_MS + 10_000);
    const endAtThird = await endOffset(kafka(), repartition);

    const failed = await untilState(f.rt(), id, "FAILED", FAIL_AFTER_MS + 15_000);
    expect(failed.deploymentErrorMsg).toContain("larger than the max message size the server will accept");

    const lines = linesOf(id);
    const final = lines.find((l) => l.msg === "processor runner FAILED")!;
    expect(final).toBeDefined();
    // FAILED within failAfter of the first failure.
    const failingFor = Date.parse(final.time) - Date.parse(first.time);
    expect(failingFor).toBeLessThanOrEqual(FAIL_AFTER_MS);
    expect(final.failingForMs).toBeLessThanOrEqual(FAIL_AFTER_MS);

    // Backoff: each attempt waits at least 0.5 s doubling (capped at 15 s) after the failure before it.
    const failures = lines.filter((l) => l.msg.startsWith("processor runner failed") || l.msg === "processor runner FAILED");
    expect(failures.map((l) => l.failures ?? 1)).toEqual(failures.map((_, i) => i + 1));
    for (let i = 1; i < failures.length; i++) {
      expect(Date.parse(failures[i]!.time) - Date.parse(failures[i - 1]!.time)).toBeGreaterThanOrEqual(backoff(i) - 5);
    }
    // Within 12 s, waits of 0.5 + 1 + 2 + 4 s leave room for at most 5 attempts (every 0.65 s: about 18).
    expect(final.failures).toBeGreaterThanOrEqual(3);
    expect(final.failures).toBeLessThanOrEqual(5);

    // What an operator sees (info and above): the first failure, and FAILED with the count.
    const shown = lines.filter((l) => l.level !== "DEBUG" && l.msg !== "processor runner starting");
    expect(shown.map((l) => l.msg)).toEqual(["processor runner failed; retrying", "processor runner FAILED"]);
    expect(shown[1]!.failures).toBe(final.failures);

    // Nothing a failed attempt wrote is visible to read_committed readers.
    expect(await readAll(kafka(), target)).toEqual([]);
    // The source's records were re-keyed once each (committed apart from the failing output):
    // the repartition topic holds each once, and its end (aborted records and markers included)
    // did not move with the attempts after the records came.
    const rekeyed = await readAll(kafka(), repartition);
    expect(rekeyed.length).toBe(total);
    expect(new Set(rekeyed.map((r) => (r.value as { n: number }).n)).size).toBe(total);
    const endAtFailed = await endOffset(kafka(), repartition);
    expect(endAtFailed).toBe(endAtThird);
    // Each record once plus at most one commit marker per record (a marker only ends a
    // transaction that wrote to that partition).
    expect(endAtFailed).toBeLessThanOrEqual(2 * total);
  }, 60_000);

  test("23: records without a key for a compacted target follow error.policy: skip counts them and writes the others", async () => {
    const source = await jsonTopic(kafka(), "keyless-src", 1, made);
    const target = await makeTopic(kafka(), `${source}-latest`, 1, made, { "cleanup.policy": "compact" });
    await produce(
      kafka(),
      source,
      Array.from({ length: 40 }, (_, n) => ({ ...(n % 4 === 0 ? {} : { key: `k${n}` }), value: { n } })),
    );
    // Keeping the input's keys is accepted at creation: the records decide.
    const id = await createProcessor(f.rt(), `keyless-${source}`, `INSERT INTO \`${target}\` SELECT STREAM n FROM \`${source}\``);
    const p = await untilProcessor(f.rt(), id, "40 records read", (x) => x.figures.recordsIn === 40);
    expect(p.deploymentState).toBe("RUNNING");
    expect(p.figures).toMatchObject({ recordsIn: 40, recordsOut: 30, failed: 10 });
    const out = await readAll(kafka(), target);
    expect(out.map((r) => (r.value as { n: number }).n).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 40 }, (_, n) => n).filter((n) => n % 4 !== 0),
    );
  }, 60_000);

  test("23: under error.policy = stop, the first keyless record for a compacted target FAILS the processor at once, naming it", async () => {
    const source = await jsonTopic(kafka(), "keyless-stop", 1, made);
    const target = await makeTopic(kafka(), `${source}-latest`, 1, made, { "cleanup.policy": "compact" });
    await produce(
      kafka(),
      source,
      Array.from({ length: 10 }, (_, n) => ({ ...(n === 6 ? {} : { key: `k${n}` }), value: { n } })),
    );
    const id = await createProcessor(
      f.rt(),
      `keyless-stop-${source}`,
      `SET error.policy = stop; INSERT INTO \`${target}\` SELECT STREAM n FROM \`${source}\``,
    );
    const p = await untilState(f.rt(), id, "FAILED", 20_000);
    expect(p.deploymentErrorMsg).toBe(
      `Cannot process record 6 of partition 0 of '${source}': Topic '${target}' is compacted and takes no record without a key`,
    );
    // What came before it is written.
    expect((await readAll(kafka(), target)).map((r) => (r.value as { n: number }).n)).toEqual([0, 1, 2, 3, 4, 5]);
  }, 60_000);

  test("23: the UI's 'Table of totals per city' as it was written is refused at creation at its key; nothing is created", async () => {
    const source = await jsonTopic(kafka(), "orders", 1, made);
    const target = `${source}-totals`;
    const sql = `SET autocreate = true;\nINSERT INTO \`${target}\`\nSELECT STREAM city, COUNT(*) AS orders, SUM(amount) AS total\nFROM \`${source}\`\nGROUP BY city`;
    const res = await f.rt().request("/api/streams", {
      method: "POST",
      role: "write",
      headers: { accept: "application/json" },
      body: JSON.stringify({ name: `totals-${source}`, sql, runners: 1 }),
    });
    expect(res.status).toBe(400);
    const body = await errorOf(res);
    expect(body.message).toBe(
      `The key 'city' may be null, and topic '${target}', created compacted for a table, takes no record without a key at line 5, column 10. Expected a key that is never null, such as COALESCE(city, 'none') AS _key in the projection.`,
    );
    expect(body.details).toEqual({ line: 5, column: 10 });
    expect((await kafka().topics.list()).some((t) => t.name === target)).toBe(false);
    // Validation (the editor's, as it is typed) says the same.
    const v = await f.rt().request(`/api/sql/validation?${new URLSearchParams({ sql })}`, { role: "write" });
    expect(await v.json()).toMatchObject({ isValid: false, line: 5, column: 10 });

    // An existing compacted target: the same rule, known from its config.
    const compacted = `${source}-compacted`;
    await kafka().topics.create({ name: compacted, partitions: 1, replication: 1, configs: { "cleanup.policy": "compact" } });
    made.push(compacted);
    const windowed = `INSERT INTO \`${compacted}\` SELECT STREAM city, COUNT(*) AS n FROM \`${source}\` GROUP BY TUMBLE(1, m), city`;
    const refused = await f.rt().request("/api/streams", {
      method: "POST",
      role: "write",
      body: JSON.stringify({ name: `windowed-${source}`, sql: windowed, runners: 1 }),
    });
    expect(refused.status).toBe(400);
    expect((await errorOf(refused)).message).toStartWith(
      `The key 'city' may be null, and the compacted topic '${compacted}' takes no record`,
    );
    const list = await f.rt().request("/api/streams", { role: "read", headers: { accept: "application/json" } });
    const { streams } = (await list.json()) as { streams: Array<{ name: string }> };
    expect(streams.filter((p) => p.name.endsWith(source))).toEqual([]);
  });
});
