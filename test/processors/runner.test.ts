/**
 * The runner against the real broker, with a hand-written program (the language has its own
 * tests): output and input offsets in one transaction, read read_committed; a runner stopped
 * and started again goes on where its last transaction ended; runners added and removed while
 * records flow split the partitions through the group and write every record exactly once.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { Runner } from "../../src/domains/processors/runner.ts";
import type { RunnerSetup, StreamProgram } from "../../src/domains/processors/types.ts";
import { createKafkaPool, type KafkaCluster } from "../../src/kafka/index.ts";
import { LogHub } from "../../src/log/logger.ts";
import type { RecordView } from "../../src/sql/index.ts";
import { kafkaBootstrap, uniqueTopic } from "../cluster/cluster.ts";
import { pollFor } from "../helpers/wait.ts";
import { waitForLeaders } from "../kafka/helpers.ts";

const pool = createKafkaPool([{ name: "test", bootstrapServers: [kafkaBootstrap()], clientId: "loupe-test", default: true }]);
const kafka: KafkaCluster = pool.default();
const topics: string[] = [];
const runners: Runner[] = [];
afterAll(async () => {
  await Promise.all(runners.map((r) => r.stop()));
  for (const t of topics) await kafka.topics.delete(t).catch(() => {});
  await pool.close();
});

async function topic(prefix: string, partitions: number): Promise<string> {
  const name = uniqueTopic(prefix);
  await kafka.topics.create({ name, partitions, replication: 1 });
  topics.push(name);
  await waitForLeaders(kafka, name, partitions, 30_000);
  return name;
}

/** Even numbers, doubled, keyed by the number: a filter, a projection and a new key. */
function evens(source: string, target: string): StreamProgram {
  return {
    sql: "hand-written",
    source,
    target,
    settings: {
      autoCreate: false,
      autoOffsetReset: "earliest",
      outputFormat: "JSON",
      errorPolicy: "skip",
      graceMs: 0,
      commitIntervalMs: 100,
    },
    filter: (v: RecordView) => ((v.value as { n: number }).n ?? 1) % 2 === 0,
    project: (v: RecordView) => {
      const n = (v.value as { n: number }).n;
      return { key: String(n), value: { n, doubled: n * 2 } };
    },
    aggregate: null,
    operations: ["FILTER", "PROJECT"],
    columns: ["n", "doubled"],
    valueFields: ["n"],
  };
}

function setupOf(program: StreamProgram, targetPartitions: number): () => Promise<RunnerSetup> {
  const decoder = new TextDecoder();
  return async () => ({
    program,
    decodeKey: (b) => decoder.decode(b),
    decodeValue: (b) => JSON.parse(decoder.decode(b)),
    targetPartitions,
  });
}

function runner(program: StreamProgram, group: string, index: number, targetPartitions: number): Runner {
  const r = new Runner({
    kafka,
    processorId: group,
    index,
    groupId: group,
    transactionalId: `${group}-${index}`,
    setup: setupOf(program, targetPartitions),
    log: new LogHub("warn", { write: () => {} }).logger("processors"),
  });
  runners.push(r);
  r.start();
  return r;
}

async function produce(name: string, from: number, to: number, partitions: number): Promise<void> {
  const records = [];
  for (let n = from; n < to; n++) records.push({ key: `k${n}`, value: JSON.stringify({ n }), partition: n % partitions });
  for (let i = 0; i < records.length; i += 500) await kafka.writes.produce(name, records.slice(i, i + 500));
}

/** The target's records as a read_committed reader sees them: n of each value. */
async function outputNumbers(name: string, partitions: number): Promise<number[]> {
  const ends = await kafka.offsets.list(
    Array.from({ length: partitions }, (_, partition) => ({ topic: name, partition })),
    "latest",
  );
  const out: number[] = [];
  for await (const r of kafka.reads.records({
    topic: name,
    partitions: ends.map((e) => ({ partition: e.partition, from: 0, to: e.offset })),
  })) {
    out.push(JSON.parse(new TextDecoder().decode(r.value!)).n);
  }
  return out.sort((a, b) => a - b);
}

