/**
 * The topics a connector reads and writes, checked against the creator's scope: the rules
 * themselves (table-driven: regular expressions read as globs, globs against globs, what each
 * connector class uses), then real MirrorMaker sources and a real file sink through Loupe
 * against the run's workers, for users scoped to some topics, for a writer of every topic
 * (internal ones stay an admin's), and for an admin without limits.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig } from "../../src/config/load.ts";
import { globCovers, globsMeet } from "../../src/domains/access/pattern-relations.ts";
import { connectorTopics, regexGlobs } from "../../src/domains/connect/topics.ts";
import { connectEnv, kafkaBootstrap, uniqueTopic } from "../cluster/cluster.ts";
import { bootstrap, errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { scopedUser, topicGroup } from "../helpers/scoped.ts";
import { createReadyTopic } from "../helpers/topics.ts";
import { waitFor } from "../helpers/wait.ts";
import { ALIAS, auditEntries, connectorName, connectRuntime, deleteDirect, enc, heartbeatConfig, proxy, settled } from "./helpers.ts";

const MIRROR_SOURCE = "org.apache.kafka.connect.mirror.MirrorSourceConnector";
const IDENTITY = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy";

describe("22.2: the topics of a connector config", () => {
  const regexes: [string, string[] | undefined][] = [
    ["secret", ["secret"]],
    ["in\\.orders", ["in.orders"]],
    ["in.orders", ["in?orders"]],
    ["^in\\..*$", ["in.*"]],
    ["in[.].+", ["in.?*"]],
    ["a|b\\-c", ["a", "b-c"]],
    [".*", ["*"]],
    ["(?i)secret", undefined],
    ["in\\.(a|b)", undefined],
    ["in\\.[a-z]+", undefined],
    ["a*", undefined],
    ["in\\d", undefined],
    ["in.?", undefined],
  ];
  for (const [regex, globs] of regexes)
    test(`22.2: regex ${regex} reads as ${globs ?? "nothing Loupe can compare"}`, () => expect(regexGlobs(regex)).toEqual(globs));

  test("22.2: globs against globs: covering and meeting", () => {
    const covers: [string, string, boolean][] = [
      ["in.*", "in.orders", true],
      ["in.*", "in.*", true],
      ["in.*", "in.?*", true],
      ["in.*", "in?orders", false],
      ["in.*", "*", false],
      ["*", "in.*heartbeats", true],
      ["in.*", "in.*heartbeats", true],
      ["in.*", "in", false],
      ["*.heartbeats", "in.*heartbeats", false],
      ["?n.*", "in.x", true],
    ];
    for (const [outer, inner, want] of covers) expect([outer, inner, globCovers(outer, inner)]).toEqual([outer, inner, want]);
    const meets: [string, string, boolean][] = [
      ["*", "__consumer_offsets", true],
      ["in.*", "__*", false],
      ["in.*", "*.internal", true],
      ["in.x", "in.x", true],
      ["in.x", "in.y", false],
      ["a*b", "*c", false],
      ["a?c", "*b*", true],
      ["mm2-offset-syncs.x.internal", "*.internal", true],
    ];
    for (const [a, b, want] of meets) expect([a, b, globsMeet(a, b), globsMeet(b, a)]).toEqual([a, b, want, want]);
  });

  const uses = (config: Record<string, unknown>, type: "source" | "sink" | undefined = "source") => {
    const { uses: found, unknown } = connectorTopics(config, type);
    return { uses: found.map((u) => `${u.access} ${u.topic}`), unknown: unknown.map((u) => u.why) };
  };

  test("22.2: MirrorSourceConnector: reads `topics`, writes <alias><separator><topic>, heartbeat copies and offset syncs", () => {
    const base = { "connector.class": MIRROR_SOURCE, "source.cluster.alias": "eu", "target.cluster.alias": "us" };
    expect(uses({ ...base, topics: "secret, in\\..*" })).toEqual({
      uses: ["read secret", "write eu.secret", "read in.*", "write eu.in.*", "write eu.*heartbeats", "write mm2-offset-syncs.us.internal"],
      unknown: [],
    });
    expect(uses({ ...base, topics: "secret", "replication.policy.class": IDENTITY, "emit.offset-syncs.enabled": "false" }).uses).toEqual([
      "read secret",
      "write secret",
      "write eu.*heartbeats",
    ]);
    expect(
      uses({
        ...base,
        topics: "x",
        "replication.policy.separator": "_",
        "offset-syncs.topic.location": "target",
        "emit.offset-syncs.enabled": "true",
      }).uses,
    ).toEqual(["read x", "write eu_x", "write eu_*heartbeats", "write mm2-offset-syncs_eu_internal"]);
    expect(uses({ "connector.class": "MirrorSource" }).uses.slice(0, 2)).toEqual(["read *", "write source.*"]);
    expect(uses({ ...base, topics: "x", "replication.policy.class": "com.acme.Policy" }).unknown).toEqual([
      "replication.policy.class com.acme.Policy names the topics it writes in a way Loupe cannot compute",
    ]);
    expect(uses({ ...base, topics: "x", "topic.filter.class": "com.acme.Filter" }).unknown).toHaveLength(1);
  });

  test("22.2: the checkpoint and heartbeat connectors, the file source", () => {
    const checkpoint = {
      "connector.class": "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
      "source.cluster.alias": "eu",
      "target.cluster.alias": "us",
    };
    expect(uses(checkpoint).uses).toEqual(["read mm2-offset-syncs.us.internal", "write eu.checkpoints.internal"]);
    expect(uses(heartbeatConfig()).uses).toEqual(["write heartbeats"]);
    expect(uses(heartbeatConfig({ "emit.heartbeats.enabled": "false" })).uses).toEqual([]);
    expect(uses({ "connector.class": "FileStreamSource", topic: "out", file: "/x" }).uses).toEqual(["write out"]);
  });

  test("22.2: sinks read `topics` and `topics.regex`, write their dead letter topic; other topic keys count as written", () => {
    const sink = { "connector.class": "com.acme.JdbcSinkConnector" };
    expect(uses({ ...sink, topics: "a, b", "errors.deadletterqueue.topic.name": "dlq", "kafka.topic": "k" }, "sink")).toEqual({
      uses: ["read a", "read b", "write dlq", "write k"],
      unknown: [],
    });
    expect(uses({ ...sink, "topics.regex": "in\\..*" }, "sink").uses).toEqual(["read in.*"]);
    expect(uses({ ...sink, "topics.regex": "in\\.(a|b)" }, "sink").unknown).toEqual([
      "topics.regex 'in\\.(a|b)' is not a pattern Loupe can compare with scopes",
    ]);
    // A sink's transforms change what it sees, not what it writes to Kafka.
    expect(
      uses({ ...sink, topics: "a", transforms: "r", "transforms.r.type": "org.apache.kafka.connect.transforms.RegexRouter" }, "sink")
        .unknown,
    ).toEqual([]);
  });

  test("22.2: what cannot be known: a source of another class, a class the cluster lacks, a renaming transform", () => {
    expect(uses({ "connector.class": "com.acme.CdcSource", "kafka.topic": "x" }).unknown).toEqual([
      "com.acme.CdcSource is a source connector Loupe has no topic rules for: the topics it writes cannot be known",
    ]);
    // Only Kafka's own class has MirrorMaker's rules, not another package's of the same name.
    expect(uses({ "connector.class": "com.evil.MirrorSourceConnector", topics: "in\\.x" }).unknown[0]).toBe(
      "com.evil.MirrorSourceConnector is a source connector Loupe has no topic rules for: the topics it writes cannot be known",
    );
    expect(connectorTopics({ "connector.class": "com.acme.Nothing" }, undefined).unknown[0]!.why).toContain(
      "is not a connector plugin of this Kafka Connect cluster",
    );
    const renaming = heartbeatConfig({
      transforms: "r,ok",
      "transforms.r.type": "org.apache.kafka.connect.transforms.RegexRouter",
      "transforms.ok.type": "org.apache.kafka.connect.transforms.InsertField$Value",
    });
    expect(uses(renaming).unknown).toEqual([
      "transform 'r' (org.apache.kafka.connect.transforms.RegexRouter) renames the topics the connector writes",
    ]);
    expect(uses(heartbeatConfig({ transforms: "x", "transforms.x.type": "com.acme.Route" })).unknown[0]).toContain("may rename");
    expect(uses({ "connector.class": "com.acme.Sink", "my.topic": "a b" }, "sink").unknown).toEqual(["my.topic 'a b' is not a topic name"]);
  });

  test("22.2: a Connect cluster's kafkaCluster must name a configured Kafka cluster", () => {
    const kafka = { clusters: [{ name: "main", bootstrapServers: "k:9092" }] };
    expect(() => parseConfig({ kafka, connect: { clusters: [{ alias: "c", urls: "http://c:8083", kafkaCluster: "other" }] } })).toThrow(
      "unknown Kafka cluster 'other'",
    );
    expect(
      parseConfig({ kafka, connect: { clusters: [{ alias: "c", urls: "http://c:8083", kafkaCluster: "main" }] } }).connect.clusters[0]!
        .kafkaCluster,
    ).toBe("main");
  });
});

describe("22.2: connectors against the creator's topic scope, on the real workers", () => {
  let rt: TestRuntime;
  let railsOff: TestRuntime;
  let dir: string;
  const run = uniqueTopic("s").slice(2);
  /** The scoped writer's prefix, and the alias her MirrorMaker sources use. */
  const IN = `in-${run}`;
  const PUB = `pub-${run}`;
  const SECRET = `secret-${run}`;
  const made: string[] = [];
  const topics: string[] = [];
  let writer: string;
  let writerOff: string;

  beforeAll(async () => {
    rt = await connectRuntime();
    railsOff = await connectRuntime([], { guardRails: { enabled: false } });
    dir = mkdtempSync(join(tmpdir(), "loupe-sink-"));
    const groups = (tag: string) => [
      { ...topicGroup(`g-in-${tag}-${run}`, [`${IN}.*`]), roles: ["write" as const] },
      topicGroup(`g-pub-${tag}-${run}`, [`${PUB}.*`]),
    ];
    writer = await scopedUser(rt, `mira-${run}`, groups("a"));
    writerOff = await scopedUser(railsOff, `mira-${run}`, groups("b"));
    const kafka = rt.kafka.default();
    for (const name of [`${IN}.orders`, `${PUB}.x`, SECRET]) await createReadyTopic(kafka, { name, track: topics });
    await kafka.writes.produce(
      `${IN}.orders`,
      [1, 2, 3].map((n) => ({ key: `k${n}`, value: `order ${n}` })),
    );
  });
  afterAll(async () => {
    for (const name of made) await deleteDirect(name);
    // The copies a MirrorMaker source made (its heartbeat copies included).
    const copies = (await rt.kafka.default().topics.list()).map((t) => t.name).filter((t) => t.startsWith(`${IN}.`));
    await railsOff.dispose();
    await rt.dispose({ topics: [...new Set([...topics, ...copies])] });
    rmSync(dir, { recursive: true, force: true });
  }, 90_000);

  const mirror = (topicsValue: string, extra: Record<string, unknown> = {}) => ({
    "connector.class": MIRROR_SOURCE,
    "source.cluster.alias": IN,
    "target.cluster.alias": `${IN}-dst`,
    "source.cluster.bootstrap.servers": kafkaBootstrap(),
    "target.cluster.bootstrap.servers": kafkaBootstrap(),
    topics: topicsValue,
    "replication.factor": "1",
    "emit.offset-syncs.enabled": "false",
    "sync.topic.acls.enabled": "false",
    "tasks.max": "1",
    ...extra,
  });
  const fileSink = (extra: Record<string, unknown>) => ({
    "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
    file: join(dir, `${uniqueTopic("out")}.txt`),
    "tasks.max": "1",
    ...extra,
  });

  /** Create, config change and validation of `config` by `token` on `runtime`: the three answers. */
  async function tryAll(runtime: TestRuntime, token: string, name: string, config: Record<string, unknown>, plugin: string) {
    made.push(name);
    const create = await settled(runtime, proxy("/connectors"), { method: "POST", token, body: JSON.stringify({ name, config }) });
    const put = await settled(runtime, proxy(`/connectors/${enc(name)}/config`), { method: "PUT", token, body: JSON.stringify(config) });
    const validate = await runtime.request(proxy(`/connector-plugins/${plugin}/config/validate`), {
      method: "PUT",
      token,
      body: JSON.stringify(config),
    });
    return { create, put, validate };
  }

  /** `plugin`: the validation's too (null: a validation is not refused, what is refused is implied by the class). */
  async function expectRefused(
    runtime: TestRuntime,
    token: string,
    config: Record<string, unknown>,
    plugin: string | null,
    said: string[],
  ) {
    const name = connectorName("loupe scope");
    const { validate, ...changes } = await tryAll(runtime, token, name, config, plugin ?? "MirrorSourceConnector");
    for (const [what, res] of Object.entries(plugin === null ? changes : { ...changes, validate })) {
      const body = res.status === 403 ? (await errorOf(res)).message : await res.text();
      expect([what, res.status]).toEqual([what, 403]);
      for (const s of said) expect(body).toContain(s);
    }
    const listed = (await (await runtime.request(proxy("/connectors"), { role: "nodata" })).json()) as string[];
    expect(listed).not.toContain(name);
    return name;
  }

  test("22.2: a scoped writer's MirrorSource naming an out-of-scope topic is refused (create, change, validation), audited, nothing reaches Connect", async () => {
    // The copy `<alias>.secret` would be hers; the topic it copies is not.
    const name = await expectRefused(rt, writer, mirror(SECRET), "MirrorSourceConnector", [
      `it reads '${SECRET}' (topics): Topic '${SECRET}' is outside your scope`,
    ]);
    const entries = (await auditEntries(rt)).filter((e) => e.content.connector === name);
    expect(entries.map((e) => `${e.change} ${e.content.outcome}`)).toEqual(["UPDATE FAILURE", "ADD FAILURE"]);
    for (const e of entries) {
      expect(e.content.reason).toStartWith("FORBIDDEN: Loupe refuses this connector config for your topic scope");
      expect(e.content.topicsRefused).toContain(SECRET);
    }
    const denied = (await auditEntries(rt, "ACCESS")).find((e) => e.userId === `mira-${run}` && e.content.topicsRefused?.includes(SECRET));
    expect(denied).toMatchObject({ change: "DENY", content: { outcome: "FAILURE", alias: ALIAS, plugin: "MirrorSourceConnector" } });
    // A copy into a name outside her scope: `<alias>.<topic>` with another alias.
    await expectRefused(rt, writer, mirror(`${IN}\\.orders`, { "source.cluster.alias": "elsewhere" }), "MirrorSourceConnector", [
      `it writes 'elsewhere.${IN}.orders'`,
      "is outside your scope",
    ]);
    // `in.orders` as a regex also matches `inXorders`: not all in scope.
    await expectRefused(rt, writer, mirror(`${IN}.orders`), "MirrorSourceConnector", [
      `Topics matching '${IN}?orders' are not all in your scope`,
    ]);
  }, 90_000);

  test("22.2: a scoped writer's MirrorSource within her scope is created and copies the records to <alias>.<topic>", async () => {
    const name = connectorName("loupe scope mm");
    made.push(name);
    const res = await settled(rt, proxy("/connectors"), {
      method: "POST",
      token: writer,
      body: JSON.stringify({ name, config: mirror(`${IN}\\.orders`) }),
    });
    expect([res.status, res.status === 201 ? "" : await res.text()]).toEqual([201, ""]);
    const kafka = rt.kafka.default();
    await waitFor(
      async () => {
        const [t] = await kafka.topics.describe([`${IN}.${IN}.orders`]).catch(() => []);
        if (!t || t.partitions === 0) return false;
        const [end] = await kafka.offsets.list([{ topic: `${IN}.${IN}.orders`, partition: 0 }], "latest");
        return (end?.offset ?? 0) >= 3;
      },
      { timeoutMs: 90_000, intervalMs: 500, what: `the copy ${IN}.${IN}.orders holding the 3 records` },
    );
    expect((await settled(rt, proxy(`/connectors/${enc(name)}`), { method: "DELETE", token: writer })).status).toBe(204);
  }, 120_000);

  test("22.2: a scoped writer may not pause, resume, restart or delete a connector whose topics are outside her scope", async () => {
    // An admin's copy of a topic she may not read: changing its life is changing what it copies.
    const name = connectorName("loupe scope admin");
    made.push(name);
    const res = await settled(rt, proxy("/connectors"), {
      method: "POST",
      role: "admin",
      body: JSON.stringify({ name, config: mirror(SECRET) }),
    });
    expect([res.status, res.status === 201 ? "" : await res.text()]).toEqual([201, ""]);
    const path = proxy(`/connectors/${enc(name)}`);
    for (const [method, suffix, action] of [
      ["PUT", "/pause", "pause"],
      ["PUT", "/resume", "resume"],
      ["POST", "/restart", "restart"],
      ["POST", "/tasks/0/restart", "restart a task of"],
      ["DELETE", "", "delete"],
    ] as const) {
      const refused = await settled(rt, `${path}${suffix}`, { method, token: writer });
      expect([method, suffix, refused.status]).toEqual([method, suffix, 403]);
      const message = (await errorOf(refused)).message;
      expect(message).toStartWith(`Loupe refuses to ${action} this connector for your topic scope`);
      expect(message).toContain(`it reads '${SECRET}' (topics)`);
    }
    // Still there, and the admin may delete it.
    expect((await settled(rt, path, { role: "nodata" })).status).toBe(200);
    expect((await settled(rt, path, { method: "DELETE", role: "admin" })).status).toBe(204);
  }, 120_000);

  test("22.2: IdentityReplicationPolicy keeps names: copying a topic she may only read into its own name is refused; <alias>.<topic> is allowed", async () => {
    await expectRefused(rt, writer, mirror(`${PUB}\\.x`, { "replication.policy.class": IDENTITY }), "MirrorSourceConnector", [
      `it writes '${PUB}.x' (the copy of topics '${PUB}\\.x'): Topic '${PUB}.x' is outside your scope`,
    ]);
    const allowed = await rt.request(proxy("/connector-plugins/MirrorSourceConnector/config/validate"), {
      method: "PUT",
      token: writer,
      body: JSON.stringify({ ...mirror(`${PUB}\\.x`), name: "loupe-validate" }),
    });
    expect([allowed.status, (await allowed.json()) as object]).toEqual([200, expect.objectContaining({ error_count: 0 })]);
  }, 60_000);

  test("22.2: a sink reading a topic outside the scope is refused with the guard rails off; one within it is created", async () => {
    await expectRefused(railsOff, writerOff, fileSink({ topics: SECRET }), "FileStreamSinkConnector", [`it reads '${SECRET}' (topics)`]);
    await expectRefused(
      railsOff,
      writerOff,
      fileSink({ topics: `${PUB}.x`, "errors.deadletterqueue.topic.name": SECRET }),
      "FileStreamSinkConnector",
      [`it writes '${SECRET}' (errors.deadletterqueue.topic.name)`],
    );
    await expectRefused(railsOff, writerOff, fileSink({ "topics.regex": ".*" }), "FileStreamSinkConnector", [
      "Topics matching '*' include topics internal to",
    ]);
    await expectRefused(railsOff, writerOff, fileSink({ "topics.regex": `${PUB}\\.(x|y)` }), "FileStreamSinkConnector", [
      "is not a pattern Loupe can compare with scopes",
      "an admin without limits",
    ]);
    // Reading needs only read: her `pub` topics, by name or by a pattern within the scope.
    const name = connectorName("loupe scope sink");
    made.push(name);
    const res = await settled(railsOff, proxy("/connectors"), {
      method: "POST",
      token: writerOff,
      body: JSON.stringify({ name, config: fileSink({ topics: `${PUB}.x` }) }),
    });
    expect([res.status, res.status === 201 ? "" : await res.text()]).toEqual([201, ""]);
    // A pattern open at its end could reach MirrorMaker's `*.internal` topics; one ending in fixed text cannot.
    const regex = (value: string) =>
      railsOff.request(proxy("/connector-plugins/FileStreamSinkConnector/config/validate"), {
        method: "PUT",
        token: writerOff,
        body: JSON.stringify(fileSink({ name: "loupe-validate", "topics.regex": value })),
      });
    const open = await regex(`${PUB}\\..*`);
    expect([open.status, (await errorOf(open)).message]).toEqual([
      403,
      expect.stringContaining("include topics internal to MirrorMaker ('*.internal')"),
    ]);
    expect((await regex(`${PUB}\\..*x`)).status).toBe(200);
    expect((await settled(railsOff, proxy(`/connectors/${enc(name)}`), { method: "DELETE", token: writerOff })).status).toBe(204);
  }, 90_000);

  test("22.2: internal topics are refused to non-admins whatever their scope, naming whose they are; an admin without limits goes through, audited", async () => {
    const token = await railsOff.token("write");
    const connectConfigs = connectEnv().topics?.configs ?? "connect-configs";
    for (const [topic, owner] of [
      [connectConfigs, "Kafka Connect"],
      ["__consumer_offsets", "Kafka"],
      ["_schemas", "the schema registry"],
    ] as const)
      await expectRefused(railsOff, token, fileSink({ topics: topic }), "FileStreamSinkConnector", [
        `Topic '${topic}' is internal to ${owner}`,
      ]);
    // MirrorMaker's offset syncs are its own: a writer of every topic may not write them either.
    await expectRefused(
      rt,
      await rt.token("write"),
      mirror(`${IN}\\.orders`, { "emit.offset-syncs.enabled": "true" }),
      "MirrorSourceConnector",
      [`Topic 'mm2-offset-syncs.${IN}-dst.internal' is internal to MirrorMaker`],
    );
    const name = connectorName("loupe scope admin");
    made.push(name);
    const res = await settled(rt, proxy("/connectors"), {
      method: "POST",
      role: "admin",
      body: JSON.stringify({ name, config: mirror(`${IN}\\.orders`, { "emit.offset-syncs.enabled": "true" }) }),
    });
    expect([res.status, res.status === 201 ? "" : await res.text()]).toEqual([201, ""]);
    expect((await settled(rt, proxy(`/connectors/${enc(name)}`), { method: "DELETE", role: "admin" })).status).toBe(204);
    const added = (await auditEntries(rt)).find((e) => e.content.connector === name && e.change === "ADD")!;
    expect(added).toMatchObject({ userId: "alice", content: { outcome: "SUCCESS" } });
    expect(added.content.topicRulesOverridden).toContain(`mm2-offset-syncs.${IN}-dst.internal`);
  }, 120_000);

  test("22.2: a validation is refused only for what the config names: a form's empty config gets the plugin's definitions", async () => {
    const probe = { "connector.class": MIRROR_SOURCE, name: "loupe-definitions" };
    const validate = await rt.request(proxy("/connector-plugins/MirrorSourceConnector/config/validate"), {
      method: "PUT",
      token: writer,
      body: JSON.stringify(probe),
    });
    expect([validate.status, ((await validate.json()) as { configs: unknown[] }).configs.length > 0]).toEqual([200, true]);
    // Created, the same config copies every topic (`topics` absent): refused.
    const name = connectorName("loupe scope probe");
    made.push(name);
    const create = await settled(rt, proxy("/connectors"), {
      method: "POST",
      token: writer,
      body: JSON.stringify({ name, config: probe }),
    });
    expect([create.status, (await errorOf(create)).message]).toEqual([
      403,
      expect.stringContaining("it reads '*' (topics (absent: every topic))"),
    ]);
  }, 60_000);

  test("22.2: topics that cannot be known (a plugin the cluster lacks, a renaming transform, a custom policy) need an admin without limits", async () => {
    const token = await rt.token("write");
    await expectRefused(rt, token, { "connector.class": "com.acme.NoSuchConnector", "tasks.max": "1" }, null, [
      "com.acme.NoSuchConnector is not a connector plugin of this Kafka Connect cluster",
    ]);
    await expectRefused(
      rt,
      token,
      heartbeatConfig({
        transforms: "route",
        "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.route.regex": ".*",
        "transforms.route.replacement": SECRET,
      }),
      "MirrorHeartbeatConnector",
      [
        "transform 'route' (org.apache.kafka.connect.transforms.RegexRouter) renames the topics the connector writes",
        "an admin without limits",
      ],
    );
    await expectRefused(rt, writer, mirror(`${IN}\\.orders`, { "replication.policy.class": "com.acme.Policy" }), "MirrorSourceConnector", [
      "replication.policy.class com.acme.Policy",
    ]);
  }, 90_000);
});

