/**
 * Case 22.1 of the attack run: Connect's guard rails were one INSERT away. A `write` user refused
 * a FileStreamSource connector by the proxy wrote the same config straight into Connect's config
 * topic with `POST /api/jdbc/insert`, and Connect ran it. Internal topics (Kafka's, the real
 * Connect workers' and registry hosts' storage topics, Loupe's processors') now give a non-admin
 * no role above `nodata` on their records, on every path that reaches them: INSERT, the prepared
 * insert, the websocket PUBLISH, a processor's target, SQL reads, and the topic routes. Each is
 * tried here against the real broker and the real Connect cluster, and the internal topic's end
 * offsets are checked unchanged.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CONNECT_DEFAULT_TOPICS, InternalTopics } from "../../src/domains/access/internal-topics.ts";
import { compileScope } from "../../src/domains/access/scope.ts";
import { LiveClient } from "../clients/ws-client.ts";
import { connectEnv, registryEnv, uniqueTopic } from "../cluster/cluster.ts";
import { ROLE_USERS, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { scopedUser, topicGroup } from "../helpers/scoped.ts";
import { createReadyTopic } from "../helpers/topics.ts";

let rt: TestRuntime;
const made: string[] = [];
const open: LiveClient[] = [];
const connectTopics = connectEnv().topics!;
const registryTopics = registryEnv().topics;
/** A processor's changelog, as the runners name them (`<prefix>-<id>-...`). */
const processorTopic = uniqueTopic("loupe-processor-p1-changelog");
let userTopic: string;

/** The connector config a write user is refused by the proxy: it reads a file of the workers' host. */
const FILE_SOURCE = {
  properties: {
    "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
    file: "/etc/hostname",
    topic: "stolen",
    name: "connector-x",
  },
};

const sqlText = (sql: string) => ({ method: "POST", body: sql, headers: { "content-type": "text/plain" } }) as const;
const messageOf = async (res: Response) => ((await res.json()) as { message: string }).message;

async function endOffsets(topic: string): Promise<number[]> {
  const kafka = rt.kafka.default();
  const [d] = await kafka.topics.describe([topic]);
  const ends = await kafka.offsets.list(
    d!.partitionDetails.map((p) => ({ topic, partition: p.partition })),
    "latest",
  );
  return ends.map((e) => e.offset);
}

beforeAll(async () => {
  rt = await testRuntime({
    connect: { clusters: [{ alias: "dev", ...connectEnv() }] },
    schemaRegistry: registryEnv(),
  });
  const kafka = rt.kafka.default();
  userTopic = await createReadyTopic(kafka, { name: uniqueTopic("orders"), track: made });
  await createReadyTopic(kafka, { name: processorTopic, track: made });
});
afterAll(async () => {
  for (const c of open) c.close();
  await rt.dispose({ topics: made });
});

