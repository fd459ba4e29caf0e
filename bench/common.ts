/**
 * What the benchmarks share: their `--name=value` arguments, their log line, the broker they
 * measure against (KAFKA_BOOTSTRAP, else one started from test/cluster) and the JSON records
 * they fill topics with.
 */
import type { KafkaCluster, ProduceRecord } from "../src/kafka/index.ts";
import { scriptBroker } from "../test/cluster/cluster.ts";

export function arg(name: string, fallback: string): string {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
}

export const log = (...a: unknown[]) => console.error("[bench]", ...a);

/** The broker in KAFKA_BOOTSTRAP, else one started for this run (stop it with `stop`). */
export const benchBroker = () => scriptBroker(log);

/** A JSON value of about `size` bytes; `sel` runs 0 to 99, so `sel = 7` matches 1 % of the records. */
export function jsonValue(i: number, size: number): string {
  const base = `{"id":${i},"sel":${i % 100},"name":"user-${i}","active":${i % 3 === 0},"pad":""}`;
  return `{"id":${i},"sel":${i % 100},"name":"user-${i}","active":${i % 3 === 0},"pad":"${"p".repeat(Math.max(0, size - base.length))}"}`;
}

/**
 * A topic of `name` holding `records` records, filled once and reused by later runs (the name
 * should hold what makes the records differ). `recordOf(i, j)`: record i, the j-th of its
 * request; big requests, one batch per partition under the broker's 1 MB message limit,
 * three in flight.
 */
export async function filledTopic(
  kafka: KafkaCluster,
  name: string,
  records: number,
  partitions: number,
  size: number,
  recordOf: (i: number, j: number) => ProduceRecord,
): Promise<string> {
  // Records are stamped in the past: time-based retention would delete them under a run (a
  // reader then skips to the new log start, and the run never sees all its records).
  const keep = { "retention.ms": "-1" };
  if ((await kafka.topics.list()).some((t) => t.name === name)) {
    await kafka.configs.alterTopic(name, [{ key: "retention.ms", value: keep["retention.ms"] }]);
    const total = (await kafka.offsets.bounds([name])).reduce((n, o) => n + o.latest - o.earliest, 0);
    if (total === records) {
      log(`${name}: reusing ${total} records`);
      return name;
    }
    await kafka.topics.delete(name);
    await Bun.sleep(1000);
  }
  await kafka.topics.create({ name, partitions, replication: 1, configs: keep });
  const perRequest = Math.max(1, Math.floor(900_000 / (size + 60))) * partitions;
  const t0 = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < records) {
      const start = next;
      const n = Math.min(perRequest, records - start);
      next += n;
      const batch = new Array<ProduceRecord>(n);
      for (let j = 0; j < n; j++) batch[j] = recordOf(start + j, j);
      await kafka.writes.produce(name, batch);
    }
  };
  await Promise.all([worker(), worker(), worker()]);
  log(`${name}: produced ${records} records in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return name;
}

/** What one run of a command cost: wall time, its own peak RSS, the lines it wrote. */
export interface MeasuredRun {
  seconds: number;
  peakKb: number;
  lines: number;
  ok: boolean;
  stderr: string;
}

/**
 * Runs `program` to its end from a small helper process of its own, so that the peak RSS is the
 * program's alone (getrusage of a process's children is the largest of all it ever waited for).
 * Counts the lines the program writes to stdout without keeping them.
 */
export function measuredRun(program: string[]): MeasuredRun {
  const helper = `
    const t0 = performance.now();
    const r = Bun.spawnSync(JSON.parse(process.argv[1]), { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const seconds = (performance.now() - t0) / 1000;
    let lines = 0;
    for (const b of r.stdout) if (b === 10) lines++;
    console.log(JSON.stringify({ seconds, peakKb: (r.resourceUsage?.maxRSS ?? 0) / 1024, lines, ok: r.success, stderr: r.stderr.toString() }));
  `;
  const run = Bun.spawnSync([process.execPath, "-e", helper, JSON.stringify(program)], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "inherit",
  });
  if (!run.success) throw new Error(`measuring ${program.join(" ")} failed`);
  return JSON.parse(run.stdout.toString()) as MeasuredRun;
}
