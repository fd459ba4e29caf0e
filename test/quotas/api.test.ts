import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Role } from "../../src/config/schema.ts";
import type { EffectiveQuota, QuotaEntry } from "../../src/domains/quotas/schemas.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { waitFor } from "../helpers/wait.ts";

/**
 * The quotas API against the shared broker: each test acts on users and client ids of its own
 * (no client of another test is one of them), and removes what it set.
 */
let rt: TestRuntime;
const made: Array<{ user?: string | null; clientId?: string | null }> = [];
let n = 0;
const unique = (what: string) => `q-${what}-${process.pid}-${Date.now().toString(36)}-${++n}`;

beforeAll(async () => {
  rt = await testRuntime();
});
afterAll(async () => {
  const entity = (t: { user?: string | null; clientId?: string | null }) => [
    ...(t.user !== undefined ? [{ type: "user" as const, name: t.user }] : []),
    ...(t.clientId !== undefined ? [{ type: "client-id" as const, name: t.clientId }] : []),
  ];
  const all = { producer_byte_rate: null, consumer_byte_rate: null, request_percentage: null };
  if (made.length > 0) await rt.kafka.default().quotas.alter(made.map((t) => ({ entity: entity(t), values: all })));
  await rt.dispose();
});

function send(method: string, path: string, body?: unknown, role: Role = "admin") {
  return rt.request(path, {
    method,
    role,
    headers: { "content-type": "application/json" },
    ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
  });
}

async function list(role: Role = "admin"): Promise<QuotaEntry[]> {
  const res = await send("GET", "/api/quotas", undefined, role);
  expect(res.status).toBe(200);
  return (await res.json()) as QuotaEntry[];
}

/** The broker lists a change a moment after the controller commits it. */
const listedAs = (url: string, want: (e: QuotaEntry | undefined) => boolean, role: Role = "admin") =>
  waitFor(
    async () => {
      const e = (await list(role)).find((x) => x.url === url);
      return want(e) ? (e ?? true) : false;
    },
    { what: `${url} listed as wanted` },
  );

async function auditOf(change: string, field: string, value: string) {
  const res = await send("GET", "/api/audit?type=QUOTAS&limit=100");
  const entries = (await res.json()) as Array<{ type: string; change: string; userId: string; content: Record<string, string> }>;
  return entries.find((e) => e.change === change && e.content[field] === value);
}

describe("each SPEC path sets and lists its entity", () => {
  test("the six paths, their types, names, children and urls; values are strings", async () => {
    const user = unique("user");
    const client = unique("client");
    made.push({ user, clientId: client }, { user, clientId: null }, { user }, { clientId: client });
    const cases: Array<[string, Partial<QuotaEntry>]> = [
      [`/api/quotas/users/${user}/clients/${client}`, { entityType: "USERCLIENT", entityName: user, child: client }],
      [`/api/quotas/users/${user}/clients`, { entityType: "USERS", entityName: user }],
      [`/api/quotas/users/${user}`, { entityType: "USER", entityName: user }],
      [`/api/quotas/clients/${client}`, { entityType: "CLIENT", entityName: client }],
    ];
    for (const [path, want] of cases) {
      const res = await send("PUT", path, { producer_byte_rate: "1048576", consumer_byte_rate: "2097152", request_percentage: "150.5" });
      expect(res.status).toBe(200);
      const properties = { producer_byte_rate: "1048576", consumer_byte_rate: "2097152", request_percentage: "150.5" };
      expect(await res.json()).toEqual({ ...want, properties, url: path, isAuthorized: true } as QuotaEntry);
      const entry = await listedAs(path, (e) => e?.properties.consumer_byte_rate === "2097152");
      expect(entry).toEqual({ ...want, properties, url: path, isAuthorized: true } as QuotaEntry);
      expect("child" in (entry as QuotaEntry)).toBe(want.entityType === "USERCLIENT");
    }
    // Anyone who may see quotas sees them; only an admin is told it may change them.
    const seen = (await list("nodata")).find((e) => e.url === cases[0]![0]);
    expect(seen).toMatchObject({ entityType: "USERCLIENT", isAuthorized: false });
  });

  test("the default user and the default client, at /users and /clients, are listed as USERS DEFAULT and CLIENTS DEFAULT", async () => {
    // A consumer rate no test on the shared broker reaches, removed at once.
    const huge = "1099511627776";
    for (const [path, type] of [
      ["/api/quotas/users", "USERS DEFAULT"],
      ["/api/quotas/clients", "CLIENTS DEFAULT"],
    ] as const) {
      const res = await send("PUT", path, { consumer_byte_rate: huge });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        entityType: type,
        entityName: "<default>",
        url: path,
        properties: { consumer_byte_rate: huge },
      });
      await listedAs(path, (e) => e?.properties.consumer_byte_rate === huge);
      expect((await send("DELETE", path, ["consumer_byte_rate"])).status).toBe(200);
      await listedAs(path, (e) => e?.properties.consumer_byte_rate === undefined);
    }
  });

  test("<default> in a path is Kafka's default entity: the default user with one client id", async () => {
    const client = unique("client");
    made.push({ user: null, clientId: client });
    const path = `/api/quotas/users/%3Cdefault%3E/clients/${client}`;
    const res = await send("PUT", path, { producer_byte_rate: "4096" });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ entityType: "USERCLIENT", entityName: "<default>", child: client, url: path });
    await listedAs(path, (e) => e?.properties.producer_byte_rate === "4096");
    const raw = await rt.kafka.default().quotas.describe([{ type: "client-id", match: "exact", name: client }]);
    expect(raw.length).toBe(1);
    expect(raw[0]!.values).toEqual({ producer_byte_rate: 4096 });
    expect(raw[0]!.entity).toContainEqual({ type: "user", name: null });
    expect(raw[0]!.entity).toContainEqual({ type: "client-id", name: client });
  });
});