describe("22.1: internal topics are written by unrestricted admins only, on every path", () => {
  test("22.1: INSERT into Connect's config topic (the FileStreamSource config the proxy refuses) is refused; nothing is written", async () => {
    const before = await endOffsets(connectTopics.configs);
    const value = JSON.stringify(FILE_SOURCE).replaceAll("'", "''");
    const res = await rt.request("/api/jdbc/insert", {
      ...sqlText(`INSERT INTO \`${connectTopics.configs}\` (_key, _value) VALUES ('connector-x', '${value}')`),
      role: "write",
    });
    expect(res.status).toBe(400);
    expect(await messageOf(res)).toContain(
      `Topic '${connectTopics.configs}' is internal to Kafka Connect: only an admin without limits may read or write its records`,
    );
    expect(await endOffsets(connectTopics.configs)).toEqual(before);
    // The refusal is in the audit as a failed TOPIC_DATA INSERT of that user.
    const audit = (await (await rt.request(`/api/audit?user=${ROLE_USERS.write.name}&limit=20`, { role: "admin" })).json()) as Array<{
      type: string;
      change: string;
      content: Record<string, string>;
    }>;
    expect(audit.some((e) => e.type === "TOPIC_DATA" && e.change === "INSERT" && e.content.outcome !== "SUCCESS")).toBe(true);
  });

  test("22.1: INSERT into the registry's, Kafka's and the processors' internal topics is refused to write and to a scoped admin", async () => {
    const scopedAdmin = await scopedUser(rt, "ada-internal", [
      topicGroup("admins-of-all-topics-but-one", ["*"], ["orders-none"], ["admin"]),
    ]);
    for (const topic of [registryTopics[0]!, "__consumer_offsets", processorTopic, connectTopics.offsets, connectTopics.statuses]) {
      for (const who of [{ role: "write" as const }, { token: scopedAdmin }]) {
        const res = await rt.request("/api/jdbc/insert", {
          ...sqlText(`INSERT INTO \`${topic}\` (_key, _value) VALUES ('k', '{}')`),
          ...who,
        });
        expect(`${topic} ${res.status}`).toBe(`${topic} 400`);
        expect(await messageOf(res)).toContain(`Topic '${topic}' is internal to`);
      }
    }
  });

  test("22.1: the JDBC driver's prepared insert into Connect's offsets topic is refused at prepare and at send", async () => {
    const before = await endOffsets(connectTopics.offsets);
    const sql = `INSERT INTO \`${connectTopics.offsets}\` (_key, _value) VALUES (?, ?)`;
    const prepared = await rt.request(`/api/jdbc/insert/prepared?${new URLSearchParams({ sql })}`, { role: "write" });
    expect(prepared.status).toBe(200);
    const info = (await prepared.json()) as { info: unknown; error: string | null };
    expect(info.info).toBeNull();
    expect(info.error).toContain("is internal to Kafka Connect");
    const sent = await rt.request(`/api/jdbc/insert/prepared/${connectTopics.offsets}?kt=STRING&vt=JSON`, {
      method: "POST",
      role: "write",
      body: JSON.stringify([{ key: "k", value: { a: 1 } }]),
    });
    expect(sent.status).toBe(403);
    expect(await messageOf(sent)).toContain("is internal to Kafka Connect");
    expect(await endOffsets(connectTopics.offsets)).toEqual(before);
  });

  test("22.1: a websocket PUBLISH to Connect's status topic is refused with the reason; nothing is written", async () => {
    const before = await endOffsets(connectTopics.statuses);
    const c = await LiveClient.open(rt.url, crypto.randomUUID());
    open.push(c);
    c.request(
      "PUBLISH",
      1,
      { topic: connectTopics.statuses, key: "status-connector-x", value: '{"state":"RUNNING"}' },
      await rt.token("write"),
    );
    const reply = await c.reply(1);
    expect(reply.type).toBe("ERROR");
    expect(reply.content).toContain("is internal to Kafka Connect");
    // The same frame to a user topic is written: the refusal is the topic's, not the path's.
    c.request("PUBLISH", 2, { topic: userTopic, key: "k", value: "v" }, await rt.token("write"));
    expect((await c.reply(2)).type).toBe("SUCCESS");
    expect(await endOffsets(connectTopics.statuses)).toEqual(before);
  });

  test("22.1: a processor whose target is an internal topic is refused at creation, at the target's position", async () => {
    for (const target of [connectTopics.configs, registryTopics[0]!, processorTopic]) {
      const res = await rt.request("/api/streams", {
        method: "POST",
        role: "write",
        body: JSON.stringify({
          name: uniqueTopic("p"),
          sql: `INSERT INTO \`${target}\` SELECT STREAM * FROM \`${userTopic}\``,
          runners: 1,
        }),
      });
      expect(`${target} ${res.status}`).toBe(`${target} 400`);
      const text = await res.text();
      expect(text).toContain(`Topic '${target}' is internal to`);
      expect(text).toContain("line 1, column 13");
    }
  });

  test("22.1: topic routes: a writer may not delete, reconfigure, truncate or create an internal topic", async () => {
    const t = connectTopics.configs;
    const attempts: [string, RequestInit][] = [
      [`/api/topics/${t}`, { method: "DELETE" }],
      [`/api/topics/config/${t}`, { method: "PUT", body: JSON.stringify({ configs: [{ key: "cleanup.policy", value: "delete" }] }) }],
      [`/api/topics/${t}/0/1`, { method: "DELETE" }],
      ["/api/topics", { method: "POST", body: JSON.stringify({ topicName: uniqueTopic("loupe-processor-evil"), partitions: 1 }) }],
    ];
    for (const [path, init] of attempts) {
      const res = await rt.request(path, { ...init, role: "write" });
      expect(`${init.method} ${path} ${res.status}`).toBe(`${init.method} ${path} 403`);
    }
    // Connect's config topic is still there, still compacted.
    const [d] = await rt.kafka.default().topics.describe([t]);
    expect(d?.name).toBe(t);
  });
});

