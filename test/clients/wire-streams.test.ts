/**
 * Audit, logs and alerts as the Go client reads them (CLIENTS.md 3 and 5.7): the audit stream's
 * framing line by line, and the JSON types of the entries.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { uniqueTopic } from "../cluster/cluster.ts";
import { ROLE_USERS, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { StreamReader } from "../http/stream-reader.ts";
import {
  array,
  asResponse,
  assertOneLineEvents,
  decode,
  GO_HEADERS,
  goStreamPayloads,
  int,
  jsonAnswer,
  nullable,
  object,
  record,
  send,
  serve,
  str,
} from "./strict.ts";

let rt: TestRuntime;
let server: Bun.Server<unknown>;
const created: string[] = [];

beforeAll(async () => {
  rt = await testRuntime();
  server = serve(rt.app);
});
afterAll(async () => {
  server.stop(true);
  await rt.dispose({ topics: created });
});

/** GO `AuditEntry`: content is a map of string to string. */
const auditEntry = object({ type: str, change: str, userId: str, timestamp: int, content: record(str) });
const logLine = object({ level: str, thread: str, logger: str, message: str, stacktrace: str, timestamp: int, time: str });
const alert = object({
  alertId: int,
  labels: object({ category: str, severity: str, instance: str }),
  annotations: object({ summary: str, source: str, docs: str }),
  generatorURL: str,
  startsAt: str,
  endsAt: nullable(str),
});

const goGet = async (path: string, role: "admin" | "read") =>
  send(server.url, "GET", path, { ...GO_HEADERS, "x-service-token": await rt.token(role) });

async function createTopic(configs: Record<string, unknown>): Promise<string> {
  const name = uniqueTopic("wire-audit");
  created.push(name);
  const res = await rt.request("/api/topics", {
    method: "POST",
    role: "write",
    body: JSON.stringify({ topicName: name, partitions: 1, replication: 1, configs }),
  });
  expect(res.status).toBe(201);
  return name;
}

/**
 * Opens a live feed as the Go client does, with a token of its own (the tests revoke it to see
 * the stream's last line).
 */
async function goFeed(path: string, role: "admin" | "nodata"): Promise<{ token: string; res: Response }> {
  const login = await rt.app.request("/api/login", {
    method: "POST",
    body: JSON.stringify({ user: ROLE_USERS[role].name, password: ROLE_USERS[role].password }),
  });
  const token = await login.text();
  const res = await fetch(new URL(path, server.url), {
    headers: { ...GO_HEADERS, "x-service-token": token, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
  });
  return { token, res };
}

describe("audit", () => {
  test("GET /api/audit: every content value a string, timestamps integers, even for numbers and lists in the request", async () => {
    const name = await createTopic({ "retention.ms": 3_600_000, "unclean.leader.election.enable": false });
    const entries = await jsonAnswer(asResponse(await goGet("/api/audit?type=TOPIC", "admin")), 200, array(auditEntry));
    const mine = entries.find((e) => e.content.topicName === name)!;
    expect(mine).toMatchObject({ type: "TOPIC", change: "ADD", content: { partitions: "1", outcome: "SUCCESS" } });
    expect(JSON.parse(mine.content.configs!)).toEqual({ "retention.ms": "3600000", "unclean.leader.election.enable": "false" });
  });

  test("/api/sse/audit: `:` heartbeats, one `data:` line per entry and a blank line after it, nothing the Go client aborts on", async () => {
    const { token, res } = await goFeed("/api/sse/audit", "admin");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/event-stream");
    expect(res.headers.get("content-encoding")).toBeNull();
    const stream = new StreamReader(res);
    try {
      expect(await stream.until((t) => t.startsWith(":\n\n"))).toBe(true);
      const name = await createTopic({ "cleanup.policy": "compact" });
      expect(await stream.until((t) => t.includes(name) && t.endsWith("\n\n"))).toBe(true);
      const entries = goStreamPayloads(stream.text).map((p) => decode(auditEntry, p));
      expect(entries.find((e) => e.content.topicName === name)).toMatchObject({ type: "TOPIC", change: "ADD" });
      // The stream's last line when it is closed from outside (here: the token is revoked).
      expect((await rt.request("/api/logout", { method: "POST", token })).status).toBe(200);
      expect(await stream.end()).toBe(true);
      goStreamPayloads(stream.text);
      assertOneLineEvents(stream.text);
      expect(stream.text.endsWith("data:\n\n")).toBe(true);
    } finally {
      stream.cancel();
    }
  });
});

describe("alert stream", () => {
  test("/api/sse/alerts: `data:<notification>` lines without a type digit, a blank line after each, `:` heartbeats, `data:` last", async () => {
    const { token, res } = await goFeed("/api/sse/alerts", "nodata");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/event-stream");
    const stream = new StreamReader(res);
    try {
      // Creating a topic raises a notification (TOPIC_CREATED).
      const name = await createTopic({});
      expect(await stream.until((t) => t.includes(`Topic '${name}' has been created`) && t.endsWith("\n\n"))).toBe(true);
      const notes = goStreamPayloads(stream.text).map((p) =>
        decode(object({ alertId: int, labels: record(str), annotations: record(str), startsAt: str, generatorURL: str }), p),
      );
      expect(notes.some((n) => n.annotations.summary?.includes(name))).toBe(true);
      expect((await rt.request("/api/logout", { method: "POST", token })).status).toBe(200);
      expect(await stream.end()).toBe(true);
      assertOneLineEvents(stream.text);
      expect(stream.text.endsWith("data:\n\n")).toBe(true);
    } finally {
      stream.cancel();
    }
  });
});

describe("logs and alerts", () => {
  test.each(["INFO", "METRICS"])("GET /api/logs/%s decodes as the Go client's log lines", async (level) => {
    const lines = await jsonAnswer(asResponse(await goGet(`/api/logs/${level}`, "admin")), 200, array(logLine));
    if (level === "INFO") expect(lines.length).toBeGreaterThan(0);
  });

  test("GET /api/alerts: integer ids, string labels and annotations, endsAt a string or null", async () => {
    const name = await createTopic({});
    const alerts = await jsonAnswer(asResponse(await goGet("/api/alerts", "read")), 200, array(alert));
    expect(alerts.find((a) => a.labels.instance === name)).toMatchObject({ alertId: 4000, endsAt: null });
    decode(array(object({ labels: record(str), annotations: record(str) })), alerts);
  });
});
