import type { HttpCounters } from "../../http/middleware.ts";
import type { KafkaPool } from "../../kafka/index.ts";
import { LagEngine, type ShareGroupLag } from "../../lag/engine.ts";
import type { JobStatus } from "../../util/background.ts";
import type { ProcessorMetrics } from "../processors/types.ts";
import { MetricsText } from "./prometheus.ts";

export interface MetricsDeps {
  pool: KafkaPool;
  lag: LagEngine;
  counters: HttpCounters;
  openStreams: () => number;
  startedAt: number;
  /** The stream processors of a cluster with their figures (absent: none shown). */
  processors?: (cluster: string) => Promise<ProcessorMetrics[]>;
  /** Loupe's background jobs (absent: none shown). */
  jobs?: () => JobStatus[];
}

/**
 * The /metrics page of one cluster: consumer lag per partition and per topic (names as the
 * SPEC gives them), lag in seconds, then Loupe's own process, HTTP and Kafka-client figures.
 * Labels carry topic, partition and group names only: never a user name or a secret.
 */
export async function renderMetrics(deps: MetricsDeps, cluster: string): Promise<string> {
  const out = new MetricsText();
  let lagError: string | null = null;
  const snapshot = await deps.lag.snapshot(cluster).catch((e: unknown) => {
    lagError = (e as Error).message;
    return null;
  });

  if (snapshot) {
    out.metric("svc_partition_consumer_lag", "gauge", "Consumer group lag per partition: log end offset minus committed offset.");
    for (const p of snapshot.partitions)
      out.sample("svc_partition_consumer_lag", { topic: p.topic, partition: p.partition, consumerGroup: p.group }, p.lag);
    out.metric("svc_topic_consumer_lag", "gauge", "Consumer group lag per topic: the sum over its partitions.");
    for (const t of LagEngine.byTopic(snapshot)) out.sample("svc_topic_consumer_lag", { topic: t.topic, consumerGroup: t.group }, t.lag);
    out.metric(
      "svc_partition_consumer_lag_seconds",
      "gauge",
      "Estimated age in seconds of the oldest unread record per partition, from sampled end offsets (absent until known).",
    );
    for (const p of snapshot.partitions) {
      if (p.lagSeconds === null) continue;
      out.sample("svc_partition_consumer_lag_seconds", { topic: p.topic, partition: p.partition, consumerGroup: p.group }, p.lagSeconds);
    }
    out.metric("loupe_lag_snapshot_age_seconds", "gauge", "Age of the consumer lag figures on this page.");
    out.sample("loupe_lag_snapshot_age_seconds", {}, Math.max(0, (Date.now() - snapshot.takenAt) / 1000));
    out.metric("loupe_lag_snapshot_duration_seconds", "gauge", "Time the lag snapshot on this page took to compute.");
    out.sample("loupe_lag_snapshot_duration_seconds", {}, snapshot.durationMs / 1000);
    out.metric("loupe_lag_snapshot_broker_requests", "gauge", "Broker requests the lag snapshot on this page needed.");
    out.sample("loupe_lag_snapshot_broker_requests", {}, snapshot.brokerRequests);
  }
  if (snapshot) shareGroupLagMetrics(out, snapshot.shares, snapshot.sharesAt);
  out.metric("loupe_lag_up", "gauge", "1 when the consumer lag of the cluster could be read, else 0.");
  out.sample("loupe_lag_up", { cluster }, lagError === null ? 1 : 0);

  if (deps.processors) {
    const list = await deps.processors(cluster).catch(() => []);
    const labels = (p: ProcessorMetrics) => ({ processor: p.id, name: p.name, consumerGroup: p.consumerGroup });
    const series: Array<[string, "counter" | "gauge", string, (p: ProcessorMetrics) => number | null]> = [
      ["loupe_processor_records_in_total", "counter", "Input records a stream processor has committed.", (p) => p.recordsIn],
      ["loupe_processor_records_out_total", "counter", "Output records a stream processor has committed.", (p) => p.recordsOut],
      ["loupe_processor_failed_records_total", "counter", "Records skipped under error.policy=skip.", (p) => p.failed],
      ["loupe_processor_late_records_total", "counter", "Records that came after their window closed.", (p) => p.late],
      ["loupe_processor_records_in_per_second", "gauge", "Input records per second, over the last report.", (p) => p.inPerSec],
      ["loupe_processor_records_out_per_second", "gauge", "Output records per second, over the last report.", (p) => p.outPerSec],
      ["loupe_processor_lag", "gauge", "The lag of the processor's consumer group (absent when unknown).", (p) => p.lag],
    ];
    for (const [name, type, help, value] of series) {
      out.metric(name, type, help);
      for (const p of list) {
        const v = value(p);
        if (v !== null) out.sample(name, labels(p), v);
      }
    }
    out.metric("loupe_processor_state", "gauge", "1 for the processor's deployment state (PENDING, RUNNING, PAUSED, FAILED, STOPPED).");
    for (const p of list) out.sample("loupe_processor_state", { ...labels(p), state: p.state }, 1);
  }

  const mem = process.memoryUsage();
  out
    .metric("loupe_process_resident_memory_bytes", "gauge", "Resident set size of the Loupe process.")
    .sample("loupe_process_resident_memory_bytes", {}, mem.rss);
  out.metric("loupe_process_heap_used_bytes", "gauge", "JavaScript heap in use.").sample("loupe_process_heap_used_bytes", {}, mem.heapUsed);
  out
    .metric("loupe_process_uptime_seconds", "gauge", "Seconds since Loupe started.")
    .sample("loupe_process_uptime_seconds", {}, Math.round((Date.now() - deps.startedAt) / 1000));
  out
    .metric("loupe_http_requests_total", "counter", "HTTP requests answered.")
    .sample("loupe_http_requests_total", {}, deps.counters.requests);
  out
    .metric("loupe_http_errors_total", "counter", "HTTP requests answered with a 5xx status.")
    .sample("loupe_http_errors_total", {}, deps.counters.errors);
  out
    .metric("loupe_http_request_duration_seconds_total", "counter", "Time spent answering HTTP requests.")
    .sample("loupe_http_request_duration_seconds_total", {}, Math.round(deps.counters.totalMs) / 1000);
  out.metric("loupe_open_streams", "gauge", "Open event streams.").sample("loupe_open_streams", {}, deps.openStreams());
  if (deps.jobs) backgroundJobMetrics(out, deps.jobs());
  kafkaClientMetrics(out, deps.pool.stats());
  return out.toString();
}

