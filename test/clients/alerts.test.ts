/**
 * The alert calls as the Go client and CLI make them (CLIENTS.md 3), each sent byte for byte on
 * a socket of its own and its answer decoded as strictly as Go decodes it: the settings listing
 * and one setting, PUT with no body and no content type, a condition POSTed as text/plain
 * without a uuid (also the CLI's example on 1001, which takes none), its removal, POST /api/alerts
 * with `endsAt: ""`, and the stream with the raised alert and its resolution.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { StreamReader } from "../http/stream-reader.ts";
import {
  array,
  asResponse,
  bool,
  decode,
  errorAnswer,
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

beforeAll(async () => {
  rt = await testRuntime({ alerts: { evaluationInterval: 0 } });
  server = serve(rt.app);
});
afterAll(async () => {
  server.stop(true);
  await rt.dispose();
});

/** GO c `AlertSetting`. */
const setting = object({
  id: int,
  description: str,
  category: str,
  enabled: bool,
  isAvailable: bool,
  docs: str,
  conditionTemplate: nullable(str),
  conditionRegex: nullable(str),
  conditions: record(str),
});
/** GO c `Alert`. */
const alert = object({
  alertId: int,
  labels: object({ category: str, severity: str, instance: str }),
  annotations: object({ summary: str, source: str, docs: str }),
  generatorURL: str,
  startsAt: str,
  endsAt: nullable(str),
});

const go = async (method: string, path: string, role: "admin" | "write" | "read", headers: Record<string, string> = {}, body?: string) =>
  asResponse(await send(server.url, method, path, { ...GO_HEADERS, "x-service-token": await rt.token(role), ...headers }, body));

describe("settings as the Go client reads them", () => {
  test("GET /api/alerts/settings: categories.Infrastructure and categories.Consumers, every field of Go's type", async () => {
    const body = await jsonAnswer(
      await go("GET", "/api/alerts/settings", "read"),
      200,
      object({ categories: object({ Infrastructure: array(setting), Consumers: array(setting) }) }),
    );
    expect(body.categories.Infrastructure.map((s) => s.id)).toContain(1000);
    expect(body.categories.Consumers.map((s) => s.id)).toEqual([2000]);
    await jsonAnswer(await go("GET", "/api/alerts/settings/2000", "read"), 200, setting);
    // 404 with a message the client shows ("does not exist").
    expect((await errorAnswer(await go("GET", "/api/alerts/settings/31337", "read"), 404)).message).toContain("does not exist");
  });

  test("PUT with no body and no Content-Type enables: 200, never 204 (which Go takes as an error)", async () => {
    expect((await go("PUT", "/api/alerts/settings/1006", "admin", {}, "false")).status).toBe(200);
    const res = await go("PUT", "/api/alerts/settings/1006", "admin");
    expect(res.status).toBe(200);
    expect((await jsonAnswer(res, 200, setting)).enabled).toBe(true);
  });

  test("POST …/condition (no uuid, text/plain), GET the map, DELETE by uuid; the CLI's example on 1001 is 400 with a message", async () => {
    const expression = "lag >= 100000 on group group and topic topicA";
    const added = await go("POST", "/api/alerts/settings/2000/condition", "write", { "Content-Type": "text/plain" }, expression);
    expect([200, 201, 202, 204]).toContain(added.status);
    const map = await jsonAnswer(await go("GET", "/api/alerts/settings/2000/condition", "read"), 200, record(str));
    const [uuid] = Object.entries(map).find(([, e]) => e === expression)!;
    expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect([200, 202, 204]).toContain((await go("DELETE", `/api/alerts/settings/2000/condition/${uuid}`, "write")).status);
    const cli = await go("POST", "/api/alerts/settings/1001/condition", "write", { "Content-Type": "text/plain" }, expression);
    expect(cli.headers.get("content-type")).toContain("json");
    expect((await errorAnswer(cli, 400)).message).toContain("takes no conditions");
  });
});

describe("notifications as the Go client sends and reads them", () => {
  test('POST /api/alerts with endsAt "" raises; GET /api/alerts decodes with endsAt null; the stream carries it and its resolution', async () => {
    const feed = await fetch(new URL("/api/sse/alerts", server.url), {
      headers: {
        ...GO_HEADERS,
        "x-service-token": await rt.token("read"),
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
      },
    });
    expect(feed.status).toBe(200);
    const stream = new StreamReader(feed);
    try {
      const instance = `go-${crypto.randomUUID().slice(0, 8)}`;
      const body = (endsAt: string) =>
        JSON.stringify({
          alertId: 2000,
          labels: { category: "Consumers", severity: "HIGH", instance },
          annotations: { summary: "raised by the CLI", source: "lenses-cli", docs: "" },
          generatorURL: "",
          startsAt: "2018-03-27T21:23:23+02:00",
          endsAt,
        });
      const raised = await go("POST", "/api/alerts", "write", { "Content-Type": "application/json" }, body(""));
      expect([200, 201, 202, 204]).toContain(raised.status);
      const list = await jsonAnswer(await go("GET", "/api/alerts?alertId=2000", "read"), 200, array(alert));
      const mine = list.find((a) => a.labels.instance === instance)!;
      expect(mine.endsAt).toBeNull();
      expect(Date.parse(mine.startsAt)).toBe(Date.parse("2018-03-27T21:23:23+02:00"));
      const resolved = await go("POST", "/api/alerts", "write", { "Content-Type": "application/json" }, body("2018-03-27T22:00:00+02:00"));
      expect(resolved.status).toBe(200);
      expect(await stream.until((t) => t.split(instance).length - 1 >= 2 && t.endsWith("\n\n"))).toBe(true);
      const seen = goStreamPayloads(stream.text)
        .map((p) => decode(alert, p))
        .filter((a) => a.labels.instance === instance);
      expect(seen.map((a) => a.endsAt === null)).toEqual([true, false]);
      // A severity in any case is taken; none at all is 400.
      const bad = await go(
        "POST",
        "/api/alerts",
        "write",
        { "Content-Type": "application/json" },
        JSON.stringify({ alertId: 2000, labels: {} }),
      );
      expect((await errorAnswer(bad, 400)).message).toContain("severity");
    } finally {
      stream.cancel();
    }
  });
});
