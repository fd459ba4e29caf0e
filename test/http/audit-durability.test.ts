// @postgres
/**
 * An audited change is recorded before it is acknowledged: the intent first (503, and Kafka
 * untouched, when it cannot be stored), then the change, then the outcome; a stop in between
 * leaves an entry the next start closes as outcome UNKNOWN.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { buildRuntime, type Runtime } from "../../src/compose.ts";
import { parseConfig } from "../../src/config/load.ts";
import { isStoreFull } from "../../src/db/dialect.ts";
import type { Store } from "../../src/db/index.ts";
import { UNKNOWN_REASON } from "../../src/domains/audit/service.ts";
import { hashToken } from "../../src/domains/auth/service.ts";
import { defineRoute, text } from "../../src/http/route.ts";
import { uniqueTopic } from "../cluster/cluster.ts";
import { fillStore } from "../helpers/full-store.ts";
import { bootstrap, errorOf, MemorySink, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { testStoreKind, testStoreSection } from "../helpers/store.ts";
import { eventually } from "../kafka/helpers.ts";

type Entry = { type: string; change: string; userId: string; timestamp: number; content: Record<string, string> };

/** A test-only audited change, to fill the store between its intent and its completion. */
const fill = defineRoute({
  method: "POST",
  path: "/api/test/fill/{name}",
  level: "write",
  summary: "t",
  audit: { type: "ACL", change: "ADD" },
  tags: ["test"],
  request: { params: z.object({ name: z.string() }) },
  responses: { 201: text("made") },
});

const created: string[] = [];
let rt: TestRuntime;
beforeAll(async () => {
  rt = await testRuntime();
});
afterAll(async () => {
  await rt.dispose({ topics: created });
});

async function topicExists(runtime: Runtime, name: string): Promise<boolean> {
  return (await runtime.kafka.default().topics.list()).some((t) => t.name === name);
}

async function entries(type: string): Promise<Entry[]> {
  const res = await rt.request(`/api/audit?type=${type}`, { role: "admin" });
  expect(res.status).toBe(200);
  return (await res.json()) as Entry[];
}

describe("with the store full", () => {
  test("regression: with the disk full, a topic creation answered 201 with no audit entry", async () => {
    const write = await rt.token("write");
    const admin = await rt.token("admin");
    const name = uniqueTopic("full");
    created.push(name);
    const release = await fillStore(rt.store);
    try {
      const res = await rt.request("/api/topics", {
        method: "POST",
        token: write,
        body: JSON.stringify({ topicName: name, partitions: 1, replication: 1 }),
      });
      expect(res.status).toBe(503);
      const body = await errorOf(res);
      expect(body.code).toBe("UNAVAILABLE");
      expect(body.message).toContain("audit log cannot be written");
      expect(body.message).toContain("change was not made");
      expect(rt.sink.text()).toContain("audit intent could not be stored");
      // Reads still work on a full store.
      expect((await rt.request("/api/audit?type=TOPIC", { token: admin })).status).toBe(200);
    } finally {
      await release();
    }
    // Checked through the broker itself: the change was never made.
    expect(await topicExists(rt, name)).toBe(false);
    expect((await entries("TOPIC")).some((e) => e.content.topicName === name)).toBe(false);

    // With room again, the same request succeeds and is audited.
    const ok = await rt.request("/api/topics", { method: "POST", role: "write", body: JSON.stringify({ topicName: name, partitions: 1 }) });
    expect(ok.status).toBe(201);
    expect((await entries("TOPIC")).find((e) => e.content.topicName === name)!.content.outcome).toBe("SUCCESS");
  });

  test("regression: with the disk full, delete-records is refused before any record is deleted", async () => {
    const name = uniqueTopic("full-dr");
    created.push(name);
    const kafka = rt.kafka.default();
    await kafka.topics.create({ name, partitions: 1, replication: 1 });
    await kafka.writes.produce(name, [{ value: "a" }, { value: "b" }, { value: "c" }]);
    const write = await rt.token("write");
    const release = await fillStore(rt.store);
    try {
      const res = await rt.request(`/api/topics/${name}/0/2`, { method: "DELETE", token: write });
      expect(res.status).toBe(503);
      expect((await errorOf(res)).code).toBe("UNAVAILABLE");
    } finally {
      await release();
    }
    expect((await kafka.offsets.bounds([name]))[0]).toMatchObject({ earliest: 0, latest: 3 });
    expect((await entries("TOPIC_DATA")).some((e) => e.content.outcome === "SUCCESS" && e.content.topicName === name)).toBe(false);
  });

  test("regression: a denial on a full store still answers 403 (the lost entry is logged)", async () => {
    const nodata = await rt.token("nodata");
    const release = await fillStore(rt.store);
    try {
      const res = await rt.request("/api/audit", { token: nodata });
      expect(res.status).toBe(403);
      expect((await errorOf(res)).code).toBe("FORBIDDEN");
    } finally {
      await release();
    }
    expect(rt.sink.text()).toContain("audit entry could not be stored");
  });
});

