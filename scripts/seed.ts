/**
 * The demo data of `npm run dev`, as a function its test calls too: what every page and every
 * example of the UI needs to show something.
 *
 * - `orders` (JSON, 3 partitions, keyed by orderId; a few without a city) and `customers` (JSON,
 *   compacted, keyed by id), their value types stored in Loupe and a JSON Schema registered for
 *   `orders-value`; `payments` in Avro, its schema registered as `payments-value`;
 *   `clickstream` (JSON, no keys, 6 partitions); `access-log`, written by a connector.
 *   Records carry timestamps spread over the last hour, so windows close at once.
 * - A trickle of new orders, payments and clicks every half second (lag and rates move).
 * - `shipping-service`: two live members reading orders; `billing-service`: no member, 150
 *   records behind on each partition of orders.
 * - A running processor made from the UI's "Table of totals per city" example.
 * - A Connect FileStreamSource connector, `access-log`, writing the lines of a file.
 *
 * Every name takes `prefix` (tests use a unique one; `npm run dev` none). Seeding again is
 * harmless: what exists is left as it is.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import avro from "avsc";
import type { KafkaCluster } from "../src/kafka/index.ts";
import { joinGroup } from "../test/kafka/group-member.ts";
import { EXAMPLES } from "../ui/pages/processor-examples.ts";

export interface SeedOptions {
  kafka: KafkaCluster;
  /** Loupe's API as an admin (topic metadata, the processor): Loupe runs already. */
  api(path: string, init?: RequestInit): Promise<Response>;
  /** Every host of the schema registry; none: no Avro topic and no subjects. */
  registryUrls: string[];
  /** A Connect worker and the alias Loupe knows its cluster by; absent: no connector. */
  connect?: { url: string; alias: string };
  /** Where the connector's input file is written (a directory the workers can read). */
  workDir: string;
  /** Put before every topic, group, subject, processor and connector name. */
  prefix?: string;
  /** Progress, one line per step. */
  log?(line: string): void;
}

export interface Seeded {
  topics: { orders: string; customers: string; payments: string | null; clickstream: string; accessLog: string | null };
  subjects: string[];
  groups: { live: string; lagging: string };
  processor: { id: string; name: string; target: string };
  connector: string | null;
  /** Stops the trickle and the live group's members. */
  stop(): Promise<void>;
}

const CITIES = ["Lisbon", "Oslo", "Austin", "Osaka", "Lagos", "Lima", "Pune", "Perth", "Quebec", "Tallinn"];
const PRODUCTS = ["keyboard", "monitor", "headset", "webcam", "dock", "mouse", "laptop stand", "usb hub"];
const STATUSES = ["created", "paid", "shipped", "delivered", "paid", "cancelled"];
const METHODS = ["card", "sepa", "paypal", "voucher"];
const pick = <T>(xs: readonly T[], i: number) => xs[i % xs.length]!;

