import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { z } from "zod";
import { assertTableServed, createApp } from "../../src/app.ts";
import { AREAS, type AreaName } from "../../src/areas.ts";
import { ROLES, type Role } from "../../src/config/schema.ts";
import { type AccessRule, LEVEL_ROLES, ruleKey } from "../../src/http/access.ts";
import { defineRoute } from "../../src/http/route.ts";
import { ACCESS_RULES, ROUTES } from "../../src/routes.ts";
import { connectEnv, registryEnv, uniqueTopic } from "../cluster/cluster.ts";
import { connectorName, deleteDirect, heartbeatConfig, REBALANCING, runningThrough } from "../connect/helpers.ts";
import { pythonDescriptorSet } from "../helpers/protobuf.ts";
import { ROLE_USERS, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { describeCluster } from "../kafka/test-only.ts";

/**
 * Walks every route of the access table, without a token and as each role, against a real
 * resource prepared for it: a role the rule allows must succeed (2xx), a role it does not
 * must get 403 and leave an audit entry, no token must get 401. Each route has one helper
 * that prepares its request (a real topic, a group with committed offsets and no members, a
 * running query...); routes that use their resource up get a fresh one per allowed call.
 */
let rt: TestRuntime;
const topics: string[] = [];
const groups: string[] = [];
/** A topic with records, stored metadata may come and go on it; and a group with committed offsets on it. */
let topic: string;
let group: string;
/** The topic a descriptor set is stored for (its value becomes PROTOBUF), made when first needed. */
let protoTopic: Promise<string> | undefined;
/** A topic the insert routes write to, so the shared topic keeps its three records. */
let insertTopic: string;

beforeAll(async () => {
  // The role users' argon2id hashes at the lowest cost: the many logins here test the access
  // rules, not password hashing (a store user's password keeps the product's cost).
  const users = await Promise.all(
    ROLES.map(async (role) => ({
      name: ROLE_USERS[role].name,
      passwordHash: await Bun.password.hash(ROLE_USERS[role].password, { algorithm: "argon2id", memoryCost: 1024, timeCost: 1 }),
      roles: [role],
    })),
  );
  rt = await testRuntime({
    users,
    lag: { cacheTtl: 0 },
    schemaRegistry: { ...registryEnv(), allowDelete: true },
    connect: { clusters: [{ alias: "rbac", ...connectEnv() }], timeout: "20s" },
  });
  topic = await newTopic("rbac");
  insertTopic = await newTopic("rbac-ins");
  group = await newGroup(topic);
});
afterAll(async () => {
  await removeSubjects();
  for (const name of connectors) await deleteDirect(name);
  await rt.dispose({ topics, groups });
}, 60_000);

/** A topic with three JSON records, created through the API so that it has leaders when it answers. */
async function newTopic(prefix: string): Promise<string> {
  const name = uniqueTopic(prefix);
  topics.push(name);
  const res = await rt.request("/api/topics", { method: "POST", role: "admin", body: JSON.stringify({ topicName: name, partitions: 1 }) });
  expect(res.status).toBe(201);
  await rt.kafka.default().writes.produce(
    name,
    [1, 2, 3].map((i) => ({ key: `k${i}`, value: JSON.stringify({ i }) })),
  );
  return name;
}

/** Processors are created by the write user: its role may change them as their owner, an admin as admin. */
let processorCount = 0;
let processorOut: string | undefined;
async function newProcessor(): Promise<string> {
  processorOut ??= await newTopic("rbac-proc-out");
  const res = await rt.request("/api/streams", {
    method: "POST",
    role: "write",
    headers: { accept: "text/plain" },
    body: JSON.stringify({
      name: `rbac-proc-${++processorCount}`,
      sql: `INSERT INTO \`${processorOut}\` SELECT STREAM * FROM \`${topic}\``,
    }),
  });
  expect(res.status).toBe(200);
  return res.text();
}
let sharedProcessorId: Promise<string> | undefined;
const sharedProcessor = () => {
  sharedProcessorId ??= newProcessor();
  return sharedProcessorId;
};
const processorCall = async (suffix: string): Promise<Prepared> => ({ path: `/api/streams/${await sharedProcessor()}${suffix}` });

/** Redrive jobs are created by the write user (their owner), PAUSED: a fresh one for each call that uses one up. */
async function newRedrive(): Promise<string> {
  processorOut ??= await newTopic("rbac-proc-out");
  const res = await rt.request("/api/redrives", { method: "POST", role: "write", body: JSON.stringify({ topic, target: processorOut }) });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}
let sharedRedriveId: Promise<string> | undefined;
const redriveCall = async (suffix: string): Promise<Prepared> => {
  sharedRedriveId ??= newRedrive();
  return { path: `/api/redrives/${await sharedRedriveId}${suffix}` };
};
const freshRedrive =
  (suffix: string): Prepare =>
  async (c) =>
    c.allowed ? { path: `/api/redrives/${await newRedrive()}${suffix}` } : redriveCall(suffix);

/** A consumer group with committed offsets and no members: what reset and delete act on. */
async function newGroup(on: string): Promise<string> {
  const id = uniqueTopic("rbac-group");
  groups.push(id);
  await rt.kafka.default().groups.alterOffsets(id, [{ topic: on, partition: 0, offset: 1 }]);
  return id;
}

/** A share group (Kafka 4, KIP-932) with a start offset on `on`: setting one creates the group. */
async function newShareGroup(on: string): Promise<string> {
  const id = uniqueTopic("rbac-share");
  groups.push(id);
  await rt.kafka.default().shareGroups.alterStartOffsets(id, [{ topic: on, partition: 0, offset: 0 }]);
  return id;
}

let shareGroup: string | undefined;
/** One share group for the routes that only read it. */
const sharedShareGroup = async () => (shareGroup ??= await newShareGroup(topic));

async function storeMetadata(on: string): Promise<void> {
  const res = await rt.request(`/api/metadata/topics/${on}?keyType=STRING&valueType=JSON`, { method: "POST", role: "admin" });
  expect(res.status).toBe(200);
}

async function freshToken(role: Role): Promise<string> {
  const res = await rt.app.request("/api/login", {
    method: "POST",
    body: JSON.stringify({ user: ROLE_USERS[role].name, password: ROLE_USERS[role].password }),
  });
  return res.text();
}

let aclCount = 0;
/** A READ binding on the shared topic for a principal no other test uses. */
const aclBinding = () => ({
  resourceType: "Topic",
  resourceName: topic,
  principal: `User:rbac-acl-${process.pid}-${++aclCount}`,
  permissionType: "Allow",
  host: "*",
  operation: "Read",
});

let kafkaUserCount = 0;
const kafkaUserName = () => `rbac-kuser-${process.pid}-${++kafkaUserCount}`;
/** A SCRAM user made for an allowed call (a denied one names a user that need not exist). */
async function newKafkaUser(c: Caller): Promise<string> {
  const name = kafkaUserName();
  if (c.allowed)
    expect(
      (await rt.request("/api/kafka-users", { method: "POST", role: "admin", body: JSON.stringify({ name, password: "rbac-password-1" }) }))
        .status,
    ).toBe(200);
  return name;
}

/** The caller of one call: a role and its token, or no token at all. */
interface Caller {
  role?: Role;
  token?: string;
  /** Whether the rule lets this caller through; a denied call is prepared the same way. */
  allowed: boolean;
}

interface Prepared {
  path: string;
  body?: string;
  headers?: Record<string, string>;
  /** The token to send instead of the caller's (logout revokes the one it is given). */
  token?: string;
  /** An event stream: only its first line is read. */
  stream?: boolean;
  /** A websocket: the handshake is made, and 101 is its success. */
  upgrade?: boolean;
  /** Checks the answer of an allowed call beyond its 2xx. */
  check?(res: Response): Promise<void>;
  /** Whether to send the call again (Connect's 409 while its workers rebalance), within 30 s. */
  retry?(res: Response): Promise<boolean>;
  /** Runs after the call (closes what the preparation opened). */
  cleanup?(): Promise<void>;
}

type Prepare = (caller: Caller) => Promise<Prepared>;

const get =
  (path: string, check?: Prepared["check"]): Prepare =>
  async () => ({ path, ...(check ? { check } : {}) });

const jsonArray = async (res: Response) => expect(Array.isArray(await res.json())).toBe(true);

/**
 * One request per route, under the name of the route's area (src/areas.ts): an area without
 * its fixtures does not compile, and a route of an area without one fails below. Paths are
 * functions: the shared resources exist only once beforeAll ran.
 */
const FIXTURES: { [A in AreaName]: Record<string, Prepare> } = {
  auth: {
    "POST /api/login": async (c) => ({
      path: "/api/login",
      body: JSON.stringify({ user: ROLE_USERS[c.role ?? "nodata"].name, password: ROLE_USERS[c.role ?? "nodata"].password }),
      check: async (res) => expect((await res.text()).length).toBeGreaterThan(10),
    }),
    "GET /api/auth": async (c) => ({
      path: "/api/auth",
      check: async (res) => expect(((await res.json()) as { user: string }).user).toBe(ROLE_USERS[c.role!].name),
    }),
    // Logout revokes the token it is given: a fresh one per call, which stops working after.
    "GET /api/logout": async (c) => logout(c),
    "POST /api/logout": async (c) => logout(c),
  },
  health: {
    "GET /api/health": get("/api/health"),
  },
  "api-docs": {
    "GET /api/openapi.json": get("/api/openapi.json", async (res) =>
      expect(((await res.json()) as { openapi: string }).openapi).toStartWith("3.1"),
    ),
    "GET /api/docs": get("/api/docs", async (res) => expect(await res.text()).toContain("Loupe API reference")),
  },
  audit: {
    "GET /api/audit": get("/api/audit", jsonArray),
    "GET /api/sse/audit": async () => ({
      path: "/api/sse/audit",
      stream: true,
      headers: { accept: "application/json, text/event-stream" },
    }),
  },
  logs: {
    "GET /api/logs/INFO": get("/api/logs/INFO", jsonArray),
    "GET /api/logs/METRICS": get("/api/logs/METRICS", jsonArray),
  },
  sql: {
    "GET /api/sql/validation": async () => ({
      path: `/api/sql/validation?${new URLSearchParams({ sql: `SELECT * FROM \`${topic}\`` })}`,
      check: async (res) => expect(await res.json()).toMatchObject({ isValid: true }),
    }),
    "GET /api/sql/data": async () => ({
      path: `/api/sql/data?${new URLSearchParams({ sql: `SELECT * FROM \`${topic}\` LIMIT 2` })}`,
      headers: { accept: "application/json" },
      check: async (res) => expect(((await res.json()) as { messages: unknown[] }).messages.length).toBe(2),
    }),
    "GET /api/sql/queries": get("/api/sql/queries", jsonArray),
    // A query of the caller's own, started in-process and left unread so that it keeps running
    // (its stream starts when read); stopping it answers true and removes it from the list.
    "DELETE /api/sql/queries/:id": async (c) => {
      if (!c.allowed || !c.token) return { path: "/api/sql/queries/no-such-query" };
      const query = await rt.app.request(`/api/sql/data?${new URLSearchParams({ sql: `SELECT * FROM \`${topic}\`` })}`, {
        headers: { "x-service-token": c.token, accept: "text/event-stream" },
      });
      expect(query.status).toBe(200);
      const mine = rt.sql.queries.list(ROLE_USERS[c.role!].name, false);
      expect(mine.length).toBe(1);
      return {
        path: `/api/sql/queries/${mine[0]!.id}`,
        check: async (res) => {
          expect(await res.json()).toBe(true);
          expect(rt.sql.queries.list(ROLE_USERS[c.role!].name, false)).toEqual([]);
        },
        cleanup: async () => void (await query.body?.cancel().catch(() => {})),
      };
    },
  },
  "sql-library": {
    "GET /api/sql/history": get("/api/sql/history", jsonArray),
    "DELETE /api/sql/history": get("/api/sql/history", async (res) =>
      expect(await res.json()).toMatchObject({ removed: expect.any(Number) }),
    ),
    "GET /api/sql/saved": get("/api/sql/saved", jsonArray),
    "PUT /api/sql/saved/:name": async () => ({
      path: "/api/sql/saved/rbac%20query",
      body: JSON.stringify({ text: `SELECT * FROM \`${topic}\`` }),
    }),
    "DELETE /api/sql/saved/:name": async (c) => {
      if (c.allowed && c.token)
        await rt.request("/api/sql/saved/rbac%20gone", { method: "PUT", token: c.token, body: JSON.stringify({ text: "SELECT 1" }) });
      return { path: "/api/sql/saved/rbac%20gone" };
    },
  },
  live: {
    "GET /api/kafka/ws/:clientId": async () => ({ path: "/api/kafka/ws/rbac-client", upgrade: true }),
  },
  "jdbc-select": {
    "GET /api/ws/jdbc/data": async () => ({
      path: `/api/ws/jdbc/data?${new URLSearchParams({ sql: `SELECT * FROM \`${topic}\` LIMIT 1` })}`,
      upgrade: true,
    }),
  },
  processors: {
    "GET /api/streams": async () => {
      await sharedProcessor();
      return {
        path: "/api/streams",
        check: async (res) => expect(((await res.json()) as { streams: unknown[] }).streams.length).toBeGreaterThan(0),
      };
    },
    "GET /api/streams/:processorId": async () => processorCall(""),
    "POST /api/streams": async () => {
      processorOut ??= await newTopic("rbac-proc-out");
      return {
        path: "/api/streams",
        body: JSON.stringify({
          name: `rbac-proc-${++processorCount}`,
          sql: `INSERT INTO \`${processorOut}\` SELECT STREAM * FROM \`${topic}\``,
        }),
        headers: { accept: "text/plain" },
        check: async (res) => expect(await res.text()).toStartWith("lsql_"),
      };
    },
    "PUT /api/streams/:processorId/pause": async () => processorCall("/pause"),
    "PUT /api/streams/:processorId/resume": async () => processorCall("/resume"),
    "PUT /api/streams/:processorId/scale/:numberOfRunners": async () => processorCall("/scale/1"),
    // A fresh processor per allowed call: the deletion uses it up.
    "DELETE /api/streams/:processorId": async (c) => (c.allowed ? { path: `/api/streams/${await newProcessor()}` } : processorCall("")),
  },
  redrive: {
    "GET /api/redrives": async () => {
      const prepared = await redriveCall("");
      const id = prepared.path.split("/").pop();
      return {
        path: "/api/redrives",
        check: async (res) => expect(((await res.json()) as { redrives: Array<{ id: string }> }).redrives.map((r) => r.id)).toContain(id!),
      };
    },
    "GET /api/redrives/:redriveId": async () => redriveCall(""),
    "POST /api/redrives": async () => {
      processorOut ??= await newTopic("rbac-proc-out");
      return { path: "/api/redrives", body: JSON.stringify({ topic, target: processorOut }) };
    },
    "POST /api/redrives/:redriveId/dry-run": async () => ({
      ...(await redriveCall("/dry-run")),
      check: async (res) => expect(((await res.json()) as { counts: { written: number } }).counts.written).toBe(3),
    }),
    "PUT /api/redrives/:redriveId/start": freshRedrive("/start"),
    "PUT /api/redrives/:redriveId/pause": async () => redriveCall("/pause"),
    "PUT /api/redrives/:redriveId/resume": freshRedrive("/resume"),
    "PUT /api/redrives/:redriveId/cancel": freshRedrive("/cancel"),
  },
  topics: {
    "GET /api/topics": get("/api/topics", async (res) =>
      expect((await res.json()) as Array<{ topicName: string }>).toContainEqual(expect.objectContaining({ topicName: topic })),
    ),
    "GET /api/topics/:topicName": async () => ({
      path: `/api/topics/${topic}`,
      check: async (res) => expect(await res.json()).toMatchObject({ topicName: topic, totalMessages: 3 }),
    }),
    "POST /api/topics": async (c) => {
      const name = uniqueTopic("rbac-new");
      if (c.allowed) topics.push(name);
      return {
        path: "/api/topics",
        body: JSON.stringify({ topicName: name, partitions: 1 }),
        check: async () => expect((await rt.kafka.default().topics.list()).some((t) => t.name === name)).toBe(true),
      };
    },
    "DELETE /api/topics/:topicName": async (c) => {
      const name = c.allowed ? await newTopic("rbac-del") : topic;
      return {
        path: `/api/topics/${name}`,
        check: async () => expect((await rt.kafka.default().topics.list()).some((t) => t.name === name)).toBe(false),
      };
    },
    "PUT /api/topics/config/:topicName": async () => ({
      path: `/api/topics/config/${topic}`,
      body: JSON.stringify({ configs: [{ key: "retention.ms", value: "86400000" }] }),
    }),
    "DELETE /api/topics/:topicName/:partition/:offset": async (c) => {
      const name = c.allowed ? await newTopic("rbac-dr") : topic;
      return { path: `/api/topics/${name}/0/1`, check: async (res) => expect(await res.text()).toContain("are being deleted") };
    },
    "PUT /api/topics/:topicName/partitions": async (c) => {
      const name = c.allowed ? await newTopic("rbac-grow") : topic;
      return {
        path: `/api/topics/${name}/partitions`,
        body: JSON.stringify({ partitions: 2 }),
        check: async (res) => expect(await res.json()).toEqual({ topicName: name, partitions: 2, previous: 1 }),
      };
    },
    "GET /api/topics/:topicName/records": async () => ({
      path: `/api/topics/${topic}/records?limit=2`,
      check: async (res) => expect(((await res.json()) as { records: unknown[] }).records.length).toBe(2),
    }),
    "GET /api/topics/:topicName/records/formats": async () => ({
      path: `/api/topics/${insertTopic}/records/formats`,
      check: async (res) => expect(await res.json()).toMatchObject({ topicName: insertTopic, key: { format: "STRING" } }),
    }),
    "POST /api/topics/:topicName/records": async () => ({
      path: `/api/topics/${insertTopic}/records`,
      body: JSON.stringify({ records: [{ key: "k7", value: '{"i":7}', headers: { via: "rbac" } }] }),
      check: async (res) => expect(await res.json()).toMatchObject({ topicName: insertTopic, records: 1 }),
    }),
  },
  metadata: {
    "GET /api/metadata/topics": get("/api/metadata/topics", jsonArray),
    "GET /api/metadata/topics/:topicName": async () => ({
      path: `/api/metadata/topics/${topic}`,
      check: async (res) => expect(await res.json()).toMatchObject({ topicName: topic }),
    }),
    "POST /api/metadata/topics/:topicName": async () => ({ path: `/api/metadata/topics/${topic}?keyType=STRING&valueType=JSON` }),
    "PUT /api/metadata/topics/:topicName/protobuf/:side": async () => {
      protoTopic ??= newTopic("rbac-proto");
      return {
        path: `/api/metadata/topics/${await protoTopic}/protobuf/value`,
        body: JSON.stringify({ messageType: "loupe.test.Refund", descriptorSet: pythonDescriptorSet().toString("base64") }),
        check: async (res) => expect(await res.json()).toMatchObject({ valueType: "PROTOBUF", messageType: "loupe.test.Refund" }),
      };
    },
    "DELETE /api/metadata/topics/:topicName": async (c) => {
      if (c.allowed) await storeMetadata(topic);
      return { path: `/api/metadata/topics/${topic}` };
    },
    "DELETE /api/system/topics/metadata/:topicName": async (c) => {
      if (c.allowed) await storeMetadata(topic);
      return { path: `/api/system/topics/metadata/${topic}` };
    },
  },
  jdbc: {
    "GET /api/jdbc/metadata/table": get("/api/jdbc/metadata/table", async (res) =>
      expect((await res.json()) as Array<{ name: string }>).toContainEqual(expect.objectContaining({ name: topic, valueType: "JSON" })),
    ),
    "POST /api/jdbc/insert": async () => ({
      path: "/api/jdbc/insert",
      body: `SET _ktype='STRING'; INSERT INTO \`${insertTopic}\` (_key, i) VALUES ('k9', 9)`,
      headers: { "content-type": "text/plain" },
      check: async (res) => expect(await res.json()).toMatchObject({ topic: insertTopic, records: 1 }),
    }),
    "GET /api/jdbc/insert/prepared": async () => ({
      path: `/api/jdbc/insert/prepared?${new URLSearchParams({ sql: `INSERT INTO \`${insertTopic}\` (_key, i) VALUES (?, ?)` })}`,
      check: async (res) => expect(((await res.json()) as { info: { topic: string } }).info.topic).toBe(insertTopic),
    }),
    "POST /api/jdbc/insert/prepared/:topic": async () => ({
      path: `/api/jdbc/insert/prepared/${insertTopic}?kt=STRING&vt=JSON`,
      body: JSON.stringify([{ key: "k8", value: { i: 8 } }]),
      check: async (res) => expect(await res.json()).toMatchObject({ topic: insertTopic, records: 1 }),
    }),
  },
  consumers: {
    "GET /api/consumers": get("/api/consumers", async (res) =>
      expect((await res.json()) as Array<{ id: string }>).toContainEqual(expect.objectContaining({ id: group })),
    ),
    "GET /api/consumers/:group": async () => ({
      path: `/api/consumers/${group}`,
      check: async (res) => expect(await res.json()).toMatchObject({ id: group, members: [] }),
    }),
    "GET /api/consumers/:group/lag-history": async () => ({
      path: `/api/consumers/${group}/lag-history`,
      check: async (res) => expect(await res.json()).toMatchObject({ group, points: expect.any(Array) }),
    }),
    "PUT /api/consumers/:group/offsets": async () => ({
      path: `/api/consumers/${group}/offsets`,
      body: JSON.stringify({ to: "earliest" }),
    }),
    "DELETE /api/consumers/:group": async (c) => {
      const id = c.allowed ? await newGroup(topic) : group;
      return {
        path: `/api/consumers/${id}`,
        check: async () => expect((await rt.kafka.default().groups.list()).some((g) => g.groupId === id)).toBe(false),
      };
    },
    "GET /api/share-groups/:group": async () => ({
      path: `/api/share-groups/${await sharedShareGroup()}`,
      check: async (res) => expect(await res.json()).toMatchObject({ type: "share", members: [] }),
    }),
    "PUT /api/share-groups/:group/offsets": async () => ({
      path: `/api/share-groups/${await newShareGroup(topic)}/offsets`,
      body: JSON.stringify({ to: "latest" }),
    }),
    "DELETE /api/share-groups/:group/offsets": async () => ({
      path: `/api/share-groups/${await newShareGroup(topic)}/offsets?topics=${topic}`,
    }),
    "DELETE /api/share-groups/:group": async () => ({ path: `/api/share-groups/${await newShareGroup(topic)}` }),
    "GET /api/share-groups/:group/configs": async () => ({
      path: `/api/share-groups/${await sharedShareGroup()}/configs`,
      check: async (res) => expect(await res.json()).toContainEqual(expect.objectContaining({ name: "share.auto.offset.reset" })),
    }),
    "PUT /api/share-groups/:group/configs": async () => ({
      path: `/api/share-groups/${await newShareGroup(topic)}/configs`,
      body: JSON.stringify({ configs: [{ key: "share.auto.offset.reset", value: "earliest" }] }),
    }),
  },
  cluster: {
    "GET /api/cluster": get("/api/cluster", async (res) => expect(((await res.json()) as { brokers: unknown[] }).brokers.length).toBe(1)),
  },
  alerts: {
    "GET /api/alerts": get("/api/alerts", jsonArray),
    "POST /api/alerts": async () => ({
      path: "/api/alerts",
      body: JSON.stringify({
        alertId: 4000,
        labels: { severity: "info", category: "Topics", instance: `rbac-${crypto.randomUUID()}` },
        annotations: { summary: "raised by the role matrix", source: "rbac", docs: "" },
        startsAt: new Date().toISOString(),
        endsAt: "",
      }),
      check: async (res) => expect(((await res.json()) as { alertId: number }).alertId).toBe(4000),
    }),
    "GET /api/alerts/deliveries": get("/api/alerts/deliveries", jsonArray),
    "GET /api/alerts/settings": get("/api/alerts/settings", async (res) =>
      expect(Object.keys(((await res.json()) as { categories: object }).categories)).toContain("Consumers"),
    ),
    "GET /api/alerts/settings/:alert_setting_id": get("/api/alerts/settings/2000", async (res) =>
      expect(((await res.json()) as { id: number }).id).toBe(2000),
    ),
    "PUT /api/alerts/settings/:alert_setting_id": async () => ({ path: "/api/alerts/settings/4002" }),
    "GET /api/alerts/settings/:alert_setting_id/condition": get("/api/alerts/settings/2000/condition"),
    "POST /api/alerts/settings/:alert_setting_id/condition": async () => ({
      path: "/api/alerts/settings/2000/condition",
      body: `lag >= 100 on group ${group} and topic ${topic}`,
      headers: { "content-type": "text/plain" },
    }),
    "POST /api/alerts/settings/:alert_setting_id/condition/:condition_uuid": async () => ({
      path: `/api/alerts/settings/2000/condition/${crypto.randomUUID()}`,
      body: `lag-seconds >= 60 on group ${group} and topic * for 5m`,
      headers: { "content-type": "text/plain" },
    }),
    // A condition of its own per allowed call: the removal uses it up.
    "DELETE /api/alerts/settings/:alert_setting_id/condition/:condition_uuid": async (c) => {
      if (!c.allowed) return { path: `/api/alerts/settings/2000/condition/${crypto.randomUUID()}` };
      const res = await rt.request("/api/alerts/settings/2000/condition", {
        method: "POST",
        role: "admin",
        body: `lag >= 5 on group ${group} and topic ${topic}`,
        headers: { "content-type": "text/plain" },
      });
      expect(res.status).toBe(200);
      return { path: `/api/alerts/settings/2000/condition/${((await res.json()) as { id: string }).id}` };
    },
    "GET /api/sse/alerts": async () => ({
      path: "/api/sse/alerts",
      stream: true,
      headers: { accept: "application/json, text/event-stream" },
    }),
  },
  connect: {
    "GET /api/connect/clusters": get("/api/connect/clusters", async (res) =>
      expect(await res.json()).toContainEqual({
        alias: "rbac",
        workers: expect.arrayContaining([expect.objectContaining({ state: "UP" })]),
      }),
    ),
    "GET /api/proxy-connect/:clusterAlias/connectors": async () => ({
      path: CONNECT,
      retry: rebalancing,
      check: async (res) => expect(((await res.json()) as unknown[]).every((n) => typeof n === "string")).toBe(true),
    }),
    "POST /api/proxy-connect/:clusterAlias/connectors": async (c) => {
      const name = connectorName("rbac new");
      if (c.allowed) connectors.push(name);
      return { path: CONNECT, body: JSON.stringify({ name, config: beatingConfig() }), retry: rebalancing };
    },
    "GET /api/proxy-connect/:clusterAlias/connectors/:connectorName": async () =>
      connectorCall("", async (res) => expect(await res.json()).toMatchObject({ name: await sharedConnector(), type: "source" })),
    "GET /api/proxy-connect/:clusterAlias/connectors/:connectorName/config": async () =>
      connectorCall("/config", async (res) => expect(await res.json()).toMatchObject({ "tasks.max": "1" })),
    "PUT /api/proxy-connect/:clusterAlias/connectors/:connectorName/config": async () => ({
      ...(await connectorCall("/config")),
      body: JSON.stringify(beatingConfig()),
    }),
    "GET /api/proxy-connect/:clusterAlias/connectors/:connectorName/status": async () =>
      connectorCall("/status", async (res) => expect(await res.json()).toMatchObject({ connector: { state: expect.any(String) } })),
    "PUT /api/proxy-connect/:clusterAlias/connectors/:connectorName/pause": async () => connectorCall("/pause"),
    "PUT /api/proxy-connect/:clusterAlias/connectors/:connectorName/resume": async () => connectorCall("/resume"),
    "POST /api/proxy-connect/:clusterAlias/connectors/:connectorName/restart": async () => connectorCall("/restart"),
    "GET /api/proxy-connect/:clusterAlias/connectors/:connectorName/tasks": async () =>
      connectorCall("/tasks", async (res) => expect(((await res.json()) as unknown[]).length).toBe(1)),
    "GET /api/proxy-connect/:clusterAlias/connectors/:connectorName/tasks/:task_id/status": async () =>
      connectorCall("/tasks/0/status", async (res) => expect(await res.json()).toMatchObject({ id: 0 })),
    "POST /api/proxy-connect/:clusterAlias/connectors/:connectorName/tasks/:task_id/restart": async () => connectorCall("/tasks/0/restart"),
    // A fresh connector per allowed call: the deletion uses it up.
    "DELETE /api/proxy-connect/:clusterAlias/connectors/:connectorName": async (c) => {
      if (!c.allowed) return connectorCall("");
      const name = connectorName("rbac del");
      connectors.push(name);
      const res = await rt.request(CONNECT, { method: "POST", role: "admin", body: JSON.stringify({ name, config: beatingConfig() }) });
      expect(res.status).toBe(201);
      return { path: `${CONNECT}/${encodeURIComponent(name)}`, retry: rebalancing };
    },
    "GET /api/proxy-connect/:clusterAlias/connector-plugins": get("/api/proxy-connect/rbac/connector-plugins", async (res) =>
      expect((await res.json()) as unknown[]).toContainEqual(expect.objectContaining({ name: "MirrorMaker Heartbeat", uiEnabled: true })),
    ),
    "PUT /api/proxy-connect/:clusterAlias/connector-plugins/:plugin/config/validate": async () => ({
      path: "/api/proxy-connect/rbac/connector-plugins/MirrorHeartbeatConnector/config/validate",
      body: JSON.stringify({ ...beatingConfig(), name: "rbac-validate" }),
      check: async (res) => expect(await res.json()).toMatchObject({ error_count: 0 }),
    }),
  },
  metrics: {
    "GET /metrics": get("/metrics", async (res) => expect(await res.text()).toContain("# TYPE")),
  },
  schemas: {
    // Schema registry proxy: one subject registered once (re-registering its schema adds no
    // version), a fresh subject for each allowed delete, the global level set to what it is.
    "GET /api/proxy-sr/subjects": get("/api/proxy-sr/subjects", jsonArray),
    "GET /api/proxy-sr/subjects/:subject/versions": async () => ({
      path: `/api/proxy-sr/subjects/${(await srSubject()).subject}/versions`,
      check: async (res) => expect(await res.json()).toEqual([1]),
    }),
    "DELETE /api/proxy-sr/subjects/:subject": async (c) => ({
      path: `/api/proxy-sr/subjects/${(c.allowed ? await srRegister("rbac-sr-del") : await srSubject()).subject}`,
      check: async (res) => expect(await res.json()).toEqual([1]),
    }),
    "GET /api/proxy-sr/schemas/ids/:id": async () => ({ path: `/api/proxy-sr/schemas/ids/${(await srSubject()).id}` }),
    "GET /api/proxy-sr/subjects/:subject/versions/:version": async () => {
      const { subject, id } = await srSubject();
      return {
        path: `/api/proxy-sr/subjects/${subject}/versions/latest`,
        check: async (res) => expect(await res.json()).toMatchObject({ subject, id, version: 1 }),
      };
    },
    "GET /api/proxy-sr/subjects/:subject/versions/:version/schema": async () => ({
      path: `/api/proxy-sr/subjects/${(await srSubject()).subject}/versions/1/schema`,
      check: async (res) => expect(await res.json()).toMatchObject({ name: "Rbac" }),
    }),
    "POST /api/proxy-sr/subjects/:subject/versions": async () => {
      const { subject, id } = await srSubject();
      return {
        path: `/api/proxy-sr/subjects/${subject}/versions`,
        body: SR_SCHEMA,
        check: async (res) => expect(await res.json()).toEqual({ id }),
      };
    },
    "DELETE /api/proxy-sr/subjects/:subject/versions/:version": async (c) => ({
      path: `/api/proxy-sr/subjects/${(c.allowed ? await srRegister("rbac-sr-delv") : await srSubject()).subject}/versions/1`,
      check: async (res) => expect(await res.json()).toBe(1),
    }),
    "POST /api/proxy-sr/compatibility/subjects/:subject/versions/:version": async () => ({
      path: `/api/proxy-sr/compatibility/subjects/${(await srSubject()).subject}/versions/latest`,
      body: SR_SCHEMA,
      check: async (res) => expect(await res.json()).toMatchObject({ is_compatible: true }),
    }),
    "PUT /api/proxy-sr/config": async () => {
      const level = (await (await fetch(`${registryEnv().urls[0]}/config`)).json()) as { compatibilityLevel: string };
      return { path: "/api/proxy-sr/config", body: JSON.stringify({ compatibility: level.compatibilityLevel }) };
    },
    "GET /api/proxy-sr/config": get("/api/proxy-sr/config"),
    "PUT /api/proxy-sr/config/:subject": async () => ({
      path: `/api/proxy-sr/config/${(await srSubject()).subject}`,
      body: JSON.stringify({ compatibility: "BACKWARD" }),
    }),
    "GET /api/proxy-sr/config/:subject": async () => {
      const { subject } = await srSubject();
      await fetch(`${registryEnv().urls[0]}/config/${subject}`, {
        method: "PUT",
        body: JSON.stringify({ compatibility: "FULL" }),
        headers: { "content-type": "application/json" },
      });
      return {
        path: `/api/proxy-sr/config/${subject}`,
        check: async (res) => expect(await res.json()).toEqual({ compatibilityLevel: "FULL" }),
      };
    },
  },
  "server-info": {
    "GET /api/config": get("/api/config", async (res) =>
      expect(((await res.json()) as Record<string, unknown>)["lenses.sql.execution.mode"]).toBe("IN_PROC"),
    ),
    "GET /api/license": get("/api/license", async (res) => expect(await res.json()).toMatchObject({ isRespected: true })),
  },
  profile: {
    "GET /api/user/profile": get("/api/user/profile", async (res) => expect(await res.json()).toMatchObject({ topics: [] })),
    "PUT /api/user/profile/:property/:value": async () => ({
      path: `/api/user/profile/topics/${topic}`,
      check: async (res) => expect(((await res.json()) as { topics: string[] }).topics).toContain(topic),
    }),
    "DELETE /api/user/profile/:property/:value": async () => ({
      path: `/api/user/profile/topics/${topic}`,
      check: async (res) => expect(((await res.json()) as { topics: string[] }).topics).not.toContain(topic),
    }),
  },
  configs: {
    "GET /api/configs/default/topics/keys": get("/api/configs/default/topics/keys", async (res) =>
      expect(await res.json()).toContain("cleanup.policy"),
    ),
    // Broker changes set compression.type to "producer", its default, and remove it again: other
    // tests on the same broker see no difference.
    "GET /api/configs/brokers": get("/api/configs/brokers"),
    "PUT /api/configs/brokers": async (c) => brokerChange(c, null),
    "DELETE /api/configs/brokers": async () => ({ path: "/api/configs/brokers", body: JSON.stringify(["compression.type"]) }),
    "GET /api/configs/brokers/:brokerId": async () => ({
      path: `/api/configs/brokers/${await brokerId()}`,
      check: async (res) => expect(Number.isInteger(((await res.json()) as Record<string, unknown>)["log.cleaner.threads"])).toBe(true),
    }),
    "PUT /api/configs/brokers/:brokerId": async (c) => brokerChange(c, await brokerId()),
    "DELETE /api/configs/brokers/:brokerId": async () => ({
      path: `/api/configs/brokers/${await brokerId()}`,
      body: JSON.stringify(["compression.type"]),
    }),
  },
  brokers: {
    "GET /api/brokers": get("/api/brokers", async (res) => {
      const brokers = (await res.json()) as Array<{ id: number; isController: boolean; logDirs: unknown[] }>;
      expect(brokers.length).toBeGreaterThan(0);
      expect(brokers.some((b) => b.isController)).toBe(true);
    }),
    "GET /api/brokers/:brokerId/configs": async () => ({
      path: `/api/brokers/${await brokerId()}/configs`,
      check: async (res) =>
        expect((await res.json()) as Array<{ name: string }>).toContainEqual(expect.objectContaining({ name: "log.cleaner.threads" })),
    }),
  },
  // Quota changes act on users and client ids of their own; the defaults (which every client
  // of the shared broker falls under) get a consumer rate no test reaches, removed again after.
  quotas: {
    "GET /api/quotas": get("/api/quotas", jsonArray),
    "GET /api/quotas/effective": async () => ({
      path: `/api/quotas/effective?user=${QUOTA_USER}&clientId=${QUOTA_CLIENT}`,
      check: async (res) => expect(((await res.json()) as { quotas: unknown[] }).quotas.length).toBe(3),
    }),
    "PUT /api/quotas/users": async (c) => quotaChange(c, "/api/quotas/users", { user: null }, "USERS DEFAULT"),
    "DELETE /api/quotas/users": async () => quotaRemoval("/api/quotas/users"),
    "PUT /api/quotas/users/:user/clients": async (c) =>
      quotaChange(c, `/api/quotas/users/${QUOTA_USER}/clients`, { user: QUOTA_USER, clientId: null }, "USERS"),
    "DELETE /api/quotas/users/:user/clients": async () => quotaRemoval(`/api/quotas/users/${QUOTA_USER}/clients`),
    "PUT /api/quotas/users/:user/clients/:clientId": async (c) =>
      quotaChange(c, `/api/quotas/users/${QUOTA_USER}/clients/${QUOTA_CLIENT}`, { user: QUOTA_USER, clientId: QUOTA_CLIENT }, "USERCLIENT"),
    "DELETE /api/quotas/users/:user/clients/:clientId": async () => quotaRemoval(`/api/quotas/users/${QUOTA_USER}/clients/${QUOTA_CLIENT}`),
    "PUT /api/quotas/users/:user": async (c) => quotaChange(c, `/api/quotas/users/${QUOTA_USER}`, { user: QUOTA_USER }, "USER"),
    "DELETE /api/quotas/users/:user": async () => quotaRemoval(`/api/quotas/users/${QUOTA_USER}`),
    "PUT /api/quotas/clients": async (c) => quotaChange(c, "/api/quotas/clients", { clientId: null }, "CLIENTS DEFAULT"),
    "DELETE /api/quotas/clients": async () => quotaRemoval("/api/quotas/clients"),
    "PUT /api/quotas/clients/:clientId": async (c) =>
      quotaChange(c, `/api/quotas/clients/${QUOTA_CLIENT}`, { clientId: QUOTA_CLIENT }, "CLIENT"),
    "DELETE /api/quotas/clients/:clientId": async () => quotaRemoval(`/api/quotas/clients/${QUOTA_CLIENT}`),
  },
  acls: {
    "GET /api/acl": get("/api/acl", jsonArray),
    // A binding of a principal of its own per call: PUT creates it, DELETE deletes one made first.
    "PUT /api/acl": async (c) => {
      const body = aclBinding();
      return {
        path: "/api/acl",
        body: JSON.stringify(body),
        check: async (res) => expect(await res.json()).toMatchObject({ principal: body.principal, patternType: "LITERAL" }),
        cleanup: async () =>
          void (c.allowed ? await rt.request("/api/acl", { method: "DELETE", role: "admin", body: JSON.stringify(body) }) : null),
      };
    },
    "DELETE /api/acl": async (c) => {
      const body = aclBinding();
      if (c.allowed) expect((await rt.request("/api/acl", { method: "PUT", role: "admin", body: JSON.stringify(body) })).status).toBe(200);
      return { path: "/api/acl", body: JSON.stringify(body), check: async (res) => expect(await res.json()).toMatchObject(body) };
    },
    "GET /api/acl/explain": get(`/api/acl/explain?principal=User:rbac&resourceType=Topic&resourceName=rbac-x&operation=Read`, async (res) =>
      expect(await res.json()).toMatchObject({ principal: "User:rbac", reason: expect.any(String) }),
    ),
  },
  // SCRAM credentials on the open broker: users of their own per call, never used to log in.
  "kafka-users": {
    "GET /api/kafka-users": get("/api/kafka-users", jsonArray),
    "POST /api/kafka-users": async (c) => {
      const name = kafkaUserName();
      return {
        path: "/api/kafka-users",
        body: JSON.stringify({ name, password: "rbac-password-1" }),
        check: async (res) => expect(await res.json()).toEqual({ name, credentials: [{ mechanism: "SCRAM-SHA-512", iterations: 4096 }] }),
        cleanup: async () => void (c.allowed ? await rt.request(`/api/kafka-users/${name}`, { method: "DELETE", role: "admin" }) : null),
      };
    },
    "PUT /api/kafka-users/:name": async (c) => {
      const name = await newKafkaUser(c);
      return {
        path: `/api/kafka-users/${name}`,
        body: JSON.stringify({ password: "rbac-password-2", iterations: 8192 }),
        check: async (res) => expect(await res.json()).toEqual({ name, credentials: [{ mechanism: "SCRAM-SHA-512", iterations: 8192 }] }),
        cleanup: async () => void (c.allowed ? await rt.request(`/api/kafka-users/${name}`, { method: "DELETE", role: "admin" }) : null),
      };
    },
    "DELETE /api/kafka-users/:name": async (c) => {
      const name = await newKafkaUser(c);
      return { path: `/api/kafka-users/${name}`, check: async (res) => expect(await res.json()).toMatchObject({ name }) };
    },
  },
  groups: {
    "GET /api/groups": get("/api/groups", jsonArray),
    "POST /api/groups": async () => {
      const name = `rbac-new-${++groupCount}`;
      return {
        path: "/api/groups",
        body: JSON.stringify(scopeGroup(name)),
        check: async (res) => expect(await res.json()).toMatchObject({ name, source: "store" }),
      };
    },
    "GET /api/groups/:name": async () => ({
      path: `/api/groups/${await sharedGroup()}`,
      check: async (res) => expect(await res.json()).toMatchObject({ name: "rbac-group" }),
    }),
    "PUT /api/groups/:name": async () => ({
      path: `/api/groups/${await sharedGroup()}`,
      body: JSON.stringify({ roles: ["read"] }),
      check: async (res) => expect(await res.json()).toMatchObject({ name: "rbac-group", roles: ["read"] }),
    }),
    // A fresh group per allowed call: the deletion uses it up.
    "DELETE /api/groups/:name": async (c) => {
      const name = c.allowed ? await createGroup(`rbac-del-${++groupCount}`) : await sharedGroup();
      return {
        path: `/api/groups/${name}`,
        check: async () => expect((await rt.request(`/api/groups/${name}`, { role: "admin" })).status).toBe(404),
      };
    },
  },
  masking: {
    "GET /api/masking/policies": get("/api/masking/policies", jsonArray),
    "POST /api/masking/policies": async () => {
      const name = `rbac-mask-${++groupCount}`;
      return {
        path: "/api/masking/policies",
        body: JSON.stringify(maskPolicy(name)),
        check: async (res) => expect(await res.json()).toMatchObject({ name, method: "REDACT" }),
      };
    },
    "GET /api/masking/policies/:name": async () => ({
      path: `/api/masking/policies/${await sharedPolicy()}`,
      check: async (res) => expect(await res.json()).toMatchObject({ name: "rbac-mask" }),
    }),
    "PUT /api/masking/policies/:name": async () => ({
      path: `/api/masking/policies/${await sharedPolicy()}`,
      body: JSON.stringify({ fields: ["ssn"] }),
      check: async (res) => expect(await res.json()).toMatchObject({ name: "rbac-mask", fields: ["ssn"] }),
    }),
    // A fresh policy per allowed call: the deletion uses it up.
    "DELETE /api/masking/policies/:name": async (c) => {
      const name = c.allowed ? await createPolicy(`rbac-mask-del-${++groupCount}`) : await sharedPolicy();
      return {
        path: `/api/masking/policies/${name}`,
        check: async () => expect((await rt.request(`/api/masking/policies/${name}`, { role: "admin" })).status).toBe(404),
      };
    },
  },
  users: {
    "GET /api/users": get("/api/users", jsonArray),
    "POST /api/users": async () => {
      const name = `rbac-user-${++groupCount}`;
      return {
        path: "/api/users",
        body: JSON.stringify({ name, password: USER_PASSWORD, groups: [await sharedGroup()] }),
        check: async (res) => expect(await res.json()).toMatchObject({ name, groups: ["rbac-group"], source: "store" }),
      };
    },
    "GET /api/users/:name": async () => ({
      path: `/api/users/${await sharedUser()}`,
      check: async (res) => expect(await res.json()).toMatchObject({ name: "rbac-user", disabled: false }),
    }),
    "PUT /api/users/:name": async () => ({
      path: `/api/users/${await sharedUser()}`,
      body: JSON.stringify({ email: "rbac@example.com" }),
      check: async (res) => expect(await res.json()).toMatchObject({ name: "rbac-user", email: "rbac@example.com" }),
    }),
    "DELETE /api/users/:name": async (c) => {
      const name = c.allowed ? await createUser(`rbac-user-del-${++groupCount}`) : await sharedUser();
      return {
        path: `/api/users/${name}`,
        check: async () => expect((await rt.request(`/api/users/${name}`, { role: "admin" })).status).toBe(404),
      };
    },
    // Every identity may change its own password: a store user of its own per call (the role
    // users are the config file's, whose passwords only the file changes).
    "PUT /api/user/password": async (c) => {
      if (!c.role)
        return { path: "/api/user/password", body: JSON.stringify({ currentPassword: USER_PASSWORD, password: `${USER_PASSWORD}-new` }) };
      const name = await createUser(`rbac-pw-${++groupCount}`);
      const login = await rt.app.request("/api/login", { method: "POST", body: JSON.stringify({ user: name, password: USER_PASSWORD }) });
      return {
        path: "/api/user/password",
        token: await login.text(),
        body: JSON.stringify({ currentPassword: USER_PASSWORD, password: `${USER_PASSWORD}-new` }),
        check: async (res) => expect(await res.json()).toEqual({ success: true }),
      };
    },
  },
  "service-accounts": {
    "GET /api/service-accounts": get("/api/service-accounts", jsonArray),
    "POST /api/service-accounts": async () => {
      const name = `rbac-sa-${++groupCount}`;
      return {
        path: "/api/service-accounts",
        body: JSON.stringify({ name, groups: [await sharedGroup()] }),
        check: async (res) => {
          const body = (await res.json()) as { name: string; secret: string; token: string };
          expect(body.name).toBe(name);
          expect(body.token).toBe(`${name}:${body.secret}`);
        },
      };
    },
    "GET /api/service-accounts/:name": async () => ({
      path: `/api/service-accounts/${await sharedAccount()}`,
      check: async (res) => expect(await res.json()).toMatchObject({ name: "rbac-sa", disabled: false }),
    }),
    "PUT /api/service-accounts/:name": async () => ({
      path: `/api/service-accounts/${await sharedAccount()}`,
      body: JSON.stringify({ expiresAt: Date.now() + 86_400_000 }),
      check: async (res) => expect(((await res.json()) as { expiresAt: number }).expiresAt).toBeGreaterThan(Date.now()),
    }),
    "DELETE /api/service-accounts/:name": async (c) => {
      const name = c.allowed ? await createAccount(`rbac-sa-del-${++groupCount}`) : await sharedAccount();
      return {
        path: `/api/service-accounts/${name}`,
        check: async () => expect((await rt.request(`/api/service-accounts/${name}`, { role: "admin" })).status).toBe(404),
      };
    },
  },
  ui: {
    "GET /": get("/", async (res) => expect(await res.text()).toContain("<title>Loupe</title>")),
    "GET /*": get("/topics/some-page", async (res) => expect(await res.text()).toContain("<title>Loupe</title>")),
  },
};
const PREPARE: Record<string, Prepare> = Object.assign({}, ...Object.values(FIXTURES));

const CONNECT = "/api/proxy-connect/rbac/connectors";
/** Connectors made here, deleted at the end. */
const connectors: string[] = [];
/**
 * The heartbeat connector, beating every second: its task returns from each wait that often, so
 * Connect stops it at once on a restart or a deletion (with the helpers' minute, each stop ran
 * into Connect's 5 s graceful-stop timeout: a task restart took 10 s).
 */
const beatingConfig = () => heartbeatConfig({ "emit.heartbeats.interval.seconds": "1" });
/** Connect answers 409 while its workers rebalance (each creation and deletion starts one). */
const rebalancing = async (res: Response) => (res.status === 409 || res.status === 500) && REBALANCING.test(await res.text());

/** The heartbeat connector that reads and changes act on, made once and running. */
let sharedMade: Promise<string> | undefined;
const sharedConnector = () =>
  (sharedMade ??= (async () => {
    const name = connectorName("rbac hb");
    connectors.push(name);
    const res = await rt.request(CONNECT, { method: "POST", role: "admin", body: JSON.stringify({ name, config: beatingConfig() }) });
    expect(res.status).toBe(201);
    await runningThrough(rt, name, "rbac");
    return name;
  })());

/** A call on the shared connector's `<suffix>`. */
async function connectorCall(suffix: string, check?: Prepared["check"]): Promise<Prepared> {
  return { path: `${CONNECT}/${encodeURIComponent(await sharedConnector())}${suffix}`, retry: rebalancing, ...(check ? { check } : {}) };
}

let groupCount = 0;
const scopeGroup = (name: string) => ({ name, roles: ["read"], clusters: ["*"], topics: { allow: ["rbac-*"], deny: [] } });

async function createGroup(name: string): Promise<string> {
  const res = await rt.request("/api/groups", { method: "POST", role: "admin", body: JSON.stringify(scopeGroup(name)) });
  expect(res.status).toBe(201);
  return name;
}

/** The group that reads and changes act on, made once. */
let shared: Promise<string> | undefined;
const sharedGroup = () => (shared ??= createGroup("rbac-group"));

/** A masking policy on no topic the matrix reads (its queries stay clear). */
const maskPolicy = (name: string) => ({ name, topics: ["rbac-masked-*"], fields: ["secret"], method: "REDACT", roles: ["read"] });

async function createPolicy(name: string): Promise<string> {
  const res = await rt.request("/api/masking/policies", { method: "POST", role: "admin", body: JSON.stringify(maskPolicy(name)) });
  expect(res.status).toBe(201);
  return name;
}

/** The policy that reads and changes act on, made once. */
let sharedMask: Promise<string> | undefined;
const sharedPolicy = () => (sharedMask ??= createPolicy("rbac-mask"));

const USER_PASSWORD = "rbac-user-password";

async function createUser(name: string): Promise<string> {
  const body = JSON.stringify({ name, password: USER_PASSWORD, groups: [await sharedGroup()] });
  const res = await rt.request("/api/users", { method: "POST", role: "admin", body });
  expect(res.status).toBe(201);
  return name;
}

let sharedUserMade: Promise<string> | undefined;
const sharedUser = () => (sharedUserMade ??= createUser("rbac-user"));

async function createAccount(name: string): Promise<string> {
  const body = JSON.stringify({ name, groups: [await sharedGroup()] });
  const res = await rt.request("/api/service-accounts", { method: "POST", role: "admin", body });
  expect(res.status).toBe(201);
  return name;
}

let sharedAccountMade: Promise<string> | undefined;
const sharedAccount = () => (sharedAccountMade ??= createAccount("rbac-sa"));

const brokerId = async () => (await describeCluster(rt.kafka.default())).brokers[0]!.id;

/** Sets compression.type to its default the way the Go client sends it; removed again after. */
async function brokerChange(c: Caller, id: number | null): Promise<Prepared> {
  return {
    path: id === null ? "/api/configs/brokers" : `/api/configs/brokers/${id}`,
    body: JSON.stringify({ "log.cleaner.threads": 0, "compression.type": "producer", "advertised.port": 0 }),
    cleanup: async () => {
      if (c.allowed) await rt.kafka.default().configs.alterBroker(id, [{ key: "compression.type", value: null }]);
    },
  };
}

const QUOTA_USER = `rbac-quota-user-${process.pid}`;
const QUOTA_CLIENT = `rbac-quota-client-${process.pid}`;
/** 1 TiB/s: a limit no test on the shared broker reaches. */
const UNREACHED_RATE = "1099511627776";

/** Sets a consumer rate on a quota entity the way the Go client sends it (every key, "" for unset); removed again after. */
async function quotaChange(
  c: Caller,
  path: string,
  entity: { user?: string | null; clientId?: string | null },
  type: string,
): Promise<Prepared> {
  return {
    path,
    body: JSON.stringify({ producer_byte_rate: "", consumer_byte_rate: UNREACHED_RATE, request_percentage: "" }),
    check: async (res) =>
      expect(await res.json()).toMatchObject({ entityType: type, properties: { consumer_byte_rate: UNREACHED_RATE }, url: path }),
    cleanup: async () => {
      const kafkaEntity = [
        ...(entity.user !== undefined ? [{ type: "user" as const, name: entity.user }] : []),
        ...(entity.clientId !== undefined ? [{ type: "client-id" as const, name: entity.clientId }] : []),
      ];
      if (c.allowed) await rt.kafka.default().quotas.alter([{ entity: kafkaEntity, values: { consumer_byte_rate: null } }]);
    },
  };
}

/** Removes a constraint, set or not: removing what was never set is a success too. */
const quotaRemoval = (path: string): Prepared => ({ path, body: JSON.stringify(["consumer_byte_rate"]) });

async function logout(c: Caller): Promise<Prepared> {
  // Without a token there is nothing to revoke: that call answers 400 (see expectedStatus).
  if (!c.role) return { path: "/api/logout" };
  const token = await freshToken(c.role);
  return {
    path: "/api/logout",
    token,
    check: async (res) => {
      expect(await res.json()).toEqual({ success: true });
      expect((await rt.request("/api/auth", { token })).status).toBe(401);
    },
  };
}

/** The registry proxy's subjects: one shared, fresh ones for deletes; removed from the registry after. */
const SR_SCHEMA = JSON.stringify({ schema: JSON.stringify({ type: "record", name: "Rbac", fields: [{ name: "a", type: "int" }] }) });
const srSubjects: string[] = [];
let srShared: Promise<{ subject: string; id: number }> | undefined;
const srSubject = () => (srShared ??= srRegister("rbac-sr"));
async function srRegister(prefix: string): Promise<{ subject: string; id: number }> {
  const subject = uniqueTopic(prefix);
  srSubjects.push(subject);
  const res = await rt.request(`/api/proxy-sr/subjects/${subject}/versions`, { method: "POST", role: "admin", body: SR_SCHEMA });
  expect(res.status).toBe(200);
  return { subject, id: ((await res.json()) as { id: number }).id };
}
async function removeSubjects(): Promise<void> {
  for (const s of srSubjects)
    for (const q of ["", "?permanent=true"])
      await fetch(`${registryEnv().urls[0]}/subjects/${s}${q}`, { method: "DELETE" }).catch(() => {});
}

const WS_HANDSHAKE = {
  upgrade: "websocket",
  connection: "Upgrade",
  "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
  "sec-websocket-version": "13",
};
/** Success: a 2xx, or a websocket's 101. */
const succeeded = (req: Prepared, status: number) => (status >= 200 && status <= 299) || (req.upgrade === true && status === 101);

/** A call's answer: the status, and the body read (only the first line of a stream). */
async function call(rule: AccessRule, req: Prepared, token: string | undefined): Promise<Response> {
  const headers = new Headers(req.headers);
  if (token) headers.set("x-service-token", token);
  const init: RequestInit = { method: rule.method, headers, ...(req.body !== undefined ? { body: req.body } : {}) };
  if (req.upgrade) {
    for (const [k, v] of Object.entries(WS_HANDSHAKE)) headers.set(k, v);
    const abort = new AbortController();
    const res = await rt.request(req.path, { ...init, signal: abort.signal });
    if (res.status !== 101) return res;
    // The socket is not used: closed, and the handshake's answer kept.
    abort.abort();
    return new Response(null, { status: 101, headers: res.headers });
  }
  if (!req.stream) {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const res = await rt.request(req.path, init);
      if (!req.retry || Date.now() > deadline || !(await req.retry(res.clone() as Response))) return res;
      await Bun.sleep(200);
    }
  }
  const abort = new AbortController();
  const res = await rt.request(req.path, { ...init, signal: abort.signal });
  let first = "";
  if (res.status === 200) {
    const reader = res.body!.getReader();
    while (!first.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      first += new TextDecoder().decode(value);
    }
  }
  abort.abort();
  await res.body?.cancel().catch(() => {});
  // The stream was open and said something: a heartbeat or an entry, framed as CLIENTS.md wants.
  return new Response(first, { status: res.status, headers: res.headers });
}

/** The newest audit entry of `role`'s user, read as the admin through the API. */
async function newestEntry(role: Role): Promise<{ type: string; change: string; timestamp: number; content: Record<string, string> }> {
  const res = await rt.request(`/api/audit?user=${ROLE_USERS[role].name}&limit=1`, { role: "admin" });
  expect(res.status).toBe(200);
  return ((await res.json()) as Array<{ type: string; change: string; timestamp: number; content: Record<string, string> }>)[0]!;
}

const routes = () => {
  const seen = new Set<string>();
  const list: { method: string; path: string }[] = [];
  for (const r of rt.app.routes) {
    if (r.method === "ALL") continue;
    const key = ruleKey(r.method, r.path);
    if (seen.has(key)) continue;
    seen.add(key);
    list.push({ method: r.method, path: r.path });
  }
  return list;
};

const declared = new Map(ROUTES.map((r) => [ruleKey(r.access.method, r.access.path), r]));

/**
 * How a 2xx answer differs from the route's declaration: its content type is not declared for
 * that status, or its JSON does not parse with the declared schema. The documentation and the
 * handler cannot drift apart unnoticed. Undefined when they agree.
 */
async function undocumented(key: string, res: Response): Promise<string | undefined> {
  const route = declared.get(key);
  if (!route) return undefined;
  const answer = route.doc.responses[res.status] as { content?: Record<string, { schema: unknown }> } | undefined;
  if (!answer) return `status ${res.status} is not declared`;
  if (res.status === 101) return answer.content ? "a websocket's 101 declares content" : undefined;
  // An answer declared without content (Connect's 202 and 204) has none.
  if (!answer.content) return (await res.text()) === "" ? undefined : "a body where none is declared";
  const type = (res.headers.get("content-type") ?? "").split(";")[0]!.trim();
  const media = Object.keys(answer.content ?? {}).find((m) => m.split(";")[0]!.trim() === type);
  if (!media) return `content type ${type} is not declared`;
  const schema = answer.content![media]!.schema;
  if (!(schema instanceof z.ZodType)) return undefined;
  const parsed = schema.safeParse(await res.json());
  return parsed.success ? undefined : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
}

const rules = new Map(ACCESS_RULES.map((r) => [ruleKey(r.method, r.path), r]));

describe("role matrix", () => {
  test("every registered route has a rule and every rule a route", () => {
    const registered = new Set(routes().map((r) => ruleKey(r.method, r.path)));
    for (const key of registered) expect(rules.has(key)).toBe(true);
    for (const key of rules.keys()) expect(registered.has(key)).toBe(true);
    expect(registered.size).toBeGreaterThan(10);
  });

  test("every rule has a prepared request, and every prepared request a rule", () => {
    expect(Object.keys(PREPARE).sort()).toEqual([...rules.keys()].sort());
  });

  test("24.1: each area's fixtures prepare exactly its routes", () => {
    const wrong = AREAS.flatMap((area) => {
      const want = area.routes.map((r) => ruleKey(r.access.method, r.access.path)).sort();
      const have = Object.keys(FIXTURES[area.name]).sort();
      return want.join() === have.join() ? [] : [`${area.name}: routes ${want.join(", ")}; fixtures ${have.join(", ")}`];
    });
    expect(wrong).toEqual([]);
  });

  // One test per route: allowed callers succeed on a real resource, denied ones get 403 and an audit entry.
  for (const rule of ACCESS_RULES) {
    const key = ruleKey(rule.method, rule.path);
    test(
      `${key}: ${rule.level}`,
      async () => {
        const prepare = PREPARE[key];
        expect(prepare).toBeDefined();
        const failures: string[] = [];

        // No token.
        {
          const req = await prepare!({ allowed: rule.level === "public" });
          const res = await call(rule, req, undefined);
          const body = await res.text();
          const want = rule.level !== "public" ? 401 : rule.path.endsWith("/logout") ? 400 : undefined;
          if (want !== undefined ? res.status !== want : !succeeded(req, res.status))
            failures.push(`no token: ${res.status} ${body.slice(0, 200)}`);
          await req.cleanup?.();
        }

        for (const role of ROLES) {
          const allowed = rule.level === "public" || LEVEL_ROLES[rule.level].includes(role);
          const token = await rt.token(role);
          const req = await prepare!({ role, token, allowed });
          const since = Date.now();
          const res = await call(rule, req, req.token ?? token);
          if (allowed) {
            if (!succeeded(req, res.status)) failures.push(`${role}: ${res.status} ${(await res.text()).slice(0, 300)}, want 2xx`);
            else {
              const drift = await undocumented(key, res.clone() as Response);
              if (drift) failures.push(`${role}: ${res.status} answer differs from its declaration: ${drift}`);
              if (req.check)
                await req.check(res).catch((e: Error) => {
                  failures.push(`${role}: ${res.status} but ${e.message}`);
                });
            }
          } else {
            await res.arrayBuffer();
            if (res.status !== 403) failures.push(`${role}: ${res.status}, want 403`);
            const entry = await newestEntry(role);
            const want = rule.audit ? `${rule.audit.type} ${rule.audit.change}` : "ACCESS DENY";
            if (!entry || entry.timestamp < since || `${entry.type} ${entry.change}` !== want || entry.content.outcome !== "FAILURE")
              failures.push(`${role}: denied without the audit entry ${want}: ${JSON.stringify(entry)}`);
            else if (!entry.content.reason!.startsWith("FORBIDDEN"))
              failures.push(`${role}: denial audited with reason ${entry.content.reason}`);
          }
          await req.cleanup?.();
        }
        expect(failures).toEqual([]);
      },
      // Connect's changes wait for its tasks to stop and for rebalances: longer than the default.
      rule.path.includes("/proxy-connect/") ? 120_000 : undefined,
    );
  }

  test("a route registered without its declaration stops start-up", () => {
    expect(() =>
      createApp({
        ...rt,
        clusters: { names: () => ["local"], defaultName: () => "local", health: async () => ({ connected: true }) },
        extraRoutes: (group) => group.get("/api/not-in-the-table", (c) => c.text("x")),
      }),
    ).toThrow("Routes without an access rule: GET /api/not-in-the-table");
  });

  test("a route whose path and params schema name different parameters cannot be declared", () => {
    const declare = (path: string, params?: z.ZodObject) =>
      defineRoute({ method: "GET", path, level: "nodata", summary: "t", tags: ["test"], request: params ? { params } : {}, responses: {} });
    expect(() => declare("/api/x/{a}", z.object({ b: z.string() }))).toThrow("path parameters (a) differ from its params schema (b)");
    expect(() => declare("/api/x/{a}")).toThrow("path parameters (a) differ from its params schema ()");
    expect(declare("/api/x/{a}/{b}", z.object({ a: z.string(), b: z.string() })).access.path).toBe("/api/x/:a/:b");
  });

  test("the access table and the served routes cannot differ", () => {
    // A declared route that no group serves.
    expect(() => assertTableServed(ACCESS_RULES.slice(1), [])).toThrow("Routes in the access table that nothing serves: POST /api/login");
    // A route served under a declaration the table does not list (even one with the same path).
    expect(() => assertTableServed([...ACCESS_RULES, { ...ACCESS_RULES[0]!, level: "nodata" }], [])).toThrow(
      "Routes served but missing from the access table (src/routes.ts): POST /api/login",
    );
  });
});

/**
 * What each role may do with an internal topic (case 22.1): see it (`nodata` and up), but read,
 * write or change its records only as an admin without limits. A Loupe-internal topic made for
 * the test (`_loupe-...`), so that the admin's successes change nothing of a real service.
 */
describe("role matrix on an internal topic", () => {
  const internal = uniqueTopic("_loupe-rbac");
  beforeAll(async () => {
    topics.push(internal);
    await rt.kafka.default().topics.create({ name: internal, partitions: 1, replication: 1 });
    await rt.kafka.default().writes.produce(internal, [{ key: "k", value: JSON.stringify({ i: 1 }) }]);
  });

  const select = `/api/sql/data?${new URLSearchParams({ sql: `SELECT * FROM \`${internal}\` LIMIT 1` })}`;
  const insert = `INSERT INTO \`${internal}\` (_key, _value) VALUES ('k2', '{"i":2}')`;
  const cases: { what: string; call: () => RequestInit & { path: string }; want: Record<Role, number> }[] = [
    { what: "GET its detail", call: () => ({ path: `/api/topics/${internal}` }), want: { admin: 200, write: 200, read: 200, nodata: 200 } },
    { what: "SELECT its records", call: () => ({ path: select }), want: { admin: 200, write: 400, read: 400, nodata: 403 } },
    {
      what: "INSERT a record",
      call: () => ({ path: "/api/jdbc/insert", method: "POST", body: insert, headers: { "content-type": "text/plain" } }),
      want: { admin: 200, write: 400, read: 403, nodata: 403 },
    },
    {
      what: "change its configs",
      call: () => ({
        path: `/api/topics/config/${internal}`,
        method: "PUT",
        body: JSON.stringify({ configs: [{ key: "retention.ms", value: "86400000" }] }),
      }),
      want: { admin: 200, write: 403, read: 403, nodata: 403 },
    },
  ];
  for (const c of cases)
    test(`22.1: ${c.what}: ${Object.entries(c.want)
      .map(([r, s]) => `${r} ${s}`)
      .join(", ")}`, async () => {
      const got: Record<string, number> = {};
      for (const role of ROLES) {
        const { path, ...init } = c.call();
        const res = await rt.request(path, { ...init, role });
        await res.arrayBuffer();
        got[role] = res.status;
      }
      expect(got).toEqual(c.want);
    });
});
