import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { LiveClient } from "../clients/ws-client.ts";
import { errorOf, ROLE_USERS, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { createReadyTopic } from "../helpers/topics.ts";
import { StreamReader } from "./stream-reader.ts";

let rt: TestRuntime;
/** The clock of the service: tests advance it instead of sleeping. */
let clock = 1_700_000_000_000;
/** Delays the service asked for before answering (none is really waited). */
const delays: number[] = [];
const MAX_FAILED = 3;
beforeAll(async () => {
  rt = await testRuntime(
    { auth: { maxFailedLogins: MAX_FAILED, failedLoginWindow: "2s" } },
    {
      auth: {
        now: () => clock,
        delay: async (ms) => void delays.push(ms),
      },
    },
  );
});
afterAll(() => rt.dispose());

/** A login from `address`, as the socket's peer address the server would see. */
const login = (body: unknown, headers: Record<string, string> = {}, address?: string) =>
  rt.app.request(
    "/api/login",
    { method: "POST", body: typeof body === "string" ? body : JSON.stringify(body), headers },
    address ? { server: { requestIP: () => ({ address, family: "IPv4", port: 40000 }) } } : undefined,
  );
const attempt = (user: string, password: string, address: string) => login({ user, password }, {}, address);

describe("POST /api/login", () => {
  test("answers the session object when Accept names application/json", async () => {
    const res = await login(
      { user: "alice", password: ROLE_USERS.admin.password },
      { "content-type": "application/json", accept: "application/json" },
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, any>;
    expect(body.success).toBe(true);
    expect(body.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(body.user).toEqual({ id: "alice", name: "alice", email: null, roles: ["admin"], groups: [], kind: "local" });
    // Registry deletes are off unless schemaRegistry.allowDelete turns them on (test/schemas covers both).
    expect(body.schemaRegistryDelete).toBe(false);
  });

  test("answers the bare token for Accept: text/plain", async () => {
    const res = await login({ user: "reed", password: ROLE_USERS.read.password }, { accept: "text/plain" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const token = await res.text();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const auth = await rt.app.request("/api/auth", { headers: { "x-service-token": token } });
    expect(auth.status).toBe(200);
    const session = (await auth.json()) as Record<string, any>;
    expect(session.roles).toEqual(["read"]);
    expect(session.schemaRegistryDelete).toBe(false);
  });

  test("Accept with both text/plain and application/json gets the object", async () => {
    const res = await login({ user: "reed", password: ROLE_USERS.read.password }, { accept: "text/plain, application/json" });
    expect(((await res.json()) as any).success).toBe(true);
  });

  test("parses the body as JSON whatever the content type", async () => {
    const res = await login(
      { user: "wanda", password: ROLE_USERS.write.password },
      { "content-type": "text/plain", accept: "application/json" },
    );
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).user.roles).toEqual(["write"]);
  });

  test("bad JSON is 400 INVALID_JSON", async () => {
    const res = await login("{user:", { "content-type": "application/json" });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).code).toBe("INVALID_JSON");
  });

  test("a missing field is 400 with field errors", async () => {
    const res = await login({ user: "alice" });
    expect(res.status).toBe(400);
    const err = await errorOf(res);
    expect(err.code).toBe("VALIDATION_FAILED");
    expect(err.details).toEqual({ errors: [{ field: "password", message: expect.any(String) }] });
  });

  test("wrong password and unknown user answer the same 401 UNAUTHORIZED", async () => {
    const a = await login({ user: "nora", password: "wrong" });
    const b = await login({ user: "nobody-here", password: "wrong" });
    expect(a.status).toBe(401);
    expect(b.status).toBe(401);
    const ea = await errorOf(a);
    const eb = await errorOf(b);
    expect(ea.message).toBe("UNAUTHORIZED");
    expect({ ...ea, requestId: "" }).toEqual({ ...eb, requestId: "" });
  });

  test("repeated failures of one account from one address get 429 with Retry-After, then recover", async () => {
    const user = "wanda";
    for (let i = 0; i < 3; i++) expect((await login({ user, password: `bad-${i}` })).status).toBe(401);
    const locked = await login({ user, password: ROLE_USERS.write.password });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await errorOf(locked)).code).toBe("TOO_MANY_REQUESTS");
    // Another account is not locked by this one's failures.
    expect((await login({ user: "alice", password: ROLE_USERS.admin.password })).status).toBe(200);
    clock += 2_100;
    expect((await login({ user, password: ROLE_USERS.write.password })).status).toBe(200);
  }, 30_000);

  test("regression: 40 concurrent wrong passwords all got 401 (the limit was checked before the password check)", async () => {
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => attempt("nora", `guess-${i}`, "10.0.0.40")));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(MAX_FAILED);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(40 - MAX_FAILED);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    const refused = answers.find((r) => r.status === 429)!;
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // The correct password from that address waits out the window like any other attempt.
    expect((await attempt("nora", ROLE_USERS.nodata.password, "10.0.0.40")).status).toBe(429);
    clock += 2_100;
    expect((await attempt("nora", ROLE_USERS.nodata.password, "10.0.0.40")).status).toBe(200);
  }, 30_000);

  test("regression: failures from anyone locked the account for everyone; an attacked account is slowed, never locked", async () => {
    clock += 10_000;
    delays.length = 0;
    // Many addresses, each staying under its own limit, fail against one account.
    for (let a = 0; a < 5; a++)
      for (let i = 0; i < MAX_FAILED - 1; i++) expect((await attempt("reed", `guess-${a}-${i}`, `10.1.0.${a}`)).status).toBe(401);
    // Answers were slowed once the account had more failures than one address may have, the
    // delay growing with the failures, bounded.
    const slowed = delays.filter((d) => d > 0);
    expect(slowed.length).toBeGreaterThan(0);
    expect(slowed).toEqual([...slowed].sort((x, y) => x - y));
    expect(Math.max(...slowed)).toBeLessThanOrEqual(2_000);
    expect(slowed.at(-1)).toBe(2_000);
    // The right password from an address that has not failed gets in (slowed, not refused).
    delays.length = 0;
    expect((await attempt("reed", ROLE_USERS.read.password, "10.1.1.1")).status).toBe(200);
    expect(delays).toEqual([2_000]);
  }, 30_000);

  test("regression: the per-address limit locked out every user behind one NAT", async () => {
    clock += 10_000;
    // One address fails across many accounts (unknown names included): it is slowed, not locked.
    const failed = await Promise.all(Array.from({ length: MAX_FAILED * 4 + 2 }, (_, i) => attempt(`someone-${i}`, "guess", "10.2.0.1")));
    expect(failed.map((r) => r.status)).toEqual(failed.map(() => 401));
    delays.length = 0;
    expect((await attempt("wanda", ROLE_USERS.write.password, "10.2.0.1")).status).toBe(200);
    expect(delays[0]).toBeGreaterThan(0);
  }, 30_000);

  test("a burst of correct logins from one address is never refused", async () => {
    clock += 10_000;
    // More at once than the failures the pair may have: the attempts past it wait for earlier ones.
    const answers = await Promise.all(
      Array.from({ length: MAX_FAILED + 2 }, () => attempt("alice", ROLE_USERS.admin.password, "10.3.0.1")),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(MAX_FAILED + 2).fill(200));
  }, 30_000);

  test("regression: a failed login logged the submitted user name, sometimes a password typed into the wrong field", async () => {
    clock += 10_000;
    rt.sink.lines.length = 0;
    await attempt("Tr0ub4dor&3-typed-as-name", "x", "10.4.0.1");
    await attempt("nora", "wrong", "10.4.0.1");
    const failures = rt.sink.lines.filter((l) => l.includes("login failed"));
    expect(failures).toHaveLength(2);
    expect(rt.sink.text()).not.toContain("Tr0ub4dor&3-typed-as-name");
    expect(failures[1]).toContain("nora");
  });

  test("no secret reaches a log line", async () => {
    await login({ user: "alice", password: "a-very-secret-guess" });
    expect(rt.sink.text()).not.toContain("a-very-secret-guess");
    expect(rt.sink.text()).not.toContain(ROLE_USERS.admin.password);
  });
});

