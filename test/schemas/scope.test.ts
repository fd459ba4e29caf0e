/**
 * The registry proxy under topic scopes, against the real registry (the shared Apicurio hosts):
 * a subject follows its topic's scope (`<topic>-key`, `<topic>-value`, `<topic>-<record name>`),
 * subjects of no topic and the global level are for identities with the role on every topic of
 * every cluster, lists and schemas by id show only what the caller sees, and every refusal is a
 * 403 naming the subject and its topic, audited as a failure. Subjects made here are removed
 * from the registry at the end; the global level is only ever set to what it already is.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { registryEnv, uniqueTopic } from "../cluster/cluster.ts";
import { registerSchema } from "../helpers/registry.ts";
import { bootstrap, errorOf, ROLE_USERS, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { scopedUser, topicGroup } from "../helpers/scoped.ts";
import { GO } from "./helpers.ts";

let rt: TestRuntime;
/** Two clusters (the same broker under two names), one registry. */
let multi: TestRuntime;

const run = uniqueTopic("sr4");
const IN = `in.${run}.orders`;
const OUT = `out.${run}.payments`;
const S = {
  in: `${IN}-value`,
  inKey: `${IN}-key`,
  inRecord: `${IN}-loupe.test.InRec`,
  out: `${OUT}-value`,
  outRecord: `${OUT}-loupe.test.OutRec`,
  /** RecordNameStrategy: tied to no topic. */
  loose: `loupe.t${randomBytes(4).toString("hex")}.Order`,
  /** A subject of an internal topic (Loupe's `_loupe` prefix). */
  internal: `_loupe-${run}-value`,
};
const made = new Set<string>();
const schemaOf = (name: string, field = "a") => ({
  type: "record",
  name,
  namespace: `loupe.t${run.replace(/-/g, "_")}`,
  fields: [{ name: field, type: "int" }],
});
const body = (name: string, field = "a") => JSON.stringify({ schema: JSON.stringify(schemaOf(name, field)) });

let ids: { in: number; out: number };
/** Write on `in.<run>.*` only. */
let scoped: string;
const SCOPED = `sr4-writer-${run}`;
/** Write on the topic IN exactly. */
let exact: string;

const first = () => registryEnv().urls[0]!;
const sr = (s: string) => `/api/proxy-sr/subjects/${encodeURIComponent(s)}`;
const direct = async (path: string) => (await fetch(`${first()}${path}`)).json();

beforeAll(async () => {
  [rt, multi] = await Promise.all([
    testRuntime({ schemaRegistry: { ...registryEnv(), allowDelete: true } }),
    testRuntime({
      kafka: {
        clusters: [
          { name: "local", bootstrapServers: bootstrap(), default: true },
          { name: "other", bootstrapServers: bootstrap() },
        ],
      },
      schemaRegistry: { ...registryEnv(), allowDelete: true },
    }),
  ]);
  for (const s of Object.values(S)) made.add(s);
  const [idIn, idOut] = await Promise.all([registerSchema(S.in, schemaOf("InRec")), registerSchema(S.out, schemaOf("OutRec"))]);
  ids = { in: idIn, out: idOut };
  await Promise.all([
    registerSchema(S.outRecord, schemaOf("OutRec", "r")),
    registerSchema(S.loose, schemaOf("Order")),
    registerSchema(S.inKey, schemaOf("InKey")),
  ]);
  scoped = await scopedUser(rt, SCOPED, [topicGroup(`sr4-in-${run}`, [`in.${run}.*`], [], ["write"])]);
  exact = await scopedUser(rt, `sr4-exact-${run}`, [topicGroup(`sr4-exact-${run}`, [IN], [], ["write"])]);
}, 60_000);

afterAll(async () => {
  for (const s of made) {
    const path = `${first()}/subjects/${encodeURIComponent(s)}`;
    await fetch(path, { method: "DELETE" }).catch(() => {});
    await fetch(`${path}?permanent=true`, { method: "DELETE" }).catch(() => {});
  }
  await Promise.all([rt, multi].map((r) => r?.dispose()));
}, 60_000);

const as = (token: string, method: string, path: string, sent?: string) =>
  rt.request(path, { method, token, headers: GO.write, ...(sent !== undefined ? { body: sent } : {}) });

/** A 403 whose message names what is listed, and the newest audit entry of the user. */
async function refused(res: Response, ...named: string[]): Promise<string> {
  expect(res.status).toBe(403);
  const { message } = await errorOf(res);
  for (const n of named) expect(message).toContain(`'${n}'`);
  return message;
}

async function newestEntry(user: string) {
  const res = await rt.request(`/api/audit?user=${user}&limit=1`, { role: "admin" });
  return ((await res.json()) as Array<{ type: string; change: string; content: Record<string, string> }>)[0]!;
}

