/**
 * Benchmark of the /metrics scrape (the lag engine) against a real broker, with a naive
 * per-group loop in the same process as the reference.
 *
 *   bun bench/metrics-scrape.ts [--groups=200] [--topics=20] [--partitions=100] [--scrapes=5]
 *
 * Uses KAFKA_BOOTSTRAP when set, else starts a broker (test/cluster) and stops it at the end.
 * Each group commits offsets on every partition of one topic (groups spread over the topics
 * evenly), so the page has groups x partitions-per-topic lag series. Scrapes run with the lag
 * cache off (cacheTtl 0): every scrape computes afresh.
 *
 * Reported: scrape time (median, max), broker requests per scrape (by Kafka API), the same for
 * the naive loop (per group: one OffsetFetch, one ListOffsets), their ratio, and the requests
 * per scrape at half the groups, to show the count does not grow with groups.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildRuntime } from "../src/compose.ts";
import { parseConfig } from "../src/config/load.ts";
import { startCluster, uniqueTopic } from "../test/cluster/cluster.ts";

function arg(name: string, def: number): number {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? Number(hit.split("=")[1]) : def;
}
const GROUPS = arg("groups", 200);
const TOPICS = arg("topics", 20);
const PARTITIONS = arg("partitions", 100);
const SCRAPES = arg("scrapes", 5);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => `${x.toFixed(1)} ms`;

let cluster: Awaited<ReturnType<typeof startCluster>> | null = null;
if (!process.env.KAFKA_BOOTSTRAP) {
  cluster = await startCluster({ services: ["kafka"], ownerPid: process.pid });
  Object.assign(process.env, cluster.env);
}
const dataDir = mkdtempSync(join(tmpdir(), "loupe-bench-"));
const config = parseConfig({
  dataDir,
  log: { level: "error" },
  lag: { cacheTtl: 0, sampleInterval: 0 },
  kafka: { clusters: [{ name: "bench", bootstrapServers: process.env.KAFKA_BOOTSTRAP!, default: true }] },
});
const rt = await buildRuntime(config, { sink: { write: () => {} }, adminPassword: "bench-admin-pw" });
const kafka = rt.kafka.default();
const topics = Array.from({ length: TOPICS }, () => uniqueTopic("bench-lag"));
const groups = Array.from({ length: GROUPS }, () => uniqueTopic("bench-grp"));

try {
  console.log(`setup: ${TOPICS} topics x ${PARTITIONS} partitions = ${TOPICS * PARTITIONS} partitions, ${GROUPS} groups`);
  const t0 = performance.now();
  for (const t of topics) await kafka.topics.create({ name: t, partitions: PARTITIONS, replication: 1 });
  for (const t of topics) {
    // Wait for leaders, then 3 records per partition.
    for (let i = 0; i < 100; i++) {
      const [d] = await kafka.topics.describe([t]);
      if (d!.partitionDetails.every((p) => p.leader >= 0)) break;
      await Bun.sleep(50);
    }
    await kafka.writes.produce(
      t,
      Array.from({ length: PARTITIONS * 3 }, (_, i) => ({ partition: i % PARTITIONS, value: `v${i}` })),
    );
  }
  const commit = (g: string, i: number) =>
    kafka.groups.alterOffsets(
      g,
      Array.from({ length: PARTITIONS }, (_, p) => ({ topic: topics[i % TOPICS]!, partition: p, offset: (i + p) % 4 })),
    );
  const half = Math.floor(GROUPS / 2);
  for (let i = 0; i < half; i++) await commit(groups[i]!, i);
  console.log(`setup took ${ms(performance.now() - t0)}`);

  async function scrape(): Promise<{ ms: number; requests: number; byApi: Record<string, number>; series: number; bytes: number }> {
    const before = kafka.stats();
    const s0 = performance.now();
    const res = await rt.app.request("/metrics");
    const text = await res.text();
    const took = performance.now() - s0;
    if (res.status !== 200) throw new Error(`/metrics answered ${res.status}: ${text}`);
    const after = kafka.stats();
    const byApi: Record<string, number> = {};
    for (const [api, n] of Object.entries(after.byApi)) if (n - (before.byApi[api] ?? 0) > 0) byApi[api] = n - (before.byApi[api] ?? 0);
    const series = text.split("\n").filter((l) => l.startsWith("svc_partition_consumer_lag{")).length;
    return { ms: took, requests: after.requests - before.requests, byApi, series, bytes: text.length };
  }

  await scrape(); // connections and coordinators warm
  const atHalf = await scrape();
  for (let i = half; i < GROUPS; i++) await commit(groups[i]!, i);

  await scrape();
  const runs: Awaited<ReturnType<typeof scrape>>[] = [];
  for (let i = 0; i < SCRAPES; i++) runs.push(await scrape());

  /** The reference: what a per-group implementation does, one group after another. */
  async function naive(): Promise<{ ms: number; requests: number; lag: number }> {
    const before = kafka.requestCount();
    const s0 = performance.now();
    const listed = await kafka.groups.list();
    let lag = 0;
    for (const g of listed) {
      const committed = (await kafka.groups.committedOffsets([g.groupId])).get(g.groupId) ?? [];
      if (committed.length === 0) continue;
      const ends = await kafka.offsets.list(
        committed.map((c) => ({ topic: c.topic, partition: c.partition })),
        "latest",
      );
      if (groups.includes(g.groupId)) for (const [i, c] of committed.entries()) lag += Math.max(0, ends[i]!.offset - c.offset);
    }
    return { ms: performance.now() - s0, requests: kafka.requestCount() - before, lag };
  }
  await naive();
  const naiveRuns = [await naive(), await naive(), await naive()];

  const snap = await rt.lag.snapshot("bench", { maxAgeMs: 0 });
  const engineLag = snap.partitions.filter((p) => groups.includes(p.group)).reduce((s, p) => s + p.lag, 0);
  const naiveLag = naiveRuns[0]!.lag;

  const scrapeMs = median(runs.map((r) => r.ms));
  const naiveMs = median(naiveRuns.map((r) => r.ms));
  const reqs = median(runs.map((r) => r.requests));
  const naiveReqs = median(naiveRuns.map((r) => r.requests));
  console.log("");
  console.log(`lag series on the page:            ${runs[0]!.series} (${(runs[0]!.bytes / 1024).toFixed(0)} KiB)`);
  console.log(
    `/metrics scrape time:              median ${ms(scrapeMs)}, max ${ms(Math.max(...runs.map((r) => r.ms)))} (${SCRAPES} scrapes)`,
  );
  console.log(`broker requests per scrape:        ${reqs} ${JSON.stringify(runs.at(-1)!.byApi)}`);
  console.log(`  ... with ${half} groups:            ${atHalf.requests} ${JSON.stringify(atHalf.byApi)}`);
  console.log(`naive per-group loop:              median ${ms(naiveMs)}, ${naiveReqs} broker requests`);
  console.log(`ratio naive / engine:              time x${(naiveMs / scrapeMs).toFixed(1)}, requests x${(naiveReqs / reqs).toFixed(1)}`);
  console.log(
    `total lag (bench groups):          engine ${engineLag}, naive ${naiveLag}${engineLag === naiveLag ? " (equal)" : " (DIFFERENT)"}`,
  );
  console.log(
    `target: scrape < 1000 ms: ${scrapeMs < 1000 ? "met" : "MISSED"}; requests independent of groups: ${atHalf.requests === reqs ? "met" : "MISSED"}`,
  );
} finally {
  await kafka.groups.delete(groups).catch(() => {});
  for (const t of topics) await kafka.topics.delete(t).catch(() => {});
  await rt.close();
  rmSync(dataDir, { recursive: true, force: true });
  if (cluster) await cluster.stop({ graceMs: 2_000 });
}
