/**
 * Benchmark of one alert evaluation pass against a real broker, at a small and a large number
 * of consumer groups over the same partitions, to show that its Kafka requests do not grow with
 * the groups.
 *
 *   bun bench/alert-evaluation.ts [--groups=200,2000] [--topics=20] [--partitions=100] [--passes=5]
 *
 * Uses the broker in KAFKA_BOOTSTRAP, else starts one (test/cluster) and stops it at the end.
 * It creates `topics` x `partitions` partitions (2,000 by default, three records each) and the
 * groups, each committing an offset on every partition of one topic (spread evenly), stores one
 * lag condition that matches every group and topic (so each pass takes a lag snapshot) and
 * never holds (so nothing is raised), and calls the evaluation directly: the periodic job is
 * off, the lag cache too (every pass reads afresh).
 *
 * Requests are counted as bench/metrics-scrape.ts counts them: the Kafka connection's own
 * counters (`KafkaCluster.stats()`: every request sent on any connection to the cluster, by API),
 * read before and after each pass. Reported per group count: pass time (median, max) and
 * requests per pass (median, by API); the groups on the cluster include any other ones.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildRuntime } from "../src/compose.ts";
import { parseConfig } from "../src/config/load.ts";
import { uniqueTopic } from "../test/cluster/cluster.ts";
import { arg, benchBroker, log } from "./common.ts";

const GROUP_STEPS = arg("groups", "200,2000")
  .split(",")
  .map(Number)
  .sort((a, b) => a - b);
const TOPICS = Number(arg("topics", "20"));
const PARTITIONS = Number(arg("partitions", "100"));
const PASSES = Number(arg("passes", "5"));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const broker = await benchBroker();
const dataDir = mkdtempSync(join(tmpdir(), "loupe-bench-"));
const config = parseConfig({
  dataDir,
  log: { level: "error" },
  lag: { cacheTtl: 0, sampleInterval: 0 },
  alerts: { evaluationInterval: 0 },
  kafka: { clusters: [{ name: "bench", bootstrapServers: broker.bootstrap, default: true }] },
});
const rt = await buildRuntime(config, { sink: { write: () => {} }, adminPassword: "bench-admin-pw" });
const kafka = rt.kafka.default();
const prefix = uniqueTopic("bench-alert");
const topics = Array.from({ length: TOPICS }, (_, i) => `${prefix}-t${i}`);
const groups = Array.from({ length: GROUP_STEPS.at(-1)! }, (_, i) => `${prefix}-g${i}`);

interface Pass {
  ms: number;
  requests: number;
  byApi: Record<string, number>;
}

async function pass(): Promise<Pass> {
  const before = kafka.stats();
  const t0 = performance.now();
  await rt.alertEvaluator.evaluate();
  const ms = performance.now() - t0;
  const after = kafka.stats();
  const byApi: Record<string, number> = {};
  for (const [api, n] of Object.entries(after.byApi)) if (n - (before.byApi[api] ?? 0) > 0) byApi[api] = n - (before.byApi[api] ?? 0);
  return { ms, requests: after.requests - before.requests, byApi };
}

const rows: { groups: number; clusterGroups: number; passes: Pass[] }[] = [];
try {
  log(`setup: ${TOPICS} topics x ${PARTITIONS} partitions = ${TOPICS * PARTITIONS} partitions`);
  const t0 = performance.now();
  for (const t of topics) await kafka.topics.create({ name: t, partitions: PARTITIONS, replication: 1 });
  for (const t of topics) {
    for (let i = 0; i < 200; i++) {
      const [d] = await kafka.topics.describe([t]);
      if (d!.partitionDetails.every((p) => p.leader >= 0)) break;
      await Bun.sleep(50);
    }
    await kafka.writes.produce(
      t,
      Array.from({ length: PARTITIONS * 3 }, (_, i) => ({ partition: i % PARTITIONS, value: `v${i}` })),
    );
  }
  await rt.alertSettings.putCondition("bench", 2000, `lag >= 1000000 on group ${prefix}-* and topic ${prefix}-*`, "bench");
  log(`topics ready in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  let committed = 0;
  for (const step of GROUP_STEPS) {
    const c0 = performance.now();
    for (; committed < step; committed++)
      await kafka.groups.alterOffsets(
        groups[committed]!,
        Array.from({ length: PARTITIONS }, (_, p) => ({ topic: topics[committed % TOPICS]!, partition: p, offset: (committed + p) % 4 })),
      );
    log(`${step} groups committed (${((performance.now() - c0) / 1000).toFixed(1)} s)`);
    await pass(); // connections and coordinators warm
    const passes: Pass[] = [];
    for (let i = 0; i < PASSES; i++) passes.push(await pass());
    rows.push({ groups: step, clusterGroups: (await kafka.groups.list()).length, passes });
  }

  const active = (await rt.notifications.list({ limit: 10, state: "active" })).length;
  console.log("");
  console.log(`alert evaluation pass, ${TOPICS * PARTITIONS} partitions (${TOPICS} topics), ${PASSES} passes each, lag cache off`);
  console.log("");
  console.log("| bench groups | groups on the cluster | pass median | pass max | Kafka requests per pass | by API |");
  console.log("|---:|---:|---:|---:|---:|---|");
  for (const r of rows) {
    const byApi = Object.entries(r.passes.at(-1)!.byApi)
      .map(([api, n]) => `${api} ${n}`)
      .join(", ");
    console.log(
      `| ${r.groups} | ${r.clusterGroups} | ${median(r.passes.map((p) => p.ms)).toFixed(0)} ms | ${Math.max(...r.passes.map((p) => p.ms)).toFixed(0)} ms | ${median(r.passes.map((p) => p.requests))} | ${byApi} |`,
    );
  }
  const counts = rows.map((r) => median(r.passes.map((p) => p.requests)));
  console.log("");
  console.log(`requests flat in the number of groups: ${counts.every((n) => n === counts[0]) ? "yes" : `NO (${counts.join(" vs ")})`}`);
  console.log(`notifications raised by the passes: ${active} (expected 0: the condition never holds)`);
} finally {
  await kafka.groups.delete(groups).catch(() => {});
  for (const t of topics) await kafka.topics.delete(t).catch(() => {});
  await rt.close();
  rmSync(dataDir, { recursive: true, force: true });
  await broker.stop();
}
