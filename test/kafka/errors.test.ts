import { describe, expect, test } from "bun:test";
// The error classes the client throws, to build the trees toAppError must read.
import { MultipleErrors, NetworkError, ProtocolError, TimeoutError, UserError } from "@platformatic/kafka";
import { AppError } from "../../src/errors.ts";
import { isRefusal, KAFKA_ERROR_CODES, toAppError } from "../../src/kafka/errors.ts";
import { createKafkaPool } from "../../src/kafka/index.ts";
import { freePort, kafkaBootstrap } from "../cluster/cluster.ts";
import { describeCluster, rejection, testPool } from "./helpers.ts";

const wrapped = (leaf: Error) =>
  new MultipleErrors("Creating topics failed.", [new MultipleErrors("Received response with error", [leaf])]);

describe("toAppError", () => {
  const cases: Array<[string, Error, string, number, string]> = [
    [
      "topic exists",
      wrapped(new ProtocolError("TOPIC_ALREADY_EXISTS", "Topic 't' already exists.")),
      "CONFLICT",
      409,
      "Ctx: Topic 't' already exists.",
    ],
    [
      "unknown topic",
      wrapped(new ProtocolError("UNKNOWN_TOPIC_OR_PARTITION", "")),
      "NOT_FOUND",
      404,
      "Ctx: This server does not host this topic-partition.",
    ],
    [
      "invalid config",
      wrapped(new ProtocolError("INVALID_CONFIG", "Invalid value x for configuration y")),
      "BAD_REQUEST",
      400,
      "Ctx: Invalid value x for configuration y",
    ],
    ["invalid request", wrapped(new ProtocolError("INVALID_REQUEST", "bad")), "BAD_REQUEST", 400, "Ctx: bad"],
    [
      "partitions",
      wrapped(new ProtocolError("INVALID_PARTITIONS", "Number of partitions must be larger than 0.")),
      "BAD_REQUEST",
      400,
      "Ctx: Number of partitions must be larger than 0.",
    ],
    ["replication", wrapped(new ProtocolError("INVALID_REPLICATION_FACTOR", "rf")), "BAD_REQUEST", 400, "Ctx: rf"],
    ["policy", wrapped(new ProtocolError("POLICY_VIOLATION", "no")), "BAD_REQUEST", 400, "Ctx: no"],
    [
      "offset range",
      wrapped(new ProtocolError("OFFSET_OUT_OF_RANGE", null)),
      "BAD_REQUEST",
      400,
      "Ctx: The requested offset is not within the range of offsets maintained by the server.",
    ],
    ["non-empty group", wrapped(new ProtocolError("NON_EMPTY_GROUP", "")), "CONFLICT", 409, "Ctx: The group is not empty."],
    ["group not found", wrapped(new ProtocolError("GROUP_ID_NOT_FOUND", "")), "NOT_FOUND", 404, "Ctx: The group id does not exist."],
    ["unsupported", wrapped(new ProtocolError("UNSUPPORTED_VERSION", "")), "UNSUPPORTED", 422, "Ctx: The version of API is not supported."],
    [
      "no authorizer",
      wrapped(new ProtocolError("SECURITY_DISABLED", "No Authorizer is configured.")),
      "BAD_REQUEST",
      400,
      "Ctx: No Authorizer is configured.",
    ],
    ["denied", wrapped(new ProtocolError("TOPIC_AUTHORIZATION_FAILED", "")), "FORBIDDEN", 403, "Ctx: Topic authorization failed."],
    [
      "coordinator",
      wrapped(new ProtocolError("COORDINATOR_NOT_AVAILABLE", "")),
      "UNAVAILABLE",
      503,
      "Ctx: The coordinator is not available.",
    ],
    ["request timeout", wrapped(new ProtocolError("REQUEST_TIMED_OUT", "")), "GATEWAY_TIMEOUT", 504, "Ctx: The request timed out."],
    [
      "client timeout",
      new TimeoutError("Request timed out"),
      "GATEWAY_TIMEOUT",
      504,
      "Ctx: the cluster did not answer in time (Request timed out)",
    ],
    [
      "network",
      new MultipleErrors("Cannot connect to any broker.", [
        new NetworkError("Connection to 127.0.0.1:1 failed.", { cause: new Error("connect ECONNREFUSED 127.0.0.1:1") }),
      ]),
      "UNAVAILABLE",
      503,
      "Ctx: cannot reach the cluster: Connection to 127.0.0.1:1 failed. (connect ECONNREFUSED 127.0.0.1:1)",
    ],
    ["client-side unknown topic", new UserError("Unknown topic t."), "NOT_FOUND", 404, "Ctx: Topic 't' does not exist."],
    // 25: TLS failures say what to fix, as 502 (the secured broker's tests meet the others).
    [
      "25: an expired broker certificate",
      new NetworkError("Connection to b:9093 failed.", {
        cause: Object.assign(new Error("certificate has expired"), { code: "CERT_HAS_EXPIRED" }),
      }),
      "BAD_GATEWAY",
      502,
      "Ctx: TLS: the broker's certificate is not valid now (certificate has expired)",
    ],
    [
      "25: a broker that requires a client certificate",
      new NetworkError("Connection to b:9093 failed.", {
        cause: Object.assign(new Error("tlsv13 alert certificate required"), { code: "ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED" }),
      }),
      "BAD_GATEWAY",
      502,
      "Ctx: TLS: the broker requires a client certificate (ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED); set kafka.clusters[].tls.cert and key",
    ],
    [
      "unknown error name",
      wrapped(new ProtocolError("UNKNOWN_SERVER_ERROR", "")),
      "BAD_GATEWAY",
      502,
      "Ctx: The server experienced an unexpected error when processing the request.",
    ],
    ["bug", new TypeError("x is undefined"), "INTERNAL", 500, "Ctx: unexpected error from the Kafka client"],
  ];
  test.each(cases)("%s", (_name, err, code, status, message) => {
    const app = toAppError(err, "Ctx", "c1");
    expect(app).toBeInstanceOf(AppError);
    expect([app.code, app.status, app.message]).toEqual([code, status, message]);
    expect(app.cause).toBe(err);
  });

  test("25: a bare 'Connection closed' is told by the TLS alert its socket met just before", () => {
    const alert = Object.assign(new Error("sslv3 alert certificate unknown"), { code: "ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN" });
    const closed = new MultipleErrors("x", [new NetworkError("Connection closed")]);
    expect(toAppError(closed, "Ctx", "c1", { recentSocketError: alert, clientCertificate: true }).message).toBe(
      "Ctx: TLS: the broker refused Loupe's client certificate (ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN); it must be signed by a CA the broker trusts and be valid now",
    );
    // Without one, or with a socket error that is no TLS failure, it stays an outage.
    expect(toAppError(closed, "Ctx", "c1").code).toBe("UNAVAILABLE");
    expect(toAppError(closed, "Ctx", "c1", { recentSocketError: Object.assign(new Error("reset"), { code: "ECONNRESET" }) }).code).toBe(
      "UNAVAILABLE",
    );
    // The same alert when Loupe offered no certificate: one is required.
    expect(toAppError(closed, "Ctx", "c1", { recentSocketError: alert, clientCertificate: false }).message).toStartWith(
      "Ctx: TLS: the broker requires a client certificate (ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN)",
    );
  });

  test("25: a request that waited for a connection the client gave up on is told by the refusal just before", () => {
    const refused = new UserError("Broker requires TLS.");
    expect(isRefusal(refused)).toBe(true);
    const waited = new MultipleErrors("x", [new NetworkError("Connection closed while waiting for ready.")]);
    expect(isRefusal(waited, { recentSocketError: refused })).toBe(false);
    const app = toAppError(waited, "Ctx", "c1", { recentSocketError: refused });
    expect([app.status, app.message]).toEqual([
      502,
      "Ctx: TLS: the broker's listener requires TLS; set kafka.clusters[].tls (with the ca that signed its certificate)",
    ]);
    expect(isRefusal(new NetworkError("Connection to b:1 failed.", { cause: new Error("connect ECONNREFUSED") }))).toBe(false);
  });

  test("a definite answer wins over a transient one in the same error", () => {
    const err = new MultipleErrors("x", [new ProtocolError("NOT_COORDINATOR", ""), new ProtocolError("GROUP_ID_NOT_FOUND", "gone")]);
    expect(toAppError(err, "Ctx").code).toBe("NOT_FOUND");
  });

  test("details name the cluster and the Kafka error", () => {
    const app = toAppError(wrapped(new ProtocolError("TOPIC_ALREADY_EXISTS", "exists")), "Ctx", "prod");
    expect(app.details).toEqual({ cluster: "prod", kafkaError: "TOPIC_ALREADY_EXISTS", kafkaErrorCode: 36, retriable: false });
  });

  test("AppErrors pass through unchanged", () => {
    const original = new AppError("BAD_REQUEST", "mine");
    expect(toAppError(original, "Ctx")).toBe(original);
  });

  test("every mapped code is a known AppError code", () => {
    for (const [name, code] of Object.entries(KAFKA_ERROR_CODES)) expect([name, new AppError(code, "x").status > 0]).toEqual([name, true]);
  });
});

