/**
 * The cluster tool's secured broker (kafka-secure): Loupe's Kafka client authenticates on each
 * listener, the authorizer lets the super user do anything and the test users nothing, and
 * wrong credentials or certificates are refused by the broker itself.
 */

import { afterAll, describe, expect, test } from "bun:test";
import { createKafkaPool, type KafkaClusterConfig, type KafkaPool } from "../../src/kafka/index.ts";
import { secureKafkaEnv, uniqueTopic } from "./cluster.ts";

const env = secureKafkaEnv();
const pools: KafkaPool[] = [];
afterAll(async () => {
  for (const p of pools) await p.close();
});

function cluster(cfg: Partial<KafkaClusterConfig> & Pick<KafkaClusterConfig, "bootstrapServers">) {
  const pool = createKafkaPool([{ name: "secure", clientId: "loupe-test", default: true, connectTimeoutMs: 3_000, ...cfg }]);
  pools.push(pool);
  return pool.default();
}

const scram = (username: string, password: string) =>
  cluster({
    bootstrapServers: [env.saslBootstrap],
    sasl: { mechanism: "SCRAM-SHA-512", username, password },
    tls: { enabled: true, ca: env.caFile },
  });

const mtls = (cert: string, key: string) =>
  cluster({ bootstrapServers: [env.mtlsBootstrap], tls: { enabled: true, ca: env.caFile, cert, key } });

describe("the secured broker", () => {
  test("the super user creates, lists and deletes a topic over SCRAM-SHA-512 and over mutual TLS", async () => {
    const admin = scram(env.admin.user, env.admin.password);
    const name = uniqueTopic("secure-tool");
    await admin.topics.create({ name, partitions: 1, replication: 1 });
    const overMtls = mtls(env.admin.certFile, env.admin.keyFile);
    expect((await overMtls.topics.list()).map((t) => t.name)).toContain(name);
    await overMtls.topics.delete(name);
  });

  test("a user without ACLs authenticates on both listeners and is denied", async () => {
    const [user, password] = Object.entries(env.users)[0]!;
    expect(user).toBe("alice");
    const alice = scram(user, password);
    expect((await alice.health()).connected).toBe(true);
    const denied = await alice.topics.create({ name: uniqueTopic("secure-denied"), partitions: 1, replication: 1 }).catch((e) => e);
    expect(denied.code).toBe("FORBIDDEN");
    const aliceCert = mtls(env.userCert.certFile, env.userCert.keyFile);
    expect((await aliceCert.health()).connected).toBe(true);
    // Describing topics she may not see lists none of them.
    expect(await aliceCert.topics.list()).toEqual([]);
  });

  test("a wrong password and a certificate of another CA are refused", async () => {
    const wrong = await scram(env.admin.user, "not-the-password").health();
    expect(wrong.connected).toBe(false);
    const untrusted = await mtls(env.untrusted.certFile, env.untrusted.keyFile).health();
    expect(untrusted.connected).toBe(false);
  });
});
