/**
 * A processor against a broker of this file's own (never the shared one) that is killed and
 * restarted mid-stream, or frozen for a few seconds and thawed: the processor comes back to
 * RUNNING by itself, and its output holds every record exactly once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Cluster, freezeService, killService, restartService, startCluster, thawService } from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { pollFor } from "../helpers/wait.ts";
import { createProcessor, getProcessor, jsonTopic, type ProcessorJson, produce, type Rec, readAll, untilState } from "./helpers.ts";

const PARTITIONS = 3;
const PAD = "p".repeat(300);

let cluster: Cluster | undefined;
let rt: TestRuntime | undefined;
const made: string[] = [];

beforeAll(async () => {
  cluster = await startCluster({ services: ["kafka"], ownerPid: process.pid });
  rt = await testRuntime({
    kafka: { clusters: [{ name: "local", bootstrapServers: [cluster.env.KAFKA_BOOTSTRAP!], default: true }] },
    lag: { cacheTtl: 0, sampleInterval: 250 },
  });
}, 180_000);

afterAll(async () => {
  await rt?.dispose();
  await cluster?.stop({ graceMs: 2_000 });
}, 60_000);

const kafka = () => rt!.kafka.default();
const broker = () => cluster!.brokers[0]!;

const records = (from: number, to: number): Rec[] =>
  Array.from({ length: to - from }, (_, i) => {
    const n = from + i;
    return { key: `k${n}`, value: { n, even: n % 2 === 0, pad: PAD }, partition: n % PARTITIONS };
  });

/** The evens of 0..produced-1, each once: what the processor below must have written. */
const evensUpTo = (produced: number) => Array.from({ length: Math.ceil(produced / 2) }, (_, i) => i * 2);

/** Waits until the processor is RUNNING with all its input committed and reads its output's numbers, sorted. */
async function settled(id: string, target: string, want: number): Promise<number[]> {
  return pollFor(
    `processor ${id} RUNNING with ${want} records out and no lag`,
    async () => {
      const p = await getProcessor(rt!, id);
      if (p.deploymentState !== "RUNNING" || p.figures.lag !== 0) return undefined;
      const out = await readAll(kafka(), target);
      return out.length >= want ? out.map((r) => (r.value as { n: number }).n).sort((a, b) => a - b) : undefined;
    },
    120_000,
  );
}

/** Waits until the output holds some records of the batch just produced (the processor is mid-stream). */
async function midStream(target: string, before: number): Promise<number> {
  return pollFor("output written", async () => {
    const n = (await readAll(kafka(), target)).length;
    return n > before ? n : undefined;
  });
}

describe("a broker that restarts or stalls mid-stream", () => {
  let id: string;
  let target: string;
  let source: string;
  let produced = 0;

  const more = async (n: number) => {
    await produce(kafka(), source, records(produced, produced + n));
    produced += n;
  };

  test("killed and restarted: the processor comes back to RUNNING by itself; every record once", async () => {
    source = await jsonTopic(kafka(), "brk-in", PARTITIONS, made);
    target = await jsonTopic(kafka(), "brk-out", PARTITIONS, made);
    id = await createProcessor(rt!, `brk-${source}`, `INSERT INTO \`${target}\` SELECT STREAM n, _key AS k FROM \`${source}\` WHERE even`, {
      runners: 2,
    });
    await untilState(rt!, id, "RUNNING");
    await more(10_000);
    const atKill = await midStream(target, 0);
    const t0 = performance.now();
    await killService(broker());
    // The runners lose the broker: they say so and retry (no operator action below).
    const seen: ProcessorJson = await pollFor(
      "the runners' failure reported",
      async () => {
        const p = await getProcessor(rt!, id);
        return p.deploymentState !== "RUNNING" ? p : undefined;
      },
      60_000,
    );
    const noticedMs = Math.round(performance.now() - t0);
    const t1 = performance.now();
    await restartService(broker());
    const restartMs = Math.round(performance.now() - t1);
    const t2 = performance.now();
    await more(10_000);
    const out = await settled(id, target, produced / 2);
    console.log(
      `broker killed with ${atKill} of 5000 records out; ${seen.deploymentState} after ${noticedMs} ms (${seen.deploymentErrorMsg ?? ""}); ` +
        `broker restarted in ${restartMs} ms; processor RUNNING with all ${produced} records in ${Math.round(performance.now() - t2)} ms after that`,
    );
    expect(seen.deploymentState).toBe("PENDING");
    expect(out).toEqual(evensUpTo(produced));
    expect(Object.values((await getProcessor(rt!, id)).runnerState).map((r) => r.state)).toEqual(["RUNNING", "RUNNING"]);
  }, 240_000);

  test("frozen a few seconds and thawed: it goes on by itself; every record once", async () => {
    await untilState(rt!, id, "RUNNING");
    const before = (await readAll(kafka(), target)).length;
    await more(10_000);
    await midStream(target, before);
    const t0 = performance.now();
    freezeService(broker());
    try {
      // The fault's length (nothing to wait for: the broker answers nothing meanwhile).
      await Bun.sleep(5_000);
    } finally {
      thawService(broker());
    }
    await more(5_000);
    const out = await settled(id, target, produced / 2);
    console.log(`broker frozen 5 s; processor RUNNING and caught up ${Math.round(performance.now() - t0)} ms after the freeze began`);
    expect(out).toEqual(evensUpTo(produced));
  }, 180_000);
});
