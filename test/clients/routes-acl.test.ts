/**
 * `/api/acl` as the real clients call it (CLIENTS.md 2): the Go client upper-cases the enums and
 * spells them with underscores, the Python client sends `Topic`/`Allow`/`Read` and wants exactly
 * 200. Against the shared broker, which has an authorizer (StandardAuthorizer; everyone connects
 * as User:ANONYMOUS, a super user, and allow.everyone.if.no.acl.found is true).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { uniqueTopic } from "../cluster/cluster.ts";
import { bootstrap, errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { scopedUser, topicGroup } from "../helpers/scoped.ts";
import { array, decode, object, str } from "./strict.ts";

/** The Go client's ACL struct: six strings. */
const GO_ACL = object({ resourceType: str, resourceName: str, principal: str, permissionType: str, host: str, operation: str });

let rt: TestRuntime;
/** Bindings a test created, deleted at the end whatever happened. */
const made: Array<Record<string, string>> = [];

beforeAll(async () => {
  rt = await testRuntime({
    kafka: {
      clusters: [
        {
          name: "local",
          bootstrapServers: bootstrap(),
          default: true,
          authorizer: { superUsers: ["User:ANONYMOUS"], allowEveryoneIfNoAclFound: true },
        },
      ],
    },
  });
});
afterAll(async () => {
  for (const b of made) await rt.request("/api/acl", { method: "DELETE", role: "admin", body: JSON.stringify(b) }).catch(() => {});
  await rt.dispose();
});

