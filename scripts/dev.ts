/**
 * `npm run dev`: the development cluster (real Kafka and schema registry), demo topics
 * with a few thousand realistic JSON records and a trickle of new ones (so lag and
 * rates move), a consumer group that lags behind, and Loupe against it all.
 * Ctrl-C stops Loupe and the producer; the cluster keeps running for the next start
 * (`bun test/cluster/cli.ts down` stops it).
 */
import { join } from "node:path";
import { createKafkaPool } from "../src/kafka/index.ts";

const root = join(import.meta.dir, "..");
const port = Number(process.env.LOUPE_PORT ?? 9991);

async function clusterUp(): Promise<Record<string, string>> {
  const proc = Bun.spawn([process.execPath, join(root, "test/cluster/cli.ts"), "up"], {
    cwd: root,
    stdout: "pipe",
    stderr: "inherit",
  });
  const out = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error("the development cluster did not start (see above)");
  const env: Record<string, string> = {};
  for (const line of out.split("\n")) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (m) env[m[1]!] = m[2]!;
  }
  if (!env.KAFKA_BOOTSTRAP) throw new Error(`no KAFKA_BOOTSTRAP from the cluster tool: ${out}`);
  return env;
}

const CITIES = ["Lisbon", "Oslo", "Austin", "Osaka", "Lagos", "Lima", "Pune", "Perth", "Quebec", "Tallinn"];
const PRODUCTS = ["keyboard", "monitor", "headset", "webcam", "dock", "mouse", "laptop stand", "usb hub"];
const STATUSES = ["CREATED", "PAID", "SHIPPED", "DELIVERED", "CANCELLED"];
const pick = <T>(xs: T[], i: number) => xs[i % xs.length]!;

function order(i: number) {
  const qty = 1 + (i % 4);
  return {
    orderId: `ord-${100000 + i}`,
    customerId: `cust-${(i * 7919) % 500}`,
    status: pick(STATUSES, i * 3),
    items: [{ sku: `sku-${(i * 31) % 97}`, product: pick(PRODUCTS, i), quantity: qty, unitPrice: 9.99 + (i % 50) }],
    total: Math.round(qty * (9.99 + (i % 50)) * 100) / 100,
    currency: "EUR",
    shipping: { city: pick(CITIES, i), express: i % 5 === 0 },
    createdAt: new Date(Date.now() - (5000 - (i % 5000)) * 1000).toISOString(),
  };
}

function payment(i: number) {
  return {
    paymentId: `pay-${200000 + i}`,
    orderId: `ord-${100000 + i}`,
    amount: Math.round((10 + (i % 200) * 1.37) * 100) / 100,
    method: pick(["card", "sepa", "paypal", "voucher"], i),
    approved: i % 17 !== 0,
  };
}

function customer(i: number) {
  return {
    id: `cust-${i}`,
    name: `Customer ${i}`,
    email: `customer${i}@example.com`,
    tier: pick(["bronze", "silver", "gold"], i),
    city: pick(CITIES, i * 3),
  };
}

function click(i: number) {
  return { sessionId: `s-${i % 300}`, page: pick(["/", "/cart", "/checkout", "/product/42", "/search"], i), ms: 20 + (i % 900) };
}

const DEMO = [
  { name: "orders", partitions: 3, count: 3000, make: order, key: (i: number) => `ord-${100000 + i}` },
  { name: "payments", partitions: 3, count: 2500, make: payment, key: (i: number) => `pay-${200000 + i}` },
  {
    name: "customers",
    partitions: 1,
    count: 500,
    make: customer,
    key: (i: number) => `cust-${i}`,
    configs: { "cleanup.policy": "compact" },
  },
  { name: "clickstream", partitions: 6, count: 4000, make: click, key: () => null },
] as const;

async function seed(bootstrap: string) {
  const pool = createKafkaPool([{ name: "dev", bootstrapServers: [bootstrap], clientId: "loupe-dev-seed", default: true }]);
  const kafka = pool.default();
  const existing = new Set((await kafka.topics.list()).map((t) => t.name));
  for (const t of DEMO) {
    if (existing.has(t.name)) continue;
    await kafka.topics.create({ name: t.name, partitions: t.partitions, ...("configs" in t ? { configs: t.configs } : {}) });
    for (let start = 0; start < t.count; start += 500) {
      const batch = [];
      for (let i = start; i < Math.min(t.count, start + 500); i++) batch.push({ key: t.key(i), value: JSON.stringify(t.make(i)) });
      await kafka.writes.produce(t.name, batch);
    }
    console.error(`created topic ${t.name} with ${t.count} records`);
  }
  // A consumer group that has read part of `orders`, so lag shows up.
  const offsets = await kafka.offsets.bounds(["orders"]);
  await kafka.groups
    .alterOffsets(
      "billing-service",
      offsets.map((o) => ({ topic: o.topic, partition: o.partition, offset: Math.max(o.earliest, o.latest - 150) })),
    )
    .catch(() => {});
  return pool;
}

