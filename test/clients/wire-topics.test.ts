/**
 * Topics and topic metadata as the Go, Python and JDBC clients call them (CLIENTS.md 5.3):
 * requests with exactly the clients' headers and bodies, answers decoded with their strictness.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { uniqueTopic } from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { createReadyTopic } from "../helpers/topics.ts";
import { eventually, waitFor } from "../helpers/wait.ts";
import { joinGroup } from "../kafka/helpers.ts";
import {
  array,
  asResponse,
  decode,
  errorAnswer,
  GO_HEADERS,
  goTopic,
  jdbcTopic,
  jsonAnswer,
  object,
  optional,
  record,
  send,
  serve,
  str,
  textAnswer,
  topicListItem,
} from "./strict.ts";

let rt: TestRuntime;
let server: Bun.Server<unknown>;
const created: string[] = [];
const groups: string[] = [];
const tokens = {} as Record<"write" | "read" | "nodata", string>;

beforeAll(async () => {
  rt = await testRuntime({ lag: { cacheTtl: 0, sampleInterval: 250 } });
  server = serve(rt.app);
  for (const role of ["write", "read", "nodata"] as const) tokens[role] = await rt.token(role);
});
afterAll(async () => {
  server.stop(true);
  await rt.dispose({ topics: created, groups });
});

/** A request of the Go client (GO c `Do`): its headers, JSON bodies, the token of `role`. */
const go = (method: string, target: string, body?: unknown, role: keyof typeof tokens = "write") =>
  send(
    server.url,
    method,
    target,
    { ...GO_HEADERS, "x-service-token": tokens[role], ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body === undefined ? undefined : JSON.stringify(body),
  );

/** A request of the Python client: JSON bodies, Accept text/plain where it sends it (PY TopicHandler). */
const py = (method: string, target: string, body?: unknown, role: keyof typeof tokens = "write") =>
  send(
    server.url,
    method,
    target,
    {
      "x-service-token": tokens[role],
      "Content-Type": "application/json",
      Accept: "text/plain",
      "User-Agent": "python-requests/2.31.0",
      "Accept-Encoding": "gzip, deflate",
    },
    body === undefined ? undefined : JSON.stringify(body),
  );

describe("topic creation", () => {
  test("regression: the Go client's numeric and boolean config values; created with exactly 201", async () => {
    const name = uniqueTopic("wire-go");
    created.push(name);
    const res = await go("POST", "/api/topics", {
      topicName: name,
      replication: 1,
      partitions: 2,
      configs: { "retention.ms": 3_600_000, "unclean.leader.election.enable": false, "cleanup.policy": "delete" },
    });
    expect(await textAnswer(asResponse(res), 201)).toBe(`Topic '${name}' created`);
    const cfg = await rt.kafka.default().configs.describeTopic(name);
    expect(cfg.find((c) => c.name === "retention.ms")!.value).toBe("3600000");
    expect(cfg.find((c) => c.name === "unclean.leader.election.enable")!.value).toBe("false");
  });

  test('regression: the Go client\'s `"configs": null` (no configs given) was a 400', async () => {
    const name = uniqueTopic("wire-go-null");
    created.push(name);
    const res = await go("POST", "/api/topics", { topicName: name, replication: 1, partitions: 1, configs: null });
    expect(await textAnswer(asResponse(res), 201)).toBe(`Topic '${name}' created`);
  });

  test("the Python client's string values and Accept text/plain: exactly 201; an existing topic is 409 with the COMPAT body", async () => {
    const name = uniqueTopic("wire-py");
    created.push(name);
    const body = { topicName: name, replication: 1, partitions: 1, configs: { "cleanup.policy": "compact" } };
    await textAnswer(asResponse(await py("POST", "/api/topics", body)), 201);
    expect((await errorAnswer(asResponse(await py("POST", "/api/topics", body)), 409)).message).toContain("already exists");
  });
});

describe("topic list and topic", () => {
  test("regression: a fractional messagesPerSecond broke the Go client's whole topic list; every topic decodes", async () => {
    const kafka = rt.kafka.default();
    const name = await createReadyTopic(kafka, { prefix: "wire-rate", partitions: 1, track: created });
    await kafka.writes.produce(name, [{ value: "a" }]);
    await waitFor(() => rt.sampler.samples("local").some((s) => s.ends.get(`${name}\u00000`) === 1), { what: "a sample of the topic" });
    // Seven more records over a span of samples that is no whole number of seconds.
    await kafka.writes.produce(
      name,
      Array.from({ length: 7 }, (_, i) => ({ value: `v${i}` })),
    );
    const listed = await waitFor(
      async () => {
        const list = await jsonAnswer(asResponse(await go("GET", "/api/topics", undefined, "nodata")), 200, array(goTopic));
        const mine = list.find((t) => t.topicName === name);
        return mine && mine.messagesPerSecond > 0 && list;
      },
      { what: "a rate above 0 in the list" },
    );
    // The Python client indexes topicName; types are strings, never null.
    decode(array(topicListItem), listed);
    expect(listed.find((t) => t.topicName === name)!.totalMessages).toBe(8);
  });

  test("regression: a group's consumers were member objects, which made the Go client fail on the whole topic", async () => {
    const kafka = rt.kafka.default();
    const name = await createReadyTopic(kafka, { prefix: "wire-cg", partitions: 2, track: created });
    await kafka.writes.produce(
      name,
      Array.from({ length: 4 }, (_, i) => ({ partition: i % 2, key: `k${i}`, value: JSON.stringify({ i, price: 1.5 }) })),
    );
    const group = uniqueTopic("wire-grp");
    groups.push(group);
    const member = joinGroup(kafka, { groupId: group, topics: [name], sessionTimeoutMs: 6_000, heartbeatIntervalMs: 500, maxWaitMs: 200 });
    try {
      let read = 0;
      for await (const m of member.records()) {
        if (m.partition === 0) await m.commit();
        if (++read === 4) break;
      }
      const topic = await waitFor(
        async () => {
          const t = await jsonAnswer(asResponse(await go("GET", `/api/topics/${name}`, undefined, "read")), 200, goTopic);
          return t.consumers?.[0]?.state === "Stable" && t;
        },
        { what: "the group, stable, among the topic's consumers" },
      );
      const g = topic.consumers![0]!;
      expect(g).toMatchObject({ id: group, active: true, consumersCount: 1, topicPartitionsCount: 1, minLag: 0, maxLag: 0 });
      expect(g.consumers).toHaveLength(1);
      expect(g.consumers[0]).toStartWith("loupe");
      // The JDBC driver decodes the same answer into non-null fields.
      const res = await send(server.url, "GET", `/api/topics/${name}`, { "x-service-token": tokens.read, Accept: "application/json" });
      expect(await jsonAnswer(asResponse(res), 200, jdbcTopic)).toMatchObject({ topicName: name, keyType: "STRING", valueType: "JSON" });
    } finally {
      await member.close();
    }
  }, 30_000);
});

describe("topic changes", () => {
  test("regression: a config update with non-string values and null entries was refused; it is 200 with a body", async () => {
    const name = await createReadyTopic(rt.kafka.default(), { prefix: "wire-cfg", partitions: 1, track: created });
    const res = await go("PUT", `/api/topics/config/${name}`, {
      configs: [{ key: "retention.ms", value: 7_200_000 }, null, { key: "unclean.leader.election.enable", value: true }],
    });
    expect((await textAnswer(asResponse(res), 200)).length).toBeGreaterThan(0);
    const cfg = await rt.kafka.default().configs.describeTopic(name);
    expect(cfg.find((c) => c.name === "retention.ms")!.value).toBe("7200000");
    expect(cfg.find((c) => c.name === "unclean.leader.election.enable")!.value).toBe("true");
    // The Python client: string values, Accept text/plain, exactly 200.
    await textAnswer(
      asResponse(await py("PUT", `/api/topics/config/${name}`, { configs: [{ key: "cleanup.policy", value: "compact" }] })),
      200,
    );
  });

  test("record deletion as the Python client asks it: exactly 200 and the sentence before the first comma, past the end too", async () => {
    const kafka = rt.kafka.default();
    const name = await createReadyTopic(kafka, { prefix: "wire-del", partitions: 1, track: created });
    await kafka.writes.produce(name, [{ value: "a" }, { value: "b" }, { value: "c" }]);
    const prefix = (o: number) => `Records from topic '${name}' and partition '0' up to offset '${o}'`;
    expect((await textAnswer(asResponse(await py("DELETE", `/api/topics/${name}/0/1`)), 200)).split(",")[0]).toBe(prefix(1));
    // The Python test deletes up to offset 10 of whatever topic comes first.
    const beyond = await textAnswer(asResponse(await py("DELETE", `/api/topics/${name}/0/10`)), 200);
    expect(beyond.startsWith(`${prefix(10)},`)).toBe(true);
    expect(await eventually(async () => (await kafka.offsets.bounds([name]))[0]!.earliest === 3)).toBe(true);
    // The Python client maps 400 to "negative offset", 404 to "unknown topic", 403 to "no permission".
    await errorAnswer(asResponse(await py("DELETE", `/api/topics/${name}/0/-1`)), 400);
    await errorAnswer(asResponse(await py("DELETE", `/api/topics/${uniqueTopic("missing")}/0/1`)), 404);
    await errorAnswer(asResponse(await py("DELETE", `/api/topics/${name}/0/1`, undefined, "read")), 403);
  });

  test("topic deletion answers exactly 200 to the Python client", async () => {
    const name = await createReadyTopic(rt.kafka.default(), { prefix: "wire-drop", partitions: 1, track: created });
    expect(await textAnswer(asResponse(await py("DELETE", `/api/topics/${name}`)), 200)).toBe(`Topic '${name}' deleted`);
  });
});

describe("topic metadata as the Go client sends it", () => {
  const schema = JSON.stringify({ type: "record", name: "R", fields: [{ name: "a", type: "int" }] });
  /** The list answer: every field a string (GO decodes the list into string fields). */
  const list = array(record(str));

  test("regression: the value schema written with no '=' and unencoded was a 400; it is read as the schema", async () => {
    const name = await createReadyTopic(rt.kafka.default(), { prefix: "wire-md", partitions: 1, track: created });
    const res = await go("POST", `/api/metadata/topics/${name}?keyType=STRING&valueType=AVRO&valueSchema${schema}`);
    expect(res.status).toBe(200);
    const stored = await jsonAnswer(
      asResponse(await go("GET", `/api/metadata/topics/${name}`, undefined, "read")),
      200,
      object({ valueSchema: optional(str) }),
    );
    expect(stored.valueSchema).toBe(schema);
    const all = await jsonAnswer(asResponse(await go("GET", "/api/metadata/topics", undefined, "read")), 200, list);
    expect(all.find((m) => m.topicName === name)).toEqual({ topicName: name, keyType: "STRING", valueType: "AVRO", valueSchema: schema });
    // The Go client deletes on the metadata path, not the system one: 200 with a body.
    expect((await textAnswer(asResponse(await go("DELETE", `/api/metadata/topics/${name}`)), 200)).length).toBeGreaterThan(0);
    expect((await go("GET", "/api/metadata/topics", undefined, "read")).text).not.toContain(`"${name}"`);
  });

  test("types only, no body, upper-case enums; the key schema written raw after '='", async () => {
    const name = await createReadyTopic(rt.kafka.default(), { prefix: "wire-md2", partitions: 1, track: created });
    expect((await go("POST", `/api/metadata/topics/${name}?keyType=STRING&valueType=JSON`)).status).toBe(200);
    const res = await go("POST", `/api/metadata/topics/${name}?keyType=AVRO&valueType=STRING&keySchema=${schema}`);
    expect(res.status).toBe(200);
    expect((await jsonAnswer(asResponse(res), 200, object({ keySchema: str }))).keySchema).toBe(schema);
    await errorAnswer(asResponse(await go("POST", `/api/metadata/topics/${name}?keyType=STRING&valueType=STRING&colour=red`)), 400);
  });
});
