// @postgres
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ProfileRepo } from "../../src/domains/profile/repo.ts";
import { ProfileService } from "../../src/domains/profile/service.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { array, decode, goStruct, str } from "./strict.ts";

let rt: TestRuntime;
beforeAll(async () => {
  rt = await testRuntime();
});
afterAll(async () => {
  await rt.dispose();
});

type Role = "admin" | "write" | "read" | "nodata";

/**
 * As the Go CLI sends PUT and DELETE: no body and no Content-Type (fetch sends neither for a
 * bodiless request), the token, gzip accepted.
 */
async function send(method: "GET" | "PUT" | "DELETE", path: string, role: Role = "nodata"): Promise<Response> {
  const res = await rt.request(path, { method, role, headers: { "accept-encoding": "gzip" } });
  return res;
}

/** Decoded with the clients' strictness: exactly 200, and every property an array of strings. */
async function profileOf(res: Response): Promise<Record<string, string[]>> {
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("application/json");
  const body = (await res.json()) as Record<string, string[]>;
  decode(goStruct({ topics: array(str), schemas: array(str), transformers: array(str) }), body);
  for (const [k, v] of Object.entries(body))
    expect({ k, ok: Array.isArray(v) && v.every((x) => typeof x === "string") }).toEqual({ k, ok: true });
  return body;
}

describe("user profile", () => {
  test("a new user's profile has the three standard properties, empty", async () => {
    expect(await profileOf(await send("GET", "/api/user/profile", "read"))).toEqual({ topics: [], schemas: [], transformers: [] });
  });

  test("PUT and DELETE without a body add and remove favourites, in order, and answer the profile", async () => {
    expect((await profileOf(await send("PUT", "/api/user/profile/topics/orders"))).topics).toEqual(["orders"]);
    await profileOf(await send("PUT", "/api/user/profile/topics/payments"));
    await profileOf(await send("PUT", "/api/user/profile/schemas/orders-value"));
    // The CLI's example of a free-form property.
    const added = await profileOf(await send("PUT", "/api/user/profile/newProperty/some%20value"));
    expect(added).toEqual({ topics: ["orders", "payments"], schemas: ["orders-value"], transformers: [], newProperty: ["some value"] });

    // Repeating an addition changes nothing; removing a missing value is no error.
    expect((await profileOf(await send("PUT", "/api/user/profile/topics/orders"))).topics).toEqual(["orders", "payments"]);
    expect((await profileOf(await send("DELETE", "/api/user/profile/topics/orders"))).topics).toEqual(["payments"]);
    expect((await profileOf(await send("DELETE", "/api/user/profile/topics/orders"))).topics).toEqual(["payments"]);
    const left = await profileOf(await send("DELETE", "/api/user/profile/newProperty/some%20value"));
    expect(left).toEqual({ topics: ["payments"], schemas: ["orders-value"], transformers: [] });
    expect(await profileOf(await send("GET", "/api/user/profile"))).toEqual(left);
  });

  test("each user has a profile of their own", async () => {
    await profileOf(await send("PUT", "/api/user/profile/topics/mine-only", "write"));
    expect((await profileOf(await send("GET", "/api/user/profile", "write"))).topics).toContain("mine-only");
    expect((await profileOf(await send("GET", "/api/user/profile", "admin"))).topics).not.toContain("mine-only");
  });

  test("favourites live in the store: another service over the same store reads them", async () => {
    await profileOf(await send("PUT", "/api/user/profile/transformers/upper", "admin"));
    const again = new ProfileService(new ProfileRepo(rt.store.db));
    expect((await again.get("alice")).transformers).toEqual(["upper"]);
  });

  test("no token is 401", async () => {
    expect((await rt.request("/api/user/profile/topics/x", { method: "PUT" })).status).toBe(401);
  });

  test.each([
    ["a property that starts with a digit", "/api/user/profile/1topics/x"],
    ["a property with a space", "/api/user/profile/my%20topics/x"],
    ["a property over 64 characters", `/api/user/profile/${"p".repeat(65)}/x`],
    ["a value over 255 characters", `/api/user/profile/topics/${"v".repeat(256)}`],
    ["a value with a control character", "/api/user/profile/topics/a%0Ab"],
  ])("%s is a 400", async (_what, path) => {
    for (const method of ["PUT", "DELETE"] as const) {
      const res = await send(method, path);
      expect(res.status).toBe(400);
      expect((await errorOf(res)).code).toBe("VALIDATION_FAILED");
    }
  });

  test("a profile holds a bounded number of values: beyond it, 400 and nothing added", async () => {
    const service = new ProfileService(new ProfileRepo(rt.store.db), { maxValues: 3 });
    await service.add("bounded", "topics", "a");
    await service.add("bounded", "topics", "b");
    await service.add("bounded", "schemas", "c");
    // Concurrent additions cannot pass the bound together.
    const results = await Promise.allSettled([service.add("bounded", "topics", "d"), service.add("bounded", "topics", "e")]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    const err = (results[0] as PromiseRejectedResult).reason as { code: string; status: number; message: string };
    expect(err).toMatchObject({ code: "BAD_REQUEST", status: 400 });
    expect(err.message).toContain("holds 3 values");
    // Adding one it already has is still fine; after a removal there is room again.
    await service.add("bounded", "topics", "a");
    await service.remove("bounded", "topics", "a");
    expect((await service.add("bounded", "topics", "d")).topics).toEqual(["b", "d"]);
  });

  test("the bound is enforced through the API too", async () => {
    const user = "nora";
    const service = new ProfileService(new ProfileRepo(rt.store.db));
    const before = (await service.get(user)).topics.length;
    // Fill the nodata user's profile to the default bound directly, then ask through the API.
    const inserts = [];
    for (let i = 0; i < 1000; i++) inserts.push({ user_name: user, property: "bulk", value: `v${i}`, created_at: 0 });
    await rt.store.db.insertInto("user_profile").values(inserts).execute();
    const res = await send("PUT", "/api/user/profile/topics/one-too-many");
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toContain("holds 1000 values");
    await rt.store.db.deleteFrom("user_profile").where("user_name", "=", user).where("property", "=", "bulk").execute();
    expect((await service.get(user)).topics.length).toBe(before);
  });
});
