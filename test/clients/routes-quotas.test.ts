import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { waitFor } from "../helpers/wait.ts";
import { array, bool, decode, goStruct, jsonAnswer, oneOf, str } from "./strict.ts";

/**
 * The quota calls of the real clients (CLIENTS.md 2), as they send them: the Go client (GO c
 * `Quota`, `CreateOrUpdateQuotaFor*`, `DeleteQuotaFor*`) and the Python client (PY
 * kafka/quotas.py, PY t/quota). Users and client ids are the test's own; the defaults, which the
 * Python tests set too, get rates no client of the shared broker reaches and are removed again.
 */

/** GO c `Quota` and its `QuotaConfig`: every field a string but isAuthorized; entity types as the Go consts spell them. */
const GO_QUOTA = goStruct({
  entityType: oneOf("CLIENT", "CLIENTS", "CLIENTS DEFAULT", "USER", "USERS", "USERCLIENT", "USERS DEFAULT"),
  entityName: str,
  child: str,
  properties: goStruct({ producer_byte_rate: str, consumer_byte_rate: str, request_percentage: str }),
  url: str,
  isAuthorized: bool,
});

/** Rates no test on the shared broker reaches (the Python tests' own 100000 B/s on a default would hold every client back). */
const PY_CONFIG = { producer_byte_rate: "1099511627776", consumer_byte_rate: "2199023255552", request_percentage: "100000" };

let rt: TestRuntime;
const tag = `${process.pid}-${Date.now().toString(36)}`;
const USER = `pyuser-${tag}`;
const CLIENT = `pyclient-${tag}`;

beforeAll(async () => {
  rt = await testRuntime();
});
afterAll(async () => {
  const all = { producer_byte_rate: null, consumer_byte_rate: null, request_percentage: null };
  await rt.kafka.default().quotas.alter(
    [
      [{ type: "user" as const, name: USER }],
      [
        { type: "user" as const, name: USER },
        { type: "client-id" as const, name: null },
      ],
      [
        { type: "user" as const, name: USER },
        { type: "client-id" as const, name: CLIENT },
      ],
      [{ type: "client-id" as const, name: CLIENT }],
      [{ type: "user" as const, name: `go-${tag}` }],
    ].map((entity) => ({ entity, values: all })),
  );
  await rt.dispose();
});

/** As the Go client sends it: the token, gzip accepted, `Content-Type: application/json` on bodies (none on GET). */
function go(method: string, path: string, body?: unknown) {
  return rt.request(path, {
    method,
    role: "admin",
    headers: { "accept-encoding": "gzip", ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

/** As the Python client's `requests` sends it: a JSON body, `Accept: application/json` (the token header renamed, as for every client). */
function py(method: string, path: string, body?: unknown) {
  return rt.request(path, {
    method,
    role: "admin",
    headers: { "content-type": "application/json", accept: "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

describe("Go client", () => {
  test("GET /api/quotas decodes as the Go client's []Quota (entity types with spaces, string values)", async () => {
    const user = `go-${tag}`;
    // GO CreateOrUpdateQuotaForUser marshals QuotaConfig without omitempty: "" for what is not given.
    const put = await go("PUT", `/api/quotas/users/${user}`, {
      producer_byte_rate: "",
      consumer_byte_rate: "4194304",
      request_percentage: "",
    });
    expect(put.status).toBe(200);
    const quotas = await waitFor(
      async () => {
        const list = await jsonAnswer(await go("GET", "/api/quotas"), 200, array(GO_QUOTA));
        return list.some((q) => q.entityName === user) ? list : false;
      },
      { what: "the user's entry listed" },
    );
    expect(quotas.find((q) => q.entityName === user) as unknown).toEqual({
      entityType: "USER",
      entityName: user,
      properties: { consumer_byte_rate: "4194304" },
      url: `/api/quotas/users/${user}`,
      isAuthorized: true,
    });
    // The CLI's "quotas" table reads the upper-case, space-separated types of the defaults too.
    const put2 = await go("PUT", "/api/quotas/clients", {
      producer_byte_rate: "",
      consumer_byte_rate: PY_CONFIG.consumer_byte_rate,
      request_percentage: "",
    });
    expect(put2.status).toBe(200);
    const withDefault = await waitFor(
      async () => {
        const list = await jsonAnswer(await go("GET", "/api/quotas"), 200, array(GO_QUOTA));
        return list.find((q) => q.entityType === "CLIENTS DEFAULT") ?? false;
      },
      { what: "the default client listed" },
    );
    expect(withDefault).toMatchObject({ entityName: "<default>", url: "/api/quotas/clients" });
    // GO DeleteQuotaForAllClients with no names sends all three.
    const del = await go("DELETE", "/api/quotas/clients", ["producer_byte_rate", "consumer_byte_rate", "request_percentage"]);
    expect(del.status).toBe(200);
  });

  test("PUT and DELETE answer 200 with a body (never 204), on every path the Go client builds", async () => {
    for (const path of [
      `/api/quotas/users/${USER}`,
      `/api/quotas/users/${USER}/clients`,
      `/api/quotas/users/${USER}/clients/${CLIENT}`,
      `/api/quotas/clients/${CLIENT}`,
    ]) {
      const put = await go("PUT", path, { producer_byte_rate: "1048576", consumer_byte_rate: "", request_percentage: "" });
      expect({ path, status: put.status }).toEqual({ path, status: 200 });
      expect((await put.text()).length).toBeGreaterThan(0);
      const del = await go("DELETE", path, ["producer_byte_rate", "consumer_byte_rate", "request_percentage"]);
      expect({ path, status: del.status }).toEqual({ path, status: 200 });
      expect((await del.text()).length).toBeGreaterThan(0);
    }
    // lenses-go before 2.1 sent DELETE without a body (and without a Content-Type): all three go.
    const bare = await rt.request(`/api/quotas/users/${USER}`, { method: "DELETE", role: "admin" });
    expect(bare.status).toBe(200);
  });
});

describe("Python client (PY t/quota)", () => {
  test("test_get_quotas: exactly 200 and a JSON array", async () => {
    const res = await py("GET", "/api/quotas");
    expect(res.status).toBe(200);
    expect(Array.isArray(await res.json())).toBe(true);
  });

  test("SetQuotas* with three numeric strings: exactly 200 on each path", async () => {
    for (const path of [
      "/api/quotas/users",
      `/api/quotas/users/${USER}/clients`,
      `/api/quotas/users/${USER}/clients/${CLIENT}`,
      `/api/quotas/users/${USER}`,
      "/api/quotas/clients",
      `/api/quotas/clients/${CLIENT}`,
    ]) {
      const res = await py("PUT", path, PY_CONFIG);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      decode(GO_QUOTA, await res.json());
    }
    // The defaults go again at once: every client of the shared broker falls under them.
    for (const path of ["/api/quotas/users", "/api/quotas/clients"])
      expect((await py("DELETE", path, ["consumer_byte_rate", "producer_byte_rate", "request_percentage"])).status).toBe(200);
  });

  test("Delete* of quotas never set (users/<u>/clients and the others): exactly 200, not 404", async () => {
    const never = `never-${tag}`;
    const config = ["consumer_byte_rate", "producer_byte_rate", "request_percentage"];
    for (const path of [
      `/api/quotas/users/${never}/clients`,
      `/api/quotas/users/${never}/clients/${never}`,
      `/api/quotas/users/${never}`,
      `/api/quotas/clients/${never}`,
    ]) {
      const res = await py("DELETE", path, config);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
    }
  });
});
