/**
 * A redrive of 100,000 records with Loupe (a process of its own) killed with SIGKILL in the
 * middle of the run, and started again on the same data under the same instance name (it takes
 * the job's lease back at once): the target, read read_committed, holds every record exactly
 * once, and the job's counts (committed with its offsets) say so too.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { RedriveJob } from "../../src/domains/redrive/schemas.ts";
import { createKafkaPool, type KafkaCluster } from "../../src/kafka/index.ts";
import { kafkaBootstrap, uniqueTopic } from "../cluster/cluster.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { waitFor } from "../helpers/wait.ts";
import { makeTopic } from "../processors/helpers.ts";

const TOTAL = 100_000;
const PARTITIONS = 4;

const pool = createKafkaPool([{ name: "test", bootstrapServers: [kafkaBootstrap()], clientId: "loupe-test", default: true }]);
const kafka: KafkaCluster = pool.default();
const made: string[] = [];
let loupe: ServerProcess | undefined;

const start = (dir?: string) => startServerProcess({ processors: { instance: "redrive-crash" } }, dir ? { dir } : {});

beforeAll(async () => {
  loupe = await start();
}, 60_000);

afterAll(async () => {
  await loupe?.stop();
  for (const t of made) await kafka.topics.delete(t).catch(() => {});
  await pool.close();
}, 30_000);

async function job(id: string): Promise<RedriveJob> {
  const res = await loupe!.request(`/api/redrives/${id}`, { role: "admin" });
  if (res.status !== 200) throw new Error(`GET ${id}: ${res.status} ${await res.text()}`);
  return (await res.json()) as RedriveJob;
}

test("29: a redrive of 100,000 records with a SIGKILL of Loupe in the middle ends with every record in its target exactly once", async () => {
  const source = await makeTopic(kafka, uniqueTopic("rd-crash-src"), PARTITIONS, made);
  const target = await makeTopic(kafka, uniqueTopic("rd-crash-out"), PARTITIONS, made);
  const chunk = 10_000;
  await Promise.all(
    Array.from({ length: TOTAL / chunk }, (_, c) =>
      kafka.writes.produce(
        source,
        Array.from({ length: chunk }, (_, i) => {
          const n = c * chunk + i;
          return { key: `k${n}`, value: `{"n":${n}}`, partition: n % PARTITIONS };
        }),
      ),
    ),
  );

  const res = await loupe!.request("/api/redrives", {
    method: "POST",
    role: "admin",
    body: JSON.stringify({ topic: source, target, ratePerSecond: 1_000_000 }),
  });
  expect(res.status).toBe(201);
  const { id, total } = (await res.json()) as RedriveJob;
  expect(total).toBe(TOTAL);
  expect((await loupe!.request(`/api/redrives/${id}/start`, { method: "PUT", role: "admin" })).status).toBe(200);

  // Killed once some transactions are committed, well before the end.
  const before = await waitFor(
    async () => {
      const j = await job(id);
      return j.done >= TOTAL / 10 ? j : undefined;
    },
    { what: "a tenth of the records copied", timeoutMs: 30_000, intervalMs: 10 },
  );
  const dir = loupe!.dir;
  await loupe!.kill();
  expect(before.done).toBeLessThan(TOTAL);
  expect(before.state).toBe("RUNNING");

  loupe = await start(dir);
  const after = await waitFor(
    async () => {
      const j = await job(id);
      return j.state === "DONE" ? j : undefined;
    },
    { what: "the redrive DONE after the restart", timeoutMs: 60_000, intervalMs: 100 },
  );
  expect(after.counts).toMatchObject({ read: TOTAL, written: TOTAL, byTarget: { [target]: TOTAL }, refused: 0, unroutable: 0 });

  // Every record once, read as read_committed readers read it.
  const [described] = await kafka.topics.describe([target]);
  const ends = await kafka.offsets.list(
    described!.partitionDetails.map((p) => ({ topic: target, partition: p.partition })),
    "latest",
  );
  const seen = new Uint8Array(TOTAL);
  let records = 0;
  const dec = new TextDecoder();
  for await (const r of kafka.reads.records({
    topic: target,
    partitions: ends.map((e) => ({ partition: e.partition, from: 0, to: e.offset })),
  })) {
    const n = (JSON.parse(dec.decode(r.value!)) as { n: number }).n;
    seen[n]!++;
    records++;
  }
  const twice = seen.reduce((k, c) => k + (c > 1 ? 1 : 0), 0);
  const missing = seen.reduce((k, c) => k + (c === 0 ? 1 : 0), 0);
  console.log(`29 crash: killed at ${before.done} of ${TOTAL} done; ${records} records in the target, ${twice} twice, ${missing} missing`);
  expect({ records, twice, missing }).toEqual({ records: TOTAL, twice: 0, missing: 0 });
}, 120_000);
