/**
 * Loupe on a large cluster (issue 28): 10,000 topics over 20,000 partitions and 10,000 consumer
 * groups with committed offsets, against the targets of the issue and the peers' figures.
 *
 *   bun bench/scale.ts [--topics=10000] [--groups=10000] [--partitions-per-topic=2] [--runs=5]
 *                      [--extra-groups=5000] [--brokers=N] [--broker-heap=1536m] [--binary=PATH]
 *
 * Always starts brokers of its own (never KAFKA_BOOTSTRAP's: ten thousand topics on a shared
 * broker would slow everything else on it) and stops them at the end. One broker process cannot
 * hold 20,000 partitions here: each partition keeps its log segment open, and the machine's
 * hard limit is 20,000 open files a process; so the partitions are spread over one broker per
 * 12,000 (two at full size), each with `--broker-heap` of heap.
 *
 * Setup: topics by CreateTopics (250 topics a request, two in flight, through src/kafka) and
 * groups by OffsetCommit of simple groups (no members; group i commits offset 0 on every
 * partition of topic i mod topics), both timed.
 *
 * Loupe runs as a process of its own (dist/loupe when built, or --binary, else
 * `bun src/main.ts serve`) on a fresh data directory, so its memory (VmRSS and VmHWM of
 * /proc/<pid>/status) is its alone. For /metrics, lag is computed afresh on every scrape
 * (lag.cacheTtl = 0) and the lag-history sampler is off, so a scrape's Kafka requests are the
 * scrape's own: the difference of `loupe_kafka_requests_total` between two scrapes, the fewest
 * of the runs (other background work, such as a list inventory's refresh, only adds). The same
 * runs with no group, half the groups and all of them give the memory per 10,000 groups; one
 * more with half as many groups again, committed on partitions that already have commits, shows
 * whether the requests stay flat as only the groups grow (half to all also doubles the
 * partitions with a commit). The requests by Kafka API come from a Loupe built in this process
 * (its client's counters are not on /metrics by API).
 *
 * The list routes are asked of a Loupe with its shipped lag settings (a snapshot reused for
 * 5 s), with `?page=1&perPage=100` (and `&search=`): a server without paging ignores them and
 * answers the whole array, which the body size, row count and X-Total-Count (absent then)
 * printed beside each figure tell.
 */

import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { buildRuntime } from "../src/compose.ts";
import { parseConfig } from "../src/config/load.ts";
import type { KafkaCluster } from "../src/kafka/index.ts";
import { jvmOptsFromEnv, startCluster } from "../test/cluster/cluster.ts";
import { type ServerProcess, startServerProcess } from "../test/helpers/server-process.ts";
import { arg, log } from "./common.ts";

const ROOT = resolve(import.meta.dir, "..");
const TOPICS = Number(arg("topics", "10000"));
const GROUPS = Number(arg("groups", "10000"));
const PER_TOPIC = Number(arg("partitions-per-topic", "2"));
const RUNS = Number(arg("runs", "5"));
const PARTITIONS_PER_BROKER = 12_000;
const TOPIC_BATCH = 250;
const EXTRA = Number(arg("extra-groups", String(Math.floor(GROUPS / 2))));
const BROKERS = Number(arg("brokers", String(Math.max(1, Math.ceil((TOPICS * PER_TOPIC) / PARTITIONS_PER_BROKER)))));
const BROKER_HEAP = arg("broker-heap", "1536m");
const CLUSTER = "scale";

/** The figures the issue measured before this work, and the peers' (measured or published). */
const ISSUE = { coldS: 2.1, warmS: 0.55, requests: 39, peakMb: 583 };
const KMINION = { coldS: 4.9, requests: 10_020 };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => `${x.toFixed(0)} ms`;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const num = (n: number) => n.toLocaleString("en-US");
const topicName = (i: number) => `scale-t${String(i).padStart(5, "0")}`;
const groupName = (i: number) => `scale-g${String(i).padStart(5, "0")}`;

