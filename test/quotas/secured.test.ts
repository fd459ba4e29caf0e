import { afterAll, beforeAll, expect, test } from "bun:test";
import type { EffectiveQuota, QuotaEntry } from "../../src/domains/quotas/schemas.ts";
import { createKafkaPool, type KafkaCluster, type KafkaPool } from "../../src/kafka/index.ts";
import type { AclBinding } from "../../src/kafka/types.ts";
import { uniqueTopic } from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { secureClusterSettings } from "../helpers/secure-kafka.ts";
import { waitFor } from "../helpers/wait.ts";

/**
 * A user quota on the secured broker (kafka-secure): Loupe, connected as the super user over
 * SCRAM, sets a producer_byte_rate for the SCRAM user alice with a client id of this test's own
 * (alice's other clients, which other tests use, are not touched), and alice's producer,
 * authenticated as alice, is throttled: the broker's ProduceResponses carry a throttle time. After
 * the DELETE they carry none. The rate is low (10 KiB/s) so that the broker throttles within the
 * first few hundred KiB: the measurement over time is test/quotas/throttle.test.ts's.
 */
const CLIENT = `quota-secured-${process.pid}-${Date.now().toString(36)}`;
const RATE = 10 * 1024;
const RECORD = "x".repeat(10 * 1024);
const topic = uniqueTopic("quota-secured");
const write: AclBinding = {
  resourceType: "TOPIC",
  resourceName: topic,
  patternType: "LITERAL",
  principal: "User:alice",
  host: "*",
  operation: "WRITE",
  permission: "ALLOW",
};

let rt: TestRuntime;
let alicePool: KafkaPool;
let alice: KafkaCluster;

beforeAll(async () => {
  rt = await testRuntime({ kafka: { clusters: [secureClusterSettings()] } });
  await rt.kafka.default().topics.create({ name: topic, partitions: 1, replication: 1 });
  await rt.kafka.default().acls.create([write]);
  alicePool = createKafkaPool([{ ...secureClusterSettings({ user: "alice", name: "alice" }), clientId: CLIENT }]);
  alice = alicePool.default();
});
afterAll(async () => {
  const kafka = rt.kafka.default();
  await kafka.quotas
    .alter([
      {
        entity: [
          { type: "user", name: "alice" },
          { type: "client-id", name: CLIENT },
        ],
        values: { producer_byte_rate: null },
      },
    ])
    .catch(() => {});
  await kafka.acls.delete([write]).catch(() => {});
  await alicePool.close();
  await rt.dispose({ topics: [topic] });
});

/** Produces `n` records one at a time as alice: how many answers carried a throttle time, and how long. */
async function produce(n: number): Promise<{ throttled: number; throttleMs: number }> {
  const before = alice.stats();
  for (let i = 0; i < n; i++) await alice.writes.produce(topic, [{ value: RECORD }]);
  const after = alice.stats();
  return { throttled: after.throttled - before.throttled, throttleMs: after.throttleTimeMs - before.throttleTimeMs };
}

const path = `/api/quotas/users/alice/clients/${CLIENT}`;

test("a quota Loupe sets for a SCRAM user and client id throttles that user's producer on the secured broker; DELETE lifts it", async () => {
  // alice may write (the ACL reached the authorizer) before any quota applies.
  await waitFor(async () => (await produce(1)).throttled === 0, { what: "alice allowed to write", timeoutMs: 20_000 });

  const put = await rt.request(path, {
    method: "PUT",
    role: "admin",
    body: JSON.stringify({ producer_byte_rate: String(RATE), consumer_byte_rate: "", request_percentage: "" }),
  });
  expect(put.status).toBe(200);
  expect(await put.json()).toMatchObject({ entityType: "USERCLIENT", entityName: "alice", child: CLIENT });
  const listed = (await (await rt.request("/api/quotas", { role: "read" })).json()) as QuotaEntry[];
  expect(listed.find((e) => e.url === path)?.properties).toEqual({ producer_byte_rate: String(RATE) });
  const effective = (await (
    await rt.request(`/api/quotas/effective?user=alice&clientId=${CLIENT}`, { role: "read" })
  ).json()) as EffectiveQuota;
  expect(effective.quotas.find((q) => q.property === "producer_byte_rate")).toMatchObject({
    value: String(RATE),
    source: { precedence: 1, url: path },
  });

  // The broker lets ten seconds' worth through its window before it holds the client back.
  const held = await produce((10 * RATE) / RECORD.length + 3);
  console.log(`[quota] alice on the secured broker: ${held.throttled} ProduceResponses throttled, ${held.throttleMs} ms in all`);
  expect(held.throttled).toBeGreaterThan(0);
  expect(held.throttleMs).toBeGreaterThan(0);

  const del = await rt.request(path, { method: "DELETE", role: "admin", body: JSON.stringify([]) });
  expect(del.status).toBe(200);
  await waitFor(async () => (await produce(5)).throttled === 0, { what: "alice's producer unthrottled", timeoutMs: 30_000 });
}, 90_000);
