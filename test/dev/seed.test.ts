/**
 * The demo data of `npm run dev` (scripts/seed.ts), seeded under a unique prefix into the test
 * cluster through a test Loupe: every page's API has content, and every example of the UI runs
 * on it and writes or returns records.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fitExample, type Seeded, seedDemo } from "../../scripts/seed.ts";
import { EXAMPLES } from "../../ui/pages/processor-examples.ts";
import { connectEnv, registryEnv, uniqueTopic } from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { pollFor } from "../helpers/wait.ts";
import { outputOf, readAll } from "../processors/helpers.ts";
import { stream } from "../sql-exec/helpers.ts";

const ALIAS = "dev";
const prefix = `${uniqueTopic("demo")}-`;
const workDir = mkdtempSync(join(tmpdir(), "loupe-seed-"));
let rt: TestRuntime;
let seeded: Seeded;
const processors: string[] = [];
const targets: string[] = [];

const api = (path: string, init: RequestInit = {}) => rt.request(path, { ...init, role: "admin" });
const getJson = async <T>(path: string): Promise<T> => {
  const res = await api(path, { headers: { accept: "application/json" } });
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
};

beforeAll(async () => {
  rt = await testRuntime({
    schemaRegistry: { urls: registryEnv().urls, allowDelete: true },
    connect: { clusters: [{ alias: ALIAS, ...connectEnv() }], timeout: "20s" },
    lag: { cacheTtl: 0, sampleInterval: 0 },
  });
  seeded = await seedDemo({
    kafka: rt.kafka.default(),
    api,
    registryUrls: registryEnv().urls,
    connect: { url: connectEnv().urls[0]!, alias: ALIAS },
    workDir,
    prefix,
  });
}, 120_000);

afterAll(async () => {
  await seeded?.stop();
  for (const id of [...processors, seeded?.processor.id].filter(Boolean)) {
    await api(`/api/streams/${id}?deleteChangelog=true`, { method: "DELETE" }).catch(() => {});
  }
  if (seeded?.connector) {
    for (const url of connectEnv().urls) {
      const res = await fetch(`${url}/connectors/${encodeURIComponent(seeded.connector)}`, { method: "DELETE" }).catch(() => null);
      if (res?.ok) break;
    }
  }
  for (const subject of seeded?.subjects ?? []) {
    const [url] = registryEnv().urls;
    await fetch(`${url}/subjects/${encodeURIComponent(subject)}`, { method: "DELETE" }).catch(() => {});
    await fetch(`${url}/subjects/${encodeURIComponent(subject)}?permanent=true`, { method: "DELETE" }).catch(() => {});
  }
  const topics = (await rt.kafka.default().topics.list()).map((t) => t.name).filter((t) => t.startsWith(prefix));
  await rt.dispose({ topics, groups: seeded ? [seeded.groups.live, seeded.groups.lagging] : [] });
  rmSync(workDir, { recursive: true, force: true });
}, 120_000);

describe("23: the demo data of npm run dev", () => {
  test("23: every page's API has content: typed JSON and Avro topics with subjects, a live and a lagging group, a RUNNING processor, a connector", async () => {
    const t = seeded.topics;
    // Topics: the stored types, not guessed.
    const list =
      await getJson<Array<{ topicName: string; keyType: string; valueType: string; inferred: boolean; partitions: number }>>("/api/topics");
    const byName = new Map(list.map((x) => [x.topicName, x]));
    expect(byName.get(t.orders)).toMatchObject({ keyType: "STRING", valueType: "JSON", inferred: false, partitions: 3 });
    expect(byName.get(t.customers)).toMatchObject({ keyType: "STRING", valueType: "JSON", inferred: false });
    expect(byName.get(t.clickstream)).toMatchObject({ valueType: "JSON", inferred: false });
    expect(byName.get(t.payments!)).toMatchObject({ keyType: "STRING", valueType: "AVRO", inferred: false });

    // Schemas: one JSON Schema subject, one Avro.
    const subjects = await getJson<string[]>("/api/proxy-sr/subjects");
    expect(subjects).toEqual(expect.arrayContaining([`${t.orders}-value`, `${t.payments}-value`]));
    const avro = await getJson<{ schemaType?: string; schema: string }>(`/api/proxy-sr/subjects/${t.payments}-value/versions/latest`);
    expect(JSON.parse(avro.schema)).toMatchObject({ type: "record", name: "Payment" });
    const json = await getJson<{ schemaType?: string }>(`/api/proxy-sr/subjects/${t.orders}-value/versions/latest`);
    expect(json.schemaType).toBe("JSON");

    // Consumer groups: two live members; another behind.
    await pollFor(
      "the live group's two members and the lagging group's lag",
      async () => {
        const groups = await getJson<Array<{ id: string; members: number; lag: number }>>("/api/consumers");
        const live = groups.find((g) => g.id === seeded.groups.live);
        const lagging = groups.find((g) => g.id === seeded.groups.lagging);
        return live && live.members === 2 && lagging && lagging.lag >= 450 ? true : undefined;
      },
      60_000,
    );

    // The processor made from the UI's table example: RUNNING, writing a row per city.
    const p = await pollFor(
      "the seeded processor RUNNING with output",
      async () => {
        const { streams } = await getJson<{ streams: { deploymentState: string; figures: { recordsOut: number } } }>(
          `/api/streams/${seeded.processor.id}`,
        );
        return streams.deploymentState === "RUNNING" && streams.figures.recordsOut > 0 ? streams : undefined;
      },
      60_000,
    );
    expect(p.deploymentState).toBe("RUNNING");
    const rows = await outputOf(rt.kafka.default(), seeded.processor.target, 11, 60_000);
    expect(new Set(rows.map((r) => r.key))).toEqual(
      new Set(["Lisbon", "Oslo", "Austin", "Osaka", "Lagos", "Lima", "Pune", "Perth", "Quebec", "Tallinn", "unknown"]),
    );

    // The connector: RUNNING through Loupe's Connect proxy, its topic filled from its file.
    await pollFor(
      "the connector RUNNING",
      async () => {
        const res = await api(`/api/proxy-connect/${ALIAS}/connectors/${encodeURIComponent(seeded.connector!)}/status`);
        if (res.status !== 200) return undefined;
        const s = (await res.json()) as { connector: { state: string }; tasks: Array<{ state: string }> };
        return s.connector.state === "RUNNING" && s.tasks[0]?.state === "RUNNING" ? true : undefined;
      },
      60_000,
    );
    await outputOf(rt.kafka.default(), t.accessLog!, 200, 60_000, (b) => new TextDecoder().decode(b));
  }, 180_000);

  test("23: each processor example of the UI runs on the demo data and writes records", async () => {
    // The table example is the seeded processor itself (above); the others are made here.
    for (const example of EXAMPLES.filter((x) => x.label !== "Table of totals per city")) {
      const fitted = fitExample(example.sql, prefix);
      targets.push(fitted.target);
      const res = await api("/api/streams", {
        method: "POST",
        headers: { accept: "application/json" },
        body: JSON.stringify({ name: `${prefix}${example.label}`.slice(0, 100), sql: fitted.sql, runners: 1 }),
      });
      expect([example.label, res.status]).toEqual([example.label, 200]);
      processors.push(((await res.json()) as { id: string }).id);
      const out = await outputOf(rt.kafka.default(), fitted.target, 1, 60_000);
      expect([example.label, out.length > 0]).toEqual([example.label, true]);
    }
    // The filter keeps paid orders only.
    const paid = await readAll(rt.kafka.default(), fitExample(EXAMPLES[0]!.sql, prefix).target);
    expect(Object.keys(paid[0]!.value as object)).toEqual(["orderId", "customer", "amount"]);
  }, 180_000);

  test("23: the workbench's queries return rows on the demo data: each topic's first query, JSON fields, Avro fields", async () => {
    const t = seeded.topics;
    // What a topic's "Data" link opens (ui/pages/TopicDetail.tsx topicQuery).
    for (const topic of [t.orders, t.customers, t.payments!, t.clickstream, t.accessLog!]) {
      const out = await stream(rt, `SELECT * FROM \`${topic}\` LIMIT 100`);
      expect([topic, out.records.length]).toEqual([topic, 100]);
    }
    const paid = await stream(rt, `SELECT orderId, city, amount FROM \`${t.orders}\` WHERE status = 'paid' LIMIT 10`);
    expect(paid.records.length).toBe(10);
    const declined = await stream(rt, `SELECT paymentId, amount FROM \`${t.payments}\` WHERE approved = false LIMIT 5`);
    expect(declined.records.length).toBe(5);
  }, 120_000);
});
