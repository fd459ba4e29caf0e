// @no-services
/**
 * What the alerts on broker internals make of their inputs: the Prometheus text format (as far as
 * the series Loupe reads need it), several broker versions (1008) and a broker's disks fuller
 * than the cluster's average (1013), which the one-broker test cluster cannot show for real
 * (its brokers run one version and share one disk).
 */
import { describe, expect, test } from "bun:test";
import { type ConfigError, parseConfig } from "../../src/config/load.ts";
import { diskFindings, endpoints, parseSamples, readingOf, SERIES, versionFindings } from "../../src/domains/alerts/broker-metrics.ts";

describe("the Prometheus text format", () => {
  const cases: [string, string, { name: string; labels: Record<string, string>; value: number }[]][] = [
    ["a plain sample", "process_open_fds 97.0", [{ name: "process_open_fds", labels: {}, value: 97 }]],
    ["an exponent and a timestamp", "process_max_fds 2.0E4 1700000000000", [{ name: "process_max_fds", labels: {}, value: 20000 }]],
    [
      "labels with escapes and a trailing comma",
      'kafka_server_app_version{id="1",version="4.3.1 \\"x\\"\\\\",} 1.0',
      [{ name: "kafka_server_app_version", labels: { id: "1", version: '4.3.1 "x"\\' }, value: 1 }],
    ],
    ["comments and other series are skipped", "# HELP process_open_fds x\n# TYPE process_open_fds gauge\njvm_threads 3\n", []],
    ["a malformed line is skipped", 'process_open_fds{id="1 5\nprocess_open_fds{id=1} 5\nprocess_open_fds abc', []],
    ["NaN and infinities", "process_open_fds NaN\nprocess_max_fds +Inf", [{ name: "process_max_fds", labels: {}, value: Infinity }]],
  ];
  for (const [what, text, expected] of cases)
    test(what, () => {
      const got = parseSamples(text, new Set(["process_open_fds", "process_max_fds", "kafka_server_app_version"]));
      expect(got.filter((s) => !Number.isNaN(s.value))).toEqual(expected);
    });

  test("a reading takes the series deploy/jmx-exporter-kafka.yaml names", () => {
    const text = [
      `${SERIES.openFds} 97.0`,
      `${SERIES.maxFds} 20000.0`,
      `${SERIES.idle} 0.9454834372`,
      `${SERIES.failedFetch} 3.0`,
      `${SERIES.failedProduce} 7.0`,
      `${SERIES.version}{id="2",version="4.3.1"} 1.0`,
    ].join("\n");
    expect(readingOf(text, 5)).toEqual({
      at: 5,
      openFds: 97,
      maxFds: 20000,
      idle: 0.9454834372,
      failedFetch: 3,
      failedProduce: 7,
      version: "4.3.1",
    });
  });
});

describe("several broker versions (1008)", () => {
  test("one version raises nothing; two name each broker", () => {
    expect(
      versionFindings(
        "c",
        new Map([
          [1, "4.3.1"],
          [2, "4.3.1"],
        ]),
      ),
    ).toEqual([]);
    const [f] = versionFindings(
      "c",
      new Map([
        [3, "4.2.0"],
        [1, "4.3.1"],
        [2, "4.3.1"],
      ]),
    );
    expect([f!.fingerprint, f!.raise.summary]).toEqual([
      "cond/c/1008/cluster",
      "The brokers run 2 Kafka versions: 4.2.0 (broker 3), 4.3.1 (brokers 1, 2)",
    ]);
  });
});

