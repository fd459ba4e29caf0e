/**
 * The key and value types of the topic list against those of the topic's page. The list reads
 * no records (it must stay fast at thousands of topics): it shows the types stored, else the
 * last guess made from the topic's records (by its page), else says they are not known yet; it
 * never answers BYTES for a topic whose page says otherwise.
 */
import { afterAll, beforeAll, expect, setSystemTime, test } from "bun:test";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { createReadyTopic } from "../helpers/topics.ts";

let rt: TestRuntime;
const topics: string[] = [];

beforeAll(async () => {
  rt = await testRuntime({ lag: { cacheTtl: 0, sampleInterval: 0 } });
});
afterAll(async () => {
  setSystemTime();
  await rt.dispose({ topics });
});

type Types = { keyType: string; valueType: string; inferred: boolean; typesKnown?: boolean };

async function listed(name: string): Promise<Types> {
  const res = await rt.request("/api/topics", { role: "read" });
  expect(res.status).toBe(200);
  const item = ((await res.json()) as Array<Types & { topicName: string }>).find((t) => t.topicName === name);
  if (!item) throw new Error(`${name} not listed`);
  return item;
}

async function page(name: string): Promise<Types> {
  const res = await rt.request(`/api/topics/${name}`, { role: "read" });
  expect(res.status).toBe(200);
  return (await res.json()) as Types;
}

const typesOf = (t: Types) => ({ keyType: t.keyType, valueType: t.valueType, inferred: t.inferred });

test("23: the topic list says what the topic's page says of the types (STRING / JSON inferred), or that they are not known yet; never BYTES / BYTES instead", async () => {
  const kafka = rt.kafka.default();
  const topic = await createReadyTopic(kafka, { prefix: "list-types", partitions: 2, track: topics });
  await kafka.writes.produce(
    topic,
    Array.from({ length: 6 }, (_, i) => ({ partition: i % 2, key: `customer-${i}`, value: JSON.stringify({ id: i, city: "Lyon" }) })),
  );

  // Before anyone opened the topic: no types are stored or guessed, and the list says so.
  const before = await listed(topic);
  expect(before.typesKnown).toBe(false);

  const shown = await page(topic);
  expect(typesOf(shown)).toEqual({ keyType: "STRING", valueType: "JSON", inferred: true });
  expect(typesOf(await listed(topic))).toEqual(typesOf(shown));
  expect((await listed(topic)).typesKnown).toBe(true);

  // Two minutes later (the page's guess is a minute old at most before it reads again), the list
  // still says what the page found, not BYTES.
  setSystemTime(new Date(Date.now() + 120_000));
  try {
    expect(typesOf(await listed(topic))).toEqual({ keyType: "STRING", valueType: "JSON", inferred: true });
  } finally {
    setSystemTime();
  }

  // An empty topic is BYTES on its page and in the list alike, known without reading it.
  const empty = await createReadyTopic(kafka, { prefix: "list-types-empty", track: topics });
  expect(await listed(empty)).toMatchObject({ keyType: "BYTES", valueType: "BYTES", inferred: true, typesKnown: true });
  expect(typesOf(await page(empty))).toEqual({ keyType: "BYTES", valueType: "BYTES", inferred: true });

  // Stored types win in both places.
  const stored = await rt.request(`/api/metadata/topics/${topic}?keyType=STRING&valueType=AVRO`, { method: "POST", role: "write" });
  expect(stored.status).toBeLessThan(300);
  expect(typesOf(await page(topic))).toEqual({ keyType: "STRING", valueType: "AVRO", inferred: false });
  expect(await listed(topic)).toMatchObject({ keyType: "STRING", valueType: "AVRO", inferred: false, typesKnown: true });
}, 60_000);
