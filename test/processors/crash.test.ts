/**
 * The compiled `loupe` executable killed with SIGKILL mid-stream, several times at random
 * points, and started again on the same data directory under the same instance name (so it
 * takes its runners' leases back at once): the output topic, read read_committed, holds every
 * expected record exactly once. Records are produced all along, dead or alive.
 *
 * The kill points come from a seeded generator; the seed is in the test's name, and
 * LOUPE_CRASH_SEED=<seed> replays a run.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createKafkaPool, type KafkaCluster } from "../../src/kafka/index.ts";
import { compiledLoupe } from "../browser/browser.ts";
import { kafkaBootstrap } from "../cluster/cluster.ts";
import type { TestRuntime } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { pollFor } from "../helpers/wait.ts";
import { createProcessor, getProcessor, jsonTopic, type OutRecord, produce, type Rec, readAll, untilState } from "./helpers.ts";

const SEED = Number(process.env.LOUPE_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));

/** mulberry32: a small generator whose whole state is its seed, so a run can be replayed. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const RECORDS = 20_000;
const BATCH = 250;
const PARTITIONS = 4;
/** Production is spread over about this long, so that every kill falls amid it. */
const PRODUCE_OVER_MS = 30_000;

interface Order {
  n: number;
  customer: string;
  amount: number;
}

/** Event time: 5 ms apart from the start of the minute the file began in (windows are exact). */
const BASE_TS = Math.floor(Date.now() / 60_000) * 60_000;

interface Input {
  order: Order;
  timestamp: number;
}

const input = (n: number): Input => ({ order: { n, customer: `c${n % 7}`, amount: n % 10 }, timestamp: BASE_TS + n * 5 });

const record = (n: number): Rec => {
  const { order, timestamp } = input(n);
  return { key: `o${n}`, value: order, partition: n % PARTITIONS, timestamp };
};

/** A record as compared: its key and value, in a canonical text. */
const canonical = (r: { key: string | null; value: unknown }) => JSON.stringify([r.key, r.value]);

interface Row {
  name: string;
  sql(source: string, target: string): string;
  /** The output the inputs must give, each record once, canonical and sorted. */
  expected(inputs: Input[]): string[];
}

const rows: Row[] = [
  {
    name: "a filter, a projection and a new key",
    sql: (source, target) =>
      `INSERT INTO \`${target}\` SELECT STREAM n, amount * 2 AS doubled, customer AS _key FROM \`${source}\` WHERE amount >= 4`,
    expected: (inputs) =>
      inputs
        .map((i) => i.order)
        .filter((o) => o.amount >= 4)
        .map((o) => canonical({ key: o.customer, value: { n: o.n, doubled: o.amount * 2 } }))
        .sort(),
  },
];

const pool = createKafkaPool([{ name: "test", bootstrapServers: [kafkaBootstrap()], clientId: "loupe-test", default: true }]);
const kafka: KafkaCluster = pool.default();
const made: string[] = [];
let executable: string;
let loupe: ServerProcess | undefined;

/** The processor helpers only call `request`: this one goes to whichever process runs now. */
const api = {
  request: (path: string, init?: RequestInit & { role?: "admin" | "write" | "read" | "nodata" }) => loupe!.request(path, init),
};
const asRuntime = api as unknown as TestRuntime;

/** Loupe under a fixed instance name: a restarted process holds the same leases at once. */
const start = (dir?: string) =>
  startServerProcess({ processors: { instance: "crash-test" }, lag: { cacheTtl: 0, sampleInterval: 250 } }, { executable, dir });

beforeAll(async () => {
  executable = await compiledLoupe();
  loupe = await start();
}, 60_000);

afterAll(async () => {
  await loupe?.stop();
  for (const t of made) await kafka.topics.delete(t).catch(() => {});
  await pool.close();
}, 30_000);

describe(`SIGKILL mid-stream and a restart on the same data (seed ${SEED})`, () => {
  test.each(rows)(
    "$name: every expected record exactly once in the output",
    async (row) => {
      const random = seeded(SEED);
      const source = await jsonTopic(kafka, "crash-in", PARTITIONS, made);
      const target = await jsonTopic(kafka, "crash-out", 3, made);
      const id = await createProcessor(asRuntime, `crash-${source}`, row.sql(source, target), { runners: 2 });
      await untilState(asRuntime, id, "RUNNING");

      // Records go in all along, at a steady pace, whether Loupe is alive or not.
      const began = performance.now();
      let produced = 0;
      const producing = (async () => {
        while (produced < RECORDS) {
          const from = produced;
          await produce(
            kafka,
            source,
            Array.from({ length: Math.min(BATCH, RECORDS - from) }, (_, i) => record(from + i)),
          );
          produced = Math.min(RECORDS, from + BATCH);
          const due = began + (produced / RECORDS) * PRODUCE_OVER_MS;
          await Bun.sleep(Math.max(0, due - performance.now()));
        }
      })();

      const kills = 3 + Math.floor(random() * 4);
      const restarts: Array<{ afterMs: number; produced: number; upMs: number; toRunningMs: number }> = [];
      for (let k = 0; k < kills; k++) {
        // A random point: up to the time the rest of the production takes, shared by the kills left.
        const left = Math.max(2_000, PRODUCE_OVER_MS - (performance.now() - began));
        const afterMs = Math.round(250 + random() * (left / (kills - k)));
        await Bun.sleep(afterMs);
        const at = produced;
        const dir = loupe!.dir;
        await loupe!.kill();
        const killed = performance.now();
        const written = (await readAll(kafka, target)).length;
        loupe = await start(dir);
        const upMs = Math.round(performance.now() - killed);
        // RUNNING as the store said before the kill is not enough: RUNNING, and output written since.
        await pollFor(
          "the restarted processor RUNNING and writing",
          async () =>
            (await getProcessor(asRuntime, id)).deploymentState === "RUNNING" && (await readAll(kafka, target)).length > written
              ? true
              : undefined,
          60_000,
        );
        restarts.push({ afterMs, produced: at, upMs, toRunningMs: Math.round(performance.now() - killed) });
      }
      await producing;

      const expected = row.expected(Array.from({ length: RECORDS }, (_, n) => input(n)));
      // Done: all of the input is committed (lag 0) and the output holds at least what is expected.
      let out: OutRecord[] = [];
      await pollFor(
        "the processor caught up",
        async () => {
          const p = await getProcessor(asRuntime, id);
          if (p.figures.lag !== 0) return undefined;
          out = await readAll(kafka, target);
          return out.length >= expected.length ? true : undefined;
        },
        90_000,
      );
      console.log(`seed ${SEED}: ${kills} kills ${JSON.stringify(restarts)}; ${out.length} records out of ${expected.length} expected`);
      const got = out.map(canonical).sort();
      expect(got.length).toBe(expected.length);
      expect(got).toEqual(expected);
    },
    150_000,
  );
});