describe("names with characters a path must escape", () => {
  test("a user and client id with '/', ' ', '?' and '%' round-trip through the entry's url", async () => {
    const user = `${unique("u")}/a b%`;
    const client = `${unique("c")}?x=1`;
    made.push({ user, clientId: client });
    const path = `/api/quotas/users/${encodeURIComponent(user)}/clients/${encodeURIComponent(client)}`;
    const res = await send("PUT", path, { producer_byte_rate: "2048" });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ entityName: user, child: client, url: path });
    const entry = (await listedAs(path, (e) => e?.properties.producer_byte_rate === "2048")) as QuotaEntry;
    expect(entry).toMatchObject({ entityType: "USERCLIENT", entityName: user, child: client });
    expect((await send("DELETE", entry.url)).status).toBe(200);
    await listedAs(path, (e) => e === undefined);
  });
});

describe("PUT changes the constraints given, DELETE the ones named", () => {
  test("a second PUT keeps what it does not name; DELETE of some, then of all (empty array, no body)", async () => {
    const user = unique("user");
    made.push({ user });
    const path = `/api/quotas/users/${user}`;
    expect((await send("PUT", path, { producer_byte_rate: "1000" })).status).toBe(200);
    await listedAs(path, (e) => e?.properties.producer_byte_rate === "1000");
    const second = await send("PUT", path, { producer_byte_rate: "", consumer_byte_rate: 2000, request_percentage: null });
    expect(second.status).toBe(200);
    expect(((await second.json()) as QuotaEntry).properties).toEqual({ producer_byte_rate: "1000", consumer_byte_rate: "2000" });
    await listedAs(path, (e) => e?.properties.consumer_byte_rate === "2000" && e.properties.producer_byte_rate === "1000");

    const some = await send("DELETE", path, ["producer_byte_rate"]);
    expect(some.status).toBe(200);
    expect(((await some.json()) as QuotaEntry).properties).toEqual({ consumer_byte_rate: "2000" });
    await listedAs(path, (e) => e !== undefined && e.properties.producer_byte_rate === undefined);

    const empty = await send("DELETE", path, []);
    expect(empty.status).toBe(200);
    expect(((await empty.json()) as QuotaEntry).properties).toEqual({});
    await listedAs(path, (e) => e === undefined);

    expect((await send("PUT", path, { request_percentage: "50" })).status).toBe(200);
    await listedAs(path, (e) => e?.properties.request_percentage === "50");
    const bodiless = await rt.request(path, { method: "DELETE", role: "admin" });
    expect(bodiless.status).toBe(200);
    await listedAs(path, (e) => e === undefined);
  });

  test("deleting what was never set answers 200 with nothing set", async () => {
    const user = unique("never");
    const res = await send("DELETE", `/api/quotas/users/${user}/clients`, [
      "producer_byte_rate",
      "consumer_byte_rate",
      "request_percentage",
    ]);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      entityType: "USERS",
      entityName: user,
      properties: {},
      url: `/api/quotas/users/${user}/clients`,
      isAuthorized: true,
    });
  });
});

