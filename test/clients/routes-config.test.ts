import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { LICENSE, publicUrl } from "../../src/domains/server-info/service.ts";
import { VERSION } from "../../src/version.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { array, bool, decode, goStruct, int, str } from "./strict.ts";

/** `{url, jmx}` entries (CLIENTS.md 5.1). */
const urls = array(goStruct({ url: str, jmx: str }));

/** The Go client's BoxConfig, key by key, as CLIENTS.md 5.1 lists it. */
const BOX_CONFIG = goStruct({
  "lenses.sql.execution.mode": str,
  "lenses.connect.clusters": array(goStruct({ name: str, urls, statuses: str, configs: str, offsets: str })),
  "lenses.version": str,
  "lenses.ip": str,
  "lenses.kafka.brokers": str,
  "lenses.license.file": str,
  "lenses.root.path": str,
  "lenses.security.mode": str,
  "lenses.zookeeper.chroot": str,
  "lenses.port": int,
  "lenses.jmx.port": int,
  "lenses.schema.registry.urls": urls,
  "lenses.zookeeper.hosts": urls,
  "lenses.kubernetes.config.file": str,
  "lenses.kubernetes.image.name": str,
  "lenses.kubernetes.image.tag": str,
  "lenses.kubernetes.service.account": str,
  ...Object.fromEntries(
    [
      "alerts.settings",
      "alerts.storage",
      "audits",
      "cluster",
      "external.metrics",
      "external.topology",
      "lsql.storage",
      "metadata",
      "metrics",
      "processors",
      "profiles",
    ].map((k) => [`lenses.topics.${k}`, str]),
  ),
});

/** The Go client's GetConnectClusters reads the same array with `url` a string. */
const CONNECT_CLUSTERS = goStruct({
  "lenses.connect.clusters": array(goStruct({ name: str, url: str, statuses: str, config: str, offsets: str })),
});

// Secrets a config may hold: none may reach /api/config.
const SASL_PASSWORD = "sasl-pw-do-not-show-71";
const TLS_KEY = "-----BEGIN PRIVATE KEY-----\nTLSKEYMATERIAL93\n-----END PRIVATE KEY-----";
const REGISTRY = "http://reg-user-44:reg-pw-55@127.0.0.1:1/apis/ccompat/v7?api_key=reg-key-66#frag";

let rt: TestRuntime;
beforeAll(async () => {
  rt = await testRuntime({
    kafka: {
      clusters: [
        { name: "local", bootstrapServers: process.env.KAFKA_BOOTSTRAP, default: true },
        {
          name: "secure",
          // Nothing listens there: this cluster is only described, never reached.
          bootstrapServers: "127.0.0.1:1,127.0.0.2:1",
          sasl: { mechanism: "SCRAM-SHA-512", username: "loupe-sasl-user", password: SASL_PASSWORD },
          tls: { enabled: true, key: TLS_KEY, cert: TLS_KEY, ca: TLS_KEY },
        },
      ],
    },
    schemaRegistry: { urls: [REGISTRY] },
    connect: {
      clusters: [
        { alias: "dev", urls: ["http://127.0.0.1:1", "http://loupe:secret@127.0.0.1:2/?k=v"] },
        { alias: "ops", urls: "http://127.0.0.1:3", topics: { statuses: "ops-status", configs: "ops-configs", offsets: "ops-offsets" } },
      ],
    },
  });
});
afterAll(async () => {
  await rt.dispose();
});

/** As the Go client sends it: the token, gzip accepted, and its Accept for this one call. */
async function getConfig(extra: Record<string, string> = {}): Promise<{ res: Response; text: string }> {
  const res = await rt.request("/api/config", {
    role: "nodata",
    headers: { accept: "application/json, text/plain", "accept-encoding": "gzip", ...extra },
  });
  return { res, text: await res.text() };
}

