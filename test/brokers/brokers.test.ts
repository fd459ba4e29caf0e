import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { BrokerConfigView, BrokerView } from "../../src/domains/brokers/schemas.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { waitFor } from "../helpers/wait.ts";
import { describeBrokerConfigs } from "../kafka/test-only.ts";

/**
 * GET /api/brokers and a broker's configs against the shared broker (node 1, broker and
 * controller, on rack-1). The config changed here, log.cleaner.backoff.ms, is one no other test
 * touches; it is set a millisecond off its default and removed again.
 */
let rt: TestRuntime;
const KEY = "log.cleaner.backoff.ms";

beforeAll(async () => {
  rt = await testRuntime();
});
afterAll(async () => {
  const kafka = rt.kafka.default();
  await kafka.configs.alterBroker(1, [{ key: KEY, value: null }]).catch(() => {});
  await kafka.configs.alterBroker(null, [{ key: KEY, value: null }]).catch(() => {});
  await rt.dispose();
});

async function configs(role: "admin" | "nodata" = "nodata"): Promise<BrokerConfigView[]> {
  const res = await rt.request("/api/brokers/1/configs", { role });
  expect(res.status).toBe(200);
  return (await res.json()) as BrokerConfigView[];
}
const send = (method: string, path: string, body: unknown) =>
  rt.request(path, { method, role: "admin", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("GET /api/brokers", () => {
  test("each broker with its address, rack, whether it is the active controller, and its log dirs with their sizes", async () => {
    const res = await rt.request("/api/brokers", { role: "nodata" });
    expect(res.status).toBe(200);
    const brokers = (await res.json()) as BrokerView[];
    expect(brokers).toHaveLength(1);
    const [b] = brokers;
    expect(b).toMatchObject({ id: 1, host: "127.0.0.1", port: Number(process.env.KAFKA_BOOTSTRAP!.split(":")[1]), rack: "rack-1" });
    // Node 1 is the quorum's leader: the active controller.
    expect(b!.isController).toBe(true);
    expect(b!.logDirsError).toBeNull();
    expect(b!.logDirs).toHaveLength(1);
    const dir = b!.logDirs![0]!;
    expect(dir.error).toBeNull();
    expect(dir.path).toEndWith("/kafka/data");
    expect(dir.partitions).toBeGreaterThan(0);
    expect(dir.bytes).toBeGreaterThan(0);
    expect(dir.totalBytes!).toBeGreaterThan(dir.usableBytes!);
    expect(dir.usableBytes!).toBeGreaterThan(0);
    // One broker, one copy of everything: the dir holds what the topics add up to (others write meanwhile).
    const topics = [...(await rt.kafka.default().logDirs.topicSizes()).values()].reduce((a, n) => a + n, 0);
    expect(Math.abs(dir.bytes - topics) / topics).toBeLessThan(0.5);
  });
});

describe("GET /api/brokers/{brokerId}/configs", () => {
  test("every config with its source, whether it is dynamic, and each level's value; secrets without one", async () => {
    const list = await configs();
    const raw = await describeBrokerConfigs(rt.kafka.default(), 1);
    expect(list.map((c) => c.name)).toEqual(raw.map((c) => c.name).sort());
    const byName = new Map(list.map((c) => [c.name, c]));
    // A static one: set in the test broker's server.properties, fixed while it runs.
    expect(byName.get("broker.rack")).toMatchObject({
      value: "rack-1",
      source: "STATIC_BROKER_CONFIG",
      staticValue: "rack-1",
      dynamic: false,
    });
    // A dynamic one left at Kafka's default.
    expect(byName.get(KEY)).toMatchObject({ dynamic: true, type: "LONG", documentation: expect.any(String) });
    for (const c of list.filter((x) => x.sensitive))
      expect([c.value, c.staticValue, c.brokerValue, c.defaultValue]).toEqual([null, null, null, null]);
  });

  test("a dynamic config changed through Loupe, on the broker and as the cluster default, is what DescribeConfigs returns", async () => {
    const before = (await configs()).find((c) => c.name === KEY)!;
    const base = Number(before.defaultValue);
    expect((await send("PUT", "/api/configs/brokers", { [KEY]: String(base + 2) })).status).toBe(200);
    const asDefault = await waitFor(
      async () => {
        const c = (await configs()).find((x) => x.name === KEY)!;
        // The broker applies a dynamic change a moment after it lists it among the synonyms.
        return c.clusterDefault === String(base + 2) && c.value === String(base + 2) ? c : false;
      },
      { what: "the cluster default listed and in force" },
    );
    expect(asDefault).toMatchObject({ value: String(base + 2), source: "DYNAMIC_DEFAULT_BROKER_CONFIG", brokerValue: null });

    expect((await send("PUT", "/api/configs/brokers/1", { [KEY]: String(base + 1) })).status).toBe(200);
    const own = await waitFor(
      async () => {
        const c = (await configs()).find((x) => x.name === KEY)!;
        return c.brokerValue === String(base + 1) && c.value === String(base + 1) ? c : false;
      },
      { what: "the broker's own value listed and in force" },
    );
    // The broker's own value wins over the cluster default, which stays listed beneath it.
    expect(own).toMatchObject({
      value: String(base + 1),
      source: "DYNAMIC_BROKER_CONFIG",
      clusterDefault: String(base + 2),
      defaultValue: String(base),
    });
    const described = (await describeBrokerConfigs(rt.kafka.default(), 1)).find((c) => c.name === KEY)!;
    expect({ value: described.value, source: described.source }).toEqual({ value: String(base + 1), source: "DYNAMIC_BROKER_CONFIG" });

    expect((await send("DELETE", "/api/configs/brokers/1", [KEY])).status).toBe(200);
    expect((await send("DELETE", "/api/configs/brokers", [KEY])).status).toBe(200);
    await waitFor(async () => (await configs()).find((x) => x.name === KEY)!.source === "DEFAULT_CONFIG", {
      what: "back to Kafka's default",
    });
  });

  test("an unknown broker is 404, a broker id that is no number 400", async () => {
    const missing = await rt.request("/api/brokers/4242/configs", { role: "nodata" });
    expect(missing.status).toBe(404);
    expect((await errorOf(missing)).code).toBe("NOT_FOUND");
    const bad = await rt.request("/api/brokers/one/configs", { role: "nodata" });
    expect(bad.status).toBe(400);
    expect((await errorOf(bad)).message).toContain("brokerId must be a non-negative integer");
  });
});
