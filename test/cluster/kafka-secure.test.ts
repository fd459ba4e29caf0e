/**
 * The cluster tool's secured broker (kafka-secure): Loupe's Kafka client authenticates on each
 * listener, the authorizer lets the super user do anything and the test users nothing, and
 * wrong credentials or certificates are refused by the broker itself.
 */

import { afterAll, describe, expect, test } from "bun:test";
import { type SecureClusterOptions, secureKafka } from "../helpers/secure-kafka.ts";
import { secureKafkaEnv, uniqueTopic } from "./cluster.ts";

const env = secureKafkaEnv();
const closing: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const close of closing) await close();
});

function client(opts: SecureClusterOptions) {
  const c = secureKafka(opts);
  closing.push(c.close);
  return c.kafka;
}

describe("the secured broker", () => {
  test("the super user creates, lists and deletes a topic over SCRAM-SHA-512 and over mutual TLS", async () => {
    const name = uniqueTopic("secure-tool");
    await client({}).topics.create({ name, partitions: 1, replication: 1 });
    const overMtls = client({ via: "mtls" });
    expect((await overMtls.topics.list()).map((t) => t.name)).toContain(name);
    await overMtls.topics.delete(name);
  });

  test("a user without ACLs authenticates on both listeners and is denied", async () => {
    expect(Object.keys(env.users)).toEqual(["alice", "bob"]);
    // Other tests may allow alice things on their own topics: this one's names are its own.
    const name = uniqueTopic("secure-denied");
    const admin = client({});
    await admin.topics.create({ name, partitions: 1, replication: 1 });
    try {
      const alice = client({ user: "alice" });
      expect((await alice.health()).connected).toBe(true);
      const denied = await alice.topics.create({ name: uniqueTopic("secure-denied"), partitions: 1, replication: 1 }).catch((e) => e);
      expect(denied.code).toBe("FORBIDDEN");
      const aliceCert = client({ via: "mtls", cert: env.userCert });
      expect((await aliceCert.health()).connected).toBe(true);
      // A topic she may not describe is not listed to her.
      expect((await aliceCert.topics.list()).map((t) => t.name)).not.toContain(name);
      expect((await alice.topics.list()).map((t) => t.name)).not.toContain(name);
    } finally {
      await admin.topics.delete(name);
    }
  });

  test("a wrong password and a certificate of another CA are refused", async () => {
    expect((await client({ password: "not-the-password" }).health()).connected).toBe(false);
    expect((await client({ via: "mtls", cert: env.untrusted }).health()).connected).toBe(false);
  });
});
