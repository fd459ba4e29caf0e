// @postgres
/**
 * One name, one identity, with the real directory (slapd) beside the store's users and service
 * accounts: a name is one identity's in any case, checked when it is given out and at each
 * login; names written to the store by other means; what goes with a deleted user. On SQLite and
 * on PostgreSQL (the names are compared in the store). The directory's own logins are in
 * ldap-login.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { Attribute, Change, Client } from "ldapts";
import { ldapEnv, ldapGroupDn, ldapUserDn, uniqueTopic } from "../cluster/cluster.ts";
import { ROLE_USERS, roleHashes, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { GROUPS, ldapConfig, loginOn, tokenOn } from "./ldap-fixture.ts";

const env = ldapEnv();
let rt: TestRuntime;
let analytics: string;
let admin: Client;

beforeAll(async () => {
  rt = await testRuntime({ ldap: ldapConfig(), groups: GROUPS });
  analytics = uniqueTopic("analytics.names");
  const res = await rt.request("/api/topics", {
    method: "POST",
    role: "admin",
    body: JSON.stringify({ topicName: analytics, partitions: 1 }),
  });
  expect(res.status).toBe(201);
  admin = new Client({ url: env.url, timeout: 5_000, connectTimeout: 5_000 });
  await admin.bind(env.adminDn, env.adminPassword);
});
afterAll(async () => {
  await admin?.unbind().catch(() => undefined);
  await rt.dispose({ topics: [analytics] });
});

const login = (user: string, password: string) => loginOn(rt, user, password);
const tokenOf = (user: string, password: string) => tokenOn(rt, user, password);

const status = async (token: string, path: string) => (await rt.request(path, { token })).status;

describe("one name, one identity", () => {
  const hex = () => randomBytes(4).toString("hex");
  const json = (body: unknown) => JSON.stringify(body);
  const STORE_PASSWORD = "store-user-password";

  /** A directory user (in analytics-readers, so it may read), removed by the returned function. */
  async function directoryUser(uid: string, password: string): Promise<() => Promise<void>> {
    const dn = ldapUserDn(uid);
    await admin.add(dn, { objectClass: "inetOrgPerson", uid, cn: uid, sn: uid, userPassword: password });
    const member = (operation: "add" | "delete") =>
      admin.modify(
        ldapGroupDn("analytics-readers"),
        new Change({ operation, modification: new Attribute({ type: "member", values: [dn] }) }),
      );
    await member("add");
    return async () => {
      await member("delete").catch(() => undefined);
      await admin.del(dn).catch(() => undefined);
    };
  }

  async function storeUser(name: string): Promise<string> {
    const made = await rt.request("/api/users", {
      method: "POST",
      role: "admin",
      body: json({ name, password: STORE_PASSWORD, groups: ["ldap-analytics"] }),
    });
    expect(made.status).toBe(201);
    return tokenOf(name, STORE_PASSWORD);
  }

  const saved = async (token: string) => (await rt.request("/api/sql/saved", { token })).json() as Promise<{ name: string }[]>;

  test("22.7: a directory user never becomes the local user of its name: refused at login (401, logged), the local user's saved queries untouched", async () => {
    const name = `kim-${hex()}`;
    const local = await storeUser(name);
    const save = await rt.request("/api/sql/saved/secret-report", { method: "PUT", token: local, body: json({ text: "SELECT 1" }) });
    expect(save.status).toBe(200);
    // The directory gets a user of that name after the local one exists.
    const remove = await directoryUser(name, "kim-ldap-pass");
    try {
      rt.sink.lines.length = 0;
      // Typed in another case the name is no local user's, and the directory resolves it to the local user's name.
      for (const typed of [name.toUpperCase(), `Kim-${name.slice(4)}`, name]) {
        const res = await login(typed, "kim-ldap-pass");
        expect(res.status).toBe(401);
        expect(((await res.json()) as { message: string }).message).toBe("UNAUTHORIZED");
      }
      const refusals = rt.sink.lines.filter((l) => l.includes("directory login refused"));
      expect(refusals.length).toBe(2);
      expect(refusals[0]).toContain(`the local user '${name}'`);
      expect(rt.sink.text()).not.toContain("kim-ldap-pass");
      // The local user still logs in and still has its query.
      expect((await saved(await tokenOf(name, STORE_PASSWORD))).map((q) => q.name)).toEqual(["secret-report"]);
    } finally {
      await remove();
    }
  });

  test("22.7: a directory user whose name differs only in case from a local user's is refused too", async () => {
    const name = `lou-${hex()}`;
    await storeUser(name);
    const remove = await directoryUser(`Lou-${name.slice(4)}`, "lou-ldap-pass");
    try {
      expect((await login(`Lou-${name.slice(4)}`, "lou-ldap-pass")).status).toBe(401);
      expect(rt.sink.text()).toContain(`directory login refused: the name is held by the local user '${name}'`);
    } finally {
      await remove();
    }
  });

  test("22.7: a name is one identity's: a local user or service account named like a config user, local user, service account or directory user, in any case, is 409", async () => {
    const n = hex();
    const user = (name: string) =>
      rt.request("/api/users", { method: "POST", role: "admin", body: json({ name, password: STORE_PASSWORD, groups: [] }) });
    const account = (name: string) =>
      rt.request("/api/service-accounts", { method: "POST", role: "admin", body: json({ name, groups: [] }) });
    expect((await user(`mo-${n}`)).status).toBe(201);
    expect((await account(`svc-${n}`)).status).toBe(201);
    const cases: [Promise<Response>, string][] = [
      [user("ALICE"), "the user of the configuration file 'alice'"],
      [user("Bob"), "the directory user 'bob'"],
      [user(`MO-${n}`), `the local user 'mo-${n}'`],
      [user(`Svc-${n}`), `the service account 'svc-${n}'`],
      [account("Wanda"), "the user of the configuration file 'wanda'"],
      [account("carol"), "the directory user 'carol'"],
      [account(`Mo-${n}`), `the local user 'mo-${n}'`],
      [account(`SVC-${n}`), `the service account 'svc-${n}'`],
    ];
    for (const [pending, holder] of cases) {
      const res = await pending;
      expect(res.status).toBe(409);
      expect(((await res.json()) as { message: string }).message).toContain(holder);
    }
    const users = ((await (await rt.request("/api/users", { role: "admin" })).json()) as { name: string }[]).map((u) => u.name);
    for (const made of ["ALICE", "Bob", `MO-${n}`, `Svc-${n}`]) expect(users).not.toContain(made);
  });

  test("22.7: names written to the store by other means: the config file's user owns its name in any case, a local user a service account's", async () => {
    const n = hex();
    const hash = await Bun.password.hash(STORE_PASSWORD, "argon2id");
    const secret = randomBytes(24).toString("base64url");
    const insertUser = (name: string) =>
      rt.store.db
        .insertInto("users")
        .values({ name, password_hash: hash, roles: "[]", email: null, created_at: 0, groups: '["ldap-analytics"]', disabled: 0 })
        .execute();
    const sha = (s: string) => new Bun.CryptoHasher("sha256").update(s).digest("hex");
    const insertAccount = (name: string) =>
      rt.store.db
        .insertInto("service_accounts")
        .values({
          name,
          secret_hash: sha(secret),
          groups: '["ldap-analytics"]',
          expires_at: null,
          disabled: 0,
          created_by: "test",
          created_at: 0,
          updated_at: 0,
        })
        .execute();
    await insertUser("ALICE");
    await insertAccount("Nora");
    await insertUser(`pat-${n}`);
    await insertAccount(`PAT-${n}`);
    rt.auth.accessChanged();
    try {
      expect((await login("ALICE", STORE_PASSWORD)).status).toBe(401);
      expect((await rt.request("/api/auth", { token: `Nora:${secret}` })).status).toBe(401);
      expect((await rt.request("/api/auth", { token: `PAT-${n}:${secret}` })).status).toBe(401);
      expect((await login(`pat-${n}`, STORE_PASSWORD)).status).toBe(200);
    } finally {
      await rt.store.db
        .deleteFrom("users")
        .where("name", "in", ["ALICE", `pat-${n}`])
        .execute();
      await rt.store.db
        .deleteFrom("service_accounts")
        .where("name", "in", ["Nora", `PAT-${n}`])
        .execute();
      rt.auth.accessChanged();
    }
  });

  test("24: an identity's scope by name (what its processors run with) is no directory user's once a user of the configuration file holds the name in another case", async () => {
    const name = `zed-${hex()}`;
    const remove = await directoryUser(name, "zed-ldap-pass");
    const hashes = await roleHashes();
    const fileUsers = (Object.keys(ROLE_USERS) as (keyof typeof ROLE_USERS)[]).map((role) => ({
      name: ROLE_USERS[role].name,
      passwordHash: hashes[role],
      roles: [role],
      groups: [],
    }));
    try {
      expect(typeof (await rt.auth.scopeOfIdentity(name, "ldap"))).toBe("object");
      // A reload gives the file a user of that name but for case: the name is theirs now.
      await rt.auth.setUsers([...fileUsers, { name: `Zed-${name.slice(4)}`, passwordHash: hashes.read, roles: ["read"], groups: [] }]);
      expect(await rt.auth.scopeOfIdentity(name, "ldap")).toBe("is no longer a directory user");
    } finally {
      await rt.auth.setUsers(fileUsers);
      await remove();
    }
  });

  test("22.7: a directory token ends as soon as another identity takes its name", async () => {
    const name = `ned-${hex()}`;
    const remove = await directoryUser(name, "ned-ldap-pass");
    let token: string;
    try {
      token = await tokenOf(name, "ned-ldap-pass");
      expect(await status(token, "/api/sql/saved")).toBe(200);
    } finally {
      await remove();
    }
    // Gone from the directory (its token lives until the next refresh), the name is free: a local user takes it.
    await storeUser(name);
    expect(await status(token, "/api/sql/saved")).toBe(401);
  });

  test("22.7: a deleted local user's saved queries, history and favourites go with it: whoever holds the name next finds none", async () => {
    const name = `lee-${hex()}`;
    const local = await storeUser(name);
    expect((await rt.request("/api/sql/saved/mine", { method: "PUT", token: local, body: json({ text: "SELECT 2" }) })).status).toBe(200);
    expect((await rt.request(`/api/user/profile/topics/${analytics}`, { method: "PUT", token: local })).status).toBe(200);
    expect((await rt.request(`/api/users/${name}`, { method: "DELETE", role: "admin" })).status).toBe(200);
    const remove = await directoryUser(name, "lee-ldap-pass");
    try {
      const token = await tokenOf(name, "lee-ldap-pass");
      expect(await saved(token)).toEqual([]);
      const profile = (await (await rt.request("/api/user/profile", { token })).json()) as { topics: string[] };
      expect(profile.topics).toEqual([]);
    } finally {
      await remove();
    }
  });

  test("22.7: a name is checked against the directory before it is given out: with the directory down, creating a user is 503", async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const down = await testRuntime({ ldap: ldapConfig({ url: `ldap://127.0.0.1:${port}` }) });
    try {
      const res = await down.request("/api/users", {
        method: "POST",
        role: "admin",
        body: json({ name: `nia-${hex()}`, password: STORE_PASSWORD, groups: [] }),
      });
      expect(res.status).toBe(503);
      expect(((await (await down.request("/api/users", { role: "admin" })).json()) as unknown[]).length).toBe(4);
    } finally {
      await down.dispose();
    }
  });
});
