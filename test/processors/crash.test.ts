/**
 * The compiled `loupe` executable killed with SIGKILL mid-stream, several times at random
 * points, and started again on the same data directory under the same instance name (so it
 * takes its runners' leases back at once): the output topic, read read_committed, holds every
 * expected record exactly once. Records are produced all along, dead or alive. The process runs
 * a processor of each kind side by side, so each kill strikes both.
 *
 * The kill points come from a seeded generator; the seed is in the test's name, and
 * LOUPE_CRASH_SEED=<seed> replays a run.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Consumer, Producer } from "@platformatic/kafka";
import { ProcessorRepo } from "../../src/domains/processors/repo.ts";
import { NO_FIGURES } from "../../src/domains/processors/types.ts";
import { createKafkaPool, type KafkaCluster, partitionForKey } from "../../src/kafka/index.ts";
import { compiledLoupe, removeCompiledLoupe } from "../browser/browser.ts";
import { kafkaBootstrap } from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { pollFor } from "../helpers/wait.ts";
import { action, createProcessor, getProcessor, type OutRecord, produce, readAll, sourceAndTarget, untilState } from "./helpers.ts";

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

/** Records go in at this pace until the last restart is RUNNING and at least MIN_RECORDS are in. */
const PER_SECOND = 600;
const MIN_RECORDS = 15_000;
const BATCH = 200;
const PARTITIONS = 4;

interface Order {
  n: number;
  customer: string;
  amount: number;
}

/** Event time: 5 ms apart from the start of the minute the file began in (windows are exact). */
const BASE_TS = Math.floor(Date.now() / 60_000) * 60_000;

interface Input {
  key: string;
  order: Order;
  timestamp: number;
  /** Where it was written (`undefined`: by its key, as Java producers place it). */
  partition: number | undefined;
}

/** A record as compared: its key and value, in a canonical text. */
const canonical = (r: { key: string | null; value: unknown }) => JSON.stringify([r.key, r.value]);

const order = (n: number): Order => ({ n, customer: `c${n % 7}`, amount: n % 10 });

interface Row {
  name: string;
  /** The n-th input record. */
  input(n: number): Input;
  sql(source: string, target: string): string;
  /** The output the inputs must give, each record once, canonical and sorted. */
  expected(inputs: Input[]): string[];
}

const WINDOW_MS = 5_000;

const rows: Row[] = [
  {
    name: "a filter, a projection and a new key",
    input: (n) => ({ key: `o${n}`, order: order(n), timestamp: BASE_TS + n * 5, partition: n % PARTITIONS }),
    sql: (source, target) =>
      `INSERT INTO \`${target}\` SELECT STREAM n, amount * 2 AS doubled, customer AS _key FROM \`${source}\` WHERE amount >= 4`,
    expected: (inputs) =>
      inputs
        .map((i) => i.order)
        .filter((o) => o.amount >= 4)
        .map((o) => canonical({ key: o.customer, value: { n: o.n, doubled: o.amount * 2 } }))
        .sort(),
  },
  {
    name: "a tumbling COUNT and SUM by key",
    input: (n) => ({ key: order(n).customer, order: order(n), timestamp: BASE_TS + n * 5, partition: undefined }),
    sql: (source, target) =>
      `INSERT INTO \`${target}\` SELECT STREAM _key AS customer, COUNT(*) AS orders, SUM(amount) AS total FROM \`${source}\` GROUP BY TUMBLE(5, s), _key`,
    expected: (inputs) => {
      // A window is written once its partition's stream time (its highest timestamp) reaches its end.
      const partitionOf = (key: string) => partitionForKey(new TextEncoder().encode(key), PARTITIONS);
      const streamTime = new Map<number, number>();
      for (const i of inputs) streamTime.set(partitionOf(i.key), Math.max(streamTime.get(partitionOf(i.key)) ?? 0, i.timestamp));
      const windows = new Map<string, { customer: string; orders: number; total: number; windowStart: number; windowEnd: number }>();
      for (const i of inputs) {
        const windowStart = Math.floor(i.timestamp / WINDOW_MS) * WINDOW_MS;
        if (windowStart + WINDOW_MS > streamTime.get(partitionOf(i.key))!) continue;
        const id = `${i.key}@${windowStart}`;
        const w = windows.get(id) ?? { customer: i.key, orders: 0, total: 0, windowStart, windowEnd: windowStart + WINDOW_MS };
        w.orders++;
        w.total += i.order.amount;
        windows.set(id, w);
      }
      return [...windows.values()].map((w) => canonical({ key: w.customer, value: w })).sort();
    },
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
  await removeCompiledLoupe();
  for (const t of made) await kafka.topics.delete(t).catch(() => {});
  await pool.close();
}, 30_000);

