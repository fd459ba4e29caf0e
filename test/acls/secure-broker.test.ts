/**
 * Issue 25's ACLs on the secured broker (the cluster tool's kafka-secure: StandardAuthorizer,
 * allow.everyone.if.no.acl.found=false). Loupe connects as its super user over SCRAM-SHA-512
 * and TLS and changes ACLs through `/api/acl`; real clients are allowed or denied by them:
 * Loupe's own Kafka client logged in as alice or bob over SCRAM (reading and writing records
 * through a Loupe of their own), and kcat (librdkafka) as alice over mutual TLS. `explain` is
 * checked against what the broker does.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { secureKafkaEnv, uniqueTopic } from "../cluster/cluster.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { secureClusterSettings } from "../helpers/secure-kafka.ts";
import { waitFor } from "../helpers/wait.ts";

const env = secureKafkaEnv();
/** The secured broker's super users (test/cluster/cluster.ts): its own certificate's CN and Loupe's account. */
const SUPER_USERS = ["User:broker", `User:${env.admin.user}`];

let admin: TestRuntime;
const as: Record<"alice" | "bob", TestRuntime> = {} as Record<"alice" | "bob", TestRuntime>;
const topics: string[] = [];
const bindings: Array<Record<string, string>> = [];

beforeAll(async () => {
  admin = await testRuntime({
    kafka: {
      clusters: [{ ...secureClusterSettings(), authorizer: { superUsers: SUPER_USERS, allowEveryoneIfNoAclFound: false } }],
    },
  });
  for (const user of ["alice", "bob"] as const) as[user] = await testRuntime({ kafka: { clusters: [secureClusterSettings({ user })] } });
});
afterAll(async () => {
  for (const b of bindings) await admin.request("/api/acl", { method: "DELETE", role: "admin", body: JSON.stringify(b) }).catch(() => {});
  for (const user of ["alice", "bob"] as const) await as[user]?.dispose();
  await admin.dispose({ topics });
});

/** A topic with three records, made by Loupe as the super user. */
async function newTopic(prefix: string): Promise<string> {
  const name = uniqueTopic(prefix);
  topics.push(name);
  const res = await admin.request("/api/topics", {
    method: "POST",
    role: "admin",
    body: JSON.stringify({ topicName: name, partitions: 1 }),
  });
  expect(res.status).toBe(201);
  await admin.kafka.default().writes.produce(
    name,
    ["one", "two", "three"].map((v) => ({ key: v, value: v })),
  );
  return name;
}

const acl = (b: Record<string, string>) => ({ permissionType: "Allow", host: "*", resourceType: "Topic", ...b });

async function put(b: Record<string, string>): Promise<void> {
  bindings.push(b);
  const res = await admin.request("/api/acl", { method: "PUT", role: "admin", body: JSON.stringify(b) });
  expect(res.status).toBe(200);
}
async function remove(b: Record<string, string>): Promise<void> {
  const res = await admin.request("/api/acl", { method: "DELETE", role: "admin", body: JSON.stringify(b) });
  expect(res.status).toBe(200);
}

interface Explained {
  allowed: boolean | null;
  reason: string;
  deciding: Array<Record<string, string>>;
  caveats: string[];
}
async function explain(principal: string, topic: string, operation: string, host?: string): Promise<Explained> {
  const q = new URLSearchParams({ principal, resourceType: "Topic", resourceName: topic, operation, ...(host ? { host } : {}) });
  const res = await admin.request(`/api/acl/explain?${q}`, { role: "nodata" });
  expect(res.status).toBe(200);
  return (await res.json()) as Explained;
}

/** Reads the topic's records as the user, through a Loupe logged in to the broker as that user. */
async function readAs(user: "alice" | "bob", topic: string): Promise<{ allowed: boolean; detail: string }> {
  const res = await as[user].request(`/api/topics/${topic}/records?seek=oldest&limit=10`, { role: "read" });
  if (res.status === 200) {
    const values = ((await res.json()) as { records: Array<{ value: { text: string } | null }> }).records.map((r) => r.value?.text);
    return { allowed: true, detail: values.join(",") };
  }
  return { allowed: false, detail: `${res.status} ${(await errorOf(res)).message}` };
}

