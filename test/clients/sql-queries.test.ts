/**
 * Running queries as lenses-go lists and kills them (CLIENTS.md §5.4): `id` a JSON integer
 * (int64) and `ts` epoch milliseconds, DELETE answering a bare `true` or `false`.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { eventually } from "../kafka/helpers.ts";
import { jsonRecords, parseStream, q, sqlFixture } from "../sql-exec/helpers.ts";
import { strictIntegers } from "./sql-wire.ts";

const f = sqlFixture();
let big: string;

beforeAll(async () => {
  big = await f.topic("clients-running", 2);
  const pad = "q".repeat(4000);
  await f.produce(
    big,
    jsonRecords(3000, (i) => ({ i, pad })),
    100,
  );
});

/** A query whose reader reads nothing: backpressure holds it, so it keeps running. */
async function held(): Promise<Response> {
  const res = await f.rt.request(q(`SELECT * FROM \`${big}\``), { role: "read", headers: { accept: "text/event-stream" } });
  expect(res.status).toBe(200);
  return res;
}

/** lenses-go: Content-Type JSON even on a bodiless request. */
const goHeaders = { "content-type": "application/json" };

describe("running queries (lenses-go)", () => {
  test("regression: query ids were uuid strings the Go client could not decode; now integers, counted up", async () => {
    const first = await held();
    const second = await held();
    expect(await eventually(async () => f.rt.sql.queries.size === 2)).toBe(true);
    const res = await f.rt.request("/api/sql/queries", { role: "read", headers: goHeaders });
    expect(res.status).toBe(200);
    const text = await res.text();
    const list = JSON.parse(text) as Array<{ id: number; sql: string; user: string; ts: number }>;
    expect(list).toHaveLength(2);
    for (const element of text.slice(1, -1).split(/(?<=\}),(?=\{)/)) {
      const query = strictIntegers(element, ["id", "ts"]);
      expect(Object.keys(query).sort()).toEqual(["id", "sql", "ts", "user"]);
      expect(query).toMatchObject({ sql: `SELECT * FROM \`${big}\``, user: "reed" });
      expect(query.ts as number).toBeGreaterThan(Date.now() - 60_000);
    }
    const [a, b] = list.map((x) => x.id).sort((x, y) => x - y);
    expect(a!).toBeGreaterThan(0);
    expect(b!).toBeGreaterThan(a!);

    for (const [id, stream] of [
      [a!, first],
      [b!, second],
    ] as const) {
      const killed = await f.rt.request(`/api/sql/queries/${id}`, { method: "DELETE", role: "read", headers: goHeaders });
      expect(killed.status).toBe(200);
      expect(await killed.text()).toBe("true");
      const lines = parseStream(await stream.text());
      expect(lines.at(-1)!.body).toMatchObject({ isStopped: true, stopReason: "STOPPED" });
    }
    const again = await f.rt.request(`/api/sql/queries/${a}`, { method: "DELETE", role: "read", headers: goHeaders });
    expect(again.status).toBe(200);
    expect(await again.text()).toBe("false");
    expect(await (await f.rt.request("/api/sql/queries", { role: "read", headers: goHeaders })).text()).toBe("[]");

    // A later query gets a higher id: ids are never reused.
    const third = await held();
    expect(await eventually(async () => f.rt.sql.queries.size === 1)).toBe(true);
    const [c] = (await (await f.rt.request("/api/sql/queries", { role: "read" })).json()) as Array<{ id: number }>;
    expect(c!.id).toBeGreaterThan(b!);
    expect(await (await f.rt.request(`/api/sql/queries/${c!.id}`, { method: "DELETE", role: "read" })).json()).toBe(true);
    await third.body?.cancel();
  }, 60_000);

  test("an id that is not an integer names no query: 200 false", async () => {
    for (const id of ["abc", "1.5", "-1", "0x10", "99999999999999999999"]) {
      const res = await f.rt.request(`/api/sql/queries/${encodeURIComponent(id)}`, { method: "DELETE", role: "read", headers: goHeaders });
      expect(res.status).toBe(200);
      expect(await res.text()).toBe("false");
    }
  });
});