describe("logout on a full store", () => {
  test("regression: logout on a full disk must still revoke the token", async () => {
    const token = await rt.token("read");
    const other = await rt.token("nodata");
    const release = await fillStore(rt.store);
    try {
      // Really full: not even one more token row fits.
      const refused = await rt.store.db
        .insertInto("tokens")
        .values({ hash: "f".repeat(64), user_name: "x", roles: "[]", source: "x", created_at: 1, last_used_at: 1, expires_at: 1 })
        .execute()
        .catch((e: unknown) => e);
      expect(isStoreFull(refused)).toBe(true);
      const res = await rt.request("/api/logout", { method: "POST", token });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ success: true });
      expect((await rt.request("/api/auth", { token })).status).toBe(401);
      // Other sessions are untouched.
      expect((await rt.request("/api/auth", { token: other })).status).toBe(200);
    } finally {
      await release();
    }
    // Revoked in the store, not only in memory, once it takes writes again (SQLite changed the row
    // in place; PostgreSQL, which writes a new version of it, refused, and housekeeping records it):
    // a restart does not bring it back.
    await rt.auth.pruneTokens();
    const open = await rt.store.db
      .selectFrom("tokens")
      .select("hash")
      .where("revoked_at", "is", null)
      .where("hash", "=", hashToken(token))
      .execute();
    expect(open).toEqual([]);
  });
});

describe("a stop between the change and its entry", () => {
  const dirs: string[] = [];
  const drops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const drop of drops) await drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  let hashes: Promise<[string, string]> | undefined;

  /** Where a runtime keeps its state: a data directory and its store, both kept across restarts. */
  interface Place {
    dataDir: string;
    store: Awaited<ReturnType<typeof testStoreSection>>["section"];
  }

  /** A runtime on `place` with one admin and one writer; a second call opens the same store again. */
  async function openAt(place: Place, app: Parameters<typeof buildRuntime>[1] = {}) {
    hashes ??= Promise.all([Bun.password.hash("alice-pw-1", "argon2id"), Bun.password.hash("wanda-pw-1", "argon2id")]);
    const [alice, wanda] = await hashes;
    const config = parseConfig({
      dataDir: place.dataDir,
      users: [
        { name: "alice", passwordHash: alice, roles: ["admin"] },
        { name: "wanda", passwordHash: wanda, roles: ["write"] },
      ],
      kafka: { clusters: [{ name: "local", bootstrapServers: bootstrap(), default: true }] },
      ...place.store,
    });
    const sink = new MemorySink();
    const runtime = await buildRuntime(config, { sink, ...app });
    const login = async (user: string) => {
      const res = await runtime.app.request("/api/login", { method: "POST", body: JSON.stringify({ user, password: `${user}-pw-1` }) });
      return res.text();
    };
    const audit = async () =>
      (await (await runtime.app.request("/api/audit", { headers: { "x-service-token": await login("alice") } })).json()) as Entry[];
    return { runtime, sink, login, audit };
  }

  async function tempPlace(): Promise<Place> {
    const dataDir = mkdtempSync(join(tmpdir(), "loupe-audit-"));
    dirs.push(dataDir);
    const store = await testStoreSection(dataDir);
    drops.push(store.drop);
    return { dataDir, store: store.section };
  }

  /**
   * On a shared store (PostgreSQL) a start closes only the PENDING entries older than an hour:
   * another instance's change may be under way. The entries left open are made two hours old,
   * as those of an instance that stopped that long ago; nothing on SQLite, where a start closes
   * them all.
   */
  async function ageOpenEntries(store: Store): Promise<void> {
    if (store.kind !== "postgres") return;
    await store.db
      .updateTable("audit")
      .set((eb) => ({ timestamp: eb("timestamp", "-", 2 * 3_600_000) }))
      .where("outcome", "=", "PENDING")
      .execute();
  }

  test("regression: Loupe killed between the Kafka call and the audit insert left a change with no entry", async () => {
    const place = await tempPlace();
    const first = await openAt(place);
    // What the middleware stores before the handler runs; the process then stops before completing it.
    const pending = await first.runtime.audit.begin({
      type: "TOPIC",
      change: "ADD",
      user: "wanda",
      content: {},
      request: { topicName: "orders", partitions: 3 },
    });
    expect(pending.id).toBeGreaterThan(0);
    const during = await first.audit();
    expect(during.find((e) => e.type === "TOPIC")!.content).toEqual({ topicName: "orders", partitions: "3", outcome: "PENDING" });
    await first.runtime.close();

    if (testStoreKind() === "postgres") {
      // 28: a start on a shared store leaves a recent entry open: its change may be another instance's, under way.
      const early = await openAt(place);
      try {
        expect((await early.audit()).find((e) => e.type === "TOPIC")!.content.outcome).toBe("PENDING");
        await ageOpenEntries(early.runtime.store);
      } finally {
        await early.runtime.close();
      }
    }
    const second = await openAt(place);
    try {
      const [entry] = (await second.audit()).filter((e) => e.type === "TOPIC");
      expect(entry).toMatchObject({ change: "ADD", userId: "wanda" });
      expect(entry!.content).toEqual({ topicName: "orders", partitions: "3", outcome: "UNKNOWN", reason: UNKNOWN_REASON });
      expect(second.sink.text()).toContain("closed as outcome UNKNOWN");
    } finally {
      await second.runtime.close();
    }
    // Closed once: a third start finds nothing left open.
    const third = await openAt(place);
    try {
      expect(await third.runtime.audit.closeInterrupted()).toBe(0);
    } finally {
      await third.runtime.close();
    }
  });

  test("regression: a change made while its entry could not be completed left no trace of its outcome", async () => {
    const place = await tempPlace();
    let release: (() => Promise<void>) | undefined;
    const first = await openAt(place, {
      app: {
        // The store fills up while the change is being made: the intent is stored, the completion is not.
        extraRoutes: (group) =>
          group.handle(fill, async (c) => {
            release = await fillStore(first.runtime.store);
            // What the change acted on makes the completed entry larger than its intent: no room.
            c.set("auditContent", { note: "n".repeat(600) });
            return c.text("made", 201);
          }),
      },
    });
    const res = await first.runtime.app.request("/api/test/fill/x1", {
      method: "POST",
      headers: { "x-service-token": await first.login("wanda") },
    });
    expect(res.status).toBe(201);
    expect(first.sink.text()).toContain("audit entry could not be completed");
    await release!();
    const left = await first.runtime.store.db.selectFrom("audit").select("outcome").where("type", "=", "ACL").execute();
    expect(left).toEqual([{ outcome: "PENDING" }]);
    await ageOpenEntries(first.runtime.store);
    await first.runtime.close();

    const second = await openAt(place);
    try {
      const entry = (await second.audit()).find((e) => e.type === "ACL")!;
      expect(entry.content).toMatchObject({ name: "x1", outcome: "UNKNOWN", reason: UNKNOWN_REASON });
      expect(Object.values(entry.content).every((v) => typeof v === "string")).toBe(true);
    } finally {
      await second.runtime.close();
    }
  });
});

