// @postgres
/**
 * Users and service accounts through the admin API, against a real broker: a scoped user's
 * rights, service account tokens in both header forms, expiry, revocation mid-stream, and
 * sessions following changes of users and groups.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { uniqueTopic } from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { SCOPED_PASSWORD, scopedUser, topicGroup } from "../helpers/scoped.ts";
import { rowsOf } from "../helpers/store.ts";

let rt: TestRuntime;
let clock = Date.now();
const topics: string[] = [];

beforeAll(async () => {
  rt = await testRuntime({}, { auth: { now: () => clock } });
});
afterAll(async () => {
  await rt.dispose({ topics });
});

async function topic(prefix: string): Promise<string> {
  const name = uniqueTopic(prefix);
  topics.push(name);
  const res = await rt.request("/api/topics", { method: "POST", role: "admin", body: JSON.stringify({ topicName: name, partitions: 1 }) });
  expect(res.status).toBe(201);
  return name;
}

const json = (body: unknown) => JSON.stringify(body);

describe("users", () => {
  test("a user with no group is signed in and may do nothing else", async () => {
    const made = await rt.request("/api/users", {
      method: "POST",
      role: "admin",
      body: json({ name: "lonely", password: SCOPED_PASSWORD, groups: [] }),
    });
    expect(made.status).toBe(201);
    const login = await rt.app.request("/api/login", { method: "POST", body: json({ user: "lonely", password: SCOPED_PASSWORD }) });
    const token = await login.text();
    const me = await rt.request("/api/auth", { token });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { userInfo: unknown }).userInfo).toMatchObject({ name: "lonely", groups: [], roles: [], kind: "local" });
    expect((await rt.request("/api/topics", { token })).status).toBe(403);
  });

  test("bad input is a 4xx naming the problem, and nothing is made", async () => {
    const cases: [unknown, number, string][] = [
      [{ name: "short-pw", password: "short", groups: [] }, 400, "at least 12"],
      [{ name: "bad/name", password: SCOPED_PASSWORD, groups: [] }, 400, "letters"],
      [{ name: "ghost-groups", password: SCOPED_PASSWORD, groups: ["no-such-group"] }, 400, "no-such-group"],
      [{ name: "alice", password: SCOPED_PASSWORD, groups: [] }, 409, "configuration file"],
      [{ name: "extra", password: SCOPED_PASSWORD, groups: [], roles: ["admin"] }, 400, "roles"],
    ];
    for (const [body, status, message] of cases) {
      const res = await rt.request("/api/users", { method: "POST", role: "admin", body: json(body) });
      expect(res.status).toBe(status);
      expect(((await res.json()) as { message: string }).message).toContain(message);
    }
    const names = ((await (await rt.request("/api/users", { role: "admin" })).json()) as { name: string }[]).map((u) => u.name);
    expect(names).not.toContain("short-pw");
    expect(names).not.toContain("ghost-groups");
  });

  test("config users are listed read-only; changing one is 409", async () => {
    const list = (await (await rt.request("/api/users", { role: "admin" })).json()) as { name: string; source: string }[];
    expect(list.find((u) => u.name === "alice")).toMatchObject({ source: "config" });
    const res = await rt.request("/api/users/alice", { method: "PUT", role: "admin", body: json({ disabled: true }) });
    expect(res.status).toBe(409);
  });

  test("disabling, re-enabling, a password reset and deletion apply to live tokens at once", async () => {
    const t = await topic("ident-dis");
    const token = await scopedUser(rt, "dora", [topicGroup("dora-g", [t])]);
    expect((await rt.request(`/api/topics/${t}`, { token })).status).toBe(200);
    expect((await rt.request("/api/users/dora", { method: "PUT", role: "admin", body: json({ disabled: true }) })).status).toBe(200);
    expect((await rt.request(`/api/topics/${t}`, { token })).status).toBe(401);
    const refused = await rt.app.request("/api/login", { method: "POST", body: json({ user: "dora", password: SCOPED_PASSWORD }) });
    expect(refused.status).toBe(401);
    expect((await rt.request("/api/users/dora", { method: "PUT", role: "admin", body: json({ disabled: false }) })).status).toBe(200);
    const again = await (
      await rt.app.request("/api/login", { method: "POST", body: json({ user: "dora", password: SCOPED_PASSWORD }) })
    ).text();
    expect((await rt.request(`/api/topics/${t}`, { token: again })).status).toBe(200);
    const reset = await rt.request("/api/users/dora", { method: "PUT", role: "admin", body: json({ password: `${SCOPED_PASSWORD}-2` }) });
    expect(reset.status).toBe(200);
    expect((await rt.request("/api/auth", { token: again })).status).toBe(401);
    const third = await (
      await rt.app.request("/api/login", { method: "POST", body: json({ user: "dora", password: `${SCOPED_PASSWORD}-2` }) })
    ).text();
    expect((await rt.request("/api/users/dora", { method: "DELETE", role: "admin" })).status).toBe(200);
    expect((await rt.request("/api/auth", { token: third })).status).toBe(401);
  });

  test("a user changes their own password with the current one", async () => {
    const token = await scopedUser(rt, "pat", [topicGroup("pat-g", ["pat.*"])]);
    const wrong = await rt.request("/api/user/password", {
      method: "PUT",
      token,
      body: json({ currentPassword: "nope", password: "a-brand-new-password" }),
    });
    expect(wrong.status).toBe(400);
    const ok = await rt.request("/api/user/password", {
      method: "PUT",
      token,
      body: json({ currentPassword: SCOPED_PASSWORD, password: "a-brand-new-password" }),
    });
    expect(ok.status).toBe(200);
    expect((await rt.request("/api/auth", { token })).status).toBe(200);
    const login = await rt.app.request("/api/login", { method: "POST", body: json({ user: "pat", password: "a-brand-new-password" }) });
    expect(login.status).toBe(200);
    const audit = (await (await rt.request("/api/audit?type=USER", { role: "admin" })).json()) as { content: Record<string, string> }[];
    expect(JSON.stringify(audit)).not.toContain("a-brand-new-password");
    expect(JSON.stringify(audit)).not.toContain(SCOPED_PASSWORD);
  });
});

describe("groups and scopes", () => {
  test("a scoped user reads only its topics: 403 naming another; deny beats allow", async () => {
    const mine = await topic("payments.eu");
    const secret = await topic("payments.secret");
    const other = await topic("ident-other");
    const token = await scopedUser(rt, "paula", [topicGroup("payments-r", ["payments.*"], ["payments.secret*"])]);
    expect((await rt.request(`/api/topics/${mine}`, { token })).status).toBe(200);
    for (const t of [secret, other]) {
      const res = await rt.request(`/api/topics/${t}`, { token });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { message: string }).message).toContain(`'${t}'`);
    }
  });

  test("alerts about topics out of scope are left out of the list", async () => {
    const mine = await topic("alerts.mine");
    const other = await topic("alerts.other");
    const token = await scopedUser(rt, "alf", [topicGroup("alf-g", ["alerts.mine*"], [], ["nodata"])]);
    const instances = async (as: { token: string } | { role: "admin" }) =>
      ((await (await rt.request("/api/alerts?alertId=4000", as)).json()) as { labels: { instance: string } }[]).map(
        (n) => n.labels.instance,
      );
    expect(await instances({ role: "admin" })).toEqual(expect.arrayContaining([mine, other]));
    const seen = await instances({ token });
    expect(seen).toContain(mine);
    expect(seen).not.toContain(other);
  });

  test("read on a topic does not allow writing it; admin routes need an unlimited admin group", async () => {
    const t = await topic("ident-ro");
    const token = await scopedUser(rt, "rita", [topicGroup("rita-g", [t]), topicGroup("rita-admin", [t], [], ["admin"])]);
    // admin on one topic covers writing that topic...
    const del = await rt.request(`/api/topics/${t}`, { method: "DELETE", token });
    expect(del.status).toBe(200);
    topics.splice(topics.indexOf(t), 1);
    // ...but not Loupe-wide administration.
    const res = await rt.request("/api/users", { token });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { message: string }).message).toContain("limited");
    // The session says so, for the UI to offer no administration.
    const administrator = async (as: { token: string } | { role: "admin" }) =>
      ((await (await rt.request("/api/auth", as)).json()) as { administrator: boolean }).administrator;
    expect(await administrator({ token })).toBe(false);
    expect(await administrator({ role: "admin" })).toBe(true);
  });

  test("23: the session says the roles held on the request's cluster and whether they reach every topic, for the UI to offer only those", async () => {
    const t = await topic("ident-cluster-roles");
    const token = await scopedUser(rt, "cleo", [topicGroup("cleo-g", [t], [], ["write", "read"])]);
    const session = async (as: { token: string } | { role: "nodata" }, cluster?: string) =>
      (await (await rt.request("/api/auth", { ...as, headers: cluster ? { "x-service-cluster": cluster } : {} })).json()) as {
        clusterRoles: string[];
        everyTopic: boolean;
      };
    expect(await session({ token })).toMatchObject({ clusterRoles: ["write", "read"], everyTopic: false });
    expect(await session({ token }, "local")).toMatchObject({ clusterRoles: ["write", "read"], everyTopic: false });
    expect(await session({ role: "nodata" })).toMatchObject({ clusterRoles: ["nodata"], everyTopic: true });
    // A group on another cluster only: no role here.
    const elsewhere = await scopedUser(rt, "otto", [
      { name: "otto-g", roles: ["read"], clusters: ["elsewhere"], topics: { allow: ["*"] } },
    ]);
    expect(await session({ token: elsewhere })).toMatchObject({ clusterRoles: [], everyTopic: false });
  });

  test("a group's change applies at the next request of a live token", async () => {
    const t = await topic("ident-live");
    const token = await scopedUser(rt, "gil", [topicGroup("gil-g", ["nothing-yet"])]);
    expect((await rt.request(`/api/topics/${t}`, { token })).status).toBe(403);
    const put = await rt.request("/api/groups/gil-g", { method: "PUT", role: "admin", body: json({ topics: { allow: [t], deny: [] } }) });
    expect(put.status).toBe(200);
    expect((await rt.request(`/api/topics/${t}`, { token })).status).toBe(200);
    expect((await rt.request("/api/users/gil", { method: "PUT", role: "admin", body: json({ groups: [] }) })).status).toBe(200);
    expect((await rt.request(`/api/topics/${t}`, { token })).status).toBe(403);
  });
});

describe("service accounts", () => {
  test("24: a service account named as a user of the configuration file is refused as a name that user holds, not as an account that exists", async () => {
    for (const name of ["wanda", "Wanda"]) {
      const res = await rt.request("/api/service-accounts", { method: "POST", role: "admin", body: json({ name, groups: [] }) });
      expect(res.status).toBe(409);
      const { message } = (await res.json()) as { message: string };
      expect(message).toStartWith(`The name '${name}' is taken: the user of the configuration file 'wanda' holds it`);
    }
    // A user of that name is one that exists, in the file.
    const user = await rt.request("/api/users", {
      method: "POST",
      role: "admin",
      body: json({ name: "wanda", password: SCOPED_PASSWORD }),
    });
    expect(((await user.json()) as { message: string }).message).toBe("User 'wanda' exists: it is defined in the configuration file");
    // And an account of a name an account holds is one that exists.
    expect(
      (await rt.request("/api/service-accounts", { method: "POST", role: "admin", body: json({ name: "twice", groups: [] }) })).status,
    ).toBe(201);
    const again = await rt.request("/api/service-accounts", { method: "POST", role: "admin", body: json({ name: "twice", groups: [] }) });
    expect(((await again.json()) as { message: string }).message).toBe("Service account 'twice' exists");
  });

  test("the secret is shown once; the token works as x-service-token and as Bearer; only a hash is stored", async () => {
    const t = await topic("ident-sa");
    await rt.request("/api/groups", { method: "POST", role: "admin", body: json(topicGroup("sa-g", [t])) });
    const made = await rt.request("/api/service-accounts", {
      method: "POST",
      role: "admin",
      body: json({ name: "etl", groups: ["sa-g"] }),
    });
    expect(made.status).toBe(201);
    const { secret, token } = (await made.json()) as { secret: string; token: string };
    expect(token).toBe(`etl:${secret}`);
    expect((await rt.request(`/api/topics/${t}`, { headers: { "x-service-token": token } })).status).toBe(200);
    expect((await rt.request(`/api/topics/${t}`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    const me = (await (await rt.request("/api/auth", { token })).json()) as { userInfo: unknown };
    expect(me.userInfo).toMatchObject({ name: "etl", kind: "service", groups: ["sa-g"] });
    expect((await rt.request("/api/topics", { token: `etl:${"x".repeat(43)}` })).status).toBe(401);
    const got = await (await rt.request("/api/service-accounts/etl", { role: "admin" })).text();
    expect(got).not.toContain(secret);
    expect(JSON.parse(got).lastUsedAt).toBeGreaterThan(0);
    const rows = JSON.stringify(await rowsOf(rt.store, "SELECT * FROM service_accounts"));
    expect(rows).not.toContain(secret);
    const audit = await (await rt.request("/api/audit?type=USER", { role: "admin" })).text();
    expect(audit).not.toContain(secret);
  });

  test("an expired account's token stops working", async () => {
    await rt.request("/api/groups", { method: "POST", role: "admin", body: json(topicGroup("exp-g", ["exp.*"])) });
    const made = await rt.request("/api/service-accounts", {
      method: "POST",
      role: "admin",
      body: json({ name: "short-lived", groups: ["exp-g"], expiresAt: clock + 60_000 }),
    });
    expect(made.status).toBe(201);
    const { token } = (await made.json()) as { token: string };
    expect((await rt.request("/api/auth", { token })).status).toBe(200);
    clock += 61_000;
    expect((await rt.request("/api/auth", { token })).status).toBe(401);
    const past = await rt.request("/api/service-accounts", {
      method: "POST",
      role: "admin",
      body: json({ name: "past", groups: [], expiresAt: 1 }),
    });
    expect(past.status).toBe(400);
  });

  test("regression: a deleted service account's open stream kept running", async () => {
    await rt.request("/api/groups", {
      method: "POST",
      role: "admin",
      body: json({ name: "sa-admin", roles: ["admin"], clusters: ["*"], topics: { allow: ["*"], deny: [] } }),
    });
    const made = await rt.request("/api/service-accounts", {
      method: "POST",
      role: "admin",
      body: json({ name: "watcher", groups: ["sa-admin"] }),
    });
    const { token } = (await made.json()) as { token: string };
    const abort = new AbortController();
    const res = await rt.request("/api/sse/audit", { token, signal: abort.signal, headers: { accept: "text/event-stream" } });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    expect((await rt.request("/api/service-accounts/watcher", { method: "DELETE", role: "admin" })).status).toBe(200);
    // The audit stream's final line is an empty data line (the SPEC's end of stream).
    let text = "";
    let ended = false;
    const deadline = Date.now() + 10_000;
    while (!ended && Date.now() < deadline) {
      const { value, done } = await reader.read();
      ended = done;
      if (value) text += new TextDecoder().decode(value);
    }
    abort.abort();
    expect(ended).toBe(true);
    expect(text.trimEnd().split("\n").at(-1)).toBe("data:");
    expect((await rt.request("/api/auth", { token })).status).toBe(401);
  });
});