describe(`SIGKILL mid-stream and a restart on the same data (seed ${SEED})`, () => {
  // One process runs a processor of each row: every kill and restart is checked on both at once.
  test(`${rows.map((r) => r.name).join("; ")}: every expected record exactly once in each output`, async () => {
    const random = seeded(SEED);
    const runs = await Promise.all(
      rows.map(async (row, i) => {
        const { source, target } = await sourceAndTarget(kafka, `crash${i}`, made, [PARTITIONS, 3]);
        const id = await createProcessor(asRuntime, `crash-${source}`, row.sql(source, target), { runners: 2 });
        await untilState(asRuntime, id, "RUNNING");
        return { row, source, target, id };
      }),
    );

    // Records go in all along, at a steady pace, whether Loupe is alive or not, until the
    // last restart is RUNNING: each restart has records to read and write.
    const began = performance.now();
    let produced = 0;
    let killing = true;
    const producing = (async () => {
      while (killing || produced < MIN_RECORDS) {
        const from = produced;
        await Promise.all(
          runs.map(({ row, source }) =>
            produce(
              kafka,
              source,
              Array.from({ length: BATCH }, (_, i) => {
                const r = row.input(from + i);
                return { key: r.key, value: r.order, partition: r.partition, timestamp: r.timestamp };
              }),
            ),
          ),
        );
        produced = from + BATCH;
        // The pace of a steady stream of records, not a wait for a condition.
        await Bun.sleep(Math.max(0, began + (produced / PER_SECOND) * 1000 - performance.now()));
      }
    })();

    const kills = 3 + Math.floor(random() * 4);
    const restarts: Array<{ afterMs: number; produced: number; upMs: number; toRunningMs: number }> = [];
    try {
      for (let k = 0; k < kills; k++) {
        const afterMs = Math.round(250 + random() * 4_000);
        await Bun.sleep(afterMs);
        const at = produced;
        const dir = loupe!.dir;
        await loupe!.kill();
        const killed = performance.now();
        const written = await Promise.all(runs.map(async ({ target }) => (await readAll(kafka, target)).length));
        loupe = await start(dir);
        const upMs = Math.round(performance.now() - killed);
        // RUNNING as the store said before the kill is not enough: RUNNING, and output written since.
        await Promise.all(
          runs.map(({ id, target }, i) =>
            pollFor(
              `the restarted processor ${id} RUNNING and writing`,
              async () =>
                (await getProcessor(asRuntime, id)).deploymentState === "RUNNING" && (await readAll(kafka, target)).length > written[i]!
                  ? true
                  : undefined,
              60_000,
            ),
          ),
        );
        restarts.push({ afterMs, produced: at, upMs, toRunningMs: Math.round(performance.now() - killed) });
      }
    } finally {
      killing = false;
    }
    await producing;

    for (const { row, id, target } of runs) {
      const expected = row.expected(Array.from({ length: produced }, (_, n) => row.input(n)));
      // Done: all of the input is committed (lag 0) and the output holds at least what is expected.
      let out: OutRecord[] = [];
      await pollFor(
        `the processor of ${row.name} caught up`,
        async () => {
          const p = await getProcessor(asRuntime, id);
          if (p.figures.lag !== 0) return undefined;
          out = await readAll(kafka, target);
          return out.length >= expected.length ? true : undefined;
        },
        90_000,
      );
      console.log(
        `seed ${SEED}, ${row.name}: ${kills} kills ${JSON.stringify(restarts)}; ${produced} records in, ${out.length} out of ${expected.length} expected`,
      );
      const got = out.map(canonical).sort();
      expect({ row: row.name, records: got.length }).toEqual({ row: row.name, records: expected.length });
      expect({ row: row.name, records: got }).toEqual({ row: row.name, records: expected });
    }
  }, 150_000);
});