function send(method: string, path: string, opts: { body?: unknown; role?: "admin" | "write" | "read" | "nodata" } = {}) {
  return rt.request(path, {
    method,
    role: opts.role ?? "admin",
    headers: { "accept-encoding": "gzip", ...(opts.body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(opts.body !== undefined ? { body: typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body) } : {}),
  });
}

async function list(): Promise<Array<Record<string, string>>> {
  const res = await send("GET", "/api/acl", { role: "nodata" });
  expect(res.status).toBe(200);
  const body = await res.json();
  decode(array(GO_ACL), body);
  return body as Array<Record<string, string>>;
}

async function auditEntries(): Promise<Array<{ type: string; change: string; userId: string; content: Record<string, string> }>> {
  const res = await send("GET", "/api/audit?type=ACL&limit=50");
  expect(res.status).toBe(200);
  return (await res.json()) as Array<{ type: string; change: string; userId: string; content: Record<string, string> }>;
}

const principal = () => `User:${uniqueTopic("acl-user")}`;

describe("the Go client (upper case, underscores)", () => {
  test("PUT, GET, DELETE of a binding as it sends them; a second DELETE is 404", async () => {
    const go = {
      resourceType: "TOPIC",
      resourceName: uniqueTopic("acl-go"),
      principal: principal(),
      permissionType: "ALLOW",
      host: "*",
      operation: "DESCRIBE_CONFIGS",
    };
    const spec = { ...go, resourceType: "Topic", permissionType: "Allow", operation: "DescribeConfigs", patternType: "LITERAL" };
    made.push(go);
    const put = await send("PUT", "/api/acl", { body: go });
    expect(put.status).toBe(200);
    expect(await put.json()).toEqual(spec);
    // Listed right after the PUT, in the SPEC's spelling.
    expect(await list()).toContainEqual(spec);

    const del = await send("DELETE", "/api/acl", { body: go });
    expect(del.status).toBe(200);
    expect(await del.json()).toEqual(spec);
    expect(await list()).not.toContainEqual(spec);

    // The Go CLI says "acl does not exist" on a 404.
    const again = await send("DELETE", "/api/acl", { body: go });
    expect(again.status).toBe(404);
    expect((await errorOf(again)).message).toContain("The ACL does not exist");
  });

  test("the CLI's spellings without underscores (TRANSACTIONALID, IDEMPOTENTWRITE) are the same names", async () => {
    const body = {
      resourceType: "TRANSACTIONALID",
      resourceName: uniqueTopic("acl-tx"),
      principal: principal(),
      permissionType: "DENY",
      host: "*",
      operation: "WRITE",
    };
    made.push(body);
    expect((await send("PUT", "/api/acl", { body })).status).toBe(200);
    expect(await list()).toContainEqual({
      ...body,
      resourceType: "TransactionalId",
      permissionType: "Deny",
      operation: "Write",
      patternType: "LITERAL",
    });
    expect(
      (
        await send("DELETE", "/api/acl", {
          body: { ...body, resourceType: "transactional_id", operation: "write", permissionType: "deny" },
        })
      ).status,
    ).toBe(200);
  });
});

describe("the Python client (Topic, Allow, Read; exactly 200)", () => {
  test("PUT and DELETE answer exactly 200; the GET lists the binding as sent", async () => {
    const py = {
      resourceType: "Topic",
      resourceName: uniqueTopic("transactions"),
      principal: `GROUPA:${uniqueTopic("UserA")}`,
      permissionType: "Allow",
      host: "*",
      operation: "Read",
    };
    made.push(py);
    const put = await send("PUT", "/api/acl", { body: py });
    expect(put.status).toBe(200);
    expect(await list()).toContainEqual({ ...py, patternType: "LITERAL" });
    const del = await send("DELETE", "/api/acl", { body: py });
    expect(del.status).toBe(200);
  });
});

describe("PREFIXED bindings, audit, roles", () => {
  test("a PREFIXED binding is created and deleted as PREFIXED; changes are audited ADD and REMOVE with the binding", async () => {
    const body = {
      resourceType: "Group",
      resourceName: uniqueTopic("acl-prefix-"),
      principal: principal(),
      permissionType: "Allow",
      host: "*",
      operation: "Read",
      patternType: "Prefixed",
    };
    made.push(body);
    expect((await send("PUT", "/api/acl", { body })).status).toBe(200);
    const listed = { ...body, patternType: "PREFIXED" };
    expect(await list()).toContainEqual(listed);
    // The literal binding of the same name is another binding: not there.
    expect((await send("DELETE", "/api/acl", { body: { ...body, patternType: "LITERAL" } })).status).toBe(404);
    expect((await send("DELETE", "/api/acl", { body })).status).toBe(200);

    const entries = await auditEntries();
    const content = { ...listed, outcome: "SUCCESS" };
    expect(entries.find((e) => e.change === "ADD" && e.content.principal === body.principal)).toMatchObject({ userId: "alice", content });
    expect(
      entries.find((e) => e.change === "REMOVE" && e.content.principal === body.principal && e.content.outcome === "SUCCESS"),
    ).toMatchObject({
      userId: "alice",
      content,
    });
    // The refused DELETE (404) is audited as a failure.
    expect(
      entries.find((e) => e.change === "REMOVE" && e.content.principal === body.principal && e.content.outcome === "FAILURE"),
    ).toMatchObject({ content: { patternType: "LITERAL", reason: expect.stringContaining("NOT_FOUND") } });
  });

  test.each(["write", "read", "nodata"] as const)("%s may list and explain but not change ACLs: 403, audited", async (role) => {
    expect((await send("GET", "/api/acl", { role })).status).toBe(200);
    const body = {
      resourceType: "Topic",
      resourceName: "t",
      principal: principal(),
      permissionType: "Allow",
      host: "*",
      operation: "Read",
    };
    for (const [method, change] of [
      ["PUT", "ADD"],
      ["DELETE", "REMOVE"],
    ] as const) {
      const res = await send(method, "/api/acl", { body, role });
      expect(res.status).toBe(403);
      const [entry] = await auditEntries();
      expect(entry).toMatchObject({ change, content: { outcome: "FAILURE" } });
    }
    expect((await list()).some((e) => e.principal === body.principal)).toBe(false);
  });
});

describe("validation", () => {
  const valid = {
    resourceType: "Topic",
    resourceName: "t",
    principal: "User:nobody-valid",
    permissionType: "Allow",
    host: "*",
    operation: "Read",
  };
  const bad: Array<[string, unknown, string]> = [
    [
      "an operation not valid for the type",
      { ...valid, resourceType: "TransactionalId", operation: "READ" },
      "operation Read is not valid for resourceType TransactionalId: one of Describe, Write, All",
    ],
    ["an unknown resource type", { ...valid, resourceType: "TABLE" }, "unknown resourceType 'TABLE'"],
    ["an unknown operation", { ...valid, operation: "FLY" }, "unknown operation 'FLY'"],
    ["an unknown permission", { ...valid, permissionType: "PERMIT" }, "unknown permissionType 'PERMIT'"],
    ["a missing host", { ...valid, host: undefined }, "host is required"],
    ["a missing principal", { ...valid, principal: undefined }, "principal is required"],
    ["a principal without a type", { ...valid, principal: "alice" }, "principal is '<type>:<name>'"],
    ["a pattern type beyond LITERAL and PREFIXED", { ...valid, patternType: "MATCH" }, "unknown patternType 'MATCH'"],
    [
      "a Cluster not named kafka-cluster",
      { ...valid, resourceType: "CLUSTER", resourceName: "c", operation: "ALTER" },
      "a Cluster resource is named 'kafka-cluster'",
    ],
    ["a number for a name", { ...valid, resourceName: 5 }, "resourceName"],
    ["not JSON", "{", "JSON"],
  ];
  test.each(bad)("%s: 400 naming the problem, on PUT and DELETE, audited as a failure", async (_what, body, message) => {
    for (const [method, change] of [
      ["PUT", "ADD"],
      ["DELETE", "REMOVE"],
    ] as const) {
      const res = await send(method, "/api/acl", { body });
      expect(res.status).toBe(400);
      expect((await errorOf(res)).message).toContain(message);
      const [entry] = await auditEntries();
      expect(entry).toMatchObject({ change, content: { outcome: "FAILURE" } });
    }
  });

  test("explain: a missing or invalid parameter is a 400 naming it", async () => {
    for (const [query, message] of <Array<[string, string]>>[
      ["resourceType=Topic&resourceName=t&operation=Read", "principal is required"],
      ["principal=User:a&resourceType=Group&resourceName=g&operation=Write", "operation Write is not valid for resourceType Group"],
      ["principal=User:a&resourceType=Topic&resourceName=t&operation=Jump", "unknown operation 'Jump'"],
    ]) {
      const res = await send("GET", `/api/acl/explain?${query}`, { role: "nodata" });
      expect(res.status).toBe(400);
      expect((await errorOf(res)).message).toContain(message);
    }
  });
});

describe("explain on this broker", () => {
  const ask = async (q: Record<string, string>) => {
    const res = await send("GET", `/api/acl/explain?${new URLSearchParams(q)}`, { role: "nodata" });
    expect(res.status).toBe(200);
    return (await res.json()) as {
      allowed: boolean | null;
      reason: string;
      deciding: unknown[];
      considered: Array<{ applies: boolean }>;
      caveats: string[];
    };
  };

  test("the configured super user is allowed; a DENY for another principal decides; no binding: allow.everyone.if.no.acl.found", async () => {
    const topic = uniqueTopic("acl-explain");
    const who = principal();
    const q = { principal: who, resourceType: "TOPIC", resourceName: topic, operation: "READ" };
    expect(await ask({ ...q, principal: "User:ANONYMOUS" })).toMatchObject({ allowed: true, reason: "SUPER_USER" });
    expect(await ask(q)).toMatchObject({ allowed: true, reason: "NO_MATCHING_ACL", caveats: [] });

    const deny = {
      resourceType: "Topic",
      resourceName: topic.slice(0, -2),
      principal: who,
      permissionType: "Deny",
      host: "*",
      operation: "All",
      patternType: "PREFIXED",
    };
    made.push(deny);
    expect((await send("PUT", "/api/acl", { body: deny })).status).toBe(200);
    const denied = await ask(q);
    expect(denied).toMatchObject({ allowed: false, reason: "DENY_ACL", deciding: [{ ...deny }] });
    expect(denied.considered).toEqual([expect.objectContaining({ applies: true })]);
    expect((await send("DELETE", "/api/acl", { body: deny })).status).toBe(200);
  });
});

describe("a caller limited to some topics", () => {
  test("lists only the literal bindings of its topics, and asks only of them", async () => {
    const mine = uniqueTopic("acl-scoped-mine");
    const other = uniqueTopic("acl-scoped-other");
    const who = principal();
    const bindings: Array<Record<string, string>> = [
      { resourceType: "Topic", resourceName: mine, principal: who, permissionType: "Allow", host: "*", operation: "Read" },
      { resourceType: "Topic", resourceName: other, principal: who, permissionType: "Allow", host: "*", operation: "Read" },
      {
        resourceType: "Topic",
        resourceName: `${mine.slice(0, 10)}`,
        principal: who,
        permissionType: "Deny",
        host: "*",
        operation: "Write",
        patternType: "PREFIXED",
      },
      { resourceType: "Group", resourceName: "g", principal: who, permissionType: "Allow", host: "*", operation: "Read" },
    ];
    for (const b of bindings) {
      made.push(b);
      expect((await send("PUT", "/api/acl", { body: b })).status).toBe(200);
    }
    const token = await scopedUser(rt, uniqueTopic("acl-scoped-user"), [
      topicGroup(uniqueTopic("acl-scoped-group"), [mine], [], ["nodata"]),
    ]);
    const listed = (await (await rt.request("/api/acl", { token })).json()) as Array<Record<string, string>>;
    expect(listed.filter((e) => e.principal === who)).toEqual([{ ...bindings[0], patternType: "LITERAL" }]);

    const ask = (q: Record<string, string>) =>
      rt.request(`/api/acl/explain?${new URLSearchParams({ principal: who, operation: "Write", ...q })}`, { token });
    const answer = await ask({ resourceType: "Topic", resourceName: mine });
    expect(answer.status).toBe(200);
    // The prefixed DENY covering its topic is part of the answer: it decides it.
    expect(await answer.json()).toMatchObject({ allowed: false, reason: "DENY_ACL" });
    const outside = await ask({ resourceType: "Topic", resourceName: other });
    expect(outside.status).toBe(403);
    expect((await errorOf(outside)).message).toBe(`Topic '${other}' is outside your scope`);
    const group = await ask({ resourceType: "Group", resourceName: "g", operation: "Read" });
    expect(group.status).toBe(403);
    expect((await errorOf(group)).message).toContain("limited to some topics");
  });
});