/** An order: the fields the UI's examples read (orderId, customer, city, amount, status), and more. */
export function order(i: number) {
  const qty = 1 + (i % 4);
  const unitPrice = 9.99 + (i % 50);
  return {
    orderId: `ord-${100000 + i}`,
    customer: `cust-${(i * 7919) % 500}`,
    // One order in 29 has no city: the examples' tables must key it all the same.
    ...(i % 29 === 7 ? {} : { city: pick(CITIES, i) }),
    amount: Math.round(qty * unitPrice * 100) / 100,
    currency: "EUR",
    status: pick(STATUSES, i),
    items: [{ sku: `sku-${(i * 31) % 97}`, product: pick(PRODUCTS, i), quantity: qty, unitPrice }],
    express: i % 5 === 0,
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

function payment(i: number) {
  return {
    paymentId: `pay-${200000 + i}`,
    orderId: `ord-${100000 + i}`,
    amount: Math.round((10 + (i % 200) * 1.37) * 100) / 100,
    method: pick(METHODS, i),
    approved: i % 17 !== 0,
  };
}

function click(i: number) {
  return { sessionId: `s-${i % 300}`, page: pick(["/", "/cart", "/checkout", "/product/42", "/search"], i), ms: 20 + (i % 900) };
}

const PAYMENT_SCHEMA = {
  type: "record",
  name: "Payment",
  namespace: "demo",
  fields: [
    { name: "paymentId", type: "string" },
    { name: "orderId", type: "string" },
    { name: "amount", type: "double" },
    { name: "method", type: "string" },
    { name: "approved", type: "boolean" },
  ],
};

const ORDER_SCHEMA = {
  $schema: "http://json-schema.org/draft-07/schema#",
  title: "Order",
  type: "object",
  required: ["orderId", "customer", "amount", "status"],
  properties: {
    orderId: { type: "string" },
    customer: { type: "string" },
    city: { type: "string" },
    amount: { type: "number" },
    currency: { type: "string" },
    status: { type: "string", enum: [...new Set(STATUSES)] },
    items: { type: "array", items: { type: "object" } },
    express: { type: "boolean" },
  },
};

const quoteName = (name: string) => `\`${name.replaceAll("`", "``")}\``;

/**
 * A UI example with its topics renamed: `orders` read as `<prefix>orders`, the target written
 * as `<prefix><target>`. Without a prefix the example is left as written.
 */
export function fitExample(sql: string, prefix: string): { sql: string; source: string; target: string } {
  const from = /\bFROM\s+(`[^`]+`|[A-Za-z_][A-Za-z0-9_.-]*)/i.exec(sql);
  const into = /\bINSERT\s+INTO\s+(`[^`]+`|[A-Za-z_][A-Za-z0-9_.-]*)/i.exec(sql);
  if (!from || !into) throw new Error(`not a program of the form INSERT INTO t ... FROM s: ${sql}`);
  const bare = (n: string) => (n.startsWith("`") ? n.slice(1, -1).replaceAll("``", "`") : n);
  const source = `${prefix}${bare(from[1]!)}`;
  const target = `${prefix}${bare(into[1]!)}`;
  if (prefix === "") return { sql, source, target };
  const renamed = sql
    .replace(into[0], `${into[0].slice(0, into[0].length - into[1]!.length)}${quoteName(target)}`)
    .replace(from[0], `${from[0].slice(0, from[0].length - from[1]!.length)}${quoteName(source)}`);
  return { sql: renamed, source, target };
}

const JSON_HEADERS = { "content-type": "application/vnd.schemaregistry.v1+json" };

/** Registers the schema on the first host; answers its id once every host serves it. */
async function register(urls: string[], subject: string, schema: object, schemaType?: "JSON"): Promise<number> {
  const [first, ...others] = urls;
  const path = `/subjects/${encodeURIComponent(subject)}`;
  const body = JSON.stringify({ schema: JSON.stringify(schema), ...(schemaType ? { schemaType } : {}) });
  const res = await fetch(`${first}${path}/versions`, { method: "POST", headers: JSON_HEADERS, body });
  if (!res.ok) throw new Error(`registering ${subject}: ${res.status} ${await res.text()}`);
  const { id } = (await res.json()) as { id: number };
  // The hosts share a store through a journal: each serves the schema a moment later.
  for (const url of others) {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const found = await fetch(`${url}${path}`, { method: "POST", headers: JSON_HEADERS, body }).catch(() => null);
      if (found?.ok && ((await found.json()) as { id: number }).id === id) break;
      if (Date.now() > deadline) throw new Error(`registering ${subject}: ${url} does not serve it after 30 s`);
      await Bun.sleep(100);
    }
  }
  return id;
}

/** Magic byte 0, the schema id (big-endian int32), then the Avro binary: the registry's wire format. */
function wire(id: number, bytes: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeInt32BE(id, 1);
  return Buffer.concat([head, bytes]);
}

export async function seedDemo(o: SeedOptions): Promise<Seeded> {
  const prefix = o.prefix ?? "";
  const log = o.log ?? (() => {});
  const k = o.kafka;
  const names = {
    orders: `${prefix}orders`,
    customers: `${prefix}customers`,
    payments: o.registryUrls.length > 0 ? `${prefix}payments` : null,
    clickstream: `${prefix}clickstream`,
    accessLog: o.connect ? `${prefix}access-log` : null,
  };
  const existing = new Set((await k.topics.list({ includeInternal: true })).map((t) => t.name));
  const now = Date.now();

  /** Creates the topic with `count` records (timestamps over the last hour) unless it exists. */
  const topic = async (
    name: string,
    partitions: number,
    count: number,
    record: (i: number) => { key: string | null; value: string | Uint8Array },
    configs?: Record<string, string>,
  ) => {
    if (existing.has(name)) {
      log(`topic ${name}: there already`);
      return;
    }
    await k.topics.create({ name, partitions, ...(configs ? { configs } : {}) });
    for (let start = 0; start < count; start += 500) {
      const batch = [];
      for (let i = start; i < Math.min(count, start + 500); i++) {
        batch.push({ ...record(i), timestamp: now - Math.round(((count - i) * 3_600_000) / count) });
      }
      await k.writes.produce(name, batch);
    }
    log(`topic ${name}: ${count.toLocaleString("en-US")} records`);
  };
  /** Stores the topic's key and value types in Loupe, as its Metadata tab does. */
  const types = async (name: string, keyType: string, valueType: string) => {
    const res = await o.api(`/api/metadata/topics/${encodeURIComponent(name)}?keyType=${keyType}&valueType=${valueType}`, {
      method: "POST",
    });
    if (!res.ok) throw new Error(`storing the types of ${name}: ${res.status} ${await res.text()}`);
  };

  await topic(names.orders, 3, 3000, (i) => ({ key: `ord-${100000 + i}`, value: JSON.stringify(order(i)) }));
  await topic(names.customers, 1, 500, (i) => ({ key: `cust-${i}`, value: JSON.stringify(customer(i)) }), {
    "cleanup.policy": "compact",
  });
  await topic(names.clickstream, 6, 4000, (i) => ({ key: null, value: JSON.stringify(click(i)) }));
  await types(names.orders, "STRING", "JSON");
  await types(names.customers, "STRING", "JSON");
  await types(names.clickstream, "STRING", "JSON");

  const subjects: string[] = [];
  let paymentValue: ((i: number) => Buffer) | null = null;
  if (names.payments) {
    const ordersSubject = `${names.orders}-value`;
    await register(o.registryUrls, ordersSubject, ORDER_SCHEMA, "JSON");
    subjects.push(ordersSubject);
    const paymentsSubject = `${names.payments}-value`;
    const id = await register(o.registryUrls, paymentsSubject, PAYMENT_SCHEMA);
    subjects.push(paymentsSubject);
    log(`schemas: ${ordersSubject} (JSON Schema), ${paymentsSubject} (Avro, id ${id})`);
    const type = avro.Type.forSchema(PAYMENT_SCHEMA as avro.Schema);
    paymentValue = (i) => wire(id, type.toBuffer(payment(i)));
    const encode = paymentValue;
    await topic(names.payments, 3, 2500, (i) => ({ key: `pay-${200000 + i}`, value: encode(i) }));
    await types(names.payments, "STRING", "AVRO");
  }

  // A group 150 records behind on each partition of orders, without members (its offsets are
  // set as an operator would reset them).
  const lagging = `${prefix}billing-service`;
  const bounds = await k.offsets.bounds([names.orders]);
  await k.groups
    .alterOffsets(
      lagging,
      bounds.map((b) => ({ topic: b.topic, partition: b.partition, offset: Math.max(b.earliest, b.latest - 150) })),
    )
    .catch((err: unknown) => log(`group ${lagging}: offsets left as they are (${err instanceof Error ? err.message : String(err)})`));
  log(`group ${lagging}: 150 records behind on each partition of ${names.orders}`);

  // A group with two live members, reading orders as they come and committing.
  const live = `${prefix}shipping-service`;
  const members = [1, 2].map((n) => joinGroup(k, { groupId: live, topics: [names.orders], clientId: `shipping-${n}`, from: "earliest" }));
  const reading = members.map(async (m) => {
    try {
      for await (const r of m.records()) await r.commit();
    } catch {
      // Closed (stop), or the broker went away: the member is gone either way.
    }
  });
  log(`group ${live}: two live members reading ${names.orders}`);

  // The processor: the UI's "Table of totals per city", as the example writes it.
  const example = EXAMPLES.find((x) => x.label === "Table of totals per city");
  if (!example) throw new Error("the UI has no example 'Table of totals per city'");
  const fitted = fitExample(example.sql, prefix);
  const name = `${prefix}totals-by-city`;
  const created = await o.api("/api/streams", {
    method: "POST",
    headers: { accept: "application/json", "content-type": "application/json" },
    body: JSON.stringify({ name, sql: fitted.sql, runners: 1 }),
  });
  let processorId: string;
  if (created.status === 409) {
    const list = await o.api("/api/streams", { headers: { accept: "application/json" } });
    const found = ((await list.json()) as { streams: Array<{ id: string; name: string }> }).streams.find((p) => p.name === name);
    if (!found) throw new Error(`processor ${name}: 409 at creation, and not in the list`);
    processorId = found.id;
    log(`processor ${name}: there already`);
  } else if (created.ok) {
    processorId = ((await created.json()) as { id: string }).id;
    log(`processor ${name}: ${fitted.source} -> ${fitted.target}`);
  } else {
    throw new Error(`processor ${name}: ${created.status} ${await created.text()}`);
  }

  // The connector: the lines of a file, written to access-log.
  let connector: string | null = null;
  if (o.connect && names.accessLog) {
    mkdirSync(o.workDir, { recursive: true });
    const file = join(o.workDir, `${prefix}access.log`);
    const lines = Array.from(
      { length: 200 },
      (_, i) => `127.0.0.${1 + (i % 9)} - - "GET ${pick(["/", "/cart", "/checkout", "/search"], i)} HTTP/1.1" ${i % 23 === 0 ? 500 : 200}`,
    );
    writeFileSync(file, `${lines.join("\n")}\n`);
    // Made here: the broker creates no topic on a first write.
    if (!existing.has(names.accessLog)) await k.topics.create({ name: names.accessLog, partitions: 1 });
    connector = `${prefix}access-log`;
    await putConnector(o.connect.url, connector, {
      "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
      file,
      topic: names.accessLog,
      "value.converter": "org.apache.kafka.connect.storage.StringConverter",
      "key.converter": "org.apache.kafka.connect.storage.StringConverter",
      "tasks.max": "1",
    });
    log(`connector ${connector} (${o.connect.alias}): ${file} -> ${names.accessLog}`);
  }

  // The trickle: an order, a payment and two clicks every half second.
  let n = 100_000 + Math.floor((now / 500) % 100_000);
  let stopped = false;
  let inFlight: Promise<unknown> = Promise.resolve();
  const trickle = setInterval(() => {
    if (stopped) return;
    const i = n++;
    inFlight = Promise.all([
      k.writes.produce(names.orders, [{ key: `ord-${100000 + i}`, value: JSON.stringify(order(i)) }]),
      paymentValue && names.payments ? k.writes.produce(names.payments, [{ key: `pay-${200000 + i}`, value: paymentValue(i) }]) : null,
      k.writes.produce(names.clickstream, [{ value: JSON.stringify(click(i)) }, { value: JSON.stringify(click(i + 1)) }]),
    ]).catch((err: unknown) => log(`trickle: ${err instanceof Error ? err.message : String(err)}`));
  }, 500);
  log("trickle: an order, a payment and two clicks every 0.5 s");

  return {
    topics: names,
    subjects,
    groups: { live, lagging },
    processor: { id: processorId, name, target: fitted.target },
    connector,
    async stop() {
      stopped = true;
      clearInterval(trickle);
      await inFlight;
      await Promise.all(members.map((m) => m.close().catch(() => {})));
      await Promise.all(reading);
    },
  };
}

/** Creates or updates a connector at the worker (PUT is both), asking again while the workers rebalance. */
async function putConnector(worker: string, name: string, config: Record<string, string>): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await fetch(`${worker}/connectors/${encodeURIComponent(name)}/config`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(config),
      signal: AbortSignal.timeout(30_000),
    }).catch((e: Error) => ({ ok: false, status: 0, text: async () => e.message }));
    if (res.ok) return;
    const text = await res.text();
    // 409 while the workers rebalance: ask again.
    if (res.status !== 409 || Date.now() > deadline) throw new Error(`connector ${name}: ${res.status} ${text}`);
    await Bun.sleep(500);
  }
}