const evensBelow = (n: number) => Array.from({ length: Math.ceil(n / 2) }, (_, i) => i * 2);

describe("a runner", () => {
  test("filters, projects and re-keys every record once; stopped and started, it goes on where it was", async () => {
    const source = await topic("proc-src", 3);
    const target = await topic("proc-dst", 2);
    const group = `proc-run-${Date.now().toString(36)}`;
    await produce(source, 0, 3000, 3);
    const first = runner(evens(source, target), group, 0, 2);
    await pollFor("the first 1,500 even numbers", async () => (await outputNumbers(target, 2)).length === 1500, 60_000);
    expect(first.state).toBe("RUNNING");
    await first.stop();
    expect(first.state).toBe("STOPPED");
    await produce(source, 3000, 5000, 3);
    const second = runner(evens(source, target), group, 0, 2);
    await pollFor("all 2,500 even numbers", async () => (await outputNumbers(target, 2)).length >= 2500, 60_000);
    await pollFor(
      "the committed offsets at the end",
      async () => {
        const committed = (await kafka.groups.committedOffsets([group])).get(group)!;
        return committed.reduce((s, o) => s + o.offset, 0) === 5000;
      },
      30_000,
    );
    expect(await outputNumbers(target, 2)).toEqual(evensBelow(5000));
    expect(second.figures.recordsIn).toBe(2000);
    expect(second.figures.recordsOut).toBe(1000);
  }, 120_000);

  test("runners added and removed while records flow split the partitions and write each record once", async () => {
    const source = await topic("proc-src", 6);
    const target = await topic("proc-dst", 3);
    const group = `proc-scale-${Date.now().toString(36)}`;
    const program = evens(source, target);
    const one = runner(program, group, 0, 3);
    let produced = 0;
    const step = async (n: number) => {
      await produce(source, produced, produced + n, 6);
      produced += n;
    };
    await step(1200);
    const two = runner(program, group, 1, 3);
    await step(1200);
    const three = runner(program, group, 2, 3);
    await step(1200);
    await pollFor(
      "three members sharing six partitions",
      async () =>
        one.figures.partitions + two.figures.partitions + three.figures.partitions === 6 &&
        one.figures.partitions > 0 &&
        two.figures.partitions > 0 &&
        three.figures.partitions > 0,
      60_000,
    );
    await step(1200);
    await two.stop();
    await step(1200);
    await three.stop();
    await step(1200);
    await pollFor("every even number below the last produced", async () => (await outputNumbers(target, 3)).length >= produced / 2, 90_000);
    expect(await outputNumbers(target, 3)).toEqual(evensBelow(produced));
  }, 180_000);
});

describe("24.2: what a runner reports", () => {
  test("24.2: its state and each commit's figures reach one observer, in order", async () => {
    const source = await topic("proc-obs-src", 2);
    const target = await topic("proc-obs-dst", 1);
    const group = `proc-obs-${Date.now().toString(36)}`;
    await produce(source, 0, 100, 2);
    const told: string[] = [];
    const commits: number[] = [];
    const r = new Runner({
      kafka,
      processorId: group,
      index: 0,
      groupId: group,
      transactionalId: `${group}-0`,
      setup: setupOf(evens(source, target), 1),
      log: new LogHub("warn", { write: () => {} }).logger("processors"),
      observer: {
        state: (state, error) => told.push(`${state}${error === null ? "" : ` ${error}`}`),
        committed: (figures) => commits.push(figures.recordsIn),
      },
    });
    runners.push(r);
    r.start();
    await pollFor("every record committed", async () => (commits.at(-1) ?? 0) >= 100, 60_000);
    await r.stop();
    expect(told).toEqual(["RUNNING", "STOPPED"]);
    // Each commit tells the figures after it: growing, ending at every record of the source.
    expect(commits).toEqual([...commits].sort((a, b) => a - b));
    expect(commits.at(-1)).toBe(100);
    expect(r.figures).toMatchObject({ recordsIn: 100, recordsOut: 50, commits: commits.length });
    expect(await outputNumbers(target, 1)).toEqual(evensBelow(100));
  }, 60_000);
});
