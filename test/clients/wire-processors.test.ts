/**
 * Stream processors as the Go and Python clients call them (CLIENTS.md §1): requests with
 * exactly their headers and bodies, answers held to what they need (the Go client's strict JSON
 * types, the Python client's exact 200 and bare text id), and the Python test's own program run
 * against a real Avro topic.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import avro from "avsc";
import { registryEnv } from "../cluster/cluster.ts";
import { confluentWire, registerSchema } from "../helpers/registry.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { pollFor } from "../helpers/wait.ts";
import { getProcessor, jsonTopic, outputOf, untilState } from "../processors/helpers.ts";
import {
  array,
  asResponse,
  decode,
  GO_HEADERS,
  goStruct,
  int,
  jsonAnswer,
  nullable,
  object,
  optional,
  record,
  send,
  serve,
  str,
  textAnswer,
} from "./strict.ts";

let rt: TestRuntime;
let server: Bun.Server<unknown>;
const made: string[] = [];
let token: string;

beforeAll(async () => {
  rt = await testRuntime({ sql: { schemaRegistry: { urls: registryEnv().urls } }, lag: { cacheTtl: 0 } });
  server = serve(rt.app);
  token = await rt.token("write");
});
afterAll(async () => {
  server.stop(true);
  await rt.dispose({ topics: made });
}, 60_000);

const kafka = () => rt.kafka.default();

/** A request of the Go client (GO c `Do`): its headers, JSON bodies. */
const go = (method: string, target: string, body?: unknown) =>
  send(
    server.url,
    method,
    target,
    { ...GO_HEADERS, "x-service-token": token, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body === undefined ? undefined : JSON.stringify(body),
  );

/** A request of the Python client (PY ProcessorHandler): JSON bodies, Accept text/plain. */
const py = (method: string, target: string, body?: unknown) =>
  send(
    server.url,
    method,
    target,
    {
      "x-service-token": token,
      "Content-Type": "application/json",
      Accept: "text/plain",
      "User-Agent": "python-requests/2.31.0",
      "Accept-Encoding": "gzip, deflate",
    },
    body === undefined ? undefined : JSON.stringify(body),
  );

/** GO c `ProcessorsResult`, as Loupe promises it: what Go decodes, with the types Go needs, and present. */
const runnerStateItem = object({ id: str, worker: str, state: str, errorMsg: str });
const processorItem = object({
  id: str,
  name: str,
  deploymentState: str,
  runners: int,
  user: str,
  startTs: int,
  stopTs: optional(int),
  uptime: int,
  namespace: str,
  clusterName: str,
  sql: str,
  topicValueDecoder: str,
  topicKeyDecoder: str,
  pipeline: str,
  toTopics: optional(array(str)),
  fromTopics: optional(array(str)),
  lastActionMsg: optional(str),
  deploymentErrorMsg: optional(str),
  runnerState: record(runnerStateItem),
});
const processorsResult = object({
  targets: array(object({ cluster: str, version: nullable(str), namespaces: array(str) })),
  streams: array(processorItem),
});
/** GO c `ProcessorsResult` itself: nothing required, any type mismatch fatal. */
const goProcessorsResult = goStruct({
  targets: array(goStruct({ cluster: str, version: str, namespaces: array(str) })),
  streams: array(
    goStruct({
      id: str,
      name: str,
      deploymentState: str,
      runners: int,
      user: str,
      startTs: int,
      stopTs: int,
      uptime: int,
      namespace: str,
      clusterName: str,
      sql: str,
      topicValueDecoder: str,
      topicKeyDecoder: str,
      pipeline: str,
      toTopics: array(str),
      fromTopics: array(str),
      lastActionMsg: str,
      deploymentErrorMsg: str,
      runnerState: record(goStruct({ id: str, worker: str, state: str, errorMsg: str })),
    }),
  ),
});

/** The Go client's list, decoded both ways. */
async function goList() {
  const res = asResponse(await go("GET", "/api/streams"));
  const text = await res.clone().text();
  decode(goProcessorsResult, JSON.parse(text), "ProcessorsResult");
  return jsonAnswer(res, 200, processorsResult);
}

describe("lenses-go", () => {
  test("GET /api/config: lenses.sql.execution.mode is IN_PROC, so the client looks ids up by name", async () => {
    const config = await jsonAnswer(
      asResponse(await go("GET", "/api/config")),
      200,
      record((v) => v),
    );
    expect(config["lenses.sql.execution.mode"]).toBe("IN_PROC");
  });

  test("create with all six keys (empty clusterName and namespace, pipeline the name): 2xx; the list decodes strictly; the name finds the id; PUTs 200, DELETE 200", async () => {
    const source = await jsonTopic(kafka(), "wire-go-in", 2, made);
    const target = await jsonTopic(kafka(), "wire-go-out", 2, made);
    const name = `go-${source}`;
    const sql = `INSERT INTO \`${target}\` SELECT STREAM * FROM \`${source}\``;
    const created = await go("POST", "/api/streams", { name, sql, runners: 1, clusterName: "", namespace: "", pipeline: name });
    expect(created.status).toBeGreaterThanOrEqual(200);
    expect(created.status).toBeLessThan(300);

    // GO c `LookupProcessorIdentifier`: the id of the list's entry whose name matches.
    const list = await goList();
    expect(list.targets).toHaveLength(1);
    expect(list.targets[0]).toMatchObject({ cluster: "local", namespaces: [] });
    const mine = list.streams.filter((s) => s.name === name);
    expect(mine).toHaveLength(1);
    const id = mine[0]!.id;
    expect(id).toMatch(/^lsql_[0-9a-f]+$/);
    expect(mine[0]).toMatchObject({ runners: 1, pipeline: name, namespace: "", sql, fromTopics: [source], toTopics: [target] });
    expect(Object.keys(mine[0]!.runnerState)).toEqual([`${id}-0`]);

    await untilState(rt, id, "RUNNING");
    const running = (await goList()).streams.find((s) => s.id === id)!;
    expect(running.deploymentState).toBe("RUNNING");
    expect(running.uptime).toBeGreaterThanOrEqual(0);

    // 204 would break the Go client's PUTs; n <= 0 is sent as 1.
    for (const path of ["pause", "resume", "scale/1"]) {
      const res = await go("PUT", `/api/streams/${id}/${path}`);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
    }
    const paused = await go("PUT", `/api/streams/${id}/pause`);
    expect(paused.status).toBe(200);
    const stopped = (await goList()).streams.find((s) => s.id === id)!;
    expect(stopped.deploymentState).toBe("PAUSED");
    expect(Number.isSafeInteger(stopped.stopTs)).toBe(true);

    const deleted = await go("DELETE", `/api/streams/${id}`);
    expect(deleted.status).toBe(200);
    expect((await goList()).streams.some((s) => s.id === id)).toBe(false);
  }, 60_000);
});

describe("lenses-python", () => {
  /** The Python test's program, byte for byte but for the topic names. */
  const pythonSql = (source: string, target: string) =>
    ` SET autocreate=true; insert into ${target} SELECT  body FROM  \`${source}\` WHERE score> 10 and _ktype=AVRO and _vtype=AVRO `;

  const keySchema = "string";
  const valueSchema = {
    type: "record",
    name: "RedditPost",
    fields: [
      { name: "body", type: "string" },
      { name: "score", type: "int" },
    ],
  };
  const posts = [
    { body: "first", score: 5 },
    { body: "second", score: 11 },
    { body: "third", score: 10 },
    { body: "fourth", score: 42 },
    { body: "fifth", score: -3 },
    { body: "sixth", score: 1000 },
  ];

  let source: string;
  /** Unquoted in the program, as the Python test writes it: letters, digits and '_' only. */
  const target = `body_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;

  beforeAll(async () => {
    made.push(target);
    source = await jsonTopic(kafka(), "reddit_posts", 1, made);
    const keyId = await registerSchema(`${source}-key`, keySchema as unknown as object);
    const valueId = await registerSchema(`${source}-value`, valueSchema);
    const keys = avro.Type.forSchema(keySchema as avro.Schema);
    const values = avro.Type.forSchema(valueSchema as avro.Schema);
    await kafka().writes.produce(
      source,
      posts.map((p, i) => ({ key: confluentWire(keyId, keys.toBuffer(`post-${i}`)), value: confluentWire(valueId, values.toBuffer(p)) })),
    );
  });

  /** PY CreateProcessor: exactly 200, the text is the id verbatim. */
  async function pyCreate(name: string): Promise<string> {
    const res = await py("POST", "/api/streams", {
      name,
      sql: pythonSql(source, target),
      runners: 1,
      clusterName: "dev",
      namespace: "ns",
      pipeline: "1",
    });
    const id = await textAnswer(asResponse(res), 200);
    expect(id.split("_")[0]).toContain("lsql");
    expect(id).toMatch(/^lsql_[0-9a-f]+$/);
    return id;
  }

  /** The Python client's PUT or DELETE: exactly 200, with a JSON body. */
  async function pyAction(method: "PUT" | "DELETE", path: string): Promise<void> {
    await jsonAnswer(asResponse(await py(method, path)), 200, object({ id: str, name: str, action: str }));
  }

  test("create: 200 with the bare id as text; the program (autocreate, old-style AVRO decoders) runs on the Avro topic", async () => {
    const id = await pyCreate(`test_processor-${source}`);
    const p = await untilState(rt, id, "RUNNING");
    expect(p).toMatchObject({ clusterName: "dev", namespace: "ns", pipeline: "1", topicKeyDecoder: "AVRO", topicValueDecoder: "AVRO" });
    const expected = posts.filter((x) => x.score > 10).map((x) => ({ body: x.body }));
    const out = await outputOf(kafka(), target, expected.length);
    expect(out.map((r) => r.value)).toEqual(expected);
    await pollFor("its figures", async () => ((await getProcessor(rt, id)).figures.recordsIn === posts.length ? true : undefined));
    expect((await getProcessor(rt, id)).figures).toMatchObject({ recordsOut: expected.length, failed: 0 });
    await pyAction("DELETE", `/api/streams/${id}`);
  }, 60_000);

  test("resume right after create, pause, scale to '4', delete: exactly 200 each, with JSON", async () => {
    const id = await pyCreate(`test_processor_3-${source}`);
    await pyAction("PUT", `/api/streams/${id}/resume`);
    await pyAction("PUT", `/api/streams/${id}/pause`);
    expect((await untilState(rt, id, "PAUSED")).deploymentState).toBe("PAUSED");
    await pyAction("PUT", `/api/streams/${id}/resume`);
    await pyAction("PUT", `/api/streams/${id}/scale/4`);
    expect((await getProcessor(rt, id)).runners).toBe(4);
    await pyAction("DELETE", `/api/streams/${id}`);
    expect((await rt.request(`/api/streams/${id}`, { role: "read" })).status).toBe(404);
  }, 60_000);
});
