/**
 * Status codes and headers every client relies on (CLIENTS.md section 0): no Accept value is
 * ever refused with 406, PUT and DELETE answer 200 with a body (a 204 on a PUT is an error to
 * the Go client, the Python client wants exactly 200), and a gzip answer says exactly `gzip`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { uniqueTopic } from "../cluster/cluster.ts";
import { ROLE_USERS, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { createReadyTopic } from "../helpers/topics.ts";
import { asResponse, GO_HEADERS, goTopic, jsonAnswer, send, serve } from "./strict.ts";

let rt: TestRuntime;
let server: Bun.Server<unknown>;
let topic: string;
const created: string[] = [];
const groups: string[] = [];

beforeAll(async () => {
  rt = await testRuntime();
  server = serve(rt.app);
  topic = await createReadyTopic(rt.kafka.default(), { prefix: "wire-st", partitions: 1, track: created });
});
afterAll(async () => {
  server.stop(true);
  await rt.dispose({ topics: created, groups });
});

const as = async (
  role: "admin" | "write" | "read" | "nodata",
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body?: unknown,
) =>
  send(
    server.url,
    method,
    target,
    {
      ...GO_HEADERS,
      "x-service-token": await rt.token(role),
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
      ...headers,
    },
    body === undefined ? undefined : JSON.stringify(body),
  );

describe("Accept never gets a 406", () => {
  const ACCEPTS = [
    "application/vnd.schemaregistry.v1+json",
    "application/json, text/event-stream",
    "application/json, text/plain",
    "text/plain",
    "application/xml",
    "image/png",
  ];
  const GETS: Array<[role: "admin" | "read" | "nodata", path: () => string]> = [
    ["nodata", () => "/api/auth"],
    ["nodata", () => "/api/topics"],
    ["read", () => `/api/topics/${topic}`],
    ["read", () => "/api/metadata/topics"],
    ["read", () => `/api/metadata/topics/${topic}`],
    ["read", () => "/api/consumers"],
    ["read", () => "/api/alerts"],
    ["admin", () => "/api/audit"],
    ["admin", () => "/api/logs/INFO"],
    ["admin", () => "/api/logs/METRICS"],
    ["nodata", () => "/api/health"],
  ];

  test.each(ACCEPTS)("Accept %s, with the Go client's Content-Type on bodiless GETs: 200 everywhere", async (accept) => {
    for (const [role, path] of GETS) {
      const res = await as(role, "GET", path(), { Accept: accept, "Content-Type": "application/json" });
      expect({ path: path(), status: res.status }).toEqual({ path: path(), status: 200 });
    }
  });

  test("topic creation with an Accept nobody serves is still 201", async () => {
    const name = uniqueTopic("wire-acc");
    created.push(name);
    expect((await as("write", "POST", "/api/topics", { Accept: "application/xml" }, { topicName: name })).status).toBe(201);
  });
});

describe("PUT and DELETE answer 200 with a body, never 204", () => {
  test("every change a client makes answers exactly 200 with a non-empty body", async () => {
    const kafka = rt.kafka.default();
    const name = await createReadyTopic(kafka, { prefix: "wire-put", partitions: 1, track: created });
    await kafka.writes.produce(name, [{ value: "a" }, { value: "b" }]);
    const group = uniqueTopic("wire-st-grp");
    groups.push(group);
    await kafka.groups.alterOffsets(group, [{ topic: name, partition: 0, offset: 1 }]);
    const metadata = `/api/metadata/topics/${name}?keyType=STRING&valueType=STRING`;

    const calls: Array<[what: string, run: () => Promise<{ status: number; text: string }>]> = [
      [
        "PUT topic config",
        () => as("write", "PUT", `/api/topics/config/${name}`, {}, { configs: [{ key: "retention.ms", value: 1000000 }] }),
      ],
      ["PUT group offsets", () => as("write", "PUT", `/api/consumers/${group}/offsets`, {}, { to: "earliest" })],
      ["DELETE group", () => as("write", "DELETE", `/api/consumers/${group}`)],
      ["POST metadata", () => as("write", "POST", metadata)],
      ["DELETE metadata", () => as("write", "DELETE", `/api/metadata/topics/${name}`)],
      ["POST metadata again", () => as("write", "POST", metadata)],
      ["DELETE metadata by the system path", () => as("write", "DELETE", `/api/system/topics/metadata/${name}`)],
      ["DELETE records", () => as("write", "DELETE", `/api/topics/${name}/0/1`)],
      ["DELETE topic", () => as("write", "DELETE", `/api/topics/${name}`)],
    ];
    for (const [what, run] of calls) {
      const res = await run();
      expect({ what, status: res.status, empty: res.text.length === 0 }).toEqual({ what, status: 200, empty: false });
    }
    // Logout, both ways: 200 with a body.
    const fresh = async () =>
      (
        await rt.app.request("/api/login", {
          method: "POST",
          body: JSON.stringify({ user: ROLE_USERS.read.name, password: ROLE_USERS.read.password }),
        })
      ).text();
    const t1 = await fresh();
    const get = await send(server.url, "GET", `/api/logout?token=${t1}`, { ...GO_HEADERS, "x-service-token": t1 });
    const t2 = await fresh();
    const post = await send(server.url, "POST", "/api/logout", { ...GO_HEADERS, "x-service-token": t2 });
    for (const res of [get, post]) expect({ status: res.status, empty: res.text.length === 0 }).toEqual({ status: 200, empty: false });
  });
});

describe("compression", () => {
  test("Accept-Encoding: gzip on a large answer gets Content-Encoding exactly gzip, and the body decodes", async () => {
    const res = await as("read", "GET", `/api/topics/${topic}`);
    expect(res.bytes.length).toBeGreaterThan(0);
    // A topic's answer (its configs with their documentation) is past the compression threshold.
    expect(res.headers.get("content-encoding")).toBe("gzip");
    expect(res.bytes.length).toBeLessThan(res.text.length);
    await jsonAnswer(asResponse(res), 200, goTopic);
  });

  test("no Accept-Encoding gets no Content-Encoding", async () => {
    const res = await send(server.url, "GET", `/api/topics/${topic}`, { "x-service-token": await rt.token("read") });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-encoding")).toBeNull();
  });
});
