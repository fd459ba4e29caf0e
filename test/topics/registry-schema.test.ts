/**
 * A topic's single answer (GET /api/topics/{t}) says what the schema registry knows of it, as the
 * JDBC table listing does: the latest Avro schema of `<topic>-value` (and `<topic>-key`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { registryEnv } from "../cluster/cluster.ts";
import { registerSchema } from "../helpers/registry.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { createReadyTopic } from "../helpers/topics.ts";

let rt: TestRuntime;
const created: string[] = [];

const orderSchema = {
  type: "record",
  name: "Order",
  namespace: "loupe.topics",
  fields: [
    { name: "id", type: "string" },
    { name: "amount", type: "double" },
  ],
};

beforeAll(async () => {
  rt = await testRuntime({ schemaRegistry: registryEnv() });
});
afterAll(async () => {
  await rt.dispose({ topics: created });
});

type TopicAnswer = { keyType: string; valueType: string; keySchema: string | null; valueSchema: string | null; inferred: boolean };

async function topicAnswer(topic: string): Promise<TopicAnswer> {
  const res = await rt.request(`/api/topics/${topic}`, { role: "read" });
  expect(res.status).toBe(200);
  return (await res.json()) as TopicAnswer;
}

describe("GET /api/topics/{t} with a registry subject", () => {
  test("24: the single-topic answer of a topic with a registry value subject carries its valueSchema, as the JDBC listing does", async () => {
    const topic = await createReadyTopic(rt.kafka.default(), { prefix: "registry-schema", track: created });
    await registerSchema(`${topic}-value`, orderSchema);

    const answer = await topicAnswer(topic);
    expect(answer.valueType).toBe("AVRO");
    expect(answer.valueSchema).not.toBeNull();
    expect(JSON.parse(answer.valueSchema!)).toEqual(orderSchema);
    // No key subject: nothing is made up for the key.
    expect(answer.keySchema).toBeNull();

    const tables = (await (await rt.request("/api/jdbc/metadata/table", { role: "read" })).json()) as Array<{
      name: string;
      valueSchema?: string;
    }>;
    expect(answer.valueSchema).toBe(tables.find((t) => t.name === topic)!.valueSchema!);
  });

  test("stored types stay; a stored AVRO value without a schema gets the subject's, a stored JSON value none", async () => {
    const avroTopic = await createReadyTopic(rt.kafka.default(), { prefix: "registry-schema-avro", track: created });
    const jsonTopic = await createReadyTopic(rt.kafka.default(), { prefix: "registry-schema-json", track: created });
    for (const [topic, valueType] of [
      [avroTopic, "AVRO"],
      [jsonTopic, "JSON"],
    ] as const) {
      await registerSchema(`${topic}-value`, orderSchema);
      const res = await rt.request(`/api/metadata/topics/${topic}?keyType=STRING&valueType=${valueType}`, {
        method: "POST",
        role: "write",
      });
      expect(res.status).toBe(200);
    }
    const avroAnswer = await topicAnswer(avroTopic);
    expect(avroAnswer).toMatchObject({ keyType: "STRING", valueType: "AVRO", keySchema: null, inferred: false });
    expect(JSON.parse(avroAnswer.valueSchema!)).toEqual(orderSchema);
    expect(await topicAnswer(jsonTopic)).toMatchObject({ keyType: "STRING", valueType: "JSON", keySchema: null, valueSchema: null });
  });

  test("a registry that cannot be reached leaves the answer as it was, without schemas", async () => {
    const dead = await testRuntime({ schemaRegistry: { urls: ["http://127.0.0.1:9"] } });
    try {
      const topic = await createReadyTopic(dead.kafka.default(), { prefix: "registry-schema-dead", track: created });
      const res = await dead.request(`/api/topics/${topic}`, { role: "read" });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ keyType: "BYTES", valueType: "BYTES", keySchema: null, valueSchema: null, inferred: true });
    } finally {
      await dead.dispose();
    }
  });

  test("a registry that accepts and never answers delays the page a few seconds, not its whole timeout", async () => {
    // A real socket that takes the connection and says nothing.
    const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const slow = await testRuntime({ schemaRegistry: { urls: [`http://127.0.0.1:${silent.port}`], timeout: 30_000 } });
    try {
      const topic = await createReadyTopic(slow.kafka.default(), { prefix: "registry-schema-silent", track: created });
      const started = performance.now();
      const res = await slow.request(`/api/topics/${topic}`, { role: "read" });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ keySchema: null, valueSchema: null });
      expect(performance.now() - started).toBeLessThan(10_000);
    } finally {
      await slow.dispose();
      silent.stop(true);
    }
  });
});
