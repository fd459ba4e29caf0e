// @postgres
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SqlLibraryRepo } from "../../src/domains/sql-library/repo.ts";
import { SqlLibraryService } from "../../src/domains/sql-library/service.ts";
import { uniqueTopic } from "../cluster/cluster.ts";
import { errorOf, ROLE_USERS, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { rowsOf } from "../helpers/store.ts";
import { waitFor } from "../helpers/wait.ts";

/**
 * The SQL library against the real store and broker: the history is written by the server when
 * /api/sql/data runs a query, and each user reads and changes only their own entries.
 */
let rt: TestRuntime;
let topic: string;

beforeAll(async () => {
  rt = await testRuntime();
  topic = uniqueTopic("library");
  const res = await rt.request("/api/topics", { method: "POST", role: "admin", body: JSON.stringify({ topicName: topic, partitions: 1 }) });
  expect(res.status).toBe(201);
  await rt.kafka.default().writes.produce(
    topic,
    [1, 2, 3].map((i) => ({ key: `k${i}`, value: JSON.stringify({ i }) })),
  );
});
afterAll(() => rt.dispose({ topics: [topic] }));

type Entry = { id: number; cluster: string; text: string; ranAt: number; rows: number | null; stopReason: string | null };
type Saved = { name: string; text: string; createdAt: number; updatedAt: number };

const run = (sql: string, role: "read" | "write" = "read") =>
  rt.request(`/api/sql/data?${new URLSearchParams({ sql })}`, { role, headers: { accept: "application/json" } });
const history = async (role: "read" | "write" | "admin", limit?: number): Promise<Entry[]> => {
  const res = await rt.request(`/api/sql/history${limit ? `?limit=${limit}` : ""}`, { role });
  expect(res.status).toBe(200);
  return (await res.json()) as Entry[];
};
const save = (name: string, body: unknown, role: "read" | "write" = "read") =>
  rt.request(`/api/sql/saved/${encodeURIComponent(name)}`, { method: "PUT", role, body: JSON.stringify(body) });
const audit = async (type: string, user: string) => {
  const res = await rt.request(`/api/audit?type=${type}&user=${user}&limit=20`, { role: "admin" });
  return (await res.json()) as Array<{ change: string; content: Record<string, string> }>;
};

describe("query history", () => {
  test("a query run through /api/sql/data is in its user's history, newest first, and no one else's", async () => {
    await rt.request("/api/sql/history", { method: "DELETE", role: "read" });
    const first = `SELECT * FROM \`${topic}\` LIMIT 1`;
    const second = `SELECT * FROM \`${topic}\` WHERE i > 1`;
    for (const sql of [first, second]) {
      const res = await run(sql);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { messages: unknown[] }).messages.length).toBeGreaterThan(0);
    }
    // Each line is completed with how its run ended once it has.
    const entries = await waitFor(async () => {
      const h = await history("read");
      return h.length === 2 && h.every((e) => e.stopReason !== null) && h;
    });
    expect(entries.map((e) => [e.text, e.rows, e.stopReason])).toEqual([
      [second, 2, "END"],
      [first, 1, "LIMIT"],
    ]);
    expect(entries[0]!.cluster).toBe("local");
    expect(entries[0]!.ranAt).toBeGreaterThanOrEqual(entries[1]!.ranAt);
    expect((await history("write")).map((e) => e.text)).not.toContain(first);
    expect((await history("admin")).map((e) => e.text)).not.toContain(first);
  });

  test("an invalid query run is kept too, so its text is not lost", async () => {
    const bad = `SELECT * FROM \`${topic}\` WHERE`;
    expect((await run(bad)).status).toBe(400);
    const [entry] = await waitFor(async () => {
      const h = await history("read");
      return h[0]?.text === bad && h;
    });
    expect(entry).toMatchObject({ rows: null, stopReason: "INVALID" });
  });

  test("regression: the workbench's field samples for completion filled the user's history (x-loupe-history: skip keeps a run out)", async () => {
    const kept = `SELECT * FROM \`${topic}\` WHERE i >= 0`;
    expect((await run(kept)).status).toBe(200);
    const sample = `SELECT * FROM \`${topic}\` LIMIT 20`;
    const res = await rt.request(`/api/sql/data?${new URLSearchParams({ sql: sample })}`, {
      role: "read",
      headers: { accept: "application/json", "x-loupe-history": "skip" },
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    // The kept run's line is complete once its run ended; the sample ran after it and left none.
    const h = await waitFor(async () => {
      const got = await history("read");
      return got[0]?.text === kept && got[0].stopReason !== null && got;
    });
    expect(h.map((e) => e.text)).not.toContain(sample);
  });

  test("running the newest entry again moves its time instead of adding a line", async () => {
    const sql = `SELECT * FROM \`${topic}\` LIMIT 2`;
    expect((await run(sql)).status).toBe(200);
    const before = await waitFor(async () => {
      const h = await history("read");
      return h[0]?.text === sql && h;
    });
    expect((await run(sql)).status).toBe(200);
    const after = await waitFor(async () => {
      const h = await history("read");
      return h[0]!.ranAt > before[0]!.ranAt && h;
    });
    expect(after.length).toBe(before.length);
    expect(after[0]!.id).toBe(before[0]!.id);
  });

  test("the history keeps the newest 200 entries of each user, and limit bounds the answer", async () => {
    const user = ROLE_USERS.write.name;
    for (let i = 0; i < 205; i++) await rt.sqlLibrary.recordRun(user, "local", `SELECT ${i} FROM t`);
    const all = await history("write", 1000);
    expect(all.length).toBe(200);
    expect(all[0]!.text).toBe("SELECT 204 FROM t");
    expect(all.at(-1)!.text).toBe("SELECT 5 FROM t");
    expect((await history("write", 3)).map((e) => e.text)).toEqual(["SELECT 204 FROM t", "SELECT 203 FROM t", "SELECT 202 FROM t"]);
  });

  test("a smaller cap drops the oldest entries of that user only", async () => {
    let now = 1_000;
    const small = new SqlLibraryService(
      new SqlLibraryRepo(rt.store.db),
      rt.logs.logger("sql"),
      { historyPerUser: 3, savedPerUser: 2 },
      () => now++,
    );
    for (const text of ["a", "b", "b", "c", "d", "e"]) await small.recordRun("cap-user", "local", text);
    await small.recordRun("cap-other", "local", "x");
    expect((await small.history("cap-user", 10)).map((e) => e.text)).toEqual(["e", "d", "c"]);
    expect((await small.history("cap-other", 10)).map((e) => e.text)).toEqual(["x"]);
    // The same text on another cluster is another run.
    await small.recordRun("cap-other", "other", "x");
    expect((await small.history("cap-other", 10)).map((e) => e.cluster)).toEqual(["other", "local"]);
  });

  test("clearing empties the caller's history only, and is audited", async () => {
    await rt.sqlLibrary.recordRun(ROLE_USERS.read.name, "local", "SELECT 'mine' FROM t");
    const res = await rt.request("/api/sql/history", { method: "DELETE", role: "read" });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { removed: number }).removed).toBeGreaterThan(0);
    expect(await history("read")).toEqual([]);
    expect((await history("write", 1000)).length).toBe(200);
    const entries = await audit("QUERY_HISTORY", ROLE_USERS.read.name);
    expect(entries[0]).toMatchObject({ change: "REMOVE", content: { outcome: "SUCCESS" } });
    expect(Number(entries[0]!.content.removed)).toBeGreaterThan(0);
  });

  test("a bad limit is a 400 with the COMPAT body", async () => {
    for (const limit of ["0", "-1", "abc", "1.5"]) {
      const res = await rt.request(`/api/sql/history?limit=${limit}`, { role: "read" });
      expect(res.status).toBe(400);
      expect((await errorOf(res)).message).toContain("limit");
    }
  });

  test("a nodata user may not read or clear a history", async () => {
    expect((await rt.request("/api/sql/history", { role: "nodata" })).status).toBe(403);
    expect((await rt.request("/api/sql/history", { method: "DELETE", role: "nodata" })).status).toBe(403);
  });
});

