/**
 * The Connect proxy against the run's two real workers: every route, what the Go and Python
 * clients send and expect (CLIENTS.md 4), Connect's own answers passed through, unknown aliases.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { enrichPlugins } from "../../src/domains/connect/catalogue.ts";
import { connectEnv } from "../cluster/cluster.ts";
import { errorOf, type TestRuntime } from "../helpers/runtime.ts";
import {
  ALIAS,
  auditEntries,
  connectorName,
  connectRuntime,
  createHeartbeat,
  deleteDirect,
  enc,
  eventually,
  heartbeatConfig,
  proxy,
  runningThrough,
  settled,
} from "./helpers.ts";

let rt: TestRuntime;
const made: string[] = [];

beforeAll(async () => {
  // `dead`: nothing listens on these ports (refused at once).
  rt = await connectRuntime([{ alias: "dead", urls: ["http://127.0.0.1:9", "http://127.0.0.1:1"] }]);
});
afterAll(async () => {
  for (const name of made) await deleteDirect(name);
  await rt.dispose();
}, 60_000);

const json = (body: unknown) => JSON.stringify(body);

describe("Connect proxy", () => {
  test("GET /api/connect/clusters: each alias with its workers, up with their version, or down with why", async () => {
    const res = await rt.request("/api/connect/clusters", { role: "nodata" });
    expect(res.status).toBe(200);
    const clusters = (await res.json()) as { alias: string; workers: { url: string; state: string; version?: string; error?: string }[] }[];
    const dev = clusters.find((c) => c.alias === ALIAS)!;
    expect(dev.workers.map((w) => w.url)).toEqual(connectEnv().urls);
    for (const w of dev.workers)
      expect(w).toMatchObject({ state: "UP", version: expect.stringMatching(/^4\./), kafkaClusterId: expect.any(String) });
    const dead = clusters.find((c) => c.alias === "dead")!;
    expect(dead.workers.map((w) => w.state)).toEqual(["DOWN", "DOWN"]);
    expect(dead.workers[0]!.error).toContain("connection refused");
  });

  test("a connector named with spaces, through every route: create, read, pause, resume, restart, change, delete", async () => {
    const name = connectorName("loupe life");
    made.push(name);
    const path = proxy(`/connectors/${enc(name)}`);

    // Go: decodes {name, config, tasks}; Python: Connect's own answer (201 or 200).
    const created = await createHeartbeat(rt, name, {}, "write");
    expect(created).toMatchObject({ name, config: { ...heartbeatConfig(), name }, tasks: [], type: "source" });

    // Go: a string[]; the Go client also sends Content-Type json on bodiless GETs.
    const list = await rt.request(proxy("/connectors"), { role: "nodata", headers: { "content-type": "application/json" } });
    expect(list.status).toBe(200);
    expect(list.headers.get("content-type")).toContain("application/json");
    expect((await list.json()) as string[]).toContain(name);

    await runningThrough(rt, name);
    const info = await rt.request(path, { role: "read" });
    expect(await info.json()).toMatchObject({ name, type: "source", tasks: [{ connector: name, task: 0 }] });
    const config = await rt.request(`${path}/config`, { role: "read" });
    expect(await config.json()).toEqual({ ...heartbeatConfig(), name });
    const status = await rt.request(`${path}/status`, { role: "nodata" });
    expect(await status.json()).toMatchObject({
      name,
      connector: { state: "RUNNING", worker_id: expect.any(String) },
      tasks: [{ id: 0, state: "RUNNING", worker_id: expect.any(String) }],
    });
    const tasks = await rt.request(`${path}/tasks`, { role: "nodata" });
    expect(await tasks.json()).toMatchObject([{ id: { connector: name, task: 0 }, config: { "tasks.max": "1" } }]);
    const task = await rt.request(`${path}/tasks/0/status`, { role: "nodata" });
    expect(await task.json()).toMatchObject({ id: 0, state: "RUNNING" });

    // Pause and resume: Connect's 202 without a body (Go and Python accept 202).
    const paused = await settled(rt, `${path}/pause`, { method: "PUT", role: "write" });
    expect(paused.status).toBe(202);
    expect(await paused.text()).toBe("");
    await eventually("PAUSED", async () => {
      const s = (await (await rt.request(`${path}/status`, { role: "nodata" })).json()) as { connector: { state: string } };
      return s.connector.state === "PAUSED" ? true : undefined;
    });
    expect((await settled(rt, `${path}/resume`, { method: "PUT", role: "write" })).status).toBe(202);
    await runningThrough(rt, name);

    // Restarts: 204 (Go and Python accept it); with includeTasks, Connect's 202 and the states.
    expect((await settled(rt, `${path}/restart`, { method: "POST", role: "write" })).status).toBe(204);
    const withTasks = await settled(rt, `${path}/restart?includeTasks=true&onlyFailed=false`, { method: "POST", role: "write" });
    expect(withTasks.status).toBe(202);
    expect(await withTasks.json()).toMatchObject({ name, tasks: [{ id: 0 }] });
    expect((await settled(rt, `${path}/tasks/0/restart`, { method: "POST", role: "write" })).status).toBe(204);

    // A changed config: the Python client sends a flat map whose values may be numbers.
    const changed = await settled(rt, `${path}/config`, {
      method: "PUT",
      role: "write",
      body: json({ ...heartbeatConfig(), "tasks.max": 1, "emit.heartbeats.interval.seconds": 120 }),
    });
    expect(changed.status).toBe(200);
    expect(((await changed.json()) as { config: Record<string, string> }).config["emit.heartbeats.interval.seconds"]).toBe("120");

    const deleted = await settled(rt, path, { method: "DELETE", role: "write" });
    expect(deleted.status).toBe(204);
    await eventually(`${name} gone`, async () => {
      const res = await rt.request(proxy("/connectors"), { role: "nodata" });
      return ((await res.json()) as string[]).includes(name) ? undefined : true;
    });

    // Alert 3000, and the audit entries of each change.
    const alerts = (await (await rt.request("/api/alerts?alertId=3000", { role: "nodata" })).json()) as {
      labels: Record<string, string>;
      annotations: Record<string, string>;
    }[];
    expect(alerts).toContainEqual(
      expect.objectContaining({
        labels: expect.objectContaining({ category: "Connect", instance: `${ALIAS}/${name}` }),
        annotations: expect.objectContaining({ summary: "Connector deleted", source: "wanda" }),
      }),
    );
    const mine = (await auditEntries(rt)).filter((e) => e.content.connector === name && e.content.outcome === "SUCCESS");
    const changes = mine.map((e) => `${e.change} ${e.content.action ?? ""}`.trim()).reverse();
    expect(changes).toEqual([
      "ADD",
      "UPDATE pause",
      "UPDATE resume",
      "UPDATE restart",
      "UPDATE restart",
      "UPDATE restart",
      "UPDATE",
      "REMOVE",
    ]);
    for (const e of mine) expect(e).toMatchObject({ type: "CONNECTOR", userId: "wanda", content: { alias: ALIAS } });
    expect(mine.find((e) => e.content.task === "0")).toBeDefined();
  }, 120_000);

  test("a PUT of a config that creates the connector answers 200 (the Python client accepts only 200)", async () => {
    const name = connectorName("loupe put");
    made.push(name);
    const res = await settled(rt, proxy(`/connectors/${enc(name)}/config`), {
      method: "PUT",
      role: "write",
      body: json(heartbeatConfig({ "tasks.max": 1 })),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ name, config: { name, "tasks.max": "1" } });
    const entry = (await auditEntries(rt)).find((e) => e.content.connector === name)!;
    expect(entry).toMatchObject({ change: "UPDATE", content: { outcome: "SUCCESS" } });
  }, 60_000);

  test("the plugin list is Connect's, with the catalogue's fields added", async () => {
    const res = await rt.request(proxy("/connector-plugins"), { role: "nodata" });
    expect(res.status).toBe(200);
    const plugins = (await res.json()) as Record<string, unknown>[];
    const heartbeat = plugins.find((p) => p.class === "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector");
    expect(heartbeat).toEqual({
      class: "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
      type: "source",
      version: expect.stringMatching(/^4\./),
      name: "MirrorMaker Heartbeat",
      icon: "kafka.png",
      description: expect.any(String),
      author: "Apache Kafka",
      docs: expect.stringContaining("kafka.apache.org"),
      uiEnabled: true,
    });
    // connectorsOnly=false is Connect's: converters and transforms too.
    const all = (await (await rt.request(proxy("/connector-plugins?connectorsOnly=false"), { role: "nodata" })).json()) as {
      type: string;
    }[];
    expect(all.length).toBeGreaterThan(plugins.length);
    expect(all.some((p) => p.type === "converter")).toBe(true);
  });

  test("a plugin the catalogue does not know gets fields derived from its class; Connect's own fields win", () => {
    expect(enrichPlugins([{ class: "com.acme.connect.JdbcSinkConnector", type: "sink", version: "1.2", name: "from-connect" }])).toEqual([
      {
        class: "com.acme.connect.JdbcSinkConnector",
        type: "sink",
        version: "1.2",
        name: "from-connect",
        icon: "connector.png",
        description: "",
        author: "com.acme",
        docs: "",
        uiEnabled: true,
      },
    ]);
    expect((enrichPlugins([{ class: "com.acme.connect.JdbcSinkConnector", type: "sink" }]) as { name: string }[])[0]!.name).toBe(
      "Jdbc Sink",
    );
    expect(enrichPlugins({ not: "a list" })).toEqual({ not: "a list" });
  });

  test("validate answers Connect's messages per field", async () => {
    const res = await rt.request(proxy("/connector-plugins/MirrorHeartbeatConnector/config/validate"), {
      method: "PUT",
      role: "write",
      body: json({ "connector.class": "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector", name: "x", "tasks.max": "zero" }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { error_count: number; configs: { value: { name: string; errors: string[] } }[] };
    expect(body.error_count).toBeGreaterThan(0);
    expect(body.configs.find((c) => c.value.name === "tasks.max")!.value.errors[0]).toContain("tasks.max");
  });

  test("Connect's own errors pass through untouched (status and body)", async () => {
    const res = await rt.request(proxy("/connectors/loupe%20no%20such%20connector/status"), { role: "nodata" });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error_code: 404, message: "No status found for connector loupe no such connector" });
    const dup = connectorName("loupe dup");
    made.push(dup);
    await createHeartbeat(rt, dup);
    const again = await settled(rt, proxy("/connectors"), {
      method: "POST",
      role: "write",
      body: json({ name: dup, config: heartbeatConfig() }),
    });
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({ error_code: 409, message: `Connector ${dup} already exists` });
  }, 60_000);

  test("an unknown alias is 404 naming it, for every kind of route", async () => {
    for (const [method, path] of [
      ["GET", "/connectors"],
      ["GET", "/connectors/x/status"],
      ["DELETE", "/connectors/x"],
      ["GET", "/connector-plugins"],
    ] as const) {
      const res = await rt.request(`/api/proxy-connect/nowhere${path}`, { method, role: "admin" });
      expect(res.status).toBe(404);
      expect((await errorOf(res)).message).toContain("Kafka Connect cluster 'nowhere' is not configured");
    }
  });

  test("bad bodies are 400 before anything reaches Connect", async () => {
    for (const body of ["not json", "[]", json({ name: "x" }), json({ name: "x", config: "text" })]) {
      const res = await rt.request(proxy("/connectors"), { method: "POST", role: "write", body });
      expect(res.status).toBe(400);
      await errorOf(res);
    }
    const put = await rt.request(proxy("/connectors/x/config"), { method: "PUT", role: "write", body: "{" });
    expect(put.status).toBe(400);
  });

  test("names with '/': refused at creation (Connect could never change or delete them); a change of one is a clear 400", async () => {
    const res = await rt.request(proxy("/connectors"), {
      method: "POST",
      role: "write",
      body: json({ name: "team/orders", config: heartbeatConfig() }),
    });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toContain("holds '/'");
    // Encoded as one segment (a%2Fb): Connect 4's Jetty refuses it (an empty 400): it becomes a COMPAT body saying why.
    const del = await rt.request(proxy(`/connectors/${enc("team/orders")}`), { method: "DELETE", role: "write" });
    expect(del.status).toBe(400);
    expect((await errorOf(del)).message).toContain("refuses an encoded '/' or '%' in a path");
    // Reads are answered from Connect's expanded list, which holds such names: this one is not there.
    const get = await rt.request(proxy(`/connectors/${enc("team/orders")}/status`), { role: "nodata" });
    expect(get.status).toBe(404);
    expect(await get.json()).toEqual({ error_code: 404, message: "Connector team/orders not found" });
  });

  test("22.11: a name holding ';' is refused at creation and in a config PUT (Connect cuts it there, so it could never be deleted)", async () => {
    const name = connectorName("loupe semi;colon");
    made.push(name);
    const res = await settled(rt, proxy("/connectors"), { method: "POST", role: "write", body: json({ name, config: heartbeatConfig() }) });
    expect([res.status, (await errorOf(res)).message]).toEqual([400, expect.stringContaining("holds ';'")]);
    const put = await settled(rt, proxy(`/connectors/${enc(name)}/config`), {
      method: "PUT",
      role: "write",
      body: json(heartbeatConfig()),
    });
    expect([put.status, (await errorOf(put)).message]).toEqual([400, expect.stringContaining("holds ';'")]);
    // Nothing reached Connect.
    const listed = (await (await rt.request(proxy("/connectors"), { role: "nodata" })).json()) as string[];
    expect(listed).not.toContain(name);
    const failed = (await auditEntries(rt)).filter((e) => e.content.connector === name || e.content.name === name);
    expect(failed.map((e) => e.content.outcome)).toEqual(["FAILURE", "FAILURE"]);
  }, 60_000);
});
