import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { SERIES } from "../../src/domains/alerts/broker-metrics.ts";
import { isAlive, kafkaApiVersionsProbe, kafkaBootstrap, schemaRegistryUrl, startCluster, uniqueTopic } from "./cluster.ts";

describe("test cluster", () => {
  test("uniqueTopic names are valid Kafka topic names and never repeat", () => {
    const names = new Set(Array.from({ length: 1000 }, () => uniqueTopic("a b/c")));
    expect(names.size).toBe(1000);
    for (const n of names) expect(n).toMatch(/^a-b-c-[a-z0-9]+-[0-9a-f]{8}$/);
  });

  test("the broker of this run answers a real request", async () => {
    const [host, port] = kafkaBootstrap().split(":");
    expect(await kafkaApiVersionsProbe(host!, Number(port))).toBe(true);
  });

  test("the registry speaks the Confluent API", async () => {
    const subject = `${uniqueTopic("subject")}-value`;
    const url = schemaRegistryUrl();
    const headers = { "content-type": "application/vnd.schemaregistry.v1+json" };
    const schema = JSON.stringify({ type: "record", name: "R", fields: [{ name: "a", type: "int" }] });
    const created = await fetch(`${url}/subjects/${subject}/versions`, { method: "POST", headers, body: JSON.stringify({ schema }) });
    expect(created.status).toBe(200);
    const { id } = (await created.json()) as { id: number };
    expect(id).toBeGreaterThan(0);
    const latest = (await (await fetch(`${url}/subjects/${subject}/versions/latest`)).json()) as { version: number; id: number };
    expect([latest.version, latest.id]).toEqual([1, id]);
    expect((await fetch(`${url}/subjects/${subject}`, { method: "DELETE" })).status).toBe(200);
  });

  test("a broker that cannot start fails with its log, and leaves nothing running", async () => {
    let error: unknown;
    try {
      await startCluster({ services: ["kafka"], jvmOpts: ["-XX:+NoSuchJvmOption"] });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message).toContain("Kafka 4.3.1 exited during start-up; log ");
    expect(message).toContain("Unrecognized VM option 'NoSuchJvmOption'");
    const logPath = /log (\S+):/.exec(message)?.[1];
    expect(logPath && existsSync(logPath)).toBe(false);
  }, 20_000);

  test("26: each node's JMX exporter answers with the series of Loupe's rules at KAFKA_METRICS_URLS; stop kills the process group and removes the data", async () => {
    const cluster = await startCluster({ services: ["kafka"], ownerPid: process.pid });
    const [kafka] = cluster.services;
    expect(isAlive(kafka!.pid)).toBe(true);
    const [node, url] = cluster.env.KAFKA_METRICS_URLS!.split("=", 2);
    expect([node, url]).toEqual(["1", `http://127.0.0.1:${kafka!.ports.metrics}/metrics`]);
    const scraped = await (await fetch(url!)).text();
    for (const series of Object.values(SERIES)) expect(scraped).toMatch(new RegExp(`^${series}(\\{|\\s)`, "m"));
    expect(scraped).toContain(`${SERIES.version}{id="1",version="${kafka!.version}"} 1.0`);
    expect(existsSync(kafka!.runDir)).toBe(true);
    await cluster.stop({ graceMs: 3_000 });
    expect(isAlive(kafka!.pid)).toBe(false);
    expect(isAlive(kafka!.watchdogPid!)).toBe(false);
    expect(existsSync(kafka!.runDir)).toBe(false);
  }, 60_000);
});