/** Writes one record to the topic as the user, through a Loupe logged in as that user. */
async function writeAs(user: "alice" | "bob", topic: string): Promise<{ allowed: boolean; detail: string }> {
  const res = await as[user].request(`/api/topics/${topic}/records`, {
    method: "POST",
    role: "write",
    body: JSON.stringify({ records: [{ key: "k", value: JSON.stringify({ from: user }) }] }),
  });
  return { allowed: res.status === 200, detail: res.status === 200 ? "written" : `${res.status} ${(await errorOf(res)).message}` };
}

/** kcat (librdkafka) as alice over mutual TLS (her certificate's CN is alice): reads the topic to its end. */
function kcatReadAsAlice(topic: string): { allowed: boolean; detail: string } {
  const p = Bun.spawnSync(
    [
      "kcat",
      "-b",
      env.mtlsBootstrap,
      "-X",
      "security.protocol=SSL",
      "-X",
      `ssl.ca.location=${env.caFile}`,
      "-X",
      `ssl.certificate.location=${env.userCert.certFile}`,
      "-X",
      `ssl.key.location=${env.userCert.keyFile}`,
      "-m",
      "10",
      "-C",
      "-t",
      topic,
      "-o",
      "beginning",
      "-e",
      "-q",
      "-f",
      "%s\\n",
    ],
    { timeout: 30_000 },
  );
  const out = p.stdout.toString().trim();
  return { allowed: p.exitCode === 0 && out === "one\ntwo\nthree", detail: `exit ${p.exitCode}: ${out} ${p.stderr.toString().trim()}` };
}

/**
 * What the broker does, polled until it is `want` (an ACL change reaches the broker's
 * authorizer a moment after it is committed): fails with the last answer when it never is.
 */
async function brokerSays(
  want: boolean,
  attempt: () => Promise<{ allowed: boolean; detail: string }> | { allowed: boolean; detail: string },
) {
  let last = { allowed: !want, detail: "" };
  await waitFor(
    async () => {
      last = await attempt();
      return last.allowed === want;
    },
    { timeoutMs: 15_000, intervalMs: 250, what: `the broker to ${want ? "allow" : "deny"}` },
  ).catch(() => {
    throw new Error(`the broker did not ${want ? "allow" : "deny"}: ${last.detail}`);
  });
  return last;
}

