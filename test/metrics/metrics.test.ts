import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { escapeLabelValue, MetricsText } from "../../src/domains/metrics/prometheus.ts";
import { uniqueTopic } from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";

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
    rt = await testRuntime({ lag: { cacheTtl: 0, sampleInterval: 200 } });
  });
  afterAll(async () => {
    await rt.kafka
      .default()
      .deleteGroups(groups)
      .catch(() => {});
    for (const t of topics)
      await rt.kafka
        .default()
        .deleteTopic(t)
        .catch(() => {});
    await rt.dispose();
  });

  test("answers without a token, in the text format, with lag series, lag seconds and Loupe's own figures", async () => {
    const kafka = rt.kafka.default();
    const t = uniqueTopic("metrics");
    await kafka.createTopic({ name: t, partitions: 2, replication: 1 });
    topics.push(t);
    // An awkward but legal group id: quotes, a backslash and a line feed must be escaped.
    const g = `${uniqueTopic("m")}-"q"\\b\nnl`;
    groups.push(g);
    await kafka.alterGroupOffsets(g, [{ topic: t, partition: 0, offset: 0 }]);
    await Bun.sleep(500); // the sampler sees the empty partition first
    await kafka.produce(
      t,
      Array.from({ length: 7 }, (_, i) => ({ partition: 0, value: `v${i}` })),
    );
    await Bun.sleep(500);
    await rt.request("/api/auth", { role: "admin" }); // a user name that must not show up

    const res = await rt.app.request("/metrics");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/plain; version=0.0.4");
    const text = await res.text();
    const lines = text.split("\n");
    const label = g.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
    expect(lines).toContain(`svc_partition_consumer_lag{topic="${t}",partition="0",consumerGroup="${label}"} 7`);
    expect(lines).toContain(`svc_topic_consumer_lag{topic="${t}",consumerGroup="${label}"} 7`);
    const seconds = lines.find((l) => l.startsWith(`svc_partition_consumer_lag_seconds{topic="${t}",partition="0"`));
    expect(seconds).toBeDefined();
    expect(Number(seconds!.split(" ").at(-1))).toBeGreaterThan(0);
    expect(Number(seconds!.split(" ").at(-1))).toBeLessThan(10);

    for (const name of [
      "svc_partition_consumer_lag",
      "svc_topic_consumer_lag",
      "svc_partition_consumer_lag_seconds",
      "loupe_process_resident_memory_bytes",
      "loupe_http_requests_total",
      "loupe_kafka_requests_total",
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