/** Runs `work(i)` for i in [from, to), `inFlight` at a time, retrying each for a minute or so. */
async function inParallel(
  what: string,
  from: number,
  to: number,
  inFlight: number,
  work: (i: number) => Promise<unknown>,
): Promise<number> {
  const t0 = performance.now();
  let next = from;
  let done = 0;
  const worker = async () => {
    while (next < to) {
      const i = next++;
      for (let attempt = 1; ; attempt++) {
        try {
          await work(i);
          break;
        } catch (err) {
          // A broker that just took thousands of partitions answers "coordinator not available"
          // until it has created their logs and the offsets topic's: about a minute at most.
          if (attempt >= 40) throw new Error(`${what} ${i}: ${err instanceof Error ? err.message : String(err)}`);
          await Bun.sleep(Math.min(2000, 200 * attempt));
        }
      }
      if (++done % Math.max(1, Math.floor((to - from) / 10)) === 0)
        log(`${what}: ${done} of ${to - from} (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return (performance.now() - t0) / 1000;
}

interface Answer {
  ms: number;
  status: number;
  bytes: number;
  /** Rows of a JSON array answer. */
  rows: number;
  /** The X-Total-Count header, null when absent (a server without paging). */
  total: string | null;
  body: string;
}

async function get(srv: ServerProcess, path: string): Promise<Answer> {
  const t0 = performance.now();
  const res = await srv.request(path, path.startsWith("/api/") ? { role: "admin" } : {});
  const body = await res.text();
  const took = performance.now() - t0;
  if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${body.slice(0, 300)}`);
  const rows = path.startsWith("/api/") ? (JSON.parse(body) as unknown[]).length : 0;
  return { ms: took, status: res.status, bytes: Buffer.byteLength(body), rows, total: res.headers.get("x-total-count"), body };
}

/** `loupe_kafka_requests_total` of the cluster on a /metrics page. */
function kafkaRequests(page: string): number {
  const m = new RegExp(`^loupe_kafka_requests_total\\{cluster="${CLUSTER}"\\} (\\d+)`, "m").exec(page);
  if (!m) throw new Error("no loupe_kafka_requests_total on /metrics");
  return Number(m[1]);
}

const lagSeries = (page: string) => page.split("\n").filter((l) => l.startsWith("svc_partition_consumer_lag{")).length;

function executable(): string | undefined {
  const given = arg("binary", "");
  if (given) return given;
  const built = join(ROOT, "dist", "loupe");
  return existsSync(built) ? built : undefined;
}

/**
 * Loupe on a fresh data directory. `freshLag`: lag computed afresh on every answer and no
 * lag-history sampler (a scrape's requests are then its own); else the lag settings it ships with.
 */
async function startLoupe(bootstrap: string, freshLag: boolean): Promise<ServerProcess> {
  const exe = executable();
  return startServerProcess(
    {
      log: { level: "warn" },
      ...(freshLag ? { lag: { cacheTtl: 0, sampleInterval: 0 } } : {}),
      kafka: { clusters: [{ name: CLUSTER, bootstrapServers: bootstrap, default: true }] },
    },
    exe ? { executable: exe } : {},
  );
}

interface ScrapeFigures {
  groups: number;
  coldMs: number;
  warmMs: number;
  warmMaxMs: number;
  requests: number;
  series: number;
  bytes: number;
  rssAfter: number;
  peak: number;
}

/** A fresh Loupe: its first /metrics scrape (cold), then `RUNS` more; its memory after them. */
async function scrapes(bootstrap: string, groups: number): Promise<ScrapeFigures> {
  const srv = await startLoupe(bootstrap, true);
  try {
    const cold = await get(srv, "/metrics");
    const warm: Answer[] = [];
    for (let i = 0; i < RUNS; i++) warm.push(await get(srv, "/metrics"));
    const requests = warm.map((w, i) => kafkaRequests(w.body) - kafkaRequests((i === 0 ? cold : warm[i - 1]!).body));
    const figures = {
      groups,
      coldMs: cold.ms,
      warmMs: median(warm.map((w) => w.ms)),
      warmMaxMs: Math.max(...warm.map((w) => w.ms)),
      // The fewest: a background job's requests (a refresh between two scrapes) only add.
      requests: Math.min(...requests),
      series: lagSeries(warm.at(-1)!.body),
      bytes: warm.at(-1)!.bytes,
      rssAfter: srv.rss(),
      peak: srv.peakRss(),
    };
    log(`${num(groups)} groups: /metrics cold ${ms(figures.coldMs)}, warm ${ms(figures.warmMs)}, ${figures.requests} requests`);
    return figures;
  } finally {
    await srv.stop();
  }
}

/**
 * Three in-process scrapes after a warm-up one: the Kafka requests of the one that sent the
 * fewest, by API (a background job's requests in the same moments only add).
 */
async function requestsByApi(rt: Awaited<ReturnType<typeof buildRuntime>>, kafka: KafkaCluster): Promise<Record<string, number>> {
  await (await rt.app.request("/metrics")).text();
  let fewest: { total: number; byApi: Record<string, number> } | null = null;
  for (let i = 0; i < 3; i++) {
    const before = kafka.stats();
    await (await rt.app.request("/metrics")).text();
    const after = kafka.stats();
    const byApi: Record<string, number> = {};
    for (const [api, n] of Object.entries(after.byApi)) if (n - (before.byApi[api] ?? 0) > 0) byApi[api] = n - (before.byApi[api] ?? 0);
    const total = after.requests - before.requests;
    if (!fewest || total < fewest.total) fewest = { total, byApi };
  }
  return fewest!.byApi;
}

interface ListFigure {
  name: string;
  path: string;
  cold: Answer | null;
  warmMs: number;
  last: Answer;
}

/**
 * Seconds from `since` until `path` lists a row whose `field` is `name`, asking again as soon as
 * each answer is read, and how many answers that took (1: listed by the first answer).
 */
async function firstAppearance(
  srv: ServerProcess,
  path: string,
  field: string,
  name: string,
  since: number,
): Promise<{ s: number; asks: number }> {
  const deadline = since + 300_000;
  for (let asks = 1; ; asks++) {
    const a = await get(srv, path);
    if ((JSON.parse(a.body) as Array<Record<string, unknown>>).some((r) => r[field] === name))
      return { s: (performance.now() - since) / 1000, asks };
    if (performance.now() > deadline) throw new Error(`${name} not listed by ${path} within 300 s`);
    await Bun.sleep(20);
  }
}

/**
 * A fresh Loupe at every group, with the lag settings it ships with (a lag snapshot reused for
 * 5 s, as users get it): first pages cold then warm, the whole lists, a new topic's and group's
 * first appearance.
 */
async function lists(bootstrap: string, kafka: KafkaCluster) {
  const srv = await startLoupe(bootstrap, false);
  try {
    await srv.token("admin");
    const page = "page=1&perPage=100";
    const cases: Array<{ name: string; path: string; cold: boolean }> = [
      { name: "topics, first page", path: `/api/topics?${page}`, cold: true },
      { name: "groups, first page", path: `/api/consumers?${page}`, cold: true },
      { name: "topics, search 't0004'", path: `/api/topics?search=t0004&${page}`, cold: false },
      { name: "groups, search 'g0004'", path: `/api/consumers?search=g0004&${page}`, cold: false },
      { name: "topics, whole list (unpaged)", path: "/api/topics", cold: false },
      { name: "groups, whole list (unpaged)", path: "/api/consumers", cold: false },
    ];
    const out: ListFigure[] = [];
    // The cold ones first, in a fresh process: the topics page is its first Kafka work; the
    // groups page finds the connections open but nothing of the groups read yet.
    const colds = new Map<string, Answer>();
    for (const c of cases) if (c.cold) colds.set(c.path, await get(srv, c.path));
    for (const c of cases) {
      const warm: Answer[] = [];
      for (let i = 0; i < (c.path.includes("?") ? RUNS : Math.min(RUNS, 3)); i++) warm.push(await get(srv, c.path));
      out.push({ name: c.name, path: c.path, cold: colds.get(c.path) ?? null, warmMs: median(warm.map((w) => w.ms)), last: warm.at(-1)! });
      log(`${c.name}: warm ${ms(out.at(-1)!.warmMs)}, ${num(warm.at(-1)!.rows)} rows`);
    }

    // Made outside Loupe, then looked for through the search (the whole list without paging).
    const freshTopic = `scale-fresh-topic-${Date.now()}`;
    await kafka.topics.create({ name: freshTopic, partitions: 1, replication: 1 });
    const topicS = await firstAppearance(srv, `/api/topics?search=${freshTopic}&${page}`, "topicName", freshTopic, performance.now());
    const freshGroup = `scale-fresh-group-${Date.now()}`;
    await kafka.groups.alterOffsets(freshGroup, [{ topic: topicName(0), partition: 0, offset: 0 }]);
    const groupS = await firstAppearance(srv, `/api/consumers?search=${freshGroup}&${page}`, "id", freshGroup, performance.now());
    log(`first appearance: topic ${topicS.s.toFixed(2)} s, group ${groupS.s.toFixed(2)} s`);
    return { out, topicS, groupS, rssAfter: srv.rss(), peak: srv.peakRss() };
  } finally {
    await srv.stop();
  }
}

const pass = (ok: boolean) => (ok ? "met" : "MISSED");

const loadAtStart = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const cluster = await startCluster({
  services: ["kafka"],
  ownerPid: process.pid,
  kafkaBrokers: BROKERS,
  jvmOpts: [...jvmOptsFromEnv(), `-Xmx${BROKER_HEAP}`],
});
const bootstrap = cluster.env.KAFKA_BOOTSTRAP!;
const dataDir = mkdtempSync(join(tmpdir(), "loupe-bench-scale-"));
const rt = await buildRuntime(
  parseConfig({
    dataDir,
    log: { level: "error" },
    lag: { cacheTtl: 0, sampleInterval: 0 },
    kafka: { clusters: [{ name: CLUSTER, bootstrapServers: bootstrap, default: true }] },
  }),
  { sink: { write: () => {} }, adminPassword: "bench-admin-pw" },
);
const kafka = rt.kafka.default();

try {
  const partitions = TOPICS * PER_TOPIC;
  log(
    `${BROKERS} broker(s), heap ${BROKER_HEAP} each; ${num(TOPICS)} topics x ${PER_TOPIC} = ${num(partitions)} partitions, ${num(GROUPS)} groups`,
  );
  // CreateTopics of TOPIC_BATCH topics a request, two in flight; a batch tried again creates
  // only those of its topics the broker does not list yet.
  const tried = new Set<number>();
  const topicsS = await inParallel("topic batches", 0, Math.ceil(TOPICS / TOPIC_BATCH), 2, async (b) => {
    let names = Array.from({ length: Math.min(TOPIC_BATCH, TOPICS - b * TOPIC_BATCH) }, (_, j) => topicName(b * TOPIC_BATCH + j));
    if (tried.has(b)) {
      const known = new Set((await kafka.topics.list()).map((t) => t.name));
      names = names.filter((n) => !known.has(n));
    }
    tried.add(b);
    if (names.length > 0) await kafka.topics.createMany(names.map((name) => ({ name, partitions: PER_TOPIC, replication: 1 })));
  });
  const commit = (i: number) =>
    kafka.groups.alterOffsets(
      groupName(i),
      Array.from({ length: PER_TOPIC }, (_, p) => ({ topic: topicName(i % TOPICS), partition: p, offset: 0 })),
    );
  const half = Math.floor(GROUPS / 2);

  const atNone = await scrapes(bootstrap, 0);
  const halfS = await inParallel("groups", 0, half, 16, commit);
  const atHalf = await scrapes(bootstrap, half);
  const byApiHalf = await requestsByApi(rt, kafka);
  const restS = await inParallel("groups", half, GROUPS, 16, commit);
  const atAll = await scrapes(bootstrap, GROUPS);
  const byApiAll = await requestsByApi(rt, kafka);
  const listed = await lists(bootstrap, kafka);
  // Going from half the groups to all of them also doubles the partitions with a commit (group
  // i commits on topic i mod topics); these groups commit on partitions already committed, so
  // only the number of groups changes.
  await inParallel("extra groups", GROUPS, GROUPS + EXTRA, 16, (i) =>
    kafka.groups.alterOffsets(
      groupName(i),
      Array.from({ length: PER_TOPIC }, (_, p) => ({ topic: topicName((i - GROUPS) % Math.min(GROUPS, TOPICS)), partition: p, offset: 0 })),
    ),
  );
  const atExtra = await scrapes(bootstrap, GROUPS + EXTRA);
  const byApiExtra = await requestsByApi(rt, kafka);

  const perTenK = GROUPS > 0 ? ((atAll.rssAfter - atNone.rssAfter) / GROUPS) * 10_000 : 0;
  const extraPerTenK = EXTRA > 0 ? ((atExtra.rssAfter - atAll.rssAfter) / EXTRA) * 10_000 : 0;
  const peakPerTenK = GROUPS > 0 ? ((atAll.peak - atNone.peak) / GROUPS) * 10_000 : 0;
  const loupe = executable() ? `the executable ${executable()}` : "bun src/main.ts serve";
  const lines: string[] = [];
  const say = (s = "") => lines.push(s);
  say(
    `Loupe ${loupe}; ${BROKERS} broker(s) on this machine (${PARTITIONS_PER_BROKER} partitions a broker at most); load average ${loadAtStart} at the start, ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")} at the end`,
  );
  say(
    `setup: ${num(TOPICS)} topics over ${num(partitions)} partitions in ${topicsS.toFixed(1)} s (${(TOPICS / topicsS).toFixed(0)} topics/s); ${num(GROUPS)} groups' offsets in ${(halfS + restS).toFixed(1)} s (${(GROUPS / (halfS + restS)).toFixed(0)} groups/s)`,
  );
  say();
  say("| List (admin) | Cold | Warm (median) | Body | Rows | X-Total-Count | Target |");
  say("|---|--:|--:|--:|--:|--:|---|");
  for (const f of listed.out) {
    const first = f.path.includes("perPage") && !f.path.includes("search");
    const target = first ? `< 300 ms warm: ${pass(f.warmMs < 300)}` : "";
    say(
      `| ${f.name} | ${f.cold ? ms(f.cold.ms) : ""} | ${ms(f.warmMs)} | ${(f.last.bytes / 1024).toFixed(0)} KiB | ${num(f.last.rows)} | ${f.last.total ?? "absent"} | ${target} |`,
    );
  }
  for (const [what, f] of [
    ["topic", listed.topicS],
    ["group", listed.groupS],
  ] as const)
    say(
      `| a new ${what}, made outside Loupe, to its first appearance (search; answers asked: ${f.asks}) | | ${f.s.toFixed(2)} s | | | | stated |`,
    );
  say();
  say("| /metrics | Groups | Lag series | Page | Cold | Warm (median, max) | Kafka requests a scrape | RSS after | Peak RSS |");
  say("|---|--:|--:|--:|--:|--:|--:|--:|--:|");
  for (const s of [atNone, atHalf, atAll, atExtra])
    say(
      `| Loupe | ${num(s.groups)} | ${num(s.series)} | ${(s.bytes / 1024).toFixed(0)} KiB | ${ms(s.coldMs)} | ${ms(s.warmMs)}, ${ms(s.warmMaxMs)} | ${s.requests} | ${mb(s.rssAfter)} | ${mb(s.peak)} |`,
    );
  say(
    `| Loupe before this work (issue 28, measured then) | 10,000 | | | ${ISSUE.coldS * 1000} ms | ${ISSUE.warmS * 1000} ms | ${ISSUE.requests} | | ${ISSUE.peakMb} MB |`,
  );
  say(
    `| kminion (issue 28, measured then on the same kind of cluster; not installable here) | 10,000 | | | ${KMINION.coldS * 1000} ms | | ${num(KMINION.requests)} | | |`,
  );
  say();
  say("Kafka requests of one scrape by API (in-process):");
  say(`  ${num(half)} groups over ${num(Math.min(half, TOPICS) * PER_TOPIC)} committed partitions: ${JSON.stringify(byApiHalf)}`);
  say(`  ${num(GROUPS)} groups over ${num(Math.min(GROUPS, TOPICS) * PER_TOPIC)} committed partitions: ${JSON.stringify(byApiAll)}`);
  say(`  ${num(GROUPS + EXTRA)} groups over the same partitions: ${JSON.stringify(byApiExtra)}`);
  say(
    `memory per 10,000 groups (RSS after the scrapes, ${num(GROUPS)} groups less none, scaled): ${mb(perTenK)} (peak RSS: ${mb(peakPerTenK)}); ${num(GROUPS + EXTRA)} less ${num(GROUPS)} groups, scaled: ${mb(extraPerTenK)}`,
  );
  say(`Loupe's lists process: RSS ${mb(listed.rssAfter)} after, peak ${mb(listed.peak)}`);
  say();
  say("Targets:");
  say(`  first pages < 300 ms warm: ${pass(listed.out.slice(0, 2).every((f) => f.warmMs < 300))}`);
  say(
    `  /metrics < 1 s cold at ${num(GROUPS)} groups / ${num(partitions)} partitions: ${pass(atAll.coldMs < 1000)} (${ms(atAll.coldMs)}; kminion ${KMINION.coldS} s)`,
  );
  say(
    `  Kafka requests flat in groups: ${pass(atExtra.requests <= atAll.requests)} (${atAll.requests} at ${num(GROUPS)} groups, ${atExtra.requests} at ${num(GROUPS + EXTRA)} on the same partitions; ${atNone.requests} / ${atHalf.requests} at 0 / ${num(half)} groups over fewer partitions; kminion ${num(KMINION.requests)})`,
  );
  say(`  memory below kminion's: kminion's not measured here (not installable); Loupe's peak ${mb(atAll.peak)} at ${num(GROUPS)} groups`);
  say(
    "Peers (published): kafbat kafka-ui freezes at about 9,000 topics; AKHQ times out at 10,000-15,000 groups; Redpanda Console describes group by group.",
  );
  console.log(lines.join("\n"));
} finally {
  await rt.close();
  rmSync(dataDir, { recursive: true, force: true });
  await cluster.stop({ graceMs: 2_000 });
}