describe("audit", () => {
  test("a change is audited QUOTAS with the entity, what was asked and what was there before", async () => {
    const user = unique("audit");
    const client = unique("client");
    made.push({ user, clientId: client });
    const path = `/api/quotas/users/${user}/clients/${client}`;
    expect((await send("PUT", path, { producer_byte_rate: "1024", consumer_byte_rate: "" })).status).toBe(200);
    const set = await auditOf("UPDATE", "entityName", user);
    expect(set).toMatchObject({
      type: "QUOTAS",
      userId: "alice",
      content: { entityType: "USERCLIENT", child: client, set: '{"producer_byte_rate":1024}', before: "{}", outcome: "SUCCESS" },
    });
    await listedAs(path, (e) => e?.properties.producer_byte_rate === "1024");
    expect((await send("DELETE", path, ["producer_byte_rate"])).status).toBe(200);
    const removed = await auditOf("REMOVE", "entityName", user);
    expect(removed).toMatchObject({
      content: { entityType: "USERCLIENT", remove: '["producer_byte_rate"]', before: '{"producer_byte_rate":"1024"}', outcome: "SUCCESS" },
    });
  });

  test.each(["write", "read", "nodata"] as const)("%s may list and ask, but not change: 403, audited", async (role) => {
    const user = unique(`denied-${role}`);
    expect((await send("GET", "/api/quotas", undefined, role)).status).toBe(200);
    expect((await send("GET", `/api/quotas/effective?user=${user}&clientId=c`, undefined, role)).status).toBe(200);
    for (const [method, body, change] of [
      ["PUT", { producer_byte_rate: "1024" }, "UPDATE"],
      ["DELETE", ["producer_byte_rate"], "REMOVE"],
    ] as const) {
      const res = await send(method, `/api/quotas/users/${user}`, body, role);
      expect(res.status).toBe(403);
      expect((await errorOf(res)).code).toBe("FORBIDDEN");
      const entry = await auditOf(change, "user", user);
      expect(entry).toMatchObject({ type: "QUOTAS", content: { outcome: "FAILURE" } });
      expect(entry!.content.reason).toStartWith("FORBIDDEN");
    }
    expect(await rt.kafka.default().quotas.describe([{ type: "user", match: "exact", name: user }])).toEqual([]);
  });
});

describe("validation: 400 with the COMPAT body, audited, nothing reaches the broker", () => {
  const TOO_LONG = "u".repeat(256);
  const cases: Array<[string, "PUT" | "DELETE", string, unknown, string]> = [
    [
      "a value that is no number",
      "PUT",
      "",
      { producer_byte_rate: "fast" },
      'producer_byte_rate must be a whole number of bytes per second from 1 to 9007199254740991, not "fast"',
    ],
    ["a zero byte rate", "PUT", "", { consumer_byte_rate: "0" }, "consumer_byte_rate must be a whole number"],
    ["a negative byte rate", "PUT", "", { producer_byte_rate: "-5" }, "producer_byte_rate must be a whole number"],
    ["a fractional byte rate", "PUT", "", { producer_byte_rate: "1.5" }, "producer_byte_rate must be a whole number"],
    ["a byte rate past 2^53", "PUT", "", { producer_byte_rate: "1e30" }, "producer_byte_rate must be a whole number"],
    ["a JSON number that is not positive", "PUT", "", { producer_byte_rate: -1 }, "producer_byte_rate must be a whole number"],
    ["a zero request percentage", "PUT", "", { request_percentage: "0" }, "request_percentage must be a number greater than 0"],
    ["a value of another JSON type", "PUT", "", { request_percentage: true }, "request_percentage"],
    [
      "an unknown constraint",
      "PUT",
      "",
      { producer_byte_rate: "1", connection_creation_rate: "5" },
      "unknown quota constraint; the constraints are producer_byte_rate, consumer_byte_rate, request_percentage",
    ],
    [
      "no value at all (the Go client's three empty strings)",
      "PUT",
      "",
      { producer_byte_rate: "", consumer_byte_rate: "", request_percentage: "" },
      'give a value to at least one of producer_byte_rate, consumer_byte_rate, request_percentage ("" means not given)',
    ],
    ["an empty object", "PUT", "", {}, "give a value to at least one of"],
    ["an array for PUT", "PUT", "", ["producer_byte_rate"], "Invalid request body"],
    ["no body for PUT", "PUT", "", undefined, "Invalid request body"],
    [
      "an unknown name to remove",
      "DELETE",
      "",
      ["producer_byte_rate", "bytes"],
      "the quota constraints are producer_byte_rate, consumer_byte_rate, request_percentage",
    ],
    ["an object for DELETE", "DELETE", "", { producer_byte_rate: "1" }, "Invalid request body"],
    ["a user name past 255 characters", "PUT", TOO_LONG, { producer_byte_rate: "1" }, "user has at most 255 characters"],
  ];
  test.each(cases)("%s", async (_what, method, userName, body, message) => {
    const user = userName || unique("bad");
    const res = await send(method, `/api/quotas/users/${user}`, body);
    expect(res.status).toBe(400);
    const err = await errorOf(res);
    expect(err.code).toBe("VALIDATION_FAILED");
    expect(err.message).toContain(message);
    const entry = await auditOf(method === "PUT" ? "UPDATE" : "REMOVE", "user", user);
    expect(entry).toMatchObject({ type: "QUOTAS", content: { outcome: "FAILURE" } });
    expect(entry!.content.reason).toStartWith("VALIDATION_FAILED");
    if (user.length <= 255) expect(await rt.kafka.default().quotas.describe([{ type: "user", match: "exact", name: user }])).toEqual([]);
  });

  test("a body that is not JSON: 400 INVALID_JSON", async () => {
    const res = await send("PUT", `/api/quotas/users/${unique("bad")}`, "{producer_byte_rate:");
    expect(res.status).toBe(400);
    expect((await errorOf(res)).code).toBe("INVALID_JSON");
  });

  test.each([
    ["user=a", "clientId"],
    ["clientId=a", "user"],
    ["user=&clientId=a", "user must not be empty"],
  ])("effective?%s: 400 naming %s", async (query, message) => {
    const res = await send("GET", `/api/quotas/effective?${query}`);
    expect(res.status).toBe(400);
    const err = await errorOf(res);
    expect(err.code).toBe("VALIDATION_FAILED");
    expect(err.message).toContain(message);
  });
});

