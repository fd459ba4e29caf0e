/**
 * Logging in against the real directory (slapd, started by test/setup.ts): directory users get
 * the Loupe groups their directory groups map to, with the right rights on real topics; group
 * changes in the directory reach live tokens; odd names, empty passwords, a down and a slow
 * directory; an unknown user and a wrong password answer alike.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { createServer, type Server, type Socket } from "node:net";
import { Attribute, Change, Client } from "ldapts";
import { ldapEnv, ldapGroupDn, ldapUserDn, uniqueTopic } from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { GROUPS, ldapConfig, loginOn, REFRESH_MS, tokenOn } from "./ldap-fixture.ts";

const env = ldapEnv();
let rt: TestRuntime;
let clock = Date.now();
const topics: string[] = [];
let payments: string;
let analytics: string;
let admin: Client;

beforeAll(async () => {
  rt = await testRuntime({ ldap: ldapConfig(), groups: GROUPS }, { auth: { now: () => clock } });
  for (const prefix of ["payments.ldap", "analytics.ldap"]) {
    const name = uniqueTopic(prefix);
    topics.push(name);
    const res = await rt.request("/api/topics", {
      method: "POST",
      role: "admin",
      body: JSON.stringify({ topicName: name, partitions: 1 }),
    });
    expect(res.status).toBe(201);
  }
  [payments, analytics] = topics as [string, string];
  admin = new Client({ url: env.url, timeout: 5_000, connectTimeout: 5_000 });
  await admin.bind(env.adminDn, env.adminPassword);
});
afterAll(async () => {
  await admin?.unbind().catch(() => undefined);
  await rt.dispose({ topics });
});

const login = (user: string, password: string, target = rt) => loginOn(target, user, password);
const tokenOf = (user: string, password: string) => tokenOn(rt, user, password);

const status = async (token: string, path: string) => (await rt.request(path, { token })).status;

describe("directory users", () => {
  test("each user gets the Loupe groups of their directory groups, with those rights on real topics", async () => {
    const cases: [string, string[], number, number][] = [
      ["bob", ["ldap-payments"], 200, 403],
      ["carol", ["ldap-analytics"], 403, 200],
      ["dave", ["ldap-analytics", "ldap-payments"], 200, 200],
      ["erin", [], 403, 403],
    ];
    for (const [uid, groups, onPayments, onAnalytics] of cases) {
      const token = await tokenOf(uid, `${uid}-ldap-pass`);
      const me = (await (await rt.request("/api/auth", { token })).json()) as {
        userInfo: { groups: string[]; kind: string; name: string };
      };
      expect(me.userInfo).toMatchObject({ name: uid, kind: "ldap" });
      expect([...me.userInfo.groups].sort()).toEqual(groups);
      expect(await status(token, `/api/topics/${payments}`)).toBe(onPayments);
      expect(await status(token, `/api/topics/${analytics}`)).toBe(onAnalytics);
      // Loupe-wide administration only through an unlimited admin group.
      expect(await status(token, "/api/users")).toBe(403);
    }
  });

  test("a local user of the same name wins over the directory's", async () => {
    // alice is a config user of the test runtime (admin) and a directory user (platform-admins).
    expect((await login("alice", "alice-ldap-pass")).status).toBe(401);
    expect((await login("alice", "alice-pw-1")).status).toBe(200);
  });

  test("a group change in the directory reaches a live token at the refresh interval; removal ends it", async () => {
    const uid = `temp-${randomBytes(4).toString("hex")}`;
    const dn = ldapUserDn(uid);
    await admin.add(dn, { objectClass: "inetOrgPerson", uid, cn: uid, sn: uid, userPassword: "temp-ldap-pass" });
    try {
      const token = await tokenOf(uid, "temp-ldap-pass");
      expect(await status(token, `/api/topics/${payments}`)).toBe(403);
      await admin.modify(
        ldapGroupDn("payments-team"),
        new Change({ operation: "add", modification: new Attribute({ type: "member", values: [dn] }) }),
      );
      // Within the interval the groups read at login still apply...
      expect(await status(token, `/api/topics/${payments}`)).toBe(403);
      // ...then they are read again.
      clock += REFRESH_MS;
      expect(await status(token, `/api/topics/${payments}`)).toBe(200);
      // And a fresh login sees the change at once.
      const fresh = await tokenOf(uid, "temp-ldap-pass");
      expect(await status(fresh, `/api/topics/${payments}`)).toBe(200);
      await admin.modify(
        ldapGroupDn("payments-team"),
        new Change({ operation: "delete", modification: new Attribute({ type: "member", values: [dn] }) }),
      );
      clock += REFRESH_MS;
      expect(await status(token, `/api/topics/${payments}`)).toBe(403);
      await admin.del(dn);
      clock += REFRESH_MS;
      expect(await status(token, "/api/auth")).toBe(401);
    } finally {
      await admin.del(dn).catch(() => undefined);
    }
  });
});

describe("hostile and odd input", () => {
  test("filter metacharacters and NUL in the name match nobody (401, never 500)", async () => {
    for (const name of ["*", "bob)(uid=*", "*)(|(uid=*", "\\", "bob\u0000", "bob\\2a", "(uid=*)"]) {
      const res = await login(name, "bob-ldap-pass");
      expect(res.status).toBe(401);
    }
  });

  test("an empty password never logs anyone in (no anonymous bind)", async () => {
    for (const name of ["bob", "erin", "nobody-at-all"]) expect((await login(name, "")).status).toBe(401);
  });

  test("an unknown user and a wrong password answer the same, in about the same time", async () => {
    const answer = async (user: string) => {
      const started = performance.now();
      const res = await login(user, "not-the-password");
      return { status: res.status, body: await res.json(), ms: performance.now() - started };
    };
    const unknown: number[] = [];
    const wrong: number[] = [];
    let first: [unknown, unknown] | undefined;
    for (let i = 0; i < 5; i++) {
      // Different users each time: the throttle slows one account's repeated failures.
      const u = await answer(`nobody-${i}-${randomBytes(3).toString("hex")}`);
      const w = await answer(["bob", "carol", "dave", "erin", "bob"][i]!);
      expect(u.status).toBe(401);
      expect(w.status).toBe(401);
      unknown.push(u.ms);
      wrong.push(w.ms);
      first ??= [u.body, w.body];
    }
    const strip = (b: unknown) => ({ ...(b as Record<string, unknown>), requestId: undefined });
    expect(strip(first![0])).toEqual(strip(first![1]));
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    // Both paths bind once and check a password hash: their medians stay close.
    expect(Math.abs(median(unknown) - median(wrong))).toBeLessThan(50 + 0.5 * Math.max(median(unknown), median(wrong)));
  });
});

describe("a directory that cannot answer", () => {
  test("down: 503 at once, never a login", async () => {
    // A port nothing listens on.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const down = await testRuntime({ ldap: ldapConfig({ url: `ldap://127.0.0.1:${port}` }) });
    try {
      const res = await login("bob", "bob-ldap-pass", down);
      expect(res.status).toBe(503);
      expect(((await res.json()) as { code: string }).code).toBeDefined();
    } finally {
      await down.dispose();
    }
  });

  test("slow (accepts, never answers): 503 within the timeout, never a hang", async () => {
    const held: Socket[] = [];
    const silent: Server = createServer((s) => held.push(s));
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const port = (silent.address() as { port: number }).port;
    const slow = await testRuntime({ ldap: ldapConfig({ url: `ldap://127.0.0.1:${port}`, connectTimeout: "1s", timeout: "1s" }) });
    try {
      const started = performance.now();
      const res = await login("bob", "bob-ldap-pass", slow);
      const ms = performance.now() - started;
      expect(res.status).toBe(503);
      // connectTimeout + timeout at most, with room for a loaded machine.
      expect(ms).toBeLessThan(2_000 + 3_000);
      // Local users still log in while the directory is out.
      expect((await login("alice", "alice-pw-1", slow)).status).toBe(200);
    } finally {
      for (const s of held) s.destroy();
      silent.close();
      await slow.dispose();
    }
  });
});