describe("22.1: reading internal topics' records is an unrestricted admin's too", () => {
  test("22.1: a reader may not SELECT Connect's config topic (connector secrets the proxy masks); an admin may", async () => {
    const sql = `SELECT * FROM \`${connectTopics.configs}\` LIMIT 1`;
    const res = await rt.request(`/api/sql/data?${new URLSearchParams({ sql })}`, { role: "read" });
    expect(res.status).toBe(400);
    expect(await messageOf(res)).toContain("is internal to Kafka Connect");
    const asAdmin = await rt.request(`/api/sql/validation?${new URLSearchParams({ sql })}`, { role: "admin" });
    expect(((await asAdmin.json()) as { isValid: boolean }).isValid).toBe(true);
  });
});

describe("22.1: one list of internal topics marks the topic list", () => {
  test("22.1: Connect's, the registry's, Kafka's and the processors' topics are control topics; users' are not", async () => {
    const listed = (await (await rt.request("/api/topics", { role: "admin" })).json()) as Array<{
      topicName: string;
      isControlTopic: boolean;
    }>;
    const marked = new Map(listed.map((t) => [t.topicName, t.isControlTopic]));
    for (const t of [
      connectTopics.configs,
      connectTopics.offsets,
      connectTopics.statuses,
      registryTopics[0]!,
      processorTopic,
      "__consumer_offsets",
    ])
      expect(`${t} ${marked.get(t)}`).toBe(`${t} true`);
    expect(marked.get(userTopic)).toBe(false);
  });

  test("22.1: the scope: nodata at most on internal topics for everyone but an unrestricted admin; seeing them follows the groups", () => {
    const internal = new InternalTopics({ connect: ["c-configs"], registry: ["r-journal"], processorPrefix: "lp" });
    const writer = compileScope([{ name: "w", roles: ["write"], clusters: ["*"], topics: { allow: ["*"], deny: [] } }], internal);
    const admin = compileScope([{ name: "a", roles: ["admin"], clusters: ["*"], topics: { allow: ["*"], deny: [] } }], internal);
    for (const t of [
      "c-configs",
      "r-journal",
      "lp-1-changelog",
      "__transaction_state",
      ...CONNECT_DEFAULT_TOPICS,
      "_schemas",
      "x.checkpoints.internal",
    ]) {
      expect(writer.topicRoles("c", t)).toEqual(["nodata"]);
      expect(writer.topicAllowed("c", t, "read")).toBe(false);
      expect(writer.topicAllowed("c", t, "nodata")).toBe(true);
      expect(writer.topicAllowed("c", t, "read", "metadata")).toBe(true);
      expect(admin.topicAllowed("c", t, "write")).toBe(true);
    }
    expect(writer.everyTopic("c", "write")).toBe(false);
    expect(writer.everyTopic("c", "nodata")).toBe(true);
    expect(writer.filterTopics("c", ["orders", "c-configs"], "write")).toEqual(["orders"]);
    expect(writer.filterTopics("c", ["orders", "c-configs"], "nodata")).toEqual(["orders", "c-configs"]);
    expect(writer.topicAllowed("c", "orders", "write")).toBe(true);
  });
});
