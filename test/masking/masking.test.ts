// @postgres
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Role } from "../../src/config/schema.ts";
import { LiveClient, WsClient } from "../clients/ws-client.ts";
import { errorOf, ROLE_USERS, roleHashes, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { createReadyTopic } from "../helpers/topics.ts";
import { waitFor } from "../helpers/wait.ts";
import { getProcessor, untilState } from "../processors/helpers.ts";

/**
 * Data masking policies over every path that answers record contents from the query engine
 * (docs/masking.md): SQL JSON and event stream, the JDBC select websocket and live
 * subscriptions, against the real broker. A masked user's answers are searched, every byte and
 * without case, for each clear value, whatever the query renames, wraps or reads whole.
 */
let rt: TestRuntime;
const topics: string[] = [];
let topic: string;

/** Users of the groups the policies name; `reed` (read, no group) and `wanda` (write) come with the runtime. */
const MIA = { name: "mia", password: "mia-pw-29" }; // analysts: masked
const TESS = { name: "tess", password: "tess-pw-29" }; // analysts and trusted: the exception

const SSN = "123-45-6789";
const CARD = "4111111111111111";
const TOKEN = "tok-SECRET-9f";
const EMAIL = "ann@example.test";
const CLEAR = [SSN, CARD, TOKEN, EMAIL];

const record = (n: number) => ({
  key: JSON.stringify({ id: n, ssn: SSN }),
  value: JSON.stringify({ n, name: "Ann", ssn: SSN, email: EMAIL, card: { number: CARD, holder: "Ann" }, items: [{ token: TOKEN }] }),
});

const POLICIES = [
  { name: "pii", topics: ["mask29-*"], fields: ["ssn"], method: "REDACT", groups: ["analysts"], exceptGroups: ["trusted"] },
  {
    name: "cards",
    topics: ["mask29-*"],
    fields: ["card.number"],
    method: "KEEP_LAST_N",
    keepLast: 4,
    groups: ["analysts"],
    exceptGroups: ["trusted"],
  },
  { name: "tokens", topics: ["mask29-*"], fields: ["items.tok*"], method: "HASH", groups: ["analysts"], exceptGroups: ["trusted"] },
  {
    name: "mail",
    topics: ["mask29-*"],
    fields: ["email"],
    method: "REMOVE",
    groups: ["analysts"],
    roles: ["write"],
    exceptGroups: ["trusted"],
  },
];

/** An argon2id hash at the lowest cost: these logins test masking, not password hashing. */
const cheapHash = (password: string) => Bun.password.hash(password, { algorithm: "argon2id", memoryCost: 1024, timeCost: 1 });

beforeAll(async () => {
  const h = await roleHashes();
  const users = [
    ...(Object.keys(ROLE_USERS) as Role[]).map((role) => ({ name: ROLE_USERS[role].name, passwordHash: h[role], roles: [role] })),
    { name: MIA.name, passwordHash: await cheapHash(MIA.password), groups: ["analysts"] },
    { name: TESS.name, passwordHash: await cheapHash(TESS.password), groups: ["analysts", "trusted"] },
  ];
  const everyTopic = { clusters: ["*"], topics: { allow: ["*"] } };
  rt = await testRuntime({
    users,
    groups: [
      { name: "analysts", roles: ["read"], ...everyTopic },
      { name: "trusted", roles: ["read"], ...everyTopic },
    ],
  });
  topic = await createReadyTopic(rt.kafka.default(), { prefix: "mask29", partitions: 1, track: topics });
  await rt.kafka.default().writes.produce(topic, [record(1), record(2)]);
  for (const p of POLICIES) {
    const res = await rt.request("/api/masking/policies", { method: "POST", role: "admin", body: JSON.stringify(p) });
    expect(res.status).toBe(201);
  }
});
afterAll(async () => {
  await rt.dispose({ topics });
});

const tokens = new Map<string, string>();
async function tokenOf(u: { name: string; password: string }): Promise<string> {
  const cached = tokens.get(u.name);
  if (cached) return cached;
  const res = await rt.request("/api/login", {
    method: "POST",
    headers: { accept: "application/json" },
    body: JSON.stringify({ user: u.name, password: u.password }),
  });
  expect(res.status).toBe(200);
  const token = ((await res.json()) as { token: string }).token;
  tokens.set(u.name, token);
  return token;
}

/** Every base64 string of a JSON answer, decoded: raw bytes must not hold a clear value either. */
function atobAll(text: string): string {
  return [...text.matchAll(/"base64":"([A-Za-z0-9+/=]*)"/g)].map((m) => Buffer.from(m[1]!, "base64").toString("utf8")).join("\n");
}

/** The answer's bytes as text, and the clear values found in it (compared without case). */
function leaks(text: string): string[] {
  const lower = text.toLowerCase();
  return CLEAR.filter((c) => lower.includes(c.toLowerCase()));
}

async function query(sql: string, token: string, stream = false): Promise<{ status: number; text: string }> {
  const res = await rt.request(`/api/sql/data?${new URLSearchParams({ sql })}`, {
    token,
    headers: { accept: stream ? "text/event-stream" : "application/json" },
  });
  return { status: res.status, text: await res.text() };
}

/** Every way the policies' fields can be read: renamed, wrapped in functions, whole, nested, from the key. */
const PROJECTIONS = () => [
  `SELECT * FROM \`${topic}\``,
  `SELECT ssn AS g, UPPERCASE(ssn) AS u, CONCAT('x', card.number, 'y') AS c, SUBSTRING(items[0].token, 1, 40) AS s, email AS e FROM \`${topic}\``,
  `SELECT _value AS v, _key AS k, card AS whole, items, _key.ssn AS ks, LOWERCASE(CAST(_value AS STRING)) AS t FROM \`${topic}\``,
];

describe("data masking", () => {
  test("29: a masked user's SQL answers (JSON and event stream) never hold a clear value, through aliases, functions, _value, _key and nested paths", async () => {
    const mia = await tokenOf(MIA);
    for (const sql of PROJECTIONS()) {
      for (const stream of [false, true]) {
        const { status, text } = await query(sql, mia, stream);
        expect({ sql, stream, status }).toEqual({ sql, stream, status: 200 });
        expect({ sql, stream, leaks: leaks(text) }).toEqual({ sql, stream, leaks: [] });
        // The records came, and the answer names what was masked.
        expect(text).toContain("****");
        expect(text).toContain("maskedFields");
      }
    }
    const star = JSON.parse((await query(`SELECT * FROM \`${topic}\``, mia)).text) as {
      messages: Array<{ key: string; value: string }>;
      maskedFields: string[];
    };
    expect(star.messages).toHaveLength(2);
    const value = JSON.parse(star.messages[0]!.value);
    expect(value).toMatchObject({ n: 1, name: "Ann", ssn: "****", card: { number: "************1111", holder: "Ann" } });
    expect(value).not.toHaveProperty("email");
    expect(value.items[0].token).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.parse(star.messages[0]!.key)).toEqual({ id: 1, ssn: "****" });
    expect(star.maskedFields.sort()).toEqual(["card.number", "email", "items.tok*", "ssn"]);
  });

  test("29: a filter on a masked field is refused with a 400 for a masked user, over HTTP, JDBC and live", async () => {
    const mia = await tokenOf(MIA);
    for (const where of [`ssn = '${SSN}'`, "card.number LIKE '4111%'", "_key.ssn IS NOT NULL", "card.number.x = 1", "LEN(email) > 3"]) {
      const sql = `SELECT n FROM \`${topic}\` WHERE ${where}`;
      for (const stream of [false, true]) {
        const res = await rt.request(`/api/sql/data?${new URLSearchParams({ sql })}`, {
          token: mia,
          headers: { accept: stream ? "text/event-stream" : "application/json" },
        });
        expect({ where, stream, status: res.status }).toEqual({ where, stream, status: 400 });
        expect((await errorOf(res)).message).toContain("masking policy");
      }
    }
    // An unmasked field still filters; the whole value is read masked.
    const ok = await query(`SELECT n FROM \`${topic}\` WHERE n = 2 AND _value LIKE '%${SSN}%'`, mia);
    expect(ok.status).toBe(200);
    expect((JSON.parse(ok.text) as { messages: unknown[] }).messages).toEqual([]);

    const ws = await WsClient.open(
      rt.url,
      `/api/ws/jdbc/data?${new URLSearchParams({ sql: `SELECT n FROM \`${topic}\` WHERE ssn = 'x'` })}`,
      {
        "x-service-token": mia,
      },
    );
    await ws.whenClosed(30_000);
    expect(ws.frames.find((f) => f.startsWith("1"))).toContain("masking policy");
    expect(ws.frames.some((f) => f.startsWith("0"))).toBe(false);

    const live = await LiveClient.open(rt.url, crypto.randomUUID());
    try {
      live.request("SUBSCRIBE", 1, { sqls: [`SELECT * FROM \`${topic}\` WHERE email = 'x'`] }, mia);
      const refused = await live.reply(1);
      expect(refused.type).toBe("ERROR");
      expect(String(refused.content)).toContain("masking policy");
    } finally {
      live.close();
    }
  });

  test("29: the JDBC select websocket and a live subscription never send a masked user a clear value", async () => {
    const mia = await tokenOf(MIA);
    for (const sql of PROJECTIONS()) {
      const ws = await WsClient.open(rt.url, `/api/ws/jdbc/data?${new URLSearchParams({ sql })}`, { "x-service-token": mia });
      await ws.whenClosed(30_000);
      expect(ws.frames.filter((f) => f.startsWith("0"))).toHaveLength(2);
      expect({ sql, leaks: leaks(ws.frames.join("\n")) }).toEqual({ sql, leaks: [] });
    }

    const live = await LiveClient.open(rt.url, crypto.randomUUID());
    try {
      const sqls = PROJECTIONS();
      live.request("SUBSCRIBE", 1, { sqls: [sqls[0], sqls[1]] }, mia);
      expect((await live.reply(1)).type).toBe("SUCCESS");
      live.request("SUBSCRIBE", 2, { sqls: [sqls[2]] }, mia);
      expect((await live.reply(2)).type).toBe("SUCCESS");
      await rt.kafka.default().writes.produce(topic, [record(3)]);
      await live.waitForRecords(3);
      expect(leaks(live.ws.frames.join("\n"))).toEqual([]);
      expect(live.ws.frames.join("\n")).toContain("****");
    } finally {
      live.close();
    }
  });

  test("29: the message browser shows a masked user the masked text and none of the raw bytes; the exception group sees them", async () => {
    const page = (token: string) => rt.request(`/api/topics/${topic}/records?seek=oldest&limit=10`, { token });
    const masked = await page(await tokenOf(MIA));
    expect(masked.status).toBe(200);
    const text = await masked.text();
    expect(leaks(text)).toEqual([]);
    // Nor in the raw bytes' base64 (an empty base64 is said to be masked).
    expect(leaks(atobAll(text))).toEqual([]);
    const body = JSON.parse(text) as { records: Array<{ value: { text: string; base64: string; masked?: boolean } }> };
    expect(body.records.length).toBeGreaterThanOrEqual(2);
    for (const r of body.records) expect(r.value).toMatchObject({ base64: "", masked: true });
    expect(JSON.parse(body.records[0]!.value.text)).toMatchObject({ ssn: "****" });
    const clear = await page(await tokenOf(TESS));
    expect(leaks(await clear.text())).toEqual(CLEAR);
  });

  test("29: an exception group and a user outside the policy's groups and roles see the clear values; a masked role does not", async () => {
    const sql = `SELECT * FROM \`${topic}\` LIMIT 1`;
    for (const token of [await tokenOf(TESS), await rt.token("read")]) {
      const { status, text } = await query(sql, token);
      expect(status).toBe(200);
      expect(leaks(text)).toEqual(CLEAR);
      expect(text).not.toContain("maskedFields");
    }
    // The write role is masked by the REMOVE policy only.
    const wanda = await query(sql, await rt.token("write"));
    expect(leaks(wanda.text)).toEqual([SSN, CARD, TOKEN]);
    expect(JSON.parse(wanda.text).maskedFields).toEqual(["email"]);
    // Nor can it copy the topic through a processor, whose output would be clear (nothing is created).
    topics.push(`${topic}-copy`);
    const processor = await rt.request("/api/streams", {
      method: "POST",
      role: "write",
      headers: { accept: "application/json" },
      body: JSON.stringify({
        name: `copy-${topic}`,
        sql: `SET autocreate = true; INSERT INTO \`${topic}-copy\` SELECT STREAM * FROM \`${topic}\``,
        runners: 0,
      }),
    });
    expect(processor.status).toBe(400);
    expect((await errorOf(processor)).message).toContain("Masking policies hide fields");
  });

  test("29: the policies API refuses bad input with a 4xx, audits each change and never answers or logs the salt", async () => {
    const send = (method: string, path: string, body?: unknown) =>
      rt.request(path, { method, role: "admin", ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const base = { name: "api-29", topics: ["other-*"], fields: ["x"], method: "REDACT", roles: ["read"] };
    const bad: Array<[unknown, string]> = [
      [{ ...base, method: "SHUFFLE" }, "method"],
      [{ ...base, method: "KEEP_LAST_N" }, "keepLast"],
      [{ ...base, keepLast: 4 }, "keepLast"],
      [{ ...base, method: "HASH", replacement: "x" }, "replacement"],
      [{ ...base, roles: [] }, "at least one group or role"],
      [{ ...base, fields: ["a..b"] }, "field pattern"],
      [{ ...base, topics: [] }, "topic"],
      [{ ...base, extra: 1 }, "extra"],
      [{ ...base, name: "no spaces" }, "name"],
    ];
    for (const [body, says] of bad) {
      const res = await send("POST", "/api/masking/policies", body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      const err = await errorOf(res);
      expect(err.message + JSON.stringify(err.details ?? "")).toContain(says);
    }
    expect((await send("POST", "/api/masking/policies", base)).status).toBe(201);
    expect((await send("POST", "/api/masking/policies", base)).status).toBe(409);
    // A change is checked on the policy it makes: KEEP_LAST_N without its count is refused, with it taken.
    expect((await send("PUT", "/api/masking/policies/api-29", { method: "KEEP_LAST_N" })).status).toBe(400);
    const changed = await send("PUT", "/api/masking/policies/api-29", { method: "KEEP_LAST_N", keepLast: 2 });
    expect(changed.status).toBe(200);
    expect(await changed.json()).toMatchObject({ name: "api-29", method: "KEEP_LAST_N", keepLast: 2, replacement: null });
    expect((await send("PUT", "/api/masking/policies/nope-29", { fields: ["y"] })).status).toBe(404);
    expect((await send("DELETE", "/api/masking/policies/api-29")).status).toBe(200);
    expect((await send("GET", "/api/masking/policies/api-29")).status).toBe(404);

    const audit = (await (await send("GET", "/api/audit?type=USER&limit=50")).json()) as Array<{
      change: string;
      content: Record<string, string>;
    }>;
    const ours = audit.filter((e) => e.content.maskingPolicy === "api-29").map((e) => e.change);
    expect(ours).toEqual(["REMOVE", "UPDATE", "ADD"]);

    // The HASH salt is in the store only: in no answer of the API, in no log line.
    const salt = (await rt.store.db.selectFrom("masking_salt").select("salt").executeTakeFirstOrThrow()).salt;
    expect(salt).toMatch(/^[0-9a-f]{64}$/);
    expect(await (await send("GET", "/api/masking/policies")).text()).not.toContain(salt);
    expect(rt.sink.text()).not.toContain(salt);
  });

  test("29: a masked user cannot read the topic as text or bytes: such a SET is refused, and a value that is no structured record is hidden whole", async () => {
    const mia = await tokenOf(MIA);
    for (const set of ["SET value.format = 'STRING';", "SET value.format = 'BYTES';", "SET key.format = 'STRING';"]) {
      const res = await rt.request(`/api/sql/data?${new URLSearchParams({ sql: `${set} SELECT * FROM \`${topic}\`` })}`, { token: mia });
      expect({ set, status: res.status }).toEqual({ set, status: 400 });
      expect((await errorOf(res)).message).toContain("masking policy");
    }
    // Read as JSON, as it is: allowed, and masked.
    const json = await query(`SET value.format = 'JSON'; SELECT * FROM \`${topic}\` LIMIT 1`, mia);
    expect(json.status).toBe(200);
    expect(leaks(json.text)).toEqual([]);
    // A value inference reads as text (as Avro binary without its schema would be): hidden whole.
    await rt.kafka.default().writes.produce(topic, [{ key: "text", value: `ssn ${SSN} card ${CARD}` }]);
    const text = await query(`SELECT * FROM \`${topic}\` WHERE _key = 'text'`, mia);
    expect(leaks(text.text)).toEqual([]);
    expect((JSON.parse(text.text) as { messages: Array<{ value: string }> }).messages.map((m) => m.value)).toEqual(['"****"']);
    const page = await rt.request(`/api/topics/${topic}/records?seek=newest&limit=1`, { token: mia });
    const pageText = await page.text();
    expect(leaks(pageText + atobAll(pageText))).toEqual([]);
  });

  test("29: '_key' masks a plain-text key whole and '_headers.<name>' masks those headers, in SQL answers (JSON, event stream) and the message browser", async () => {
    const kafka = rt.kafka.default();
    const plain = await createReadyTopic(kafka, { prefix: "mask29-plain", partitions: 1, track: topics });
    const HEADER = "auth-SECRET-77";
    await kafka.writes.produce(plain, [
      {
        key: CARD,
        value: JSON.stringify({ n: 1 }),
        headers: [
          ["auth.token", HEADER],
          ["trace", "t-1"],
        ],
      },
    ]);
    const policy = {
      name: `keys-${plain}`,
      topics: [plain],
      fields: ["_key", "_headers.auth.*"],
      method: "KEEP_LAST_N",
      keepLast: 4,
      groups: ["analysts"],
      exceptGroups: ["trusted"],
    };
    expect((await rt.request("/api/masking/policies", { method: "POST", role: "admin", body: JSON.stringify(policy) })).status).toBe(201);
    try {
      const secrets = [CARD, HEADER];
      const found = (text: string) => secrets.filter((c) => text.toLowerCase().includes(c.toLowerCase()));
      const sql = `SELECT * FROM \`${plain}\``;
      const [mia, tess] = [await tokenOf(MIA), await tokenOf(TESS)];
      for (const accept of ["application/json", "text/event-stream"]) {
        const res = await rt.request(`/api/sql/data?${new URLSearchParams({ sql, headers: "true" })}`, { token: mia, headers: { accept } });
        const text = await res.text();
        expect({ accept, status: res.status, leaks: found(text + atobAll(text)) }).toEqual({ accept, status: 200, leaks: [] });
        expect(text).toContain("************1111");
        expect(text).toContain("t-1");
      }
      const page = await (await rt.request(`/api/topics/${plain}/records?seek=newest&limit=5`, { token: mia })).text();
      expect(found(page + atobAll(page))).toEqual([]);
      expect(page).toContain("**********T-77");
      // The exception group sees both.
      const clear = await (await rt.request(`/api/sql/data?${new URLSearchParams({ sql, headers: "true" })}`, { token: tess })).text();
      expect(found(clear)).toEqual(secrets);
      // '_key' takes no path; '_headers' needs a name.
      for (const fields of [["_key.id"], ["_headers"]]) {
        const bad = await rt.request("/api/masking/policies", {
          method: "POST",
          role: "admin",
          body: JSON.stringify({ ...policy, name: "bad", fields }),
        });
        expect({ fields, status: bad.status }).toEqual({ fields, status: 400 });
      }
    } finally {
      await rt.request(`/api/masking/policies/${policy.name}`, { method: "DELETE", role: "admin" });
    }
  });

  test("29: a policy made after a processor pauses it when it masks fields of the source from the owner; the target gets nothing clear after", async () => {
    const kafka = rt.kafka.default();
    const source = await createReadyTopic(kafka, { prefix: "late29", partitions: 1, track: topics });
    const target = `${source}-out`;
    topics.push(target);
    const created = await rt.request("/api/streams", {
      method: "POST",
      role: "write",
      body: JSON.stringify({
        name: `late-${source}`,
        sql: `SET autocreate = true; INSERT INTO \`${target}\` SELECT STREAM n, ssn FROM \`${source}\``,
      }),
    });
    expect(created.status).toBe(200);
    const id = (await created.text()).trim();
    await kafka.writes.produce(source, [record(1)]);
    await waitFor(async () => (await readValues(target)).length === 1, { timeoutMs: 30_000 });

    // The write role now sees `ssn` of these topics masked: the processor would copy it clear.
    const late = { name: `late-${source}`, topics: [`${source}`], fields: ["ssn"], method: "REDACT", roles: ["write"] };
    expect((await rt.request("/api/masking/policies", { method: "POST", role: "admin", body: JSON.stringify(late) })).status).toBe(201);
    const reason = `Paused by Loupe: masking policies hide fields of '${source}' from its owner '${ROLE_USERS.write.name}': it would write them in the clear`;
    await waitFor(async () => (await getProcessor(rt, id)).deploymentErrorMsg === reason, { timeoutMs: 30_000 });
    expect((await getProcessor(rt, id)).deploymentState).toBe("PAUSED");
    // What comes after stays in the source: the target holds the one record copied before.
    await kafka.writes.produce(source, [record(2)]);
    const resumed = await rt.request(`/api/streams/${id}/resume`, { method: "PUT", role: "write" });
    expect(resumed.status).toBeLessThan(500);
    await untilState(rt, id, "PAUSED", 30_000);
    expect((await readValues(target)).length).toBe(1);
    await rt.request(`/api/masking/policies/${late.name}`, { method: "DELETE", role: "admin" });
    await rt.request(`/api/streams/${id}`, { method: "DELETE", role: "admin" });
  });
});

/** The values of every record of `topic`, from the start. */
async function readValues(topic: string): Promise<string[]> {
  const res = await rt.request(`/api/sql/data?${new URLSearchParams({ sql: `SELECT * FROM \`${topic}\`` })}`, { role: "admin" });
  if (res.status !== 200) return [];
  return ((await res.json()) as { messages: Array<{ value: string }> }).messages.map((m) => m.value);
}
