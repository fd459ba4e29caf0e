import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { KafkaConfigService } from "../../src/domains/configs/service.ts";
import { configsJson, typedValue } from "../../src/domains/configs/values.ts";
import type { ConfigEntry } from "../../src/kafka/index.ts";
import { uniqueTopic } from "../cluster/cluster.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { waitFor } from "../helpers/wait.ts";
import { describeCluster } from "../kafka/test-only.ts";
import { decode, goStruct, int, str } from "./strict.ts";

/** The Go client's BrokerConfig (CLIENTS.md 5.2). */
const GO_BROKER_CONFIG = goStruct({ "log.cleaner.threads": int, "compression.type": str, "advertised.port": int });

/** What the Go CLI sends on `PUT`: every key, the unset ones as zero values. */
const goBody = (set: Partial<{ "log.cleaner.threads": number; "compression.type": string; "advertised.port": number }>) =>
  JSON.stringify({ "log.cleaner.threads": 0, "compression.type": "", "advertised.port": 0, ...set });

let rt: TestRuntime;
let brokerId: number;
/** The broker's own dynamic log.cleaner.threads before the tests (null: none), restored after. */
let cleanerThreadsBefore: string | null;
let cleanerThreadsDefault: number;
const topics: string[] = [];

beforeAll(async () => {
  rt = await testRuntime();
  brokerId = (await describeCluster(rt.kafka.default())).brokers[0]!.id;
  const entry = (await rt.kafka.default().configs.describeBroker(brokerId)).find((c) => c.name === "log.cleaner.threads")!;
  cleanerThreadsBefore = entry.source === "DYNAMIC_BROKER_CONFIG" ? entry.value : null;
  cleanerThreadsDefault = Number(entry.source === "DYNAMIC_BROKER_CONFIG" ? entry.defaultValue : entry.value);
});
afterAll(async () => {
  // Other tests share the broker: leave its settings as they were.
  const kafka = rt.kafka.default();
  await kafka.configs.alterBroker(brokerId, [{ key: "log.cleaner.threads", value: cleanerThreadsBefore }]).catch(() => {});
  await rt.dispose({ topics });
});

