/**
 * Issue 25: Loupe on a secured cluster (the cluster tool's kafka-secure broker). Over SCRAM-SHA-512
 * with TLS and over mutual TLS it lists, creates, writes and reads through its REST API; a wrong
 * password, a CA that did not sign the broker's certificate, a host name the certificate does
 * not name and a client certificate the broker does not trust each show as the cluster DOWN in
 * /api/health with the reason, and as a clear JSON error on a Kafka-backed route, within seconds;
 * so do a SASL mechanism the listener does not offer and TLS settings that do not fit the
 * listener (plain text to a TLS one, TLS to a plain one).
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { kafkaBootstrap, secureKafkaEnv, uniqueTopic } from "../cluster/cluster.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { secureClusterSettings } from "../helpers/secure-kafka.ts";

const env = secureKafkaEnv();

/** A failure must be told within this long: the connect timeout (5 s) and a margin, never a hang. */
const FAILURE_DEADLINE_MS = 10_000;

type ClusterSettings = ReturnType<typeof secureClusterSettings>;
const scramCluster = (over: { password?: string; ca?: string; bootstrap?: string } = {}) => secureClusterSettings(over);
const mtlsCluster = (over: { cert?: { certFile: string; keyFile: string } | null } = {}) => secureClusterSettings({ via: "mtls", ...over });

const runtimes: TestRuntime[] = [];
async function runtimeOn(cluster: ClusterSettings): Promise<TestRuntime> {
  const rt = await testRuntime({ kafka: { clusters: [cluster] } });
  runtimes.push(rt);
  return rt;
}

/**
 * A TCP relay on 127.0.0.2 to the SASL listener: the same broker and certificate, reached by
 * an address the certificate does not name (its SAN holds 127.0.0.1 and localhost only).
 */
let relay: Server;
const relayed = new Set<Socket>();
let relayAddress = "";

beforeAll(async () => {
  const [host, port] = env.saslBootstrap.split(":") as [string, string];
  relay = createServer((inbound) => {
    const outbound = tcpConnect({ host, port: Number(port) });
    relayed.add(inbound).add(outbound);
    inbound.pipe(outbound).pipe(inbound);
    const close = () => {
      inbound.destroy();
      outbound.destroy();
    };
    inbound.on("error", close).on("close", close);
    outbound.on("error", close).on("close", close);
  });
  await new Promise<void>((ok) => relay.listen(0, "127.0.0.2", ok));
  const addr = relay.address();
  relayAddress = `127.0.0.2:${typeof addr === "object" && addr ? addr.port : 0}`;
});

const made: string[] = [];
afterAll(async () => {
  const admin = runtimes[0];
  for (const t of made)
    await admin?.kafka
      .default()
      .topics.delete(t)
      .catch(() => {});
  for (const rt of runtimes) await rt.dispose();
  for (const s of relayed) s.destroy();
  relay.close();
});

/** Creates a topic, writes two records and reads them back, all through the REST API. */
async function roundTrip(rt: TestRuntime, prefix: string): Promise<void> {
  const name = uniqueTopic(prefix);
  made.push(name);
  const created = await rt.request("/api/topics", {
    method: "POST",
    role: "write",
    body: JSON.stringify({ topicName: name, partitions: 1, replication: 1 }),
  });
  expect(created.status).toBe(201);
  const list = (await (await rt.request("/api/topics", { role: "read" })).json()) as Array<{ topicName: string }>;
  expect(list.map((t) => t.topicName)).toContain(name);
  const written = await rt.request(`/api/topics/${name}/records`, {
    method: "POST",
    role: "write",
    body: JSON.stringify({
      records: [
        { key: "k1", value: '{"n":1}' },
        { key: "k2", value: '{"n":2}' },
      ],
    }),
  });
  expect(written.status).toBeLessThan(300);
  const read = await rt.request(`/api/topics/${name}/records?seek=oldest&limit=10`, { role: "read" });
  expect(read.status).toBe(200);
  const records = ((await read.json()) as { records: Array<{ key: { text: string } | null; value: { text: string } | null }> }).records;
  expect(records.map((r) => [r.key?.text, r.value?.text]).sort()).toEqual([
    ["k1", '{"n":1}'],
    ["k2", '{"n":2}'],
  ]);
}