describe("a runner that takes over from one that died mid-transaction", () => {
  test("regression: the new runner waited for its predecessor's open transaction to time out before reading its offsets; now it aborts it at once", async () => {
    const { source, target } = await sourceAndTarget(kafka, "orphan", made);
    await produce(
      kafka,
      source,
      Array.from({ length: 100 }, (_, n) => ({ value: { n } })),
    );
    const id = await createProcessor(asRuntime, `orphan-${source}`, `INSERT INTO \`${target}\` SELECT STREAM n FROM \`${source}\``);
    await pollFor("the first 100 records out", async () => ((await readAll(kafka, target)).length === 100 ? true : undefined));
    expect((await action(asRuntime, id, "pause")).status).toBe(200);
    const { consumerGroup } = (await untilState(asRuntime, id, "PAUSED")) as unknown as { consumerGroup: string };

    // A runner that died mid-transaction: a record written and the group's offset moved on past
    // records it never read, under its transactional id, neither committed nor aborted. The
    // broker would abort it only after its timeout, a minute.
    const options = { clientId: "loupe-test-orphan", bootstrapBrokers: [kafkaBootstrap()] };
    const dead = new Producer({
      ...options,
      idempotent: true,
      transactionalId: `${consumerGroup}-0`,
      acks: -1,
      timeout: 60_000,
      producerId: -1n,
      producerEpoch: -1,
    });
    const consumer = new Consumer({ ...options, groupId: consumerGroup });
    try {
      const txn = await dead.beginTransaction();
      await txn.send({ messages: [{ topic: target, partition: 0, value: Buffer.from(JSON.stringify({ n: -1 })) }] });
      await txn.addConsumer(consumer);
      // No generation (-1): the group has no member now; the offsets go to its coordinator.
      const coordinatorId = await consumer.findGroupCoordinator();
      const fencing = { groupId: consumerGroup, generationId: -1, memberId: "", coordinatorId };
      await txn.addOffset({ topic: source, partition: 0, offset: 149n, metadata: { consumer: fencing } } as never);
    } finally {
      await dead.close(true);
      await consumer.close(true);
    }

    await produce(
      kafka,
      source,
      Array.from({ length: 100 }, (_, i) => ({ value: { n: 100 + i } })),
    );
    const t0 = performance.now();
    expect((await action(asRuntime, id, "resume")).status).toBe(200);
    const out = await pollFor("all 200 records out", async () => {
      const all = await readAll(kafka, target);
      return all.length >= 200 ? all : undefined;
    });
    const tookMs = Math.round(performance.now() - t0);
    console.log(`resumed over an orphaned transaction: all records out in ${tookMs} ms`);
    // Well inside the orphan's minute: its transaction was aborted when the runner started.
    expect(tookMs).toBeLessThan(20_000);
    expect(out.map((r) => (r.value as { n: number }).n)).toEqual(Array.from({ length: 200 }, (_, n) => n));
  }, 90_000);
});

describe("right after a restart", () => {
  test("regression: the API said RUNNING, with the dead process's figures, for runners not started again yet; and an instance with processors disabled ran them when the API changed one", async () => {
    // An instance whose engine never starts stands for one that has not started its runners yet.
    const rt = await testRuntime({ processors: { enabled: false, instance: "restarted" } });
    try {
      const { source, target } = await sourceAndTarget(kafka, "stale", made);
      const id = await createProcessor(rt, `stale-${source}`, `INSERT INTO \`${target}\` SELECT STREAM * FROM \`${source}\``);
      // Resume waits for the engine's tick: a disabled engine takes no lease.
      expect((await action(rt, id, "resume")).status).toBe(200);
      const repo = new ProcessorRepo(rt.store.db);
      expect((await repo.runners(id)).map((r) => r.instance)).toEqual([null]);

      // The store as a process of this name left it when it was killed: leased, RUNNING, its figures.
      const now = Date.now();
      expect(await repo.lease(id, 0, "restarted", 60_000)).toBe(true);
      await repo.report(id, 0, "restarted", "RUNNING", null, { ...NO_FIGURES, recordsIn: 1234, recordsOut: 1234 }, now);
      const p = await getProcessor(rt, id);
      expect(p.deploymentState).toBe("PENDING");
      expect(Object.values(p.runnerState)).toEqual([{ id: `${id}-0`, worker: "", state: "PENDING", errorMsg: "" }]);
    } finally {
      await rt.dispose();
    }
  }, 60_000);
});