describe("GET /api/config", () => {
  test("answers the lenses.* keys with the JSON types the Go client decodes", async () => {
    const { res, text } = await getConfig();
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    const body = JSON.parse(text) as Record<string, unknown>;
    decode(BOX_CONFIG, body);
    decode(CONNECT_CLUSTERS, body);
    expect(body["lenses.sql.execution.mode"]).toBe("IN_PROC");
    expect(body["lenses.version"]).toBe(VERSION);
    // The port Loupe really listens on (the test server's), an integer.
    expect(Number.isInteger(body["lenses.port"])).toBe(true);
    expect(body["lenses.port"]).toBeGreaterThan(0);
    expect(body["lenses.kafka.brokers"]).toBe(`PLAINTEXT://${process.env.KAFKA_BOOTSTRAP}`);
    expect(body["lenses.schema.registry.urls"]).toEqual([{ url: "http://127.0.0.1:1/apis/ccompat/v7", jmx: "" }]);
    // The proxy's aliases; URLs without credentials or query.
    expect(body["lenses.connect.clusters"]).toEqual([
      {
        name: "dev",
        urls: [
          { url: "http://127.0.0.1:1", jmx: "" },
          { url: "http://127.0.0.1:2", jmx: "" },
        ],
        statuses: "connect-status",
        configs: "connect-configs",
        offsets: "connect-offsets",
      },
      {
        name: "ops",
        urls: [{ url: "http://127.0.0.1:3", jmx: "" }],
        statuses: "ops-status",
        configs: "ops-configs",
        offsets: "ops-offsets",
      },
    ]);
    expect(text).not.toContain("secret");
    // Every key is a literal lenses.* key: the Go client looks them up by those names.
    for (const key of Object.keys(body)) expect(key).toStartWith("lenses.");
  });

  test("describes the cluster the request names", async () => {
    const { res, text } = await getConfig({ "x-service-cluster": "secure" });
    expect(res.status).toBe(200);
    expect(JSON.parse(text)["lenses.kafka.brokers"]).toBe("SASL_SSL://127.0.0.1:1,SASL_SSL://127.0.0.2:1");
  });

  test("never includes a secret of the config: password hashes, SASL password, TLS key, registry credentials", async () => {
    for (const cluster of ["local", "secure"]) {
      const { res, text } = await getConfig({ "x-service-cluster": cluster });
      expect(res.status).toBe(200);
      const secrets = [
        SASL_PASSWORD,
        "TLSKEYMATERIAL93",
        "BEGIN PRIVATE KEY",
        "reg-user-44",
        "reg-pw-55",
        "reg-key-66",
        "api_key",
        "#frag",
        "$argon2id$",
        ...rt.config.users.map((u) => u.passwordHash),
      ];
      for (const secret of secrets) expect(text).not.toContain(secret);
    }
  });

  test("any logged-in role may read it; no token is 401", async () => {
    expect((await rt.request("/api/config")).status).toBe(401);
    for (const role of ["admin", "write", "read", "nodata"] as const)
      expect((await rt.request("/api/config", { role, headers: { accept: "application/json, text/plain" } })).status).toBe(200);
  });

  test.each([
    ["http://u:p@reg:8081/base/?key=1", "http://reg:8081/base"],
    ["https://reg.example.com", "https://reg.example.com"],
    ["not a url", ""],
  ])("publicUrl(%p) is %p", (raw, want) => {
    expect(publicUrl(raw)).toBe(want);
  });
});

describe("GET /api/license", () => {
  test("reads as valid and unlimited, with integers every client decodes exactly", async () => {
    const res = await rt.request("/api/license", { role: "nodata", headers: { "accept-encoding": "gzip" } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    decode(goStruct({ clientId: str, isRespected: bool, maxBrokers: int, maxMessages: int, expiry: int }), body);
    expect(Object.keys(body).sort()).toEqual(["clientId", "expiry", "isRespected", "maxBrokers", "maxMessages"]);
    expect(body).toEqual({ ...LICENSE });
    expect(body.isRespected).toBe(true);
    for (const k of ["maxBrokers", "maxMessages", "expiry"] as const)
      expect(body[k] as number).toBeLessThanOrEqual(Number.MAX_SAFE_INTEGER);
    // Epoch milliseconds far in the future, yet a date every client can represent.
    const expiry = new Date(body.expiry as number);
    expect(expiry.getUTCFullYear()).toBe(2199);
  });

  test("24: GET /api/license answers 2147483647 for unlimited maxBrokers and maxMessages, which the Go CLI's table printer scales without panicking", async () => {
    const res = await rt.request("/api/license", { role: "nodata" });
    const body = (await res.json()) as { maxBrokers: number; maxMessages: number };
    expect(body.maxBrokers).toBe(2147483647);
    expect(body.maxMessages).toBe(2147483647);
    // lenses-cli scales with K/M/B/T only: anything from 10^15 up is out of its table.
    expect(body.maxBrokers).toBeLessThan(1e15);
  });
});