/**
 * Lag of Kafka 4 share groups (KIP-932), beside the consumer groups' and named apart from them:
 * a share group has no committed position, its lag counts the records from each partition's
 * start offset to the end not yet acknowledged. Absent on a cluster without share groups.
 */
function shareGroupLagMetrics(out: MetricsText, lags: ShareGroupLag[], readAt: number | null): void {
  if (lags.length === 0) return;
  // A broker slower than the snapshot's wait leaves the last figures: their age says so.
  if (readAt !== null) {
    out.metric(
      "loupe_share_group_lag_age_seconds",
      "gauge",
      "Age of the share group lag figures on this page (older than the consumer lag when the broker was slow to answer).",
    );
    out.sample("loupe_share_group_lag_age_seconds", {}, Math.max(0, (Date.now() - readAt) / 1000));
  }
  out.metric(
    "svc_partition_share_group_lag",
    "gauge",
    "Share group lag per partition: records from the start offset to the end not yet acknowledged.",
  );
  const byTopic = new Map<string, { group: string; topic: string; lag: number }>();
  for (const l of lags) {
    out.sample("svc_partition_share_group_lag", { topic: l.topic, partition: l.partition, shareGroup: l.group }, l.lag);
    const key = `${l.group}\u0000${l.topic}`;
    const t = byTopic.get(key) ?? { group: l.group, topic: l.topic, lag: 0 };
    t.lag += l.lag;
    byTopic.set(key, t);
  }
  out.metric("svc_topic_share_group_lag", "gauge", "Share group lag per topic: the sum over its partitions.");
  for (const t of byTopic.values()) out.sample("svc_topic_share_group_lag", { topic: t.topic, shareGroup: t.group }, t.lag);
}

/** Broker requests of each cluster's client, those that failed, and the waits brokers asked for under quotas. */
function kafkaClientMetrics(out: MetricsText, stats: ReturnType<KafkaPool["stats"]>): void {
  out.metric("loupe_kafka_requests_total", "counter", "Requests Loupe sent to the cluster's brokers.");
  for (const s of stats) out.sample("loupe_kafka_requests_total", { cluster: s.cluster }, s.requests);
  out.metric("loupe_kafka_request_errors_total", "counter", "Broker requests that failed (network or protocol).");
  for (const s of stats) out.sample("loupe_kafka_request_errors_total", { cluster: s.cluster }, s.errors);
  out.metric("loupe_kafka_throttle_seconds_total", "counter", "Time the brokers asked Loupe's clients to wait under quotas.");
  for (const s of stats) out.sample("loupe_kafka_throttle_seconds_total", { cluster: s.cluster }, s.throttleTimeMs / 1000);
}

/**
 * Each background job turned on (GET /api/health lists them all): whether it works, how many
 * runs in a row failed, and when it last worked. Alert on `loupe_background_job_up == 0`; a
 * periodic job that stalls without failing shows in the age of its last success.
 */
function backgroundJobMetrics(out: MetricsText, jobs: JobStatus[]): void {
  const on = jobs.filter((j) => j.enabled);
  out.metric("loupe_background_job_up", "gauge", "1 when the background job runs and its last run worked (or none ran yet), else 0.");
  for (const j of on) out.sample("loupe_background_job_up", { job: j.name }, j.running && j.failedRuns === 0 ? 1 : 0);
  out.metric("loupe_background_job_failed_runs", "gauge", "Runs of the background job that failed since the last that worked.");
  for (const j of on) out.sample("loupe_background_job_failed_runs", { job: j.name }, j.failedRuns);
  out.metric(
    "loupe_background_job_last_success_timestamp_seconds",
    "gauge",
    "When the background job's last run that worked ended, in seconds since the epoch (absent before the first).",
  );
  for (const j of on)
    if (j.lastRunAt !== null) out.sample("loupe_background_job_last_success_timestamp_seconds", { job: j.name }, j.lastRunAt / 1000);
}