describe("pool", () => {
  test("clusters by name; unknown names are NOT_FOUND; the default is the marked one", () => {
    const pool = createKafkaPool([
      { name: "a", bootstrapServers: ["127.0.0.1:1"], clientId: "x" },
      { name: "b", bootstrapServers: ["127.0.0.1:1"], clientId: "x", default: true },
    ]);
    expect(pool.names()).toEqual(["a", "b"]);
    expect(pool.default().name).toBe("b");
    expect(pool.get("a").name).toBe("a");
    expect(pool.get("a")).toBe(pool.get("a"));
    let err: unknown;
    try {
      pool.get("c");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe("NOT_FOUND");
    expect((err as AppError).message).toBe("Unknown Kafka cluster 'c'");
    // Nothing connects before the first call.
    expect(pool.stats()).toEqual([
      { cluster: "a", requests: 0, lastRoundTripMs: null, errors: 0, throttleTimeMs: 0, throttled: 0, openReads: 0, byApi: {} },
      { cluster: "b", requests: 0, lastRoundTripMs: null, errors: 0, throttleTimeMs: 0, throttled: 0, openReads: 0, byApi: {} },
    ]);
  });

  test("health, request count and round trip of a live cluster", async () => {
    const pool = testPool();
    try {
      const kafka = pool.default();
      const health = await kafka.health();
      expect(health).toMatchObject({ connected: true, brokers: 1, controllerId: 1 });
      expect(health.error).toBeUndefined();
      const before = kafka.requestCount();
      await kafka.topics.list();
      expect(kafka.requestCount()).toBe(before + 1);
      expect(kafka.lastRoundTripMs).toBeGreaterThan(0);
      expect(kafka.stats().byApi.Metadata).toBeGreaterThanOrEqual(2);
      const d = await describeCluster(kafka);
      expect(d.brokers.map((b) => [b.id, `${b.host}:${b.port}`])).toEqual([[1, kafkaBootstrap()]]);
      expect(d.controllerId).toBe(1);
      expect(d.clusterId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    } finally {
      await pool.close();
    }
  });

  test("a cluster nobody listens on: health says so without throwing, calls are UNAVAILABLE", async () => {
    const port = await freePort();
    const pool = createKafkaPool([{ name: "dead", bootstrapServers: [`127.0.0.1:${port}`], clientId: "x", connectTimeoutMs: 500 }]);
    try {
      const kafka = pool.get("dead");
      const t0 = performance.now();
      const health = await kafka.health(2_000);
      expect(performance.now() - t0).toBeLessThan(2_500);
      expect(health.connected).toBe(false);
      expect(health.brokers).toBe(0);
      expect(health.controllerId).toBeNull();
      expect(health.error).toContain("cannot reach the cluster");
      const err = await rejection(kafka.topics.list());
      expect(err.code).toBe("UNAVAILABLE");
      expect(err.status).toBe(503);
      expect(err.message).toStartWith("Cannot list topics: cannot reach the cluster: ");
    } finally {
      await pool.close();
    }
  }, 15_000);

  test("a closed cluster refuses calls", async () => {
    const pool = testPool();
    const kafka = pool.default();
    await pool.close();
    const err = await rejection(kafka.topics.list());
    expect(err.code).toBe("UNAVAILABLE");
  });
});