describe("broker disk usage over the cluster's average (1013)", () => {
  const dir = (total: number | null, usable: number | null, error: string | null = null) => ({
    totalBytes: total,
    usableBytes: usable,
    error,
  });
  const cases: [string, { brokerId: number; dirs: ReturnType<typeof dir>[] }[], string[]][] = [
    ["one broker has no average to compare with", [{ brokerId: 1, dirs: [dir(100, 5)] }], []],
    [
      "within the margin",
      [
        { brokerId: 1, dirs: [dir(100, 40)] },
        { brokerId: 2, dirs: [dir(100, 50)] },
      ],
      [],
    ],
    [
      "a broker 20 points over a 60 % average",
      [
        { brokerId: 1, dirs: [dir(100, 20)] },
        { brokerId: 2, dirs: [dir(100, 60)] },
        { brokerId: 3, dirs: [dir(100, 40)] },
      ],
      ["broker 1: Broker 1's log-dir disks are 80 % full, 20 points over the cluster's average of 60 % (more than 10)"],
    ],
    [
      "dirs summed; offline dirs and brokers that do not tell their sizes left out",
      [
        { brokerId: 1, dirs: [dir(100, 0), dir(100, 100)] },
        { brokerId: 2, dirs: [dir(100, 100), dir(100, 0, "offline (storage error)")] },
        { brokerId: 3, dirs: [dir(null, null)] },
      ],
      ["broker 1: Broker 1's log-dir disks are 50 % full, 25 points over the cluster's average of 25 % (more than 10)"],
    ],
  ];
  for (const [what, brokers, expected] of cases)
    test(what, () => {
      expect(diskFindings("c", brokers, 10).map((f) => `${f.raise.instance}: ${f.raise.summary}`)).toEqual(expected);
    });
});

test("endpoints: the map by node id, or the template with each broker's host and id", () => {
  const brokers = [
    { id: 1, host: "b1.example" },
    { id: 2, host: "::1" },
  ];
  const base = {
    timeout: 1,
    openFilesPercent: 1,
    requestHandlerIdlePercent: 1,
    failedFetchPerMinute: 1,
    failedProducePerMinute: 1,
    diskAboveAveragePoints: 1,
  };
  expect([...endpoints({ ...base, urls: { "2": "http://x:1/metrics", "9": "http://y:1/metrics" } }, brokers)]).toEqual([
    [2, "http://x:1/metrics"],
  ]);
  expect([...endpoints({ ...base, template: "http://{host}:7071/metrics?n={id}" }, brokers)]).toEqual([
    [1, "http://b1.example:7071/metrics?n=1"],
    [2, "http://[::1]:7071/metrics?n=2"],
  ]);
});

describe("kafka.clusters[].brokerMetrics in the config file", () => {
  const load = (brokerMetrics: unknown) =>
    parseConfig({ kafka: { clusters: [{ name: "c", bootstrapServers: "127.0.0.1:9092", brokerMetrics }] } }).kafka.clusters[0]!
      .brokerMetrics;
  const problem = (brokerMetrics: unknown) => {
    try {
      load(brokerMetrics);
    } catch (e) {
      return (e as ConfigError).problems.map((p) => `${p.key}: ${p.message}`);
    }
    throw new Error("accepted");
  };

  test("a map, or one string of id=url pairs (as KAFKA_METRICS_URLS), with the operator's defaults", () => {
    expect(load({ urls: "1=http://a:7071/metrics, 2=http://b:7071/metrics" })).toEqual({
      urls: { "1": "http://a:7071/metrics", "2": "http://b:7071/metrics" },
      timeout: 5_000,
      openFilesPercent: 80,
      requestHandlerIdlePercent: 20,
      failedFetchPerMinute: 5,
      failedProducePerMinute: 5,
      diskAboveAveragePoints: 10,
    });
    expect(load(undefined)!.urls).toBeUndefined();
  });

  const bad: [string, unknown, string][] = [
    ["both", { urls: { "1": "http://a/m" }, template: "http://{host}:7071/metrics" }, "set urls or template, not both"],
    ["a node id that is no number", { urls: { one: "http://a/m" } }, "a broker's node id"],
    ["a URL of another scheme", { urls: "1=ftp://a/m" }, "expected an http:// or https:// URL"],
    ["a template naming neither host nor id", { template: "http://kafka:7071/metrics" }, "naming {host} or {id}"],
    ["a percent over 100", { openFilesPercent: 101 }, "openFilesPercent"],
  ];
  for (const [what, section, message] of bad)
    test(`refused: ${what}`, () => {
      expect(problem(section).join("\n")).toContain(message);
    });
});