describe("saved queries", () => {
  const sql = () => `SELECT * FROM \`${topic}\` WHERE i = 2`;

  test("save, list, replace and delete a named query", async () => {
    const name = "Errors / last hour";
    let res = await save(name, { text: sql() });
    expect(res.status).toBe(200);
    const created = (await res.json()) as Saved & { replaced: boolean };
    expect(created).toMatchObject({ name, text: sql(), replaced: false });

    res = await rt.request("/api/sql/saved", { role: "read" });
    expect(((await res.json()) as Saved[]).find((s) => s.name === name)?.text).toBe(sql());

    res = await save(name, { text: `${sql()} LIMIT 1` });
    const replaced = (await res.json()) as Saved & { replaced: boolean };
    expect(replaced).toMatchObject({ name, text: `${sql()} LIMIT 1`, replaced: true, createdAt: created.createdAt });

    // Another user's library is their own: the name is free there and their list lacks it.
    expect(((await (await rt.request("/api/sql/saved", { role: "write" })).json()) as Saved[]).map((s) => s.name)).not.toContain(name);
    expect((await rt.request(`/api/sql/saved/${encodeURIComponent(name)}`, { method: "DELETE", role: "write" })).status).toBe(404);

    res = await rt.request(`/api/sql/saved/${encodeURIComponent(name)}`, { method: "DELETE", role: "read" });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Saved[]).map((s) => s.name)).not.toContain(name);
  });

  test("saves and deletions are audited with the name", async () => {
    const user = ROLE_USERS.read.name;
    expect((await save("audited", { text: sql() })).status).toBe(200);
    expect((await rt.request("/api/sql/saved/audited", { method: "DELETE", role: "read" })).status).toBe(200);
    const missing = await rt.request("/api/sql/saved/audited", { method: "DELETE", role: "read" });
    expect(missing.status).toBe(404);
    expect((await errorOf(missing)).message).toContain("audited");
    const entries = await audit("SAVED_QUERY", user);
    expect(entries.slice(0, 3).map((e) => [e.change, e.content.name, e.content.outcome])).toEqual([
      ["REMOVE", "audited", "FAILURE"],
      ["REMOVE", "audited", "SUCCESS"],
      ["ADD", "audited", "SUCCESS"],
    ]);
    expect(entries[2]!.content.text).toBe(sql());
  });

  test.each([
    ["an empty name", "", { text: "SELECT 1" }, 404],
    ["a name over 100 characters", "n".repeat(101), { text: "SELECT 1" }, 400],
    ["a name with a control character", "a\tb", { text: "SELECT 1" }, 400],
    ["no text", "q", {}, 400],
    ["an empty text", "q", { text: "" }, 400],
    ["a blank text", "q", { text: "  \n " }, 400],
    ["a text that is not a string", "q", { text: 42 }, 400],
    ["a text over 64 KiB", "q", { text: "x".repeat(64 * 1024 + 1) }, 400],
  ])("%s is refused with a clear error", async (_what, name, body, status) => {
    const res = await save(name, body);
    expect(res.status).toBe(status);
    expect((await errorOf(res)).message.length).toBeGreaterThan(0);
  });

  test("a body that is not JSON is a 400", async () => {
    const res = await rt.request("/api/sql/saved/q", { method: "PUT", role: "read", body: "{nope" });
    expect(res.status).toBe(400);
    await errorOf(res);
  });

  test("a user holds at most the configured number of saved queries", async () => {
    const small = new SqlLibraryService(new SqlLibraryRepo(rt.store.db), rt.logs.logger("sql"), { historyPerUser: 3, savedPerUser: 2 });
    await small.save("cap-saver", "one", "SELECT 1");
    await small.save("cap-saver", "two", "SELECT 2");
    await small.save("cap-saver", "two", "SELECT 22");
    await expect(small.save("cap-saver", "three", "SELECT 3")).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });
});

describe("when the history cannot be written", () => {
  test("a history line the store cannot take never fails the query it records", async () => {
    await rowsOf(rt.store, "DROP TABLE sql_history");
    const res = await run(`SELECT * FROM \`${topic}\` LIMIT 1`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { messages: unknown[] }).messages.length).toBe(1);
  });
});