describe("25: Loupe on a secured cluster", () => {
  test("over SCRAM-SHA-512 with TLS: health UP, list, create, write and read", async () => {
    const rt = await runtimeOn(scramCluster());
    const health = (await (await rt.request("/api/health")).json()) as { clusters: Array<{ name: string; status: string }> };
    expect(health.clusters).toEqual([expect.objectContaining({ name: "secured", status: "UP" })]);
    await roundTrip(rt, "secured-scram");
  });

  test("over mutual TLS (a client certificate, no SASL): health UP, list, create, write and read", async () => {
    const rt = await runtimeOn(mtlsCluster());
    const health = (await (await rt.request("/api/health")).json()) as { clusters: Array<{ name: string; status: string }> };
    expect(health.clusters).toEqual([expect.objectContaining({ name: "secured", status: "UP" })]);
    await roundTrip(rt, "secured-mtls");
  });

  const failures: Array<{ what: string; cluster: () => ClusterSettings; reason: RegExp }> = [
    {
      what: "a wrong SCRAM password",
      cluster: () => scramCluster({ password: "not-the-password" }),
      reason: /rejected Loupe's credentials \(SASL authentication failed: .*invalid credentials/,
    },
    {
      what: "a CA that did not sign the broker's certificate",
      cluster: () => scramCluster({ ca: env.untrusted.caFile }),
      reason: /TLS: the broker's certificate is not trusted/,
    },
    {
      what: "a host name the broker's certificate does not name",
      cluster: () => scramCluster({ bootstrap: relayAddress }),
      reason: /TLS: the broker's certificate does not name the host Loupe connected to \(.*127\.0\.0\.2/,
    },
    {
      what: "a client certificate the broker does not trust",
      cluster: () => mtlsCluster({ cert: env.untrusted }),
      reason: /TLS: the broker refused Loupe's client certificate/,
    },
    {
      what: "a SASL mechanism the listener does not offer",
      cluster: () => {
        const c = scramCluster();
        return { ...c, sasl: { ...c.sasl!, mechanism: "SCRAM-SHA-256" as const } };
      },
      reason: /the broker does not offer the SASL mechanism Loupe uses \(.*\); check kafka.clusters\[\].sasl.mechanism/,
    },
    {
      what: "SASL in plain text to a SASL_SSL listener",
      cluster: () => ({ ...scramCluster(), tls: undefined }),
      reason: /the broker closed the connection during the SASL exchange \(.*\); a SASL_SSL listener also needs kafka.clusters\[\].tls/,
    },
    {
      what: "plain text to a TLS listener",
      cluster: () => ({ ...mtlsCluster(), tls: undefined }),
      reason: /TLS: the broker's listener requires TLS; set kafka.clusters\[\].tls/,
    },
    {
      what: "TLS to a plain-text listener",
      cluster: () => ({ ...mtlsCluster(), bootstrapServers: [kafkaBootstrap()] }),
      reason: /TLS: the broker closed the connection during the TLS handshake \(.*\); is it a TLS listener\?/,
    },
    {
      what: "no client certificate where one is required",
      cluster: () => mtlsCluster({ cert: null }),
      reason: /TLS: the broker requires a client certificate \(ERR_SSL_\w+\); set kafka.clusters\[\].tls.cert and key/,
    },
  ];

  for (const f of failures) {
    test(`${f.what}: the cluster DOWN with the reason, and a clear 502 on GET /api/topics, a records read and a query, within seconds`, async () => {
      const rt = await runtimeOn(f.cluster());
      const t0 = performance.now();
      const healthRes = await rt.request("/api/health");
      const healthMs = performance.now() - t0;
      const health = (await healthRes.json()) as { status: string; clusters: Array<{ name: string; status: string; error?: string }> };
      expect(health.status).toBe("DEGRADED");
      expect(health.clusters[0]).toMatchObject({ name: "secured", status: "DOWN" });
      expect(health.clusters[0]!.error).toMatch(f.reason);

      const t1 = performance.now();
      const res = await rt.request("/api/topics", { role: "read" });
      const routeMs = performance.now() - t1;
      const body = await errorOf(res);
      // 502: the cluster refused Loupe as configured; a retry will not help (503 is an outage).
      expect(res.status).toBe(502);
      expect(body.details).toMatchObject({ cluster: "secured", retriable: false });
      expect(body.message).toMatch(f.reason);
      console.error(
        `[25] ${f.what}: health ${Math.round(healthMs)} ms, GET /api/topics ${res.status} in ${Math.round(routeMs)} ms: ${body.message}`,
      );
      expect(healthMs).toBeLessThan(FAILURE_DEADLINE_MS);
      expect(routeMs).toBeLessThan(FAILURE_DEADLINE_MS);

      // A read of records goes through other connections (a consumer's): the same answer.
      const t2 = performance.now();
      const read = await rt.request(`/api/topics/${uniqueTopic("secured-read")}/records?seek=oldest&limit=1`, { role: "read" });
      const readMs = performance.now() - t2;
      const readBody = await errorOf(read);
      console.error(`[25] ${f.what}: GET .../records ${read.status} in ${Math.round(readMs)} ms: ${readBody.message}`);
      expect(read.status).toBe(502);
      expect(readBody.message).toMatch(f.reason);
      expect(readMs).toBeLessThan(FAILURE_DEADLINE_MS);

      // A query does not wait sql.clusterWait (30 s) for a cluster that refused Loupe: no outage.
      const t3 = performance.now();
      const sql = `/api/sql/data?${new URLSearchParams({ sql: `SELECT * FROM secured_sql_${Date.now()}` })}`;
      const query = await rt.request(sql, { role: "read", headers: { accept: "application/json" } });
      const queryMs = performance.now() - t3;
      const queryBody = await errorOf(query);
      console.error(`[25] ${f.what}: SQL ${query.status} in ${Math.round(queryMs)} ms: ${queryBody.message}`);
      expect(query.status).toBe(502);
      expect(queryBody.message).toMatch(f.reason);
      expect(queryMs).toBeLessThan(FAILURE_DEADLINE_MS);

      // A call right behind a failed one meets the connection the client is giving up on
      // ("Connection closed while waiting for ready."): it is told the same reason, not an outage.
      const kafka = rt.kafka.default();
      await kafka.health();
      const again = (await kafka.topics.list().catch((e: unknown) => e)) as { status: number; message: string };
      expect([again.status, again.message]).toEqual([502, expect.stringMatching(f.reason)]);
    });
  }
});
