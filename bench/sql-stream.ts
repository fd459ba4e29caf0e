/**
 * Throughput and memory of the SQL data stream, against a real broker.
 *
 *   bun bench/sql-stream.ts [--records=1000000] [--sizes=100,1024] [--slow-seconds=10] [--install-kcat]
 *                           [--only=a,b,c,d,e,s] [--server-prof=DIR] [--no-build] [--startup-runs=5] [--compiled]
 *                           [--executable=PATH]
 *
 * Uses the broker in KAFKA_BOOTSTRAP, else starts one (test/cluster, Kafka from Maven Central).
 * For each record size it fills a 6-partition topic once (reused by later runs: the name holds
 * the size and count) and measures, one after another:
 *   (a) the Kafka client in this process, no decoding: Fetch answers decoded by the client's own
 *       record parser (cluster.reads.batches with recordDecoder "client")
 *   (a') the same read through Loupe's record decoder (src/kafka/record-set.ts), which the
 *       server uses: the reference for Loupe's own overhead
 *   (b) `kcat -C -e` on the same topic: the physical reference (skipped, and said so, when kcat
 *       is absent; --install-kcat runs `apt-get install -y kcat` first on Debian)
 *   (c) a Loupe server process: SELECT * over the event stream, read by this process
 *   (d) the same with a WHERE on a value field that matches 1 % of the records
 *   (e) the Loupe server's peak RSS while one client reads the largest topic slowly
 * and prints one table with records/s, MB/s and the ratios to (a), (a') and (b).
 * Targets: (d) >= 0.8 x (a), (c) >= 0.5 x (a), (e) < 256 MB; (c) of 1 KB records >= 0.6 x (b)
 * (issue 24). Memory: the server's peak RSS in each scan (counted from its RSS when the scan
 * starts, so the login's password check before it is not a scan's) and with the slow reader, beside
 * references measured in the same run (kcat's peak RSS, an empty Bun.serve's: Bun's floor); the
 * target is Redpanda Console's peak in the same scans measured from outside, 118-157 MB.
 * Then (s) start-up (bench/startup.ts): the first /api/health answer of `bun src/main.ts` and of
 * the compiled executable (built into a temporary directory; --no-build skips it), and
 * `--version`, against Bun's own floor. Targets: under 0.3 s and under 50 ms.
 *
 * --only runs a subset (the ratios need (a)); --server-prof writes a CPU profile (markdown) of
 * each Loupe server into DIR when it stops; --compiled runs the servers as the executable (built
 * here once, as installed) instead of `bun src/main.ts`; --executable=PATH runs that executable
 * instead (an earlier build, for a before/after comparison in one sitting; it is not removed).
 * The stream reader here is as cheap as a fast real client: it counts record markers in the
 * bytes as they arrive, without decoding or copying them, and decodes only the last line.
 */

import { spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { createKafkaPool, type KafkaCluster } from "../src/kafka/index.ts";
import { startServerProcess } from "../test/helpers/server-process.ts";
import { arg, benchBroker, filledTopic, jsonValue, log, measuredRun } from "./common.ts";
import { buildBinary, runStartup } from "./startup.ts";

const PARTITIONS = 6;

const RECORDS = Number(arg("records", "1000000"));
const SIZES = arg("sizes", "100,1024").split(",").map(Number);
const SLOW_SECONDS = Number(arg("slow-seconds", "10"));
const ONLY = new Set(arg("only", "a,b,c,d,e,s").split(","));
const SERVER_PROF = arg("server-prof", "");

interface Row {
  size: number;
  name: string;
  records: number;
  seconds: number;
  bytes: number;
  note?: string;
}

const rows: Row[] = [];

// ------------------------------------------------------------------------------------- setup

const broker = await benchBroker();
const bootstrap = broker.bootstrap;
const pool = createKafkaPool([{ name: "bench", bootstrapServers: [bootstrap], clientId: "loupe-bench", default: true }]);
const kafka = pool.default();

const value = jsonValue;

function fill(size: number): Promise<string> {
  return filledTopic(kafka, `bench-sql-${size}b-${RECORDS}`, RECORDS, PARTITIONS, size, (i, j) => ({
    key: `k${i}`,
    value: value(i, size),
    partition: j % PARTITIONS,
  }));
}

// ---------------------------------------------------------------------------- (a) and (b)

async function rawConsume(
  cluster: KafkaCluster,
  topic: string,
  recordDecoder: "client" | "loupe",
): Promise<{ records: number; bytes: number; seconds: number }> {
  const offsets = await cluster.offsets.bounds([topic]);
  const t0 = performance.now();
  let records = 0;
  let bytes = 0;
  const partitions = offsets.map((o) => ({ partition: o.partition, from: o.earliest, to: o.latest }));
  // Loupe's decoder reads into a reused buffer, as the server does; the client's cannot.
  for await (const batch of cluster.reads.batches({ topic, partitions, recordDecoder, reuseBuffers: recordDecoder === "loupe" })) {
    for (const r of batch) {
      records++;
      bytes += (r.key?.byteLength ?? 0) + (r.value?.byteLength ?? 0);
    }
  }
  return { records, bytes, seconds: (performance.now() - t0) / 1000 };
}

function kcatPath(): string | null {
  const which = spawnSync("sh", ["-c", "command -v kcat || command -v kafkacat"], { encoding: "utf8" });
  return which.status === 0 ? which.stdout.trim() : null;
}

function kcat(bin: string, topic: string, expected: number): { seconds: number; records: number; peakKb: number } {
  // -f '%o\n': one short line per record, so the pipe is not what is measured.
  const run = measuredRun([bin, "-C", "-e", "-q", "-b", bootstrap, "-t", topic, "-o", "beginning", "-f", "%o\\n"]);
  if (!run.ok) throw new Error(`kcat failed: ${run.stderr}`);
  if (run.lines !== expected) log(`kcat read ${run.lines} records, expected ${expected}`);
  return { seconds: run.seconds, records: run.lines, peakKb: run.peakKb };
}

/** The resident memory of an empty Bun.serve that has answered one request: Bun's own floor. */
async function bunFloorKb(): Promise<number> {
  const child = Bun.spawn(
    [
      process.execPath,
      "-e",
      `const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("ok") }); console.log(s.port);`,
    ],
    { stdin: "ignore", stdout: "pipe", stderr: "inherit" },
  );
  try {
    const reader = child.stdout.getReader();
    const { value } = await reader.read();
    const port = Number(new TextDecoder().decode(value).trim());
    await (await fetch(`http://127.0.0.1:${port}/`)).text();
    const m = /VmHWM:\s+(\d+)/.exec(await Bun.file(`/proc/${child.pid}/status`).text());
    return m ? Number(m[1]) : 0;
  } finally {
    child.kill();
    await child.exited;
  }
}

// ------------------------------------------------------------------------------ Loupe server

interface Server {
  url: string;
  pid: number;
  token: string;
  stop(): Promise<void>;
  rssKb(): number;
  peakRssKb(): number;
  /** Starts the peak over from the current RSS (Linux: /proc/PID/clear_refs). */
  resetPeak(): void;
}

// --compiled: the servers are the executable (built once here), as installed; else `bun src/main.ts`.
const GIVEN_EXECUTABLE = arg("executable", "");
const BUILT = GIVEN_EXECUTABLE === "" && process.argv.includes("--compiled") ? buildBinary() : null;
const COMPILED = GIVEN_EXECUTABLE === "" ? BUILT : resolve(GIVEN_EXECUTABLE);

async function startLoupe(): Promise<Server> {
  const prof = SERVER_PROF ? ["--cpu-prof-md", `--cpu-prof-dir=${resolve(SERVER_PROF)}`] : [];
  const server = await startServerProcess(
    {
      sql: { maxLimit: 100_000_000, maxQueriesPerUser: 4, maxSize: "1000g" },
      kafka: { clusters: [{ name: "bench", bootstrapServers: bootstrap, default: true }] },
    },
    COMPILED ? { executable: COMPILED } : { bunArgs: prof },
  );
  const token = await server.token("read");
  // The login's password check (argon2id, 64 MiB) is given back within a second or so: the
  // scans start once it is (RSS 32 MB below the peak, 3 s at most), as they would some time
  // after a user logs in.
  for (let i = 0; i < 30 && server.rss() > server.peakRss() - 32 * 1048576; i++) await Bun.sleep(100);
  return {
    url: server.url,
    pid: server.pid,
    token,
    rssKb: () => server.rss() / 1024,
    peakRssKb: () => server.peakRss() / 1024,
    resetPeak: () => writeFileSync(`/proc/${server.pid}/clear_refs`, "5"),
    stop: server.stop,
  };
}

const DATA1 = Buffer.from("data:1");

/** Reads a query's event stream to its end; counts type 1 lines. `pauseMs` between reads simulates a slow reader. */
async function readStream(server: Server, sql: string, opts: { pauseMs?: number; maxSeconds?: number; onTick?: () => void } = {}) {
  const t0 = performance.now();
  const abort = new AbortController();
  const res = await fetch(`${server.url}/api/sql/data?${new URLSearchParams({ sql })}`, {
    headers: { accept: "text/event-stream", "x-service-token": server.token },
    signal: abort.signal,
  });
  if (!res.ok) throw new Error(`query failed: ${res.status} ${await res.text()}`);
  const reader = res.body!.getReader();
  let records = 0;
  let bytes = 0;
  // The last bytes seen (a marker split over two chunks, and the end line), kept by reference.
  let prev: Buffer | null = null;
  let last: Buffer | null = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    // Count "data:1" markers (the bench data never holds that text), in place.
    const buf = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    for (let i = buf.indexOf(DATA1); i >= 0; i = buf.indexOf(DATA1, i + 6)) records++;
    if (last && last.length > 0) {
      // A marker split over the boundary: at most 5 bytes on either side.
      const edge = Buffer.concat([last.subarray(Math.max(0, last.length - 5)), buf.subarray(0, 5)]);
      if (edge.indexOf(DATA1) >= 0) records++;
    }
    prev = last;
    last = buf;
    opts.onTick?.();
    if (opts.pauseMs) await Bun.sleep(opts.pauseMs);
    if (opts.maxSeconds && performance.now() - t0 > opts.maxSeconds * 1000) {
      abort.abort();
      await reader.cancel().catch(() => {});
      break;
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  const tailBytes = Buffer.concat([prev ?? Buffer.alloc(0), last ?? Buffer.alloc(0)]);
  const lastText = tailBytes.subarray(Math.max(0, tailBytes.length - 4096)).toString("utf8");
  const endLine = lastText
    .split("\n")
    .filter((l) => l.startsWith("data:2") || l.startsWith("data:3"))
    .at(-1);
  return { records, bytes, seconds, end: endLine ? JSON.parse(endLine.slice(6)) : null };
}

// ----------------------------------------------------------------------------------- run

const SETTINGS = "SET max.size = 100g; SET max.query.time = 1h; SET max.idle.time = 30s; ";
if (process.argv.includes("--install-kcat") && !kcatPath()) {
  log("installing kcat (apt-get)");
  spawnSync("sh", ["-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kcat"], { stdio: "inherit" });
}
const kcatBin = kcatPath();
if (!kcatBin) log("kcat not found: (b) is skipped (Debian: apt-get install kcat)");

const kcatPeakKb: number[] = [];
const topics: Record<number, string> = {};
for (const size of SIZES) topics[size] = await fill(size);

let fastPeak = 0;
/** Each scan's peak RSS, from the server's RSS when it began (the login's password hash not counted). */
const scanPeaks: Array<[string, number]> = [];
const server = await startLoupe();
log(`Loupe server pid ${server.pid} at ${server.url}`);
// Start-up and one login: the password check (argon2id, 64 MiB) is the peak before any scan.
const startPeak = server.peakRssKb();
const startRss = server.rssKb();
log(`server after start and one login: RSS ${(startRss / 1024).toFixed(0)} MB (settled), peak ${(startPeak / 1024).toFixed(0)} MB`);
try {
  for (const size of SIZES) {
    const topic = topics[size]!;
    // Warm-up: page cache, JIT, connections.
    await rawConsume(kafka, topic, "client");
    const a = await rawConsume(kafka, topic, "client");
    rows.push({ size, name: "(a) Kafka client in-process, no decoding", records: a.records, seconds: a.seconds, bytes: a.bytes });
    await rawConsume(kafka, topic, "loupe");
    const a2 = await rawConsume(kafka, topic, "loupe");
    rows.push({
      size,
      name: "(a') Loupe's record decoder in-process, no decoding",
      records: a2.records,
      seconds: a2.seconds,
      bytes: a2.bytes,
    });
    if (!ONLY.has("b")) {
      /* not asked for */
    } else if (kcatBin) {
      const b = kcat(kcatBin, topic, RECORDS);
      kcatPeakKb.push(b.peakKb);
      rows.push({ size, name: "(b) kcat -C -e (physical reference)", records: b.records, seconds: b.seconds, bytes: a.bytes });
    } else rows.push({ size, name: "(b) kcat -C -e", records: 0, seconds: 0, bytes: 0, note: "kcat not installed" });
    if (ONLY.has("c")) {
      server.resetPeak();
      const c = await readStream(server, `${SETTINGS}SELECT * FROM \`${topic}\``);
      if (c.records !== RECORDS) log(`(c) got ${c.records} records, end: ${JSON.stringify(c.end)}`);
      rows.push({
        size,
        name: "(c) Loupe SSE, SELECT *",
        records: c.end?.totalRecords ?? c.records,
        seconds: c.seconds,
        bytes: c.end?.totalSizeRead ?? 0,
        note: `${(c.bytes / 1048576).toFixed(0)} MB of stream`,
      });
      scanPeaks.push([`(c) ${size} B`, server.peakRssKb()]);
    }
    if (ONLY.has("d")) {
      server.resetPeak();
      const d = await readStream(server, `${SETTINGS}SELECT * FROM \`${topic}\` WHERE sel = 7`);
      rows.push({
        size,
        name: "(d) Loupe SSE, WHERE 1 % (records scanned)",
        records: RECORDS,
        seconds: d.seconds,
        bytes: d.end?.totalSizeRead ?? 0,
        note: `${d.records} matched`,
      });
      scanPeaks.push([`(d) ${size} B`, server.peakRssKb()]);
    }
  }
  fastPeak = Math.max(0, ...scanPeaks.map(([, kb]) => kb));
  log(`peak RSS of the server in the fast runs: ${(fastPeak / 1024).toFixed(0)} MB`);
} finally {
  await server.stop();
}

// (e) a fresh server, one client reading the largest topic slowly.
let slowPeak = 0;
let slowRecords = 0;
if (ONLY.has("e")) {
  const slowServer = await startLoupe();
  try {
    const size = Math.max(...SIZES);
    const baseline = slowServer.rssKb();
    slowServer.resetPeak();
    const sampler = setInterval(() => (slowPeak = Math.max(slowPeak, slowServer.rssKb())), 100);
    const e = await readStream(slowServer, `${SETTINGS}SELECT * FROM \`${topics[size]}\``, { pauseMs: 20, maxSeconds: SLOW_SECONDS });
    clearInterval(sampler);
    slowRecords = e.records;
    slowPeak = Math.max(slowPeak, slowServer.peakRssKb());
    log(
      `(e) slow reader: ${e.records} records in ${e.seconds.toFixed(1)} s; server RSS at start ${(baseline / 1024).toFixed(0)} MB, peak ${(slowPeak / 1024).toFixed(0)} MB`,
    );
  } finally {
    await slowServer.stop();
  }
}

const floorKb = await bunFloorKb();
const startup = ONLY.has("s") ? await runStartup(Number(arg("startup-runs", "5")), COMPILED ?? undefined) : [];
if (BUILT) rmSync(resolve(BUILT, ".."), { recursive: true, force: true });

await pool.close();
await broker.stop();

// ---------------------------------------------------------------------------------- report

const fmt = (n: number, d = 0) => n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
const lines: string[] = [];
lines.push(
  `SQL stream benchmark: ${fmt(RECORDS)} records per topic, ${PARTITIONS} partitions, ${process.platform}/${process.arch}, ${navigator.hardwareConcurrency} CPUs, Bun ${Bun.version}, server: ${GIVEN_EXECUTABLE || (COMPILED ? "the compiled executable" : "bun src/main.ts")}`,
);
lines.push("");
lines.push("| Record | Measure | Records | Seconds | Records/s | MB/s | vs (a) | vs (a') | vs (b) kcat |");
lines.push("|---|---|--:|--:|--:|--:|--:|--:|--:|");
for (const size of SIZES) {
  const rateOf = (p: string) => {
    const r = rows.find((x) => x.size === size && x.name.startsWith(p))!;
    return r.records / r.seconds;
  };
  const aRate = rateOf("(a)");
  const a2Rate = rateOf("(a')");
  const bRow = rows.find((x) => x.size === size && x.name.startsWith("(b)") && x.seconds > 0);
  const bRate = bRow ? bRow.records / bRow.seconds : 0;
  for (const r of rows.filter((x) => x.size === size)) {
    if (r.seconds === 0) {
      lines.push(`| ${size} B | ${r.name} | - | - | - | - | ${r.note ?? ""} | | |`);
      continue;
    }
    const rate = r.records / r.seconds;
    lines.push(
      `| ${size} B | ${r.name}${r.note ? ` (${r.note})` : ""} | ${fmt(r.records)} | ${fmt(r.seconds, 2)} | ${fmt(rate)} | ${fmt(r.bytes / 1048576 / r.seconds, 1)} | ${fmt(rate / aRate, 2)}x | ${fmt(rate / a2Rate, 2)}x | ${bRate ? `${fmt(rate / bRate, 2)}x` : "-"} |`,
    );
  }
}
lines.push("");
lines.push(
  `(e) peak RSS of the Loupe server with one slow reader (${SLOW_SECONDS} s, ${fmt(slowRecords)} records read): ${fmt(slowPeak / 1024, 0)} MB (target < 256 MB)`,
);
lines.push("");
for (const size of SIZES) {
  const rate = (p: string) => {
    const r = rows.find((x) => x.size === size && x.name.startsWith(p))!;
    return r.records / r.seconds;
  };
  if (!ONLY.has("c") || !ONLY.has("d")) continue;
  const d = rate("(d)") / rate("(a)");
  const c = rate("(c)") / rate("(a)");
  lines.push(
    `${size} B: (d)/(a) = ${fmt(d, 2)} (target >= 0.8) ${d >= 0.8 ? "PASS" : "FAIL"}; (c)/(a) = ${fmt(c, 2)} (target >= 0.5) ${c >= 0.5 ? "PASS" : "FAIL"}; ` +
      `against Loupe's own decoder: (d)/(a') = ${fmt(rate("(d)") / rate("(a')"), 2)}, (c)/(a') = ${fmt(rate("(c)") / rate("(a')"), 2)}`,
  );
}
lines.push(`memory: ${fmt(slowPeak / 1024, 0)} MB (target < 256) ${slowPeak / 1024 < 256 ? "PASS" : "FAIL"}`);
lines.push("");
for (const size of SIZES) {
  if (!ONLY.has("b") || !kcatBin) continue;
  const rate = (p: string) => {
    const r = rows.find((x) => x.size === size && x.name.startsWith(p));
    return r && r.seconds > 0 ? r.records / r.seconds : Number.NaN;
  };
  const c = rate("(c)") / rate("(b)");
  const d = rate("(d)") / rate("(b)");
  const target = size === 1024 ? ` (target >= 0.6) ${c >= 0.6 ? "PASS" : "FAIL"}` : "";
  lines.push(`${size} B against kcat -C -e: (c)/(b) = ${fmt(c, 2)}${target}; (d)/(b) = ${fmt(d, 2)}`);
}
lines.push("");
// Redpanda Console v3.9.0's peak in the same scans, measured from outside (issue 24).
const CONSOLE_PEAK_MB = [118, 157] as const;
const mb = (kb: number) => kb / 1024;
const kcatPeak = Math.max(0, ...kcatPeakKb);
const peaks: Array<[string, number]> = [];
for (const [name, kb] of scanPeaks) peaks.push([`server peak in scan ${name}`, kb]);
if (ONLY.has("e")) peaks.push(["server peak with one slow reader (e)", slowPeak]);
lines.push("| Peak RSS | MB | vs kcat | vs empty Bun.serve | Target (Console 118-157 MB) |");
lines.push("|---|--:|--:|--:|---|");
lines.push(`| kcat -C -e (reference, same run) | ${fmt(mb(kcatPeak))} | 1.00x | | |`);
lines.push(`| empty Bun.serve (Bun's floor, same run) | ${fmt(mb(floorKb))} | | 1.00x | |`);
lines.push(`| server after start and one login: RSS settled / peak (argon2id) | ${fmt(mb(startRss))} / ${fmt(mb(startPeak))} | | | |`);
for (const [name, kb] of peaks) {
  const verdict = mb(kb) <= CONSOLE_PEAK_MB[0] ? "PASS (below Console's lowest)" : mb(kb) <= CONSOLE_PEAK_MB[1] ? "PASS" : "FAIL";
  lines.push(
    `| ${name} | ${fmt(mb(kb))} | ${kcatPeak ? `${fmt(kb / kcatPeak, 1)}x` : "-"} | ${fmt(kb / floorKb, 1)}x | <= ${CONSOLE_PEAK_MB[1]} MB ${verdict} |`,
  );
}
if (startup.length > 0) lines.push("", ...startup);
console.log(lines.join("\n"));
