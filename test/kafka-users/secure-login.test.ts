/**
 * Issue 25's Kafka users on the secured broker: a SCRAM user created through Loupe (connected
 * as its super user) logs in with Loupe's Kafka client; after a new password only the new one
 * works; after deletion neither does.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { uniqueTopic } from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { secureClusterSettings, secureKafka } from "../helpers/secure-kafka.ts";
import { waitFor } from "../helpers/wait.ts";

let admin: TestRuntime;
const made: string[] = [];

beforeAll(async () => {
  admin = await testRuntime({ kafka: { clusters: [secureClusterSettings()] } });
});
afterAll(async () => {
  for (const name of made) await admin.request(`/api/kafka-users/${name}`, { method: "DELETE", role: "admin" }).catch(() => {});
  await admin.dispose();
});

/** Whether Loupe's Kafka client logs in to the broker over SCRAM-SHA-512 as the user. */
async function logsIn(user: string, password: string): Promise<{ ok: boolean; error?: string }> {
  const client = secureKafka({ user, password });
  try {
    const health = await client.kafka.health(5_000);
    return { ok: health.connected, ...(health.error ? { error: health.error } : {}) };
  } finally {
    await client.close();
  }
}

/** Polled: a credential change reaches the broker's authenticator a moment after it is committed. */
const eventually = (user: string, password: string, ok: boolean) =>
  waitFor(async () => (await logsIn(user, password)).ok === ok, {
    timeoutMs: 15_000,
    intervalMs: 250,
    what: `${user} ${ok ? "logging in" : "refused"} with ${password}`,
  });

const send = (method: string, path: string, body?: unknown) =>
  admin.request(path, { method, role: "admin", ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });

describe("Kafka users on the secured broker", () => {
  test("a user created through Loupe logs in; after a new password only the new one works; after deletion neither", async () => {
    const name = uniqueTopic("scram");
    made.push(name);
    const first = `first-${name}`;
    const second = `second-${name}`;
    expect((await logsIn(name, first)).ok).toBe(false);

    expect((await send("POST", "/api/kafka-users", { name, password: first })).status).toBe(200);
    await eventually(name, first, true);

    expect((await send("PUT", `/api/kafka-users/${name}`, { password: second })).status).toBe(200);
    await eventually(name, second, true);
    const old = await logsIn(name, first);
    expect(old.ok).toBe(false);
    expect(old.error).toContain("invalid credentials");

    expect((await send("DELETE", `/api/kafka-users/${name}`)).status).toBe(200);
    await eventually(name, second, false);
    expect((await logsIn(name, first)).ok).toBe(false);
    console.error(`[25] ${name}: created, logged in; new password: only it works; deleted: ${(await logsIn(name, second)).error}`);
  }, 90_000);

  test("the fixture users are listed with their mechanism; a SCRAM-SHA-256 credential is one of its own", async () => {
    const listed = (await (await send("GET", "/api/kafka-users")).json()) as Array<{
      name: string;
      credentials: Array<{ mechanism: string; iterations: number }>;
    }>;
    expect(listed.find((u) => u.name === "alice")?.credentials).toEqual([{ mechanism: "SCRAM-SHA-512", iterations: expect.any(Number) }]);

    const name = uniqueTopic("scram256");
    made.push(name);
    expect((await send("POST", "/api/kafka-users", { name, password: `pw-${name}`, mechanism: "SCRAM-SHA-256" })).status).toBe(200);
    const answer = (await (await send("GET", "/api/kafka-users")).json()) as Array<{ name: string; credentials: unknown[] }>;
    expect(answer.find((u) => u.name === name)?.credentials).toEqual([{ mechanism: "SCRAM-SHA-256", iterations: 4096 }]);
    // The listener offers SCRAM-SHA-512 only: the credential exists, but cannot log in there.
    expect((await logsIn(name, `pw-${name}`)).ok).toBe(false);
  }, 60_000);
});
