/**
 * Running queries: listed, killed, capped per user, and stopped with their Kafka read closed
 * when the client goes away.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { eventually } from "../kafka/helpers.ts";
import { jsonRecords, parseStream, q, sqlFixture, untilRecord } from "./helpers.ts";

const f = sqlFixture({ sql: { maxQueriesPerUser: 2 } });
let big: string;
const PAD = "y".repeat(4000);

beforeAll(async () => {
  big = await f.topic("running", 2);
  await f.produce(
    big,
    jsonRecords(3000, (i) => ({ i, pad: PAD })),
    100,
  );
});

/** Starts a query whose reader reads nothing: backpressure holds it, so it keeps running. */
async function held(role: "read" | "write" | "admin" = "read", signal?: AbortSignal) {
  const res = await f.rt.request(q(`SELECT * FROM \`${big}\``), {
    role,
    headers: { accept: "text/event-stream" },
    ...(signal ? { signal } : {}),
  });
  expect(res.status).toBe(200);
  return res;
}

describe("running queries", () => {
  test("listed while running, killed by DELETE: the stream ends with isStopped", async () => {
    const res = await held();
    expect(await eventually(async () => f.rt.sql.queries.size === 1)).toBe(true);
    const list = (await (await f.rt.request("/api/sql/queries", { role: "read" })).json()) as Array<{
      id: string;
      sql: string;
      user: string;
      ts: number;
    }>;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ sql: `SELECT * FROM \`${big}\``, user: "reed" });
    expect(list[0]!.ts).toBeGreaterThan(Date.now() - 10_000);
    // Another non-admin user neither sees nor stops it.
    expect(await (await f.rt.request("/api/sql/queries", { role: "write" })).json()).toEqual([]);
    expect((await f.rt.request(`/api/sql/queries/${list[0]!.id}`, { method: "DELETE", role: "write" })).status).toBe(403);
    // The admin sees every query.
    expect(await (await f.rt.request("/api/sql/queries", { role: "admin" })).json()).toHaveLength(1);

    const killed = await f.rt.request(`/api/sql/queries/${list[0]!.id}`, { method: "DELETE", role: "read" });
    expect(await killed.json()).toBe(true);
    const lines = parseStream(await res.text());
    expect(lines.at(-1)!.type).toBe(2);
    expect(lines.at(-1)!.body).toMatchObject({ isStopped: true, isTopicEnd: false, stopReason: "STOPPED" });
    expect(await (await f.rt.request("/api/sql/queries", { role: "read" })).json()).toEqual([]);
    expect(await (await f.rt.request(`/api/sql/queries/${list[0]!.id}`, { method: "DELETE", role: "read" })).json()).toBe(false);
  });

  test("the admin may kill anyone's query", async () => {
    const res = await held("write");
    expect(await eventually(async () => f.rt.sql.queries.size === 1)).toBe(true);
    const [one] = (await (await f.rt.request("/api/sql/queries", { role: "admin" })).json()) as Array<{ id: string }>;
    expect(await (await f.rt.request(`/api/sql/queries/${one!.id}`, { method: "DELETE", role: "admin" })).json()).toBe(true);
    expect(parseStream(await res.text()).at(-1)!.body.isStopped).toBe(true);
  });

  test("closing the connection stops the query and closes its Kafka read within a second", async () => {
    const kafka = f.rt.kafka.default();
    const abort = new AbortController();
    const res = await held("read", abort.signal);
    const reader = res.body!.getReader();
    expect(await untilRecord(reader)).toContain("data:1{");
    expect(kafka.stats().openReads).toBe(1);
    expect(f.rt.sql.queries.size).toBe(1);
    const t0 = performance.now();
    abort.abort();
    await reader.cancel().catch(() => {});
    expect(await eventually(async () => kafka.stats().openReads === 0, 1_000)).toBe(true);
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect(await eventually(async () => f.rt.sql.queries.size === 0, 1_000)).toBe(true);
    expect(f.rt.streams.total).toBe(0);
  });

  test("at most N queries per user at once: 429 beyond, in both answer forms", async () => {
    const aborts = [new AbortController(), new AbortController()];
    const open = [await held("read", aborts[0]!.signal), await held("read", aborts[1]!.signal)];
    expect(await eventually(async () => f.rt.sql.queries.size === 2)).toBe(true);
    const third = await f.rt.request(q(`SELECT * FROM \`${big}\``), { role: "read", headers: { accept: "text/event-stream" } });
    expect(third.status).toBe(429);
    expect(((await third.json()) as { code: string }).code).toBe("TOO_MANY_REQUESTS");
    const jsonForm = await f.rt.request(q(`SELECT * FROM \`${big}\` LIMIT 1`), { role: "read" });
    expect(jsonForm.status).toBe(429);
    // Another user is not affected.
    const other = await f.rt.request(q(`SELECT * FROM \`${big}\` LIMIT 1`), { role: "write" });
    expect(other.status).toBe(200);
    for (const a of aborts) a.abort();
    for (const r of open) await r.body?.cancel().catch(() => {});
    expect(await eventually(async () => f.rt.sql.queries.size === 0, 1_000)).toBe(true);
    const after = await f.rt.request(q(`SELECT * FROM \`${big}\` LIMIT 1`), { role: "read" });
    expect(after.status).toBe(200);
    expect(f.rt.kafka.default().stats().openReads).toBe(0);
  });
});
