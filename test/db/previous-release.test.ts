/**
 * Upgrade from the previous release's own store (issue 27). test/fixtures/previous-release/loupe.db
 * was written by the executable of release c48fe0e through its API (make.ts there; content.ts
 * lists what it holds). Today's `serve` on a copy keeps the copy it takes first
 * (`loupe.db.before-<version>`), migrates, and answers every item through today's API. A release
 * whose migration breaks leaves another copy byte for byte as it was and exits 2 saying why.
 * Neither needs the old executable.
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { MIGRATIONS } from "../../src/db/migrations/index.ts";
import { VERSION } from "../../src/version.ts";
import {
  DISABLED_USER,
  FAVOURITES,
  GROUP,
  HISTORY_QUERY,
  METADATA,
  PREVIOUS_RELEASE,
  PROCESSOR,
  SAVED_QUERY,
  SERVICE_ACCOUNT,
  TOPICS,
  USER,
} from "../fixtures/previous-release/content.ts";
import { bootstrap, ROLE_USERS } from "../helpers/runtime.ts";
import { startServerProcess } from "../helpers/server-process.ts";

const ROOT = resolve(import.meta.dir, "../..");
const FIXTURE = join(ROOT, "test/fixtures/previous-release/loupe.db");
const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

const sha = (path: string) => new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex");

/** A data directory holding a copy of the fixture as its store. */
function copyOfFixture(): { dir: string; data: string; store: string } {
  const dir = mkdtempSync(join(tmpdir(), "loupe-previous-release-"));
  made.push(dir);
  const data = join(dir, "data");
  mkdirSync(data, { mode: 0o700 });
  const store = join(data, "loupe.db");
  copyFileSync(FIXTURE, store);
  return { dir, data, store };
}

function schemaVersion(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return db.query<{ v: number }, []>("SELECT max(version) AS v FROM schema_version").get()!.v;
  } finally {
    db.close();
  }
}

interface AuditEntry {
  type: string;
  change: string;
  userId: string;
  content: Record<string, string>;
}

