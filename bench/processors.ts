/**
 * Throughput of stream processors end to end (input read to output committed), against a real
 * broker, beside the raw consume rate of the Kafka client in this process, measured in the same
 * run on the same topic.
 *
 *   bun bench/processors.ts [--records=1000000] [--size=1024] [--only=raw,stateless,window]
 *
 * Uses the broker in KAFKA_BOOTSTRAP, else starts one (test/cluster, Kafka from Maven Central).
 * Fills a 6-partition topic of JSON records of about --size bytes once (reused by later runs:
 * the name holds size and count), keyed by one of 1,000 keys, timestamps one millisecond apart,
 * then measures one after another:
 *   raw        the Kafka client in this process reading the topic, no decoding (the reference:
 *              cluster.reads.batches with the client's record decoder, as bench/sql-stream.ts (a))
 *   stateless  a processor `SELECT STREAM id, name ... WHERE sel < 50` (filter + projection, half
 *              the records out), one runner, from the first record to every input offset committed
 *              with its output in Kafka transactions
 *   window     a processor `COUNT(*), SUM(sel) ... GROUP BY TUMBLE(1, m), _key`
 * and prints records/s, the ratio to raw, and records/s per core (this process's CPU time: the
 * broker runs in its own) beside ksqlDB's published ~50k msg/s per core for a filter.
 * Targets: stateless >= 0.5 x raw, window >= 0.25 x raw.
 */

import { Runner } from "../src/domains/processors/runner.ts";
import type { RunnerSetup } from "../src/domains/processors/types.ts";
import { DecoderFactory } from "../src/engine/decoders.ts";
import { createKafkaPool, type KafkaCluster } from "../src/kafka/index.ts";
import { LogHub } from "../src/log/logger.ts";
import { compileStream } from "../src/sql/index.ts";
import { arg, benchBroker, filledTopic, jsonValue, log } from "./common.ts";

const PARTITIONS = 6;
const KEYS = 1000;
const KSQLDB_FILTER_PER_CORE = 50_000;

const RECORDS = Number(arg("records", "1000000"));
const SIZE = Number(arg("size", "1024"));
const ONLY = new Set(arg("only", "raw,stateless,window").split(","));

const broker = await benchBroker();
const bootstrap = broker.bootstrap;
const pool = createKafkaPool([{ name: "bench", bootstrapServers: [bootstrap], clientId: "loupe-bench", default: true }]);
const kafka = pool.default();
const T0 = Math.floor(1_700_000_000_000 / 60_000) * 60_000;

const value = (i: number) => jsonValue(i, SIZE);

function fill(): Promise<string> {
  return filledTopic(kafka, `bench-proc-${SIZE}b-${RECORDS}`, RECORDS, PARTITIONS, SIZE, (i, j) => ({
    key: `k${i % KEYS}`,
    value: value(i),
    partition: j % PARTITIONS,
    timestamp: T0 + i,
  }));
}

interface Row {
  name: string;
  records: number;
  seconds: number;
  cpuSeconds: number;
  out?: number;
}

const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

async function raw(cluster: KafkaCluster, topic: string): Promise<Row> {
  const offsets = await cluster.offsets.bounds([topic]);
  const c0 = cpu();
  const t0 = performance.now();
  let records = 0;
  const partitions = offsets.map((o) => ({ partition: o.partition, from: o.earliest, to: o.latest }));
  for await (const batch of cluster.reads.batches({ topic, partitions, recordDecoder: "client" })) records += batch.length;
  return { name: "raw consume (reference)", records, seconds: (performance.now() - t0) / 1000, cpuSeconds: cpu() - c0 };
}

