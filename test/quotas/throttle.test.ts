import { afterAll, beforeAll, expect, test } from "bun:test";
import type { EffectiveQuota, QuotaEntry } from "../../src/domains/quotas/schemas.ts";
import { KafkaCluster } from "../../src/kafka/cluster.ts";
import { uniqueTopic } from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { waitFor } from "../helpers/wait.ts";

/**
 * A producer_byte_rate quota set through Loupe holds back a real producer (Loupe's own Kafka
 * client, under a client id of its own), and the broker enforces the entry `effective` names.
 *
 * The shared broker's listener has no authentication: every client is the user ANONYMOUS. Three
 * entries overlap for ANONYMOUS with this client id:
 *   A  user ANONYMOUS, client id C   200 KiB/s   precedence 1
 *   B  user ANONYMOUS                  1 GiB/s   precedence 3 (no other test's client comes near it)
 *   C  client id C                    50 KiB/s   precedence 7
 * The broker holds the producer to A's 200 KiB/s, not to C's lower 50 KiB/s; with A removed, B
 * applies and the producer runs free (a user quota outranks a client quota), where reading
 * "the most specific entry wins" would expect C's 50 KiB/s.
 */
const USER = "ANONYMOUS";
const CLIENT = `quota-throttle-${process.pid}-${Date.now().toString(36)}`;
const RATE_A = 200 * 1024;
const RATE_B = 1024 * 1024 * 1024;
const RATE_C = 50 * 1024;
const RECORD = "x".repeat(10 * 1024);

let rt: TestRuntime;
let producer: KafkaCluster;
const topic = uniqueTopic("quota-throttle");

beforeAll(async () => {
  rt = await testRuntime();
  await rt.kafka.default().topics.create({ name: topic, partitions: 1, replication: 1 });
  producer = new KafkaCluster({ ...rt.kafka.default().config, name: "throttled", clientId: CLIENT });
});
afterAll(async () => {
  // Whatever the test left, the shared broker gets back without these entries.
  await rt.kafka.default().quotas.alter([
    {
      entity: [
        { type: "user", name: USER },
        { type: "client-id", name: CLIENT },
      ],
      values: { producer_byte_rate: null },
    },
    { entity: [{ type: "user", name: USER }], values: { producer_byte_rate: null } },
    { entity: [{ type: "client-id", name: CLIENT }], values: { producer_byte_rate: null } },
  ]);
  await producer.close();
  await rt.dispose({ topics: [topic] });
});

const admin = (method: string, path: string, body?: unknown) =>
  rt.request(path, { method, role: "admin", ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });

async function put(path: string, rate: number): Promise<void> {
  const res = await admin("PUT", path, { producer_byte_rate: String(rate), consumer_byte_rate: "", request_percentage: "" });
  expect(res.status).toBe(200);
}

async function effective(): Promise<EffectiveQuota["quotas"][number]> {
  const res = await rt.request(`/api/quotas/effective?user=${USER}&clientId=${CLIENT}`, { role: "read" });
  expect(res.status).toBe(200);
  return ((await res.json()) as EffectiveQuota).quotas.find((q) => q.property === "producer_byte_rate")!;
}

/** The broker answers DescribeClientQuotas from the metadata it enforces: listed means applied. */
async function listed(urls: string[]): Promise<void> {
  await waitFor(
    async () => {
      const list = (await (await rt.request("/api/quotas", { role: "read" })).json()) as QuotaEntry[];
      const mine = list.filter((e) => e.url.includes(CLIENT) || e.url === `/api/quotas/users/${USER}`).map((e) => e.url);
      return urls.every((u) => mine.includes(u)) && mine.every((u) => urls.includes(u));
    },
    { what: `the broker to list ${urls.join(", ")}` },
  );
}

/** Produces one 10 KiB record at a time for `ms`: bytes per second, and the throttle time the broker answered meanwhile. */
async function produceFor(ms: number): Promise<{ rate: number; throttleMs: number; throttled: number; seconds: number }> {
  const before = producer.stats();
  const t0 = performance.now();
  let bytes = 0;
  while (performance.now() - t0 < ms) {
    await producer.writes.produce(topic, [{ value: RECORD }]);
    bytes += RECORD.length;
  }
  const seconds = (performance.now() - t0) / 1000;
  const after = producer.stats();
  return {
    rate: bytes / seconds,
    throttleMs: after.throttleTimeMs - before.throttleTimeMs,
    throttled: after.throttled - before.throttled,
    seconds,
  };
}

test("a producer_byte_rate set through Loupe throttles a real producer to the entry effective names, and DELETE lifts it", async () => {
  const pairPath = `/api/quotas/users/${USER}/clients/${CLIENT}`;
  const userPath = `/api/quotas/users/${USER}`;
  const clientPath = `/api/quotas/clients/${CLIENT}`;
  await put(pairPath, RATE_A);
  await put(userPath, RATE_B);
  await put(clientPath, RATE_C);
  await listed([pairPath, userPath, clientPath]);

  const withA = await effective();
  expect(withA).toMatchObject({ value: String(RATE_A), source: { precedence: 1, entityType: "USERCLIENT", url: pairPath } });

  // Measured from the first byte, for 10.5 s. The broker's rate window is 11 samples of 1 s,
  // counted over at least 10 s: from a client's first byte it holds the client to the quota
  // times max(elapsed, 10 s), so a first burst of ten seconds' worth goes through and the
  // client then waits. At 11 s the first sample, which holds that burst, leaves the window and
  // the client may burst again: a measurement from the first byte ends before that.
  const held = await produceFor(10_500);
  console.log(
    `[quota] A applies: ${Math.round(held.rate)} B/s over ${held.seconds.toFixed(1)} s (quota ${RATE_A}); ` +
      `broker throttle_time_ms: ${held.throttleMs} ms over ${held.throttled} ProduceResponses`,
  );
  expect(held.rate).toBeGreaterThan(RATE_A * 0.7);
  expect(held.rate).toBeLessThan(RATE_A * 1.3);
  expect(held.throttled).toBeGreaterThan(0);

  // Without A, B (the user's) applies, not C (the client id's, lower but outranked).
  expect((await admin("DELETE", pairPath, ["producer_byte_rate"])).status).toBe(200);
  await listed([userPath, clientPath]);
  const withB = await effective();
  expect(withB).toMatchObject({ value: String(RATE_B), source: { precedence: 3, entityType: "USER", url: userPath } });
  // The broker still holds the channel for what the last answer asked; then nothing throttles.
  const free = await waitFor(
    async () => {
      const run = await produceFor(2_000);
      return run.throttled === 0 ? run : false;
    },
    { what: "the producer to run unthrottled", timeoutMs: 30_000 },
  );
  console.log(`[quota] A removed, B applies: ${Math.round(free.rate)} B/s, no throttle (C would allow ${RATE_C})`);
  expect(free.rate).toBeGreaterThan(RATE_A * 2);
}, 90_000);