describe("27: upgrade from the previous release's store", () => {
  test("27: the fixture is release c48fe0e's store, in WAL mode like every store (a failed start leaves it byte for byte)", () => {
    // Read on a copy: opening the committed file would leave SQLite's WAL files beside it.
    expect(schemaVersion(copyOfFixture().store)).toBe(PREVIOUS_RELEASE.schemaVersion);
    // The header's read and write versions: 2 is WAL. In rollback mode, opening would rewrite them.
    const header = readFileSync(FIXTURE).subarray(0, 20);
    expect([header[18], header[19]]).toEqual([2, 2]);
  });

  test("27: serve on a copy: the copy named with the version first, then migrated, every item there through today's API", async () => {
    const { dir, data, store } = copyOfFixture();
    const server = await startServerProcess({}, { dir });
    try {
      const kept = join(data, `loupe.db.before-${VERSION}`);
      expect(statSync(kept).mode & 0o777).toBe(0o600);
      expect(schemaVersion(kept)).toBe(PREVIOUS_RELEASE.schemaVersion);
      expect(schemaVersion(store)).toBe(MIGRATIONS.at(-1)!.version);
      const get = async <T>(path: string, role: "admin" | "write" = "admin"): Promise<T> => {
        const res = await server.request(path, { role });
        expect(res.status).toBe(200);
        return (await res.json()) as T;
      };

      // Identities: users (the old password hash still logs in; the disabled one stays out), the group, the account.
      const users = await get<Array<Record<string, unknown>>>("/api/users");
      expect(users.find((u) => u.name === USER.name)).toMatchObject({
        email: USER.email,
        groups: [...USER.groups],
        source: "store",
        disabled: false,
      });
      expect(users.find((u) => u.name === DISABLED_USER.name)).toMatchObject({ groups: [...DISABLED_USER.groups], disabled: true });
      const login = (user: string, password: string) =>
        fetch(`${server.url}/api/login`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json" },
          body: JSON.stringify({ user, password }),
        });
      expect((await login(USER.name, USER.password)).status).toBe(200);
      expect((await login(DISABLED_USER.name, DISABLED_USER.password)).status).not.toBe(200);
      const groups = await get<Array<Record<string, unknown>>>("/api/groups");
      expect(groups.find((g) => g.name === GROUP.name)).toMatchObject({
        roles: [...GROUP.roles],
        clusters: [...GROUP.clusters],
        topics: { allow: [...GROUP.topics.allow], deny: [...GROUP.topics.deny] },
        source: "store",
      });
      const accounts = await get<Array<Record<string, unknown>>>("/api/service-accounts");
      expect(accounts.find((a) => a.name === SERVICE_ACCOUNT.name)).toMatchObject({
        groups: [...SERVICE_ACCOUNT.groups],
        expiresAt: SERVICE_ACCOUNT.expiresAt,
        disabled: false,
        createdBy: ROLE_USERS.admin.name,
      });

      // The admin's SQL library and favourites; the topic's stored types.
      const saved = await get<Array<{ name: string; text: string }>>("/api/sql/saved");
      expect(saved.find((s) => s.name === SAVED_QUERY.name)?.text).toBe(SAVED_QUERY.text);
      const history = await get<Array<{ text: string; cluster: string; rows: number | null }>>("/api/sql/history");
      expect(history.find((h) => h.text === HISTORY_QUERY)).toMatchObject({ cluster: "local", rows: 3 });
      const profile = await get<Record<string, string[]>>("/api/user/profile");
      for (const [property, value] of FAVOURITES) expect(profile[property]).toContain(value);
      const metadata = await get<Array<Record<string, unknown>>>("/api/metadata/topics");
      expect(metadata).toContainEqual({ topicName: METADATA.topic, keyType: METADATA.keyType, valueType: METADATA.valueType });

      // The processor, paused as it was left, its owner the user who made it.
      const { streams } = await get<{ streams: Array<Record<string, unknown>> }>("/api/streams", "write");
      expect(streams.find((p) => p.name === PROCESSOR.name)).toMatchObject({
        sql: PROCESSOR.sql,
        runners: PROCESSOR.runners,
        deploymentState: "PAUSED",
        user: ROLE_USERS.write.name,
        fromTopics: [TOPICS.orders],
        toTopic: TOPICS.bigOrders,
      });

      // The topics' notifications, each with the id the migration gave it.
      const alerts = await get<Array<{ alertId: number; labels: Record<string, string>; id: string }>>("/api/alerts?limit=1000");
      const raised = alerts.map((a) => `${a.alertId} ${a.labels.instance}`);
      for (const t of Object.values(TOPICS)) expect(raised).toContain(`4000 ${t}`);
      expect(raised).toContain(`4001 ${TOPICS.scratch}`);
      expect(new Set(alerts.map((a) => a.id)).size).toBe(alerts.length);

      // The audit log: each change the release made, by whom, and that it succeeded.
      const audit = await get<AuditEntry[]>("/api/audit?limit=10000");
      const expected: Array<[type: string, change: string, user: string, mentions: string]> = [
        ["TOPIC", "ADD", ROLE_USERS.admin.name, TOPICS.orders],
        ["TOPIC", "ADD", ROLE_USERS.admin.name, TOPICS.bigOrders],
        ["TOPIC", "ADD", ROLE_USERS.admin.name, TOPICS.scratch],
        ["TOPIC", "REMOVE", ROLE_USERS.admin.name, TOPICS.scratch],
        ["TOPIC_DATA", "INSERT", ROLE_USERS.write.name, TOPICS.orders],
        ["TOPIC_METADATA", "UPDATE", ROLE_USERS.write.name, METADATA.topic],
        ["USER", "ADD", ROLE_USERS.admin.name, GROUP.name],
        ["USER", "ADD", ROLE_USERS.admin.name, USER.name],
        ["USER", "ADD", ROLE_USERS.admin.name, DISABLED_USER.name],
        ["USER", "UPDATE", ROLE_USERS.admin.name, DISABLED_USER.name],
        ["USER", "ADD", ROLE_USERS.admin.name, SERVICE_ACCOUNT.name],
        ["SAVED_QUERY", "ADD", ROLE_USERS.admin.name, SAVED_QUERY.name],
        ["PROCESSOR", "ADD", ROLE_USERS.write.name, PROCESSOR.name],
        ["PROCESSOR", "UPDATE", ROLE_USERS.write.name, PROCESSOR.name],
      ];
      const missing = expected.filter(
        ([type, change, user, mentions]) =>
          !audit.some(
            (e) =>
              e.type === type &&
              e.change === change &&
              e.userId === user &&
              e.content.outcome === "SUCCESS" &&
              JSON.stringify(e.content).includes(mentions),
          ),
      );
      expect(missing).toEqual([]);
    } finally {
      await server.stop();
    }
  }, 30_000);

  test("27: a release whose migration breaks leaves the store byte for byte as it was, and serve exits 2 naming the migration", async () => {
    const { dir, data, store } = copyOfFixture();
    const before = sha(store);
    const config = join(dir, "loupe.toml");
    writeFileSync(
      config,
      [
        `dataDir = ${JSON.stringify(data)}`,
        "[server]",
        'host = "127.0.0.1"',
        "port = 0",
        "[[kafka.clusters]]",
        'name = "local"',
        `bootstrapServers = ${JSON.stringify(bootstrap())}`,
        "default = true",
        "",
      ].join("\n"),
    );
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("LOUPE_")));
    // Today's serve with one more migration (9999), after the real ones, that fails.
    const p = Bun.spawn([process.execPath, join(ROOT, "test/helpers/serve-with-broken-migration.ts"), "serve", "--config", config], {
      stdout: "pipe",
      stderr: "pipe",
      env,
    });
    const [code, stderr] = await Promise.all([p.exited, new Response(p.stderr).text()]);
    expect(stderr.trim()).toBe(
      "Migrating the store failed at migration 9999 (deliberately-broken): deliberately broken. " +
        `No migration was applied: the store stays at schema version ${PREVIOUS_RELEASE.schemaVersion}, ` +
        `and its copy taken before migrating is ${join(data, `loupe.db.before-${VERSION}`)}. Loupe ${VERSION} does not start on it.`,
    );
    expect(code).toBe(2);
    expect(sha(store)).toBe(before);
    expect(existsSync(`${store}-wal`) ? statSync(`${store}-wal`).size : 0).toBe(0);
    const db = new Database(store, { readonly: true });
    try {
      expect(db.query("SELECT name FROM sqlite_master WHERE name IN ('made_by_broken', 'leases', 'alert_deliveries')").all()).toEqual([]);
    } finally {
      db.close();
    }
  }, 30_000);
});
