import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { escapeLabelValue, MetricsText } from "../../src/domains/metrics/prometheus.ts";
import { uniqueTopic } from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { createReadyTopic } from "../helpers/topics.ts";
import { waitFor } from "../helpers/wait.ts";

describe("Prometheus text format", () => {
  test.each([
    ["plain", "plain"],
    ['a"b', 'a\\"b'],
    ["a\\b", "a\\\\b"],
    ["line\nbreak", "line\\nbreak"],
    ['\\"\n', '\\\\\\"\\n'],
  ])("label value %p escapes as %p", (input, want) => {
    expect(escapeLabelValue(input)).toBe(want);
  });

  test("HELP and TYPE once, then series", () => {
    const text = new MetricsText()
      .metric("m", "gauge", "help \\ text\nmore")
      .sample("m", { a: "x", b: 1 }, 2.5)
      .sample("m", {}, NaN)
      .toString();
    expect(text).toBe('# HELP m help \\\\ text\\nmore\n# TYPE m gauge\nm{a="x",b="1"} 2.5\nm NaN\n');
  });
});

describe("GET /metrics", () => {
  let rt: TestRuntime;
  const topics: string[] = [];
  const groups: string[] = [];
  beforeAll(async () => {
    // No background sampling: the test takes its samples when it needs them.
    rt = await testRuntime({ lag: { cacheTtl: 0, sampleInterval: 0 } });
  });
  afterAll(async () => {
    await rt.dispose({ topics, groups });
  });

  test("answers without a token, in the text format, with lag series, lag seconds and Loupe's own figures", async () => {
    const kafka = rt.kafka.default();
    const t = await createReadyTopic(kafka, { prefix: "metrics", partitions: 2, track: topics });
    // An awkward but legal group id: quotes, a backslash and a line feed must be escaped.
    const g = `${uniqueTopic("m")}-"q"\\b\nnl`;
    groups.push(g);
    await kafka.groups.alterOffsets(g, [{ topic: t, partition: 0, offset: 0 }]);
    const sampler = rt.sampler;
    await sampler.sampleNow("local"); // the sampler sees the empty partition first
    await kafka.writes.produce(
      t,
      Array.from({ length: 7 }, (_, i) => ({ partition: 0, value: `v${i}` })),
    );
    await sampler.sampleNow("local");
    await rt.request("/api/auth", { role: "admin" }); // a user name that must not show up

    const label = g.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
    const secondsOf = (lines: string[]) => {
      const line = lines.find((l) => l.startsWith(`svc_partition_consumer_lag_seconds{topic="${t}",partition="0"`));
      return line === undefined ? undefined : Number(line.split(" ").at(-1));
    };
    // Lag seconds are tenths of a second since the oldest unread record was appended (between
    // the two samples): poll until the clock has moved on enough for them to read above 0.
    const { res, text, lines } = await waitFor(
      async () => {
        const res = await rt.app.request("/metrics");
        const text = await res.text();
        const lines = text.split("\n");
        return (secondsOf(lines) ?? 0) > 0 && { res, text, lines };
      },
      { what: "lag seconds above 0" },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/plain; version=0.0.4");
    expect(lines).toContain(`svc_partition_consumer_lag{topic="${t}",partition="0",consumerGroup="${label}"} 7`);
    expect(lines).toContain(`svc_topic_consumer_lag{topic="${t}",consumerGroup="${label}"} 7`);
    expect(secondsOf(lines)).toBeLessThan(10);

    for (const name of [
      "svc_partition_consumer_lag",
      "svc_topic_consumer_lag",
      "svc_partition_consumer_lag_seconds",
      "loupe_process_resident_memory_bytes",
      "loupe_http_requests_total",
      "loupe_kafka_requests_total",
      "loupe_kafka_throttle_seconds_total",
    ]) {
      expect(lines.filter((l) => l.startsWith(`# HELP ${name} `))).toHaveLength(1);
      expect(lines.filter((l) => l.startsWith(`# TYPE ${name} `))).toHaveLength(1);
    }
    expect(lines).toContain('loupe_lag_up{cluster="local"} 1');
    // Every series line parses: name, optional labels, a number.
    for (const l of lines.filter((x) => x && !x.startsWith("#")))
      expect(l).toMatch(/^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\["\\n])*",?)*\})? (-?[0-9.e+]+|NaN|[+-]Inf)$/);
    for (const user of ["alice", "wanda", "reed", "nora"]) expect(text).not.toContain(user);
  });

  test("another cluster by ?cluster=, an unknown one is 404", async () => {
    expect((await rt.app.request("/metrics?cluster=local")).status).toBe(200);
    expect((await rt.app.request("/metrics?cluster=nope")).status).toBe(404);
  });

  test("callers share one snapshot within the cache interval", async () => {
    const shared = await testRuntime({ lag: { cacheTtl: 60_000, sampleInterval: 0 } });
    try {
      const kafka = shared.kafka.default();
      await shared.app.request("/metrics");
      const before = kafka.requestCount();
      await Promise.all(Array.from({ length: 10 }, () => shared.app.request("/metrics")));
      expect(kafka.requestCount() - before).toBe(0);
    } finally {
      await shared.dispose();
    }
  });
});