describe("the order of intent, change and outcome", () => {
  test("the handler runs only after the intent is stored; the stream gets the completed entry only", async () => {
    const name = uniqueTopic("order");
    created.push(name);
    const seen: Entry[] = [];
    const off = rt.audit.subscribe((e) => seen.push(e as Entry));
    try {
      const res = await rt.request("/api/topics", { method: "POST", role: "write", body: JSON.stringify({ topicName: name }) });
      expect(res.status).toBe(201);
    } finally {
      off();
    }
    const mine = seen.filter((e) => e.content.topicName === name);
    expect(mine.map((e) => e.content.outcome)).toEqual(["SUCCESS"]);
    const stored = await rt.store.db.selectFrom("audit").select(["outcome", "success", "content"]).where("type", "=", "TOPIC").execute();
    const ofTopic = stored.filter((r) => (JSON.parse(r.content) as { topicName?: string }).topicName === name);
    expect(ofTopic.map(({ outcome, success }) => ({ outcome, success }))).toEqual([{ outcome: "SUCCESS", success: 1 }]);
  });

  test("delete-records stores its intent before answering and completes it when the deletion ends", async () => {
    const name = uniqueTopic("dr-order");
    created.push(name);
    const kafka = rt.kafka.default();
    await kafka.topics.create({ name, partitions: 1, replication: 1 });
    await kafka.writes.produce(name, [{ value: "a" }, { value: "b" }]);
    const res = await rt.request(`/api/topics/${name}/0/1`, { method: "DELETE", role: "write" });
    expect(res.status).toBe(200);
    // The intent was stored before the answer, so an entry exists at once (PENDING or already done).
    const first = (await entries("TOPIC_DATA")).filter((e) => e.content.topicName === name);
    expect(first.length).toBe(1);
    expect(["PENDING", "SUCCESS"]).toContain(first[0]!.content.outcome!);
    expect(
      await eventually(async () => (await entries("TOPIC_DATA")).find((e) => e.content.topicName === name)?.content.outcome === "SUCCESS"),
    ).toBe(true);
    const done = (await entries("TOPIC_DATA")).filter((e) => e.content.topicName === name);
    expect(done.length).toBe(1);
    expect(done[0]!.content).toMatchObject({ partition: "0", offset: "1", lowWatermark: "1", outcome: "SUCCESS" });
  });
});