/** As the Go client sends it: the token, gzip accepted, JSON bodies with their Content-Type. */
function send(method: string, path: string, opts: { body?: string; role?: "admin" | "write" | "read" | "nodata" } = {}) {
  return rt.request(path, {
    method,
    role: opts.role ?? "admin",
    headers: { "accept-encoding": "gzip", ...(opts.body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(opts.body !== undefined ? { body: opts.body } : {}),
  });
}

/** GET of a broker's configs (or the cluster-wide ones), checked as strictly as the Go client decodes it. */
async function readConfigs(path: string): Promise<{ body: Record<string, unknown>; text: string }> {
  const res = await send("GET", path, { role: "nodata" });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("application/json");
  const text = await res.text();
  const body = JSON.parse(text) as Record<string, unknown>;
  decode(GO_BROKER_CONFIG, body);
  for (const [k, v] of Object.entries(body))
    expect({ k, type: typeof v }).toMatchObject({ k, type: expect.stringMatching(/^(string|number|boolean)$/) });
  return { body, text };
}

const brokerPath = () => `/api/configs/brokers/${brokerId}`;

/** The newest audit entries of a type, read as the admin. */
async function auditEntries(
  type: string,
): Promise<Array<{ type: string; change: string; userId: string; content: Record<string, string> }>> {
  const res = await send("GET", `/api/audit?type=${type}&limit=50`);
  expect(res.status).toBe(200);
  return (await res.json()) as Array<{ type: string; change: string; userId: string; content: Record<string, string> }>;
}

describe("GET /api/configs/default/topics/keys", () => {
  test("lists the topic config names the broker knows, as an array of strings", async () => {
    const res = await send("GET", "/api/configs/default/topics/keys", { role: "nodata" });
    expect(res.status).toBe(200);
    const keys = (await res.json()) as unknown[];
    expect(Array.isArray(keys) && keys.every((k) => typeof k === "string")).toBe(true);
    expect(keys).toEqual([...new Set(keys as string[])].sort());
    for (const k of ["cleanup.policy", "retention.ms", "segment.bytes", "min.insync.replicas"]) expect(keys).toContain(k);
    // The same names a real topic has.
    const name = uniqueTopic("keys");
    topics.push(name);
    await rt.kafka.default().topics.create({ name, partitions: 1 });
    const described = (await rt.kafka.default().configs.describeTopic(name)).map((c) => c.name).sort();
    expect(keys).toEqual(described);
    // Nothing was created to learn them.
    expect((await rt.kafka.default().topics.list()).some((t) => t.name.startsWith("loupe-config-probe-"))).toBe(false);
  });

  test("where the validated creation is refused, an existing topic's configs answer", async () => {
    const name = uniqueTopic("keys-existing");
    topics.push(name);
    await rt.kafka.default().topics.create({ name, partitions: 1 });
    // The probe names an existing topic: the broker refuses its creation (TOPIC_ALREADY_EXISTS).
    const service = new KafkaConfigService(rt.kafka, { probeTopicName: () => name });
    const keys = await service.topicConfigKeys("local");
    expect(keys).toEqual((await rt.kafka.default().configs.describeTopic(name)).map((c) => c.name).sort());
  });
});

describe("GET broker configs", () => {
  test("a broker's configs: numbers as JSON integers, strings as strings, secrets left out", async () => {
    const { body, text } = await readConfigs(brokerPath());
    expect(Number.isInteger(body["log.cleaner.threads"])).toBe(true);
    expect(typeof body["compression.type"]).toBe("string");
    expect(body["auto.create.topics.enable"]).toBe(false);
    // Every INT/SHORT/LONG config is a JSON integer, every DOUBLE a number.
    const entries = await rt.kafka.default().configs.describeBroker(brokerId);
    for (const e of entries) {
      if (!(e.name in body)) continue;
      if (["INT", "SHORT", "LONG"].includes(e.type))
        expect({ name: e.name, int: Number.isInteger(body[e.name]) }).toEqual({ name: e.name, int: true });
      if (e.type === "DOUBLE") expect({ name: e.name, type: typeof body[e.name] }).toEqual({ name: e.name, type: "number" });
    }
    // Secrets never appear, even as null.
    const secrets = entries.filter((e) => e.sensitive || e.type === "PASSWORD").map((e) => e.name);
    expect(secrets.length).toBeGreaterThan(0);
    for (const s of secrets) expect(s in body).toBe(false);
    // A LONG beyond 2^53 keeps its exact digits.
    expect(text).toContain('"log.flush.interval.messages":9223372036854775807');
  });

  test("the cluster-wide defaults: only those that are set, typed the same way", async () => {
    const { body } = await readConfigs("/api/configs/brokers");
    const set = await rt.kafka.default().configs.describeBroker(null);
    expect(Object.keys(body).sort()).toEqual(
      set
        .filter((e) => typedValue(e) !== undefined)
        .map((e) => e.name)
        .sort(),
    );
  });

  test.each([
    ["GET", undefined],
    ["PUT", goBody({ "log.cleaner.threads": 2 })],
    ["DELETE", JSON.stringify(["log.cleaner.threads"])],
  ])("an unknown broker is 404 on %s", async (method, body) => {
    const res = await send(method, "/api/configs/brokers/999999", body !== undefined ? { body } : {});
    expect(res.status).toBe(404);
    expect((await errorOf(res)).message).toContain("Broker 999999 is not in the cluster");
  });

  test("a broker id that is not a number is 400", async () => {
    const res = await send("GET", "/api/configs/brokers/abc", { role: "nodata" });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toContain("brokerId must be a non-negative integer");
  });
});

describe("changing broker configs", () => {
  test("a broker's dynamic config set and removed as the Go client sends it, read back, audited", async () => {
    const put = await send("PUT", brokerPath(), { body: goBody({ "log.cleaner.threads": 2 }) });
    expect(put.status).toBe(200);
    expect(await put.text()).toBe(`Configuration of broker ${brokerId} updated`);
    // The broker applies a committed change a moment later.
    await waitFor(async () => (await readConfigs(brokerPath())).body["log.cleaner.threads"] === 2, { what: "log.cleaner.threads = 2" });
    // The zero-valued keys changed nothing.
    expect((await readConfigs(brokerPath())).body["compression.type"]).toBe("producer");

    const del = await send("DELETE", brokerPath(), { body: JSON.stringify(["log.cleaner.threads"]) });
    expect(del.status).toBe(200);
    expect(await del.text()).toBe(`Configuration of broker ${brokerId} updated`);
    await waitFor(async () => (await readConfigs(brokerPath())).body["log.cleaner.threads"] === cleanerThreadsDefault, {
      what: "log.cleaner.threads back to its default",
    });

    const entries = await auditEntries("BROKER_CONFIG");
    const update = entries.find((e) => e.change === "UPDATE" && e.content.configs === '{"log.cleaner.threads":"2"}');
    expect(update).toMatchObject({ userId: "alice", content: { brokerId: String(brokerId), outcome: "SUCCESS" } });
    const removal = entries.find((e) => e.change === "REMOVE" && e.content.configs === '{"log.cleaner.threads":"(removed)"}');
    expect(removal).toMatchObject({ userId: "alice", content: { brokerId: String(brokerId), outcome: "SUCCESS" } });
  });

  test("a cluster-wide default set and removed, read back, audited", async () => {
    // compression.type "producer" is the broker default: setting it changes nothing for other tests.
    const put = await send("PUT", "/api/configs/brokers", { body: goBody({ "compression.type": "producer" }) });
    expect(put.status).toBe(200);
    expect(await put.text()).toBe("Configuration of the cluster-wide broker defaults updated");
    await waitFor(async () => (await readConfigs("/api/configs/brokers")).body["compression.type"] === "producer", {
      what: "cluster-wide compression.type",
    });
    const del = await send("DELETE", "/api/configs/brokers", { body: JSON.stringify(["compression.type"]) });
    expect(del.status).toBe(200);
    await waitFor(async () => !("compression.type" in (await readConfigs("/api/configs/brokers")).body), {
      what: "cluster-wide compression.type removed",
    });
    const entries = await auditEntries("BROKER_CONFIG");
    expect(entries.find((e) => e.change === "UPDATE" && e.content.scope === "cluster-wide")).toMatchObject({
      content: { configs: '{"compression.type":"producer"}', outcome: "SUCCESS" },
    });
    expect(entries.find((e) => e.change === "REMOVE" && e.content.scope === "cluster-wide")).toMatchObject({
      content: { configs: '{"compression.type":"(removed)"}', outcome: "SUCCESS" },
    });
  });

  test.each(["write", "read", "nodata"] as const)("%s may read but not change broker configs: 403, audited", async (role) => {
    expect((await send("GET", brokerPath(), { role })).status).toBe(200);
    for (const [method, body, change] of [
      ["PUT", goBody({ "log.cleaner.threads": 2 }), "UPDATE"],
      ["DELETE", JSON.stringify(["log.cleaner.threads"]), "REMOVE"],
    ] as const) {
      for (const path of [brokerPath(), "/api/configs/brokers"]) {
        const res = await send(method, path, { role, body });
        expect(res.status).toBe(403);
        const [entry] = await auditEntries("BROKER_CONFIG");
        expect(entry).toMatchObject({ change, content: { outcome: "FAILURE" } });
        expect(entry!.content.reason).toStartWith("FORBIDDEN");
      }
    }
  });

  const bad: Array<[string, "PUT" | "DELETE", string, string, string]> = [
    ["an unknown config", "PUT", JSON.stringify({ "no.such.config": "1" }), "BAD_REQUEST", "unknown broker config 'no.such.config'"],
    [
      "a config that is not dynamic",
      "PUT",
      JSON.stringify({ "log.dirs": "/tmp/x" }),
      "BAD_REQUEST",
      "'log.dirs' cannot change while the broker runs",
    ],
    [
      "a value the broker refuses",
      "PUT",
      JSON.stringify({ "log.cleaner.threads": "abc" }),
      "BAD_REQUEST",
      "Invalid value abc for configuration log.cleaner.threads",
    ],
    ["only zero values (nothing given)", "PUT", goBody({}), "BAD_REQUEST", "Nothing to change on"],
    ["an array", "PUT", JSON.stringify(["log.cleaner.threads"]), "VALIDATION_FAILED", "Invalid request body"],
    ["a nested value", "PUT", JSON.stringify({ "log.cleaner.threads": { n: 2 } }), "VALIDATION_FAILED", "Invalid request body"],
    ["text that is not JSON", "PUT", "log.cleaner.threads=2", "INVALID_JSON", "not valid JSON"],
    [
      "more than 100 configs at once",
      "PUT",
      JSON.stringify(Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`no.such.config.${i}`, "1"]))),
      "VALIDATION_FAILED",
      "at most 100 configs at once",
    ],
    ["an object instead of names", "DELETE", JSON.stringify({ "log.cleaner.threads": 2 }), "VALIDATION_FAILED", "Invalid request body"],
    ["no names", "DELETE", "[]", "VALIDATION_FAILED", "name at least one config"],
    ["an unknown name", "DELETE", JSON.stringify(["no.such.config"]), "BAD_REQUEST", "unknown broker config 'no.such.config'"],
  ];
  test.each(bad)("%s is refused on %s with a clear 400, audited, and nothing changes", async (_what, method, body, code, message) => {
    for (const path of [brokerPath(), "/api/configs/brokers"]) {
      const res = await send(method, path, { body });
      expect(res.status).toBe(400);
      const err = await errorOf(res);
      expect(err.code).toBe(code);
      expect(err.message).toContain(message);
      const [entry] = await auditEntries("BROKER_CONFIG");
      expect(entry).toMatchObject({ change: method === "PUT" ? "UPDATE" : "REMOVE", content: { outcome: "FAILURE" } });
    }
    // The brokers store names they do not know: none reached them.
    const names = [
      ...(await rt.kafka.default().configs.describeBroker(null)),
      ...(await rt.kafka.default().configs.describeBroker(brokerId)),
    ].map((e) => e.name);
    expect(names).not.toContain("no.such.config");
  });
});