describe("ACLs set through Loupe on the secured broker", () => {
  test("a user denied reading a topic is allowed after PUT /api/acl and denied again after DELETE (Loupe's client over SCRAM, kcat over mTLS)", async () => {
    const topic = await newTopic("acl-read");
    const read = acl({ resourceName: topic, principal: "User:alice", operation: "READ" });

    const before = await brokerSays(false, () => readAs("alice", topic));
    console.error(`[25] alice reads ${topic} without an ACL: ${before.detail}`);
    // Without Describe (which Read implies) the broker does not even show her the topic.
    expect(before.detail).toMatch(/^404 .*does not exist/);
    expect(kcatReadAsAlice(topic).allowed).toBe(false);

    await put(read);
    expect((await brokerSays(true, () => readAs("alice", topic))).detail).toBe("one,two,three");
    expect((await brokerSays(true, () => kcatReadAsAlice(topic))).allowed).toBe(true);
    // Only alice: bob is still denied.
    expect((await readAs("bob", topic)).allowed).toBe(false);

    await remove(read);
    const after = await brokerSays(false, () => readAs("alice", topic));
    console.error(`[25] alice reads ${topic} after DELETE: ${after.detail}`);
    await brokerSays(false, () => kcatReadAsAlice(topic));
  }, 90_000);

  test("a PREFIXED ACL covers a topic created after it", async () => {
    const prefix = `${uniqueTopic("acl-pfx")}-`;
    await put(acl({ resourceName: prefix, patternType: "PREFIXED", principal: "User:bob", operation: "Read" }));
    const later = await newTopic(prefix);
    expect(later.startsWith(prefix)).toBe(true);
    expect((await brokerSays(true, () => readAs("bob", later))).detail).toBe("one,two,three");
    expect(await explain("User:bob", later, "Read")).toMatchObject({
      allowed: true,
      reason: "ALLOW_ACL",
      deciding: [{ resourceName: prefix, patternType: "PREFIXED", principal: "User:bob" }],
    });
    // Not alice's: she is denied.
    expect((await readAs("alice", later)).allowed).toBe(false);
  }, 90_000);

  test("explain agrees with what the broker does, DENY cases among them", async () => {
    const prefix = `${uniqueTopic("acl-x")}-`;
    const t1 = await newTopic(`${prefix}a`);
    const t2 = await newTopic(`${prefix}b`);
    // Every user may read the prefix's topics, bob may not read t1, alice may write to t2 only.
    await put(acl({ resourceName: prefix, patternType: "PREFIXED", principal: "User:*", operation: "Read" }));
    await put(acl({ resourceName: t1, principal: "User:bob", operation: "Read", permissionType: "Deny" }));
    await put(acl({ resourceName: t2, principal: "User:alice", operation: "Write" }));

    const cases: Array<[string, "alice" | "bob", string, "Read" | "Write", boolean, string]> = [
      ["User:* by prefix", "alice", t1, "Read", true, "ALLOW_ACL"],
      ["a literal DENY beats the wildcard ALLOW", "bob", t1, "Read", false, "DENY_ACL"],
      ["the DENY is for t1 only", "bob", t2, "Read", true, "ALLOW_ACL"],
      ["nothing allows writing t1", "alice", t1, "Write", false, "NO_MATCHING_ACL"],
      ["a literal ALLOW of Write", "alice", t2, "Write", true, "ALLOW_ACL"],
      ["Write is alice's, not bob's", "bob", t2, "Write", false, "NO_MATCHING_ACL"],
    ];
    const seen: string[] = [];
    for (const [what, user, topic, operation, allowed, reason] of cases) {
      const answer = await explain(`User:${user}`, topic, operation);
      expect({ what, allowed: answer.allowed, reason: answer.reason }).toEqual({ what, allowed, reason });
      // The configured super users and default leave nothing unknown.
      expect(answer.caveats).toEqual([]);
      const broker = await brokerSays(allowed, () => (operation === "Read" ? readAs(user, topic) : writeAs(user, topic)));
      seen.push(`${what}: explain ${answer.allowed ? "allowed" : "denied"} (${answer.reason}), the broker ${broker.detail}`);
    }

    // Bindings for a host count for clients from that address (the users connect from 127.0.0.1).
    const t3 = await newTopic("acl-host");
    await put(acl({ resourceName: t3, principal: "User:alice", operation: "Read", host: "127.0.0.2" }));
    const elsewhere = await explain("User:alice", t3, "Read", "127.0.0.1");
    expect({ allowed: elsewhere.allowed, reason: elsewhere.reason }).toEqual({ allowed: false, reason: "NO_MATCHING_ACL" });
    seen.push(`an ALLOW for another host: explain denied, the broker ${(await brokerSays(false, () => readAs("alice", t3))).detail}`);
    await put(acl({ resourceName: t3, principal: "User:alice", operation: "Read", host: "127.0.0.1" }));
    const here = await explain("User:alice", t3, "Read", "127.0.0.1");
    expect({ allowed: here.allowed, reason: here.reason }).toEqual({ allowed: true, reason: "ALLOW_ACL" });
    seen.push(`an ALLOW for the client's host: explain allowed, the broker ${(await brokerSays(true, () => readAs("alice", t3))).detail}`);
    console.error(`[25] explain against the broker:\n  ${seen.join("\n  ")}`);

    // A DENY wins over the super user? No: super users skip the ACLs; Loupe's own reads show it.
    await put(acl({ resourceName: t2, principal: `User:${env.admin.user}`, operation: "All", permissionType: "Deny" }));
    expect(await explain(`User:${env.admin.user}`, t2, "Read")).toMatchObject({ allowed: true, reason: "SUPER_USER" });
    const res = await admin.request(`/api/topics/${t2}/records?seek=oldest&limit=10`, { role: "read" });
    expect(res.status).toBe(200);
  }, 120_000);

  test("what Loupe can know of the broker's settings unconfigured: super.users and allow.everyone.if.no.acl.found are set but hidden", async () => {
    const bare = await testRuntime({ kafka: { clusters: [secureClusterSettings()] } });
    try {
      const q = new URLSearchParams({
        principal: "User:alice",
        resourceType: "Topic",
        resourceName: uniqueTopic("acl-unknown"),
        operation: "Read",
      });
      const res = await bare.request(`/api/acl/explain?${q}`, { role: "nodata" });
      expect(res.status).toBe(200);
      const answer = (await res.json()) as Explained;
      expect(answer).toMatchObject({ allowed: null, reason: "NO_MATCHING_ACL" });
      expect(answer.caveats.join("\n")).toContain("super.users");
      expect(answer.caveats.join("\n")).toContain("allow.everyone.if.no.acl.found");
    } finally {
      await bare.dispose();
    }
  });
});