describe("an account attacked from many addresses", () => {
  /** The account's budget with MAX_FAILED = 3 and a 2 s window: 12 failed checks, then one per 2000 / 3 ms. */
  const BURST = 4 * MAX_FAILED;
  const REFILL_MS = 2_000 / MAX_FAILED;
  /** A check whose turn is at most the longest delay (2 s) away waits for it instead of a 429. */
  const AHEAD = Math.floor(2_000 / REFILL_MS);

  test("22.12: unlimited addresses test a bounded number of passwords (a burst, then one per refill); the owner gets in from a known address at once, from a new one at its turn", async () => {
    clock += 10_000;
    const name = `many-${randomBytes(4).toString("hex")}`;
    const password = "many-addresses-password";
    const made = await rt.request("/api/users", { method: "POST", role: "admin", body: JSON.stringify({ name, password, groups: [] }) });
    expect(made.status).toBe(201);
    // The owner logged in from home before the attack.
    expect((await attempt(name, password, "10.12.0.1")).status).toBe(200);

    // 60 addresses, each under its own limit, the name in either case (one account), no time passing.
    delays.length = 0;
    const statuses: number[] = [];
    let refused: Response | undefined;
    for (let a = 0; a < 60; a++)
      for (let i = 0; i < MAX_FAILED - 1; i++) {
        const res = await attempt(i % 2 ? name.toUpperCase() : name, `guess-${a}-${i}`, `10.12.1.${a}`);
        statuses.push(res.status);
        if (res.status === 429) refused ??= res;
      }
    const checked = statuses.filter((x) => x === 401).length;
    expect(checked).toBeGreaterThanOrEqual(BURST);
    expect(checked).toBeLessThanOrEqual(BURST + AHEAD + 1);
    expect(statuses.filter((x) => x === 429).length).toBe(statuses.length - checked);
    expect(Number(refused!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Math.max(...delays)).toBeLessThanOrEqual(2_000);

    // Time passes, an attempt from a new address every 100 ms: one check per refill gets through.
    let later = 0;
    for (let step = 0; step < 200; step++) {
      clock += 100;
      if ((await attempt(name, `later-${step}`, `10.12.2.${step}`)).status === 401) later++;
    }
    expect(later).toBeLessThanOrEqual(Math.ceil(20_000 / REFILL_MS) + 1);
    expect(later).toBeGreaterThanOrEqual(Math.floor(20_000 / REFILL_MS) - 1);

    // The owner, from home, is neither slowed nor refused.
    delays.length = 0;
    expect((await attempt(name, password, "10.12.0.1")).status).toBe(200);
    expect(delays).toEqual([]);
    // From a new address they wait their turn, with the right password, like anyone; never locked out.
    for (let a = 0; a < AHEAD + 2; a++) await attempt(name, "one-more-guess", `10.12.3.${a}`);
    const turn = await attempt(name, password, "10.12.9.9");
    expect(turn.status).toBe(429);
    clock += Number(turn.headers.get("retry-after")) * 1000;
    expect((await attempt(name, password, "10.12.9.9")).status).toBe(200);
  }, 60_000);
});

describe("changing one's own password", () => {
  const PASSWORD = "own-password-before";
  const NEXT = "own-password-after";
  const json = (body: unknown) => JSON.stringify(body);

  /** A store user (in `groups`), made by the admin. */
  async function storeUser(groups: string[] = []): Promise<string> {
    const name = `own-${randomBytes(4).toString("hex")}`;
    const made = await rt.request("/api/users", { method: "POST", role: "admin", body: json({ name, password: PASSWORD, groups }) });
    expect(made.status).toBe(201);
    return name;
  }
  const tokenOf = async (user: string, password: string, address = "10.9.9.9") => {
    const res = await attempt(user, password, address);
    expect(res.status).toBe(200);
    return res.text();
  };
  /** The password change, from `address` as the socket's peer. */
  const change = (token: string, currentPassword: string, address: string, password = NEXT) =>
    rt.app.request(
      "/api/user/password",
      {
        method: "PUT",
        headers: { "x-service-token": token, "content-type": "application/json" },
        body: json({ currentPassword, password }),
      },
      { server: { requestIP: () => ({ address, family: "IPv4", port: 40000 }) } },
    );

  test("22.9: a wrong current password counts as a failed login: past the limit 429 with Retry-After, for the change and the login alike", async () => {
    clock += 10_000;
    const name = await storeUser();
    const token = await tokenOf(name, PASSWORD);
    rt.sink.lines.length = 0;
    // A stolen token guessing the current password from one address.
    const statuses: number[] = [];
    let refused: Response | undefined;
    for (let i = 0; i < 30; i++) {
      const res = await change(token, `guess-${i}`, "10.9.0.1");
      statuses.push(res.status);
      if (res.status === 429) refused ??= res;
    }
    expect(statuses.slice(0, MAX_FAILED)).toEqual(Array(MAX_FAILED).fill(400));
    expect(statuses.slice(MAX_FAILED)).toEqual(Array(30 - MAX_FAILED).fill(429));
    expect(Number(refused!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await errorOf(refused!)).code).toBe("TOO_MANY_REQUESTS");
    // The same count as a login's: the right password from that address waits too, for both.
    expect((await attempt(name, PASSWORD, "10.9.0.1")).status).toBe(429);
    expect((await change(token, PASSWORD, "10.9.0.1")).status).toBe(429);
    expect(rt.sink.lines.filter((l) => l.includes("password check failed"))).toHaveLength(MAX_FAILED);
    expect(rt.sink.text()).not.toContain("guess-0");
    // Once the window has passed, the right current password changes it.
    clock += 2_100;
    expect((await change(token, PASSWORD, "10.9.0.1")).status).toBe(200);
    expect((await attempt(name, NEXT, "10.9.0.1")).status).toBe(200);
  }, 30_000);

  test("22.9: a changed password ends every other session of the user, with their event streams and websocket subscriptions; the session that changed it stays", async () => {
    clock += 10_000;
    const group = `own-admins-${randomBytes(4).toString("hex")}`;
    const g = await rt.request("/api/groups", {
      method: "POST",
      role: "admin",
      body: json({ name: group, roles: ["admin"], clusters: ["*"], topics: { allow: ["*"], deny: [] } }),
    });
    expect(g.status).toBe(201);
    const name = await storeUser([group]);
    const topics: string[] = [];
    const socket = await LiveClient.open(rt.url, crypto.randomUUID());
    try {
      const t = await createReadyTopic(rt.kafka.default(), { prefix: "own-pw", track: topics });
      const changer = await tokenOf(name, PASSWORD);
      const streaming = await tokenOf(name, PASSWORD, "10.9.9.8");
      const subscribed = await tokenOf(name, PASSWORD, "10.9.9.7");
      const res = await rt.request("/api/sse/audit", { token: streaming });
      expect(res.status).toBe(200);
      const stream = new StreamReader(res);
      expect(await stream.until((text) => text.startsWith(":"))).toBe(true);
      socket.request("SUBSCRIBE", 2, { sqls: [`SELECT * FROM \`${t}\``] }, subscribed);
      expect((await socket.reply(2)).type).toBe("SUCCESS");

      expect((await change(changer, PASSWORD, "10.9.9.9")).status).toBe(200);
      for (const other of [streaming, subscribed]) expect((await rt.request("/api/auth", { token: other })).status).toBe(401);
      expect(await stream.end()).toBe(true);
      expect(stream.lines().at(-1)).toBe("data:");
      const ended = await socket.reply(2);
      expect(ended.type).toBe("ERROR");
      expect(ended.content as string).toContain("revoked");
      expect((await rt.request("/api/auth", { token: changer })).status).toBe(200);

      // An admin's reset ends every session, the one left included, and its stream.
      const again = await rt.request("/api/sse/audit", { token: changer });
      const kept = new StreamReader(again);
      expect(await kept.until((text) => text.startsWith(":"))).toBe(true);
      const reset = await rt.request(`/api/users/${name}`, { method: "PUT", role: "admin", body: json({ password: PASSWORD }) });
      expect(reset.status).toBe(200);
      expect((await rt.request("/api/auth", { token: changer })).status).toBe(401);
      expect(await kept.end()).toBe(true);
    } finally {
      socket.close();
      for (const topic of topics)
        await rt.kafka
          .default()
          .topics.delete(topic)
          .catch(() => {});
    }
  }, 60_000);
});