describe("the registry proxy under topic scopes", () => {
  test("22.4: a scoped writer may not register a version of an out-of-scope topic's subject", async () => {
    const v2 = body("OutRec", "b");
    for (const [subject, topic] of [
      [S.out, OUT],
      [S.outRecord, OUT],
    ] as const) {
      await refused(await as(scoped, "POST", `${sr(subject)}/versions`, v2), subject, topic);
      expect(await newestEntry(SCOPED)).toMatchObject({
        type: "SCHEMA",
        change: "ADD",
        content: { subject, topic, outcome: "FAILURE" },
      });
    }
    // A subject of no topic (RecordNameStrategy) is for writers of every topic only.
    expect(await refused(await as(scoped, "POST", `${sr(S.loose)}/versions`, v2), S.loose)).toContain("names no topic");
    // The topic is all before the last '-': a writer of exactly IN does not own `IN-b-value` (topic `IN-b`).
    made.add(`${IN}-b-value`);
    await refused(await as(exact, "POST", `${sr(`${IN}-b-value`)}/versions`, v2), `${IN}-b-value`, `${IN}-b`);
    expect(await direct(`/subjects/${encodeURIComponent(S.out)}/versions`)).toEqual([1]);
    expect(await direct(`/subjects/${encodeURIComponent(S.loose)}/versions`)).toEqual([1]);

    // Its own topic's subjects, by either strategy, and one whose topic does not exist yet.
    for (const subject of [S.in, S.inRecord, `${IN}.new-value`]) {
      made.add(subject);
      const res = await as(scoped, "POST", `${sr(subject)}/versions`, body("InRec"));
      expect({ subject, status: res.status }).toEqual({ subject, status: 200 });
    }
    expect((await as(exact, "POST", `${sr(S.in)}/versions`, body("InRec"))).status).toBe(200);
  }, 30_000);

  test("22.4: a scoped writer may not set an out-of-scope subject's compatibility to NONE", async () => {
    const put = await fetch(`${first()}/config/${encodeURIComponent(S.out)}`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: '{"compatibility":"BACKWARD"}',
    });
    expect(put.status).toBe(200);
    const none = '{"compatibility":"NONE"}';
    await refused(await as(scoped, "PUT", `/api/proxy-sr/config/${encodeURIComponent(S.out)}`, none), S.out, OUT);
    expect(await newestEntry(SCOPED)).toMatchObject({
      type: "SCHEMA",
      change: "UPDATE",
      content: { subject: S.out, topic: OUT, outcome: "FAILURE" },
    });
    await refused(await as(scoped, "PUT", `/api/proxy-sr/config/${encodeURIComponent(S.loose)}`, none), S.loose);
    expect(await direct(`/config/${encodeURIComponent(S.out)}`)).toEqual({ compatibilityLevel: "BACKWARD" });
    expect((await as(scoped, "PUT", `/api/proxy-sr/config/${encodeURIComponent(S.inKey)}`, none)).status).toBe(200);
  }, 30_000);

  test("22.4: a scoped writer may not change the global compatibility level", async () => {
    const { compatibilityLevel } = (await direct("/config")) as { compatibilityLevel: string };
    const same = JSON.stringify({ compatibility: compatibilityLevel });
    expect(await refused(await as(scoped, "PUT", "/api/proxy-sr/config", same))).toContain("global compatibility level");
    expect(await newestEntry(SCOPED)).toMatchObject({ type: "SCHEMA", change: "UPDATE", content: { scope: "global", outcome: "FAILURE" } });
    // Every topic of the one cluster, but with a deny: still not everything.
    const denied = await scopedUser(rt, `sr4-deny-${run}`, [topicGroup(`sr4-deny-${run}`, ["*"], [OUT], ["write"])]);
    await refused(await as(denied, "PUT", "/api/proxy-sr/config", same));
    // Write on every topic of every cluster (the one cluster named, not `*`), and the unrestricted writer.
    const all = await scopedUser(rt, `sr4-all-${run}`, [
      { name: `sr4-all-${run}`, roles: ["write"], clusters: ["local"], topics: { allow: ["*"] } },
    ]);
    expect((await as(all, "PUT", "/api/proxy-sr/config", same)).status).toBe(200);
    expect((await rt.request("/api/proxy-sr/config", { method: "PUT", role: "write", body: same })).status).toBe(200);
  }, 30_000);

  test("22.4: a scoped identity's subject list holds only its topics' subjects", async () => {
    const list = async (token: string | undefined, query = "") => {
      const res = await rt.request(`/api/proxy-sr/subjects${query}`, token ? { token, headers: GO.read } : { role: "nodata" });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("json");
      return (await res.json()) as string[];
    };
    const seen = await list(scoped);
    expect(seen).toContain(S.in);
    expect(seen).toContain(S.inKey);
    for (const hidden of [S.out, S.outRecord, S.loose]) expect(seen).not.toContain(hidden);
    // A prefix naming the hidden ones changes nothing (Apicurio ignores the parameter; a registry that reads it answers less).
    const prefixed = await list(scoped, `?subjectPrefix=${encodeURIComponent(`out.${run}`)}`);
    for (const hidden of [S.out, S.outRecord]) expect(prefixed).not.toContain(hidden);
    // An unrestricted nodata identity sees them all.
    const all = await list(undefined);
    for (const s of [S.in, S.out, S.outRecord, S.loose]) expect(all).toContain(s);
  }, 30_000);

  test("22.4: a scoped identity may not see an out-of-scope subject's versions, schemas or level", async () => {
    const paths = (s: string) => [
      `${sr(s)}/versions`,
      `${sr(s)}/versions/1`,
      `${sr(s)}/versions/latest/schema`,
      `/api/proxy-sr/config/${encodeURIComponent(s)}?defaultToGlobal=true`,
    ];
    for (const path of paths(S.out)) {
      await refused(await as(scoped, "GET", path), S.out, OUT);
      expect(await newestEntry(SCOPED)).toMatchObject({
        type: "ACCESS",
        change: "DENY",
        content: { subject: S.out, topic: OUT, outcome: "FAILURE", path: expect.stringContaining("/api/proxy-sr/") },
      });
    }
    for (const path of paths(S.loose)) await refused(await as(scoped, "GET", path), S.loose);
    // A subject that does not exist is refused the same way: no probing for names.
    await refused(await as(scoped, "GET", `${sr(`${OUT}.none-value`)}/versions`), `${OUT}.none-value`, `${OUT}.none`);
    for (const path of paths(S.inKey)) expect({ path, status: (await as(scoped, "GET", path)).status }).toEqual({ path, status: 200 });
  }, 30_000);

  test("22.4: a scoped identity gets a schema by id only when a subject it sees holds it", async () => {
    const message = await refused(await as(scoped, "GET", `/api/proxy-sr/schemas/ids/${ids.out}`));
    expect(message).toBe(`Schema ${ids.out} is registered under no subject you may see`);
    expect(await newestEntry(SCOPED)).toMatchObject({
      type: "ACCESS",
      change: "DENY",
      content: { id: String(ids.out), outcome: "FAILURE" },
    });
    const own = await as(scoped, "GET", `/api/proxy-sr/schemas/ids/${ids.in}`);
    expect(own.status).toBe(200);
    expect(((await own.json()) as { schema: string }).schema).toContain("InRec");
    // Naming an out-of-scope subject beside it is refused, naming that subject.
    await refused(await as(scoped, "GET", `/api/proxy-sr/schemas/ids/${ids.in}?subject=${encodeURIComponent(S.out)}`), S.out, OUT);
    // The same schema under a subject the caller sees (the registry gives it the same id).
    const shared = `${IN}.copy-value`;
    made.add(shared);
    expect(await registerSchema(shared, schemaOf("OutRec"))).toBe(ids.out);
    expect((await as(scoped, "GET", `/api/proxy-sr/schemas/ids/${ids.out}`)).status).toBe(200);
    // An id the registry does not have is its 404.
    expect((await as(scoped, "GET", "/api/proxy-sr/schemas/ids/2147483647")).status).toBe(404);
    expect((await rt.request(`/api/proxy-sr/schemas/ids/${ids.out}`, { role: "nodata" })).status).toBe(200);
  }, 30_000);

  test("22.4: with deletes allowed, a scoped writer may not delete past its scope", async () => {
    for (const path of [
      `${sr(S.out)}/versions/1`,
      `${sr(S.out)}/versions/latest?permanent=true`,
      sr(S.out),
      `${sr(S.out)}?permanent=true`,
    ]) {
      await refused(await as(scoped, "DELETE", path), S.out, OUT);
      expect(await newestEntry(SCOPED)).toMatchObject({
        type: "SCHEMA",
        change: "REMOVE",
        content: { subject: S.out, topic: OUT, outcome: "FAILURE" },
      });
    }
    await refused(await as(scoped, "DELETE", sr(S.loose)), S.loose);
    expect(await direct(`/subjects/${encodeURIComponent(S.out)}/versions`)).toEqual([1]);
    expect(await direct(`/subjects/${encodeURIComponent(S.loose)}/versions`)).toEqual([1]);
    // Its own topic's subject.
    const own = `${IN}.gone-value`;
    made.add(own);
    await registerSchema(own, schemaOf("Gone"));
    const res = await as(scoped, "DELETE", sr(own));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([1]);
  }, 30_000);

  test("22.4: a compatibility check and a schema's references need the subjects they name to be seen", async () => {
    const check = (s: string) => `/api/proxy-sr/compatibility/subjects/${encodeURIComponent(s)}/versions/latest`;
    await refused(await as(scoped, "POST", check(S.out), body("OutRec")), S.out, OUT);
    expect(await newestEntry(SCOPED)).toMatchObject({ type: "ACCESS", change: "DENY", content: { subject: S.out, topic: OUT } });
    await refused(await as(scoped, "POST", check(S.loose), body("Order")), S.loose);
    expect((await as(scoped, "POST", check(S.inKey), body("InKey"))).status).toBe(200);

    const withRef = JSON.stringify({
      schema: JSON.stringify({ type: "record", name: "WithRef", fields: [{ name: "p", type: `loupe.t${run.replace(/-/g, "_")}.OutRec` }] }),
      references: [{ name: `loupe.t${run.replace(/-/g, "_")}.OutRec`, subject: S.out, version: 1 }],
    });
    const ref = `${IN}.ref-value`;
    made.add(ref);
    expect(await refused(await as(scoped, "POST", `${sr(ref)}/versions`, withRef), S.out, OUT)).toContain("Reference");
    expect(await newestEntry(SCOPED)).toMatchObject({
      type: "SCHEMA",
      change: "ADD",
      content: { subject: ref, reference: S.out, topic: OUT, outcome: "FAILURE" },
    });
    await refused(await as(scoped, "POST", check(S.inKey), withRef), S.out, OUT);
    expect((await fetch(`${first()}/subjects/${encodeURIComponent(ref)}/versions`)).status).toBe(404);
  }, 30_000);

  test("22.4: subjects of internal topics are changed only by an admin without limits", async () => {
    const res = await rt.request(`${sr(S.internal)}/versions`, { method: "POST", role: "write", body: body("Internal") });
    expect(await refused(res, S.internal, `_loupe-${run}`)).toContain("internal to Loupe");
    expect(await newestEntry(ROLE_USERS.write.name)).toMatchObject({ type: "SCHEMA", change: "ADD", content: { outcome: "FAILURE" } });
    expect((await rt.request(`${sr(S.internal)}/versions`, { method: "POST", role: "admin", body: body("Internal") })).status).toBe(200);
    // Seeing it follows the groups, as seeing the topic does.
    expect((await rt.request(`${sr(S.internal)}/versions`, { role: "nodata" })).status).toBe(200);
    await refused(
      await rt.request(`/api/proxy-sr/config/${encodeURIComponent(S.internal)}`, {
        method: "PUT",
        role: "write",
        body: '{"compatibility":"NONE"}',
      }),
      S.internal,
    );
  }, 30_000);

  test("22.4: with several clusters, changing a subject needs write on its topic on every cluster", async () => {
    const user = `sr4-split-${run}`;
    // Write on IN's topics on 'local' only; read on 'other'.
    const split = await scopedUser(multi, user, [
      { name: `sr4-lw-${run}`, roles: ["write"], clusters: ["local"], topics: { allow: [`in.${run}.*`] } },
      { name: `sr4-or-${run}`, roles: ["read"], clusters: ["other"], topics: { allow: [`in.${run}.*`] } },
    ]);
    const res = await multi.request(`${sr(S.in)}/versions`, { method: "POST", token: split, headers: GO.write, body: body("InRec") });
    expect(await refused(res, S.in, IN, "other")).toContain("the registry serves every cluster's topics");
    // Reading is checked on the request's cluster, as every read is.
    for (const cluster of ["local", "other"])
      expect((await multi.request(`${sr(S.in)}/versions`, { token: split, headers: { "x-service-cluster": cluster } })).status).toBe(200);
    // Write on every topic of 'local' is not write on everything: the global level stays out of reach.
    const local = await scopedUser(multi, `sr4-local-${run}`, [
      { name: `sr4-local-${run}`, roles: ["write"], clusters: ["local"], topics: { allow: ["*"] } },
    ]);
    const { compatibilityLevel } = (await direct("/config")) as { compatibilityLevel: string };
    await refused(
      await multi.request("/api/proxy-sr/config", {
        method: "PUT",
        token: local,
        body: JSON.stringify({ compatibility: compatibilityLevel }),
      }),
    );
    // Write on both clusters: the same schema again answers its id.
    const both = await scopedUser(multi, `sr4-both-${run}`, [topicGroup(`sr4-both-${run}`, [`in.${run}.*`], [], ["write"])]);
    const again = await multi.request(`${sr(S.in)}/versions`, { method: "POST", token: both, headers: GO.write, body: body("InRec") });
    expect(await again.json()).toEqual({ id: ids.in });
  }, 30_000);
});