describe("22.2: the Kafka cluster a Connect cluster acts on", () => {
  let rt: TestRuntime;
  const made: string[] = [];
  const run = uniqueTopic("b").slice(2);

  beforeAll(async () => {
    // One broker under two names: the alias is bound to `other`, requests select `local` by default.
    rt = await testRuntime({
      kafka: {
        clusters: [
          { name: "local", bootstrapServers: bootstrap(), default: true },
          { name: "other", bootstrapServers: bootstrap() },
        ],
      },
      connect: { clusters: [{ alias: ALIAS, ...connectEnv(), kafkaCluster: "other" }], timeout: "20s", grace: "2s" },
    });
  });
  afterAll(async () => {
    for (const name of made) await deleteDirect(name);
    await rt.dispose();
  }, 60_000);

  test("22.2: the roles and scopes of the alias's kafkaCluster apply, whatever cluster the request selects", async () => {
    const group = (name: string, roles: ("write" | "read")[], clusters: string[], allow: string[]) => ({
      name,
      roles,
      clusters,
      topics: { allow },
    });
    // Writes every topic of `local`, only reads `other`.
    const localWriter = await scopedUser(rt, `lw-${run}`, [
      group(`g-lw-${run}`, ["write"], ["local"], ["*"]),
      group(`g-lr-${run}`, ["read"], ["other"], ["*"]),
    ]);
    // Writes `heartbeats` on `other` only; then on both.
    const otherWriter = await scopedUser(rt, `ow-${run}`, [group(`g-ow-${run}`, ["write"], ["other"], ["heartbeats"])]);
    const bothWriter = await scopedUser(rt, `bw-${run}`, [group(`g-bw-${run}`, ["write"], ["other", "local"], ["heartbeats"])]);
    const name = connectorName("loupe bound");
    made.push(name);
    for (const headers of [{ "x-service-cluster": "other" }, { "x-service-cluster": "local" }]) {
      const refused = await rt.request(proxy("/connectors"), {
        method: "POST",
        token: localWriter,
        headers,
        body: JSON.stringify({ name, config: heartbeatConfig() }),
      });
      expect([refused.status, (await errorOf(refused)).message]).toEqual([403, expect.stringContaining("Role read may not POST")]);
    }
    expect((await rt.request(proxy("/connectors"), { token: localWriter })).status).toBe(200);
    // The heartbeat config names the broker's address, which is `local`'s too: its topics are checked there as well.
    const elsewhere = await rt.request(proxy("/connectors"), {
      method: "POST",
      token: otherWriter,
      body: JSON.stringify({ name, config: heartbeatConfig() }),
    });
    expect([elsewhere.status, (await errorOf(elsewhere)).message]).toEqual([
      403,
      expect.stringContaining(
        "it writes 'heartbeats' (heartbeats (emit.heartbeats.enabled)) on cluster local: Topic 'heartbeats' is outside your scope",
      ),
    ]);
    const created = await settled(rt, proxy("/connectors"), {
      method: "POST",
      token: bothWriter,
      body: JSON.stringify({ name, config: heartbeatConfig() }),
    });
    expect([created.status, created.status === 201 ? "" : await created.text()]).toEqual([201, ""]);
    expect((await settled(rt, proxy(`/connectors/${enc(name)}`), { method: "DELETE", token: bothWriter })).status).toBe(204);
    // Its alert 3000 is raised on the bound cluster.
    const alerts = await rt.notifications.list({ limit: 20, alertId: 3000 });
    expect(alerts.find((a) => a.labels.instance === `${ALIAS}/${name}`)).toMatchObject({ labels: { cluster: "other" } });
  }, 90_000);
});