test("a refused change names what was asked, with values that may be secrets masked", async () => {
  const secret = "-----BEGIN PRIVATE KEY-----refused-secret-77";
  const body = JSON.stringify({ "no.such.config": "1", "listener.name.x.ssl.keystore.key": secret, "log.cleaner.threads": 0 });
  const res = await send("PUT", brokerPath(), { body });
  expect(res.status).toBe(400);
  const [entry] = await auditEntries("BROKER_CONFIG");
  expect(entry!.content).toMatchObject({
    outcome: "FAILURE",
    configs: '{"no.such.config":"1","listener.name.x.ssl.keystore.key":"********"}',
  });
  expect(JSON.stringify(entry)).not.toContain("refused-secret-77");
});

describe("typed config values", () => {
  const entry = (type: ConfigEntry["type"], value: string | null, extra: Partial<ConfigEntry> = {}): ConfigEntry => ({
    name: "x",
    value,
    defaultValue: null,
    isDefault: true,
    source: "DEFAULT_CONFIG",
    type,
    readOnly: false,
    sensitive: false,
    documentation: null,
    synonyms: [],
    ...extra,
  });
  test.each([
    ["INT", "1", 1],
    ["SHORT", "-3", -3],
    ["LONG", "604800000", 604800000],
    ["LONG", "9007199254740991", 9007199254740991],
    ["DOUBLE", "0.5", 0.5],
    ["DOUBLE", "1.7976931348623157E308", 1.7976931348623157e308],
    ["BOOLEAN", "true", true],
    ["BOOLEAN", "false", false],
    ["STRING", "producer", "producer"],
    ["LIST", "PLAINTEXT://a:1,PLAINTEXT://b:2", "PLAINTEXT://a:1,PLAINTEXT://b:2"],
    ["CLASS", "org.example.X", "org.example.X"],
    ["INT", "abc", undefined],
    ["DOUBLE", "NaN", undefined],
    ["DOUBLE", "", undefined],
    ["BOOLEAN", "yes", undefined],
    ["STRING", null, undefined],
    ["PASSWORD", "hunter2", undefined],
  ] as const)("%s %p is %p", (type, value, want) => {
    expect(typedValue(entry(type, value))).toEqual(want);
  });

  test("a secret is left out whatever its type", () => {
    expect(typedValue(entry("STRING", "s3cret", { sensitive: true }))).toBeUndefined();
  });

  test("the JSON object keeps a LONG beyond 2^53 exactly, sorted by name, valueless configs left out", () => {
    const text = configsJson([
      { ...entry("LONG", "9223372036854775807"), name: "b" },
      { ...entry("INT", "2"), name: "a" },
      { ...entry("STRING", null), name: "c" },
      { ...entry("LONG", "-9223372036854775808"), name: "d" },
    ]);
    expect(text).toBe('{"a":2,"b":9223372036854775807,"d":-9223372036854775808}');
    // Valid JSON, each a number (a JavaScript reader rounds the long ones; Go, Java and Python do not).
    expect(Object.values(JSON.parse(text)).map((v) => typeof v)).toEqual(["number", "number", "number"]);
  });
});
