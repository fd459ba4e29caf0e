// @postgres
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Role } from "../../src/config/schema.ts";
import type { Group } from "../../src/domains/access/scope.ts";
import { errorOf, ROLE_USERS, type TestRuntime, testRuntime } from "../helpers/runtime.ts";

let rt: TestRuntime;

/** Defined in the configuration file: read-only through the API. */
const FROM_FILE: Group = {
  name: "file-team",
  roles: ["read"],
  clusters: ["*"],
  topics: { allow: ["payments.*"], deny: ["payments.secret*"] },
};

beforeAll(async () => {
  rt = await testRuntime({ groups: [FROM_FILE] });
});
afterAll(async () => {
  await rt.dispose();
});

const send = (method: string, path: string, body?: unknown, role: Role = "admin") =>
  rt.request(path, { method, role, ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }) });

interface Entry {
  type: string;
  change: string;
  userId: string;
  content: Record<string, string>;
}

/** The newest audit entries of type USER, newest first. */
async function userEntries(): Promise<Entry[]> {
  const res = await send("GET", "/api/audit?type=USER&limit=20");
  expect(res.status).toBe(200);
  return (await res.json()) as Entry[];
}

describe("groups API", () => {
  test("create, read, list, change and delete a group, each change audited as USER", async () => {
    const created = await send("POST", "/api/groups", {
      name: "team-a",
      roles: ["read"],
      clusters: ["local"],
      topics: { allow: ["orders.*", "pay?ents"] },
    });
    expect(created.status).toBe(201);
    const body = (await created.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      name: "team-a",
      roles: ["read"],
      clusters: ["local"],
      topics: { allow: ["orders.*", "pay?ents"], deny: [] },
      source: "store",
    });
    expect(body.createdAt).toBe(body.updatedAt as number);
    let [entry] = await userEntries();
    expect(entry).toMatchObject({ type: "USER", change: "ADD", userId: ROLE_USERS.admin.name });
    expect(entry!.content).toMatchObject({ outcome: "SUCCESS", group: "team-a", roles: '["read"]', allow: '["orders.*","pay?ents"]' });

    expect(await (await send("GET", "/api/groups/team-a")).json()).toMatchObject({ name: "team-a", source: "store" });

    const changed = await send("PUT", "/api/groups/team-a", { roles: ["write"], topics: { allow: ["orders.*"], deny: ["orders.x"] } });
    expect(changed.status).toBe(200);
    expect(await changed.json()).toMatchObject({
      name: "team-a",
      roles: ["write"],
      clusters: ["local"],
      topics: { allow: ["orders.*"], deny: ["orders.x"] },
    });
    [entry] = await userEntries();
    expect(entry).toMatchObject({ type: "USER", change: "UPDATE" });
    expect(entry!.content).toMatchObject({ outcome: "SUCCESS", group: "team-a", changed: "roles,topics" });
    expect(JSON.parse(entry!.content.before!)).toEqual({ roles: ["read"], topics: { allow: ["orders.*", "pay?ents"], deny: [] } });
    expect(JSON.parse(entry!.content.after!)).toEqual({ roles: ["write"], topics: { allow: ["orders.*"], deny: ["orders.x"] } });

    // The name may be repeated in the body of a change.
    expect((await send("PUT", "/api/groups/team-a", { name: "team-a", clusters: ["*"] })).status).toBe(200);

    const list = (await (await send("GET", "/api/groups")).json()) as Array<{ name: string; source: string; clusters: string[] }>;
    expect(list.map((g) => [g.name, g.source])).toEqual([
      ["file-team", "config"],
      ["team-a", "store"],
    ]);
    expect(list[1]!.clusters).toEqual(["*"]);

    const removed = await send("DELETE", "/api/groups/team-a");
    expect(removed.status).toBe(200);
    expect(await removed.json()).toMatchObject({ name: "team-a", roles: ["write"] });
    [entry] = await userEntries();
    expect(entry).toMatchObject({ type: "USER", change: "REMOVE" });
    expect(entry!.content).toMatchObject({ outcome: "SUCCESS", group: "team-a" });

    const gone = await send("GET", "/api/groups/team-a");
    expect(gone.status).toBe(404);
    expect((await errorOf(gone)).message).toBe("No group named 'team-a'");
  });

  test("a group of the configuration file is listed and read, and cannot be created, changed or deleted through the API", async () => {
    const one = await send("GET", "/api/groups/file-team");
    expect(await one.json()).toEqual({ ...FROM_FILE, source: "config", createdAt: null, updatedAt: null });
    for (const [method, body] of [
      ["POST", FROM_FILE],
      ["PUT", { roles: ["admin"] }],
      ["DELETE", undefined],
    ] as const) {
      const res = await send(method, method === "POST" ? "/api/groups" : "/api/groups/file-team", body);
      expect(res.status).toBe(409);
      expect((await errorOf(res)).message).toContain("configuration file");
      const [entry] = await userEntries();
      expect(entry!.content).toMatchObject({ outcome: "FAILURE" });
      expect(entry!.content.reason).toStartWith("CONFLICT");
    }
    expect(await (await send("GET", "/api/groups/file-team")).json()).toMatchObject({ roles: ["read"] });
  });

  test("a group of the configuration file wins over a stored group of the same name", async () => {
    // A stored group the file later defines too: the store's row is made directly, as an earlier run would have left it.
    const at = Date.now();
    await rt.store.db
      .insertInto("groups")
      .values({
        name: "file-team",
        roles: '["admin"]',
        clusters: '["*"]',
        topics_allow: '["*"]',
        topics_deny: "[]",
        created_at: at,
        updated_at: at,
      })
      .execute();
    const list = (await (await send("GET", "/api/groups")).json()) as Array<{ name: string; source: string; roles: string[] }>;
    expect(list.filter((g) => g.name === "file-team")).toEqual([expect.objectContaining({ source: "config", roles: ["read"] })]);
    expect(await rt.groups.resolve(["file-team", "no-such-group"])).toEqual([FROM_FILE]);
    await rt.store.db.deleteFrom("groups").where("name", "=", "file-team").execute();
  });

  test("creating a name that exists is 409", async () => {
    const group = { name: "twice", roles: ["nodata"], clusters: [], topics: { allow: [] } };
    expect((await send("POST", "/api/groups", group)).status).toBe(201);
    const again = await send("POST", "/api/groups", group);
    expect(again.status).toBe(409);
    expect((await errorOf(again)).message).toBe("Group 'twice' exists");
    expect((await send("DELETE", "/api/groups/twice")).status).toBe(200);
  });

  test("of concurrent creations of one name, exactly one succeeds and the others are 409", async () => {
    const group = { name: "raced", roles: ["read"], clusters: ["*"], topics: { allow: ["*"] } };
    const statuses = await Promise.all(Array.from({ length: 6 }, () => send("POST", "/api/groups", group).then((r) => r.status)));
    expect(statuses.sort()).toEqual([201, 409, 409, 409, 409, 409]);
    expect((await send("DELETE", "/api/groups/raced")).status).toBe(200);
  });

  test("changing or deleting an unknown group is 404", async () => {
    for (const method of ["PUT", "DELETE"]) {
      const res = await send(method, "/api/groups/nobody", method === "PUT" ? { roles: ["read"] } : undefined);
      expect(res.status).toBe(404);
      expect((await errorOf(res)).code).toBe("NOT_FOUND");
    }
  });

  describe("bad input is a 400 naming the field", () => {
    const good = { name: "bad-input", roles: ["read"], clusters: ["*"], topics: { allow: ["a.*"], deny: [] } };
    const cases: [what: string, method: "POST" | "PUT", path: string, body: unknown, message: string][] = [
      ["not JSON", "POST", "/api/groups", "{roles:", "Request body is not valid JSON"],
      ["no body", "POST", "/api/groups", "", "Invalid request body"],
      ["unknown role", "POST", "/api/groups", { ...good, roles: ["root"] }, "roles.0"],
      ["no roles", "POST", "/api/groups", { ...good, roles: [] }, "a group needs at least one role"],
      ["name with a slash", "POST", "/api/groups", { ...good, name: "a/b" }, "name: 1 to 100 letters"],
      ["name too long", "POST", "/api/groups", { ...good, name: "a".repeat(101) }, "name: 1 to 100 letters"],
      ["empty pattern", "POST", "/api/groups", { ...good, topics: { allow: [""] } }, "topics.allow.0: a pattern is empty"],
      ["pattern too long", "POST", "/api/groups", { ...good, topics: { allow: ["a".repeat(250)] } }, "longer than 249"],
      ["regex in a pattern", "POST", "/api/groups", { ...good, topics: { allow: ["(a+)+$"] } }, "topics.allow.0"],
      [
        "too many patterns",
        "POST",
        "/api/groups",
        { ...good, topics: { allow: Array.from({ length: 300 }, (_, i) => `t${i}`) } },
        "at most 256 allow patterns",
      ],
      ["no topics", "POST", "/api/groups", { ...good, topics: undefined }, "topics"],
      ["unknown field", "POST", "/api/groups", { ...good, admin: true }, "admin"],
      ["bad cluster", "POST", "/api/groups", { ...good, clusters: ["a b"] }, "clusters.0"],
      ["change naming nothing", "PUT", "/api/groups/bad-input", {}, "name at least one of roles, clusters or topics"],
      ["change renaming", "PUT", "/api/groups/bad-input", { name: "other", roles: ["read"] }, "cannot be renamed"],
      ["bad name in the path", "PUT", "/api/groups/a%20b", { roles: ["read"] }, "Invalid path parameters: name"],
      ["bad pattern in a change", "PUT", "/api/groups/bad-input", { topics: { allow: ["a b"] } }, "topics.allow.0"],
    ];
    beforeAll(async () => {
      expect((await send("POST", "/api/groups", good)).status).toBe(201);
    });
    for (const [what, method, path, body, message] of cases)
      test(what, async () => {
        const res = await send(method, path, body);
        expect(res.status).toBe(400);
        expect((await errorOf(res)).message).toContain(message);
      });
    test("the group is unchanged after them", async () => {
      expect(await (await send("GET", "/api/groups/bad-input")).json()).toMatchObject({ ...good, source: "store" });
    });
  });

  test("only admins reach the groups API, and each denial is audited", async () => {
    for (const role of ["write", "read", "nodata"] as const) {
      for (const [method, path, body] of [
        ["GET", "/api/groups", undefined],
        ["POST", "/api/groups", { name: `by-${role}`, roles: ["admin"], clusters: ["*"], topics: { allow: ["*"] } }],
        ["GET", "/api/groups/file-team", undefined],
        ["PUT", "/api/groups/file-team", { roles: ["admin"] }],
        ["DELETE", "/api/groups/file-team", undefined],
      ] as const) {
        const res = await send(method, path, body, role);
        expect(res.status).toBe(403);
        expect((await errorOf(res)).code).toBe("FORBIDDEN");
      }
      const entries = (await (await send("GET", `/api/audit?user=${ROLE_USERS[role].name}&limit=5`)).json()) as Entry[];
      expect(entries.map((e) => `${e.type} ${e.change}`)).toEqual(["USER REMOVE", "USER UPDATE", "ACCESS DENY", "USER ADD", "ACCESS DENY"]);
    }
    expect((await send("GET", "/api/groups/by-write")).status).toBe(404);
  });
});
