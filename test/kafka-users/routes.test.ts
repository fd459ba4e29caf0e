/**
 * `/api/kafka-users` on the shared broker: SCRAM credentials created, given a new password and
 * deleted, as the brokers describe them; the password never answered, logged or audited; every
 * refusal a clear 4xx. (Logging in with them: test/kafka-users/secure-login.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { uniqueTopic } from "../cluster/cluster.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";

let rt: TestRuntime;
const made: string[] = [];

beforeAll(async () => {
  rt = await testRuntime();
});
afterAll(async () => {
  for (const name of made)
    for (const m of ["SCRAM-SHA-256", "SCRAM-SHA-512"] as const)
      await rt.kafka
        .default()
        .scram.delete(name, [m])
        .catch(() => {});
  await rt.dispose();
});

const send = (method: string, path: string, body?: unknown, role: "admin" | "write" | "read" | "nodata" = "admin") =>
  rt.request(path, { method, role, ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}) });

async function auditEntries(): Promise<Array<{ change: string; content: Record<string, string> }>> {
  const res = await send("GET", "/api/audit?type=KAFKA_USER&limit=50");
  expect(res.status).toBe(200);
  return (await res.json()) as Array<{ change: string; content: Record<string, string> }>;
}

const newName = () => {
  const name = uniqueTopic("kuser");
  made.push(name);
  return name;
};

describe("Kafka users", () => {
  test("created, listed, given a new password, deleted; audited without the password", async () => {
    const name = newName();
    const secret = `first-${name}-pw`;
    const created = await send("POST", "/api/kafka-users", { name, password: secret, mechanism: "scram_sha_256" });
    expect(created.status).toBe(200);
    const createdText = await created.text();
    expect(JSON.parse(createdText)).toEqual({ name, credentials: [{ mechanism: "SCRAM-SHA-256", iterations: 4096 }] });
    expect(createdText).not.toContain(secret);

    // A second mechanism for the same user is another credential.
    expect((await send("POST", "/api/kafka-users", { name, password: secret })).status).toBe(200);
    const listed = (await (await send("GET", "/api/kafka-users")).json()) as Array<{ name: string; credentials: unknown[] }>;
    expect(listed.find((u) => u.name === name)).toEqual({
      name,
      credentials: [
        { mechanism: "SCRAM-SHA-256", iterations: 4096 },
        { mechanism: "SCRAM-SHA-512", iterations: 4096 },
      ],
    });

    // The same mechanism again: 409, rotate instead.
    const again = await send("POST", "/api/kafka-users", { name, password: secret });
    expect(again.status).toBe(409);
    expect((await errorOf(again)).message).toContain("already has a SCRAM-SHA-512 credential");

    const rotated = await send("PUT", `/api/kafka-users/${name}`, { password: `second-${name}-pw`, iterations: 8192 });
    expect(rotated.status).toBe(200);
    expect(((await rotated.json()) as { credentials: unknown[] }).credentials).toContainEqual({
      mechanism: "SCRAM-SHA-512",
      iterations: 8192,
    });

    const removed = await send("DELETE", `/api/kafka-users/${name}`);
    expect(removed.status).toBe(200);
    expect(((await removed.json()) as { credentials: unknown[] }).credentials).toHaveLength(2);
    expect(((await (await send("GET", "/api/kafka-users")).json()) as Array<{ name: string }>).some((u) => u.name === name)).toBe(false);
    expect((await send("DELETE", `/api/kafka-users/${name}`)).status).toBe(404);
    expect((await send("PUT", `/api/kafka-users/${name}`, { password: "whatever-pw" })).status).toBe(404);

    const entries = (await auditEntries()).filter((e) => e.content.name === name);
    expect(entries.map((e) => `${e.change} ${e.content.outcome}`)).toEqual([
      "UPDATE FAILURE",
      "REMOVE FAILURE",
      "REMOVE SUCCESS",
      "UPDATE SUCCESS",
      "ADD FAILURE",
      "ADD SUCCESS",
      "ADD SUCCESS",
    ]);
    expect(entries.find((e) => e.change === "REMOVE" && e.content.outcome === "SUCCESS")!.content.mechanisms).toBe(
      "SCRAM-SHA-256,SCRAM-SHA-512",
    );
    const everything = JSON.stringify(await auditEntries()) + rt.sink.text();
    expect(everything).not.toContain(secret);
    expect(everything).not.toContain(`second-${name}-pw`);
  });

  test.each(["write", "read", "nodata"] as const)("%s may not list or change Kafka users: 403", async (role) => {
    const name = newName();
    expect((await send("GET", "/api/kafka-users", undefined, role)).status).toBe(403);
    expect((await send("POST", "/api/kafka-users", { name, password: "password-123" }, role)).status).toBe(403);
    expect((await send("PUT", `/api/kafka-users/${name}`, { password: "password-123" }, role)).status).toBe(403);
    expect((await send("DELETE", `/api/kafka-users/${name}`, undefined, role)).status).toBe(403);
    expect(await rt.kafka.default().scram.describe([name])).toEqual([]);
  });

  const bad: Array<[string, string, string, unknown, string]> = [
    ["a short password", "POST", "/api/kafka-users", { name: "u1", password: "short" }, "a password has at least 8 characters"],
    ["no password", "POST", "/api/kafka-users", { name: "u1" }, "password is required"],
    ["no name", "POST", "/api/kafka-users", { password: "long-enough" }, "name is required"],
    [
      "a name with a space",
      "POST",
      "/api/kafka-users",
      { name: "a b", password: "long-enough" },
      "name has no spaces or control characters",
    ],
    [
      "an unknown mechanism",
      "POST",
      "/api/kafka-users",
      { name: "u1", password: "long-enough", mechanism: "PLAIN" },
      "mechanism is one of SCRAM-SHA-256, SCRAM-SHA-512",
    ],
    ["too few iterations", "PUT", "/api/kafka-users/u1", { password: "long-enough", iterations: 100 }, "iterations is at least 4096"],
    ["too many iterations", "PUT", "/api/kafka-users/u1", { password: "long-enough", iterations: 20000 }, "iterations is at most 16384"],
    ["an unknown field", "PUT", "/api/kafka-users/u1", { password: "long-enough", salt: "x" }, "salt"],
  ];
  test.each(bad)("%s: 400 naming the problem, audited as a failure", async (_what, method, path, body, message) => {
    const res = await send(method, path, body);
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toContain(message);
    const [entry] = await auditEntries();
    expect(entry).toMatchObject({ change: method === "POST" ? "ADD" : "UPDATE", content: { outcome: "FAILURE" } });
    expect(JSON.stringify(entry)).not.toContain("long-enough");
  });
});