async function main() {
  const env = await clusterUp();
  const pool = await seed(env.KAFKA_BOOTSTRAP!);
  const kafka = pool.default();
  let n = 100_000;
  const trickle = setInterval(() => {
    const i = n++;
    void kafka.writes
      .produce("orders", [{ key: `ord-${100000 + i}`, value: JSON.stringify(order(i)) }])
      .then(() => kafka.writes.produce("clickstream", [{ value: JSON.stringify(click(i)) }, { value: JSON.stringify(click(i + 1)) }]))
      .catch((e) => console.error(`trickle: ${(e as Error).message}`));
  }, 500);

  if (env.CONNECT_URL) await demoConnector(env.CONNECT_URL.split(",")[0]!, env.KAFKA_BOOTSTRAP!);

  const loupe = Bun.spawn([process.execPath, join(root, "src/main.ts"), "serve"], {
    cwd: root,
    env: {
      ...process.env,
      LOUPE_PORT: String(port),
      LOUPE_DATA_DIR: process.env.LOUPE_DATA_DIR ?? join(root, ".loupe-dev"),
      LOUPE_KAFKA_BOOTSTRAP: env.KAFKA_BOOTSTRAP,
      // Both registry hosts, comma-separated: Loupe tries them in turn.
      ...(env.SCHEMA_REGISTRY_URL ? { LOUPE_SCHEMA_REGISTRY_URL: env.SCHEMA_REGISTRY_URL } : {}),
      // Their storage topics, and Connect's: internal (an admin's only).
      ...(env.SCHEMA_REGISTRY_TOPICS ? { LOUPE_SCHEMA_REGISTRY_TOPICS: env.SCHEMA_REGISTRY_TOPICS } : {}),
      ...(env.CONNECT_TOPICS ? { LOUPE_CONNECT_TOPICS: `dev=${env.CONNECT_TOPICS}` } : {}),
      // The Connect cluster's two workers, under the alias `dev`.
      ...(env.CONNECT_URL ? { LOUPE_CONNECT_URLS: `dev=${env.CONNECT_URL}` } : {}),
      LOUPE_ADMIN_PASSWORD: process.env.LOUPE_ADMIN_PASSWORD ?? "admin",
    },
    stdout: "inherit",
    stderr: "inherit",
  });

  const url = `http://127.0.0.1:${port}/`;
  for (let i = 0; i < 100; i++) {
    const ok = await fetch(`${url}api/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (loupe.exitCode !== null) process.exit(loupe.exitCode);
    await Bun.sleep(100);
  }
  console.error(
    `\nLoupe is running at ${url}\nLogin: admin / admin\nKafka: ${env.KAFKA_BOOTSTRAP}\nCtrl-C stops Loupe; 'npx bun test/cluster/cli.ts down' stops the cluster.\n`,
  );

  const stop = async () => {
    clearInterval(trickle);
    loupe.kill("SIGTERM");
    await loupe.exited;
    await pool.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop());
  process.on("SIGTERM", () => void stop());
  const code = await loupe.exited;
  clearInterval(trickle);
  await pool.close();
  process.exit(code);
}

await main();

/**
 * A running connector to look at on the Connect page: MirrorMaker's heartbeat source, writing
 * to a topic of the dev broker. Created (or left as it is) at the worker; a failure is said, not fatal.
 */
async function demoConnector(worker: string, bootstrap: string): Promise<void> {
  const config = {
    "connector.class": "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
    "source.cluster.alias": "dev",
    "target.cluster.alias": "demo",
    "source.cluster.bootstrap.servers": bootstrap,
    "target.cluster.bootstrap.servers": bootstrap,
    "heartbeats.topic.replication.factor": "1",
    "tasks.max": "1",
  };
  for (let attempt = 0; attempt < 20; attempt++) {
    const res = await fetch(`${worker}/connectors/demo-heartbeats/config`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(config),
      signal: AbortSignal.timeout(30_000),
    }).catch((e: Error) => ({ ok: false, status: 0, text: async () => e.message }));
    if (res.ok) return;
    // 409 while the workers rebalance: ask again.
    if (res.status !== 409) {
      console.error(`demo connector: ${res.status} ${await res.text()}`);
      return;
    }
    await Bun.sleep(1000);
  }
}