async function processor(name: string, slug: string, source: string, select: string): Promise<Row> {
  const id = `${Date.now().toString(36)}`;
  const target = `bench-proc-out-${slug}-${id}`;
  await kafka.topics.create({ name: target, partitions: PARTITIONS, replication: 1 });
  const program = compileStream(`SET commit.interval = 200ms; INSERT INTO \`${target}\` ${select.replace("$SRC", `\`${source}\``)}`);
  const factory = new DecoderFactory({ registry: null });
  const keyDecoder = factory.create("STRING", undefined, "key");
  const valueDecoder = factory.create("JSON", undefined, "value", program.valueFields);
  const group = `bench-proc-${slug}-${id}`;
  let changelog: string | undefined;
  if (program.aggregate) {
    changelog = `${group}-changelog`;
    await kafka.topics.create({ name: changelog, partitions: PARTITIONS, replication: 1, configs: { "cleanup.policy": "compact" } });
  }
  const setup = async (): Promise<RunnerSetup> => ({
    program,
    decodeKey: (b) => (keyDecoder(b) as { value: unknown }).value,
    decodeValue: (b) => (valueDecoder(b) as { value: unknown }).value,
    targetPartitions: PARTITIONS,
    ...(changelog ? { changelog } : {}),
  });
  const runner = new Runner({
    kafka,
    processorId: group,
    index: 0,
    groupId: group,
    transactionalId: `${group}-0`,
    setup,
    log: new LogHub("warn").logger("bench"),
  });
  const c0 = cpu();
  const t0 = performance.now();
  runner.start();
  let said = performance.now();
  let seen = 0;
  let movedAt = performance.now();
  for (;;) {
    await Bun.sleep(100);
    if (runner.state === "FAILED") throw new Error(`${name}: ${runner.error}`);
    if (runner.figures.recordsIn >= RECORDS) break;
    if (runner.figures.recordsIn !== seen) [seen, movedAt] = [runner.figures.recordsIn, performance.now()];
    // The input read to its end short of every record means some were deleted under the read.
    if (performance.now() - movedAt > 60_000) throw new Error(`${name}: no progress for 60 s at ${seen} of ${RECORDS} records in`);
    if (performance.now() - said > 5_000) {
      said = performance.now();
      const f = runner.figures;
      log(
        `${slug}: ${runner.state}${runner.error ? ` (${runner.error})` : ""}, ${f.recordsIn} in, ${f.recordsOut} out, ${f.commits} commits, ${f.partitions} partitions`,
      );
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpuSeconds = cpu() - c0;
  const out = runner.figures.recordsOut;
  await runner.stop();
  await kafka.topics.delete(target).catch(() => {});
  if (changelog) await kafka.topics.delete(changelog).catch(() => {});
  await kafka.groups.delete([group]).catch(() => {});
  return { name, records: RECORDS, seconds, cpuSeconds, out };
}

const topic = await fill();
const rows: Row[] = [];
if (ONLY.has("raw")) rows.push(await raw(kafka, topic));
if (ONLY.has("stateless")) {
  rows.push(await processor("stateless filter + projection", "stateless", topic, "SELECT STREAM id, name FROM $SRC WHERE sel < 50"));
}
if (ONLY.has("window")) {
  rows.push(
    await processor(
      "tumbling COUNT/SUM by key",
      "window",
      topic,
      "SELECT STREAM COUNT(*) AS n, SUM(sel) AS s FROM $SRC GROUP BY TUMBLE(1, m), _key",
    ),
  );
}

const reference = rows.find((r) => r.name.startsWith("raw"));
const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
console.log(`\n${RECORDS.toLocaleString("en-US")} records of ~${SIZE} B JSON, ${PARTITIONS} partitions, ${KEYS} keys`);
console.log("| measure | records/s | x raw | CPU s | records/s per core | records out |");
console.log("|---|---:|---:|---:|---:|---:|");
for (const r of rows) {
  const rate = r.records / r.seconds;
  const ratio = reference ? (rate / (reference.records / reference.seconds)).toFixed(2) : "-";
  console.log(
    `| ${r.name} | ${fmt(rate)} | ${ratio} | ${r.cpuSeconds.toFixed(1)} | ${fmt(r.records / r.cpuSeconds)} | ${r.out === undefined ? "-" : fmt(r.out)} |`,
  );
}
console.log(
  `\nksqlDB's published figure for a filter: ~${fmt(KSQLDB_FILTER_PER_CORE)} msg/s per core. Targets: stateless >= 0.5 x raw, window >= 0.25 x raw.`,
);

await pool.close();
await broker.stop();