describe("effective", () => {
  test("each constraint comes from the highest entry that sets it, and says whose traffic shares it", async () => {
    const user = unique("eff");
    const client = unique("client");
    made.push({ user, clientId: client }, { user }, { clientId: client }, { user: null, clientId: client });
    expect((await send("PUT", `/api/quotas/users/${user}/clients/${client}`, { consumer_byte_rate: "3000" })).status).toBe(200);
    expect((await send("PUT", `/api/quotas/users/${user}`, { producer_byte_rate: "2000", consumer_byte_rate: "9999" })).status).toBe(200);
    expect((await send("PUT", `/api/quotas/users/%3Cdefault%3E/clients/${client}`, { producer_byte_rate: "5" })).status).toBe(200);
    expect((await send("PUT", `/api/quotas/clients/${client}`, { request_percentage: "25", producer_byte_rate: "1" })).status).toBe(200);
    const answer = await waitFor(
      async () => {
        const res = await send(
          "GET",
          `/api/quotas/effective?user=${encodeURIComponent(user)}&clientId=${encodeURIComponent(client)}`,
          undefined,
          "nodata",
        );
        expect(res.status).toBe(200);
        const body = (await res.json()) as EffectiveQuota;
        return body.matching.length === 4 ? body : false;
      },
      { what: "the four entries listed" },
    );
    expect(answer.user).toBe(user);
    expect(answer.clientId).toBe(client);
    expect(answer.matching.map((m) => [m.precedence, m.rule, m.entityType])).toEqual([
      [1, "user and client id", "USERCLIENT"],
      [3, "user", "USER"],
      [4, "default user and client id", "USERCLIENT"],
      [7, "client id", "CLIENT"],
    ]);
    const by = Object.fromEntries(answer.quotas.map((q) => [q.property, q]));
    expect(by.consumer_byte_rate).toMatchObject({ value: "3000", source: { precedence: 1 }, sharedBy: "this user and client id" });
    expect(by.producer_byte_rate).toMatchObject({
      value: "2000",
      source: { precedence: 3, url: `/api/quotas/users/${user}` },
      sharedBy: "every client id of this user",
    });
    expect(by.request_percentage).toMatchObject({
      value: "25",
      source: { precedence: 7, entityType: "CLIENT" },
      sharedBy: "every user of this client id",
    });

    // Another user with the same client id: the default user's entry outranks the client id's.
    const other = await send("GET", `/api/quotas/effective?user=${unique("other")}&clientId=${encodeURIComponent(client)}`);
    const o = (await other.json()) as EffectiveQuota;
    expect(o.quotas.find((q) => q.property === "producer_byte_rate")).toMatchObject({ value: "5", source: { precedence: 4 } });
    expect(o.quotas.find((q) => q.property === "consumer_byte_rate")).toMatchObject({ value: null, source: null, sharedBy: null });
  });
});
