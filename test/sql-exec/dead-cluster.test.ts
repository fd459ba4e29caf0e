/**
 * A query on a cluster that never answers: the only cluster of this runtime is a closed port on
 * this machine (a real dead address: every connection is refused). Before its read begins a
 * query waits for the cluster at most sql.clusterWait (2 s here), then ends with UNAVAILABLE
 * naming the cluster and the wait, and gives its slot back. The same holds for the event stream,
 * the JSON answer, a live SUBSCRIBE and the JDBC driver's select, which run the same executor.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { LiveClient, WsClient } from "../clients/ws-client.ts";
import { freePort } from "../cluster/cluster.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { parseStream, q } from "./helpers.ts";

const WAIT_MS = 2_000;
/** The wait, plus the query's validation (the topic list, refused at once) and a loaded machine's slack. */
const WITHIN_MS = WAIT_MS + 6_000;
const TOPIC = "orders";

let rt: TestRuntime;
let dead: string;

beforeAll(async () => {
  dead = `127.0.0.1:${await freePort()}`;
  // One query per user: a slot kept by a query that gave up would refuse the next one (429).
  rt = await testRuntime({
    kafka: { clusters: [{ name: "gone", bootstrapServers: [dead], default: true }] },
    sql: { clusterWait: `${WAIT_MS}ms`, maxQueriesPerUser: 1 },
    lag: { sampleInterval: 0 },
  });
});
afterAll(() => rt.dispose());

/** The message of a query given up on the dead cluster. */
const givenUp = new RegExp(
  `^Cannot read topic '${TOPIC}': Kafka cluster 'gone' unreachable for [1-9]\\d* s before the read began, never reached since Loupe started; ` +
    `the query gave up after sql\\.clusterWait \\(2 s\\) \\(.+\\)$`,
);

async function noQueryRunning(): Promise<void> {
  const res = await rt.request("/api/sql/queries", { role: "admin" });
  expect(await res.json()).toEqual([]);
}

describe("a cluster that was never reached", () => {
  test("22.14: the event stream ends with an error naming the cluster and the wait, within sql.clusterWait; the slot is free again", async () => {
    const t0 = performance.now();
    const res = await rt.request(q(`SELECT * FROM ${TOPIC}`), { role: "read", headers: { accept: "text/event-stream" } });
    expect(res.status).toBe(200);
    const lines = parseStream(await res.text());
    const elapsed = performance.now() - t0;
    const last = lines.at(-1)!;
    expect(last.type).toBe(3);
    expect(last.body.error).toMatch(givenUp);
    expect(lines.filter((l) => l.type === 2)).toEqual([]);
    expect(elapsed).toBeGreaterThanOrEqual(WAIT_MS - 50);
    expect(elapsed).toBeLessThan(WITHIN_MS);
    await noQueryRunning();
  }, 30_000);

  test("22.14: the JSON answer is 503 UNAVAILABLE with the same message, and the next query of the same user is not refused for its slot", async () => {
    for (let i = 0; i < 2; i++) {
      const t0 = performance.now();
      const res = await rt.request(q(`SELECT * FROM ${TOPIC}`), { role: "read", headers: { accept: "application/json" } });
      expect(res.status).toBe(503);
      const body = await errorOf(res);
      expect(body.code).toBe("UNAVAILABLE");
      expect(body.message).toMatch(givenUp);
      expect(body.details).toMatchObject({ cluster: "gone", retriable: true, neverReached: true });
      expect(performance.now() - t0).toBeLessThan(WITHIN_MS);
    }
    await noQueryRunning();
  }, 40_000);

  test("22.14: a live SUBSCRIBE is answered ERROR naming the cluster once sql.clusterWait is up; no subscription is left", async () => {
    const c = await LiveClient.open(rt.url, "dead-cluster", { "x-service-token": await rt.token("read") });
    try {
      const t0 = performance.now();
      c.request("SUBSCRIBE", 7, { sqls: [`SELECT * FROM ${TOPIC}`] });
      const reply = await c.reply(7, WITHIN_MS + 5_000);
      expect(reply.type).toBe("ERROR");
      expect(reply.content).toMatch(givenUp);
      expect(performance.now() - t0).toBeLessThan(WITHIN_MS);
      await noQueryRunning();
    } finally {
      c.close();
    }
  }, 30_000);

  test("22.14: the JDBC driver's select gets its error frame naming the cluster, then the socket closes", async () => {
    const t0 = performance.now();
    const ws = await WsClient.open(rt.url, `/api/ws/jdbc/data?${new URLSearchParams({ sql: `SELECT * FROM ${TOPIC}` })}`, {
      "x-service-token": await rt.token("read"),
    });
    const frame = await ws.next(WITHIN_MS + 5_000);
    expect(frame[0]).toBe("1");
    expect(frame.slice(1)).toMatch(givenUp);
    await ws.whenClosed();
    expect(performance.now() - t0).toBeLessThan(WITHIN_MS);
    await noQueryRunning();
  }, 30_000);

  test("max.query.time shorter than sql.clusterWait ends the wait first, as before", async () => {
    const t0 = performance.now();
    const res = await rt.request(q(`SET max.query.time = 1s; SELECT * FROM ${TOPIC}`), {
      role: "read",
      headers: { accept: "application/json" },
    });
    expect(res.status).toBe(503);
    const { message } = await errorOf(res);
    expect(message).toMatch(new RegExp(`^Cannot read topic '${TOPIC}': Kafka cluster 'gone' unreachable for \\d+ s before the read began`));
    expect(message).not.toContain("sql.clusterWait");
    expect(performance.now() - t0).toBeLessThan(WITHIN_MS - 1_000);
  }, 30_000);
});

test("sql.clusterWait is a duration of at least 1 s", async () => {
  await expect(testRuntime({ sql: { clusterWait: "500ms" } })).rejects.toThrow("sql.clusterWait");
});
