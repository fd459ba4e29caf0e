/**
 * The secured broker (the cluster tool's kafka-secure service, see secureKafkaEnv) from tests:
 * Loupe's cluster settings for it, and Loupe's Kafka client logged in as any of its users, for
 * tests that need a real client the broker allows or denies.
 */

import { createKafkaPool, type KafkaCluster, type KafkaClusterConfig } from "../../src/kafka/index.ts";
import { secureKafkaEnv } from "../cluster/cluster.ts";

export interface SecureClusterOptions {
  /** SCRAM-SHA-512 over TLS (default) or mutual TLS. */
  via?: "scram" | "mtls";
  /** SCRAM: the user and password (default Loupe's admin, a super user). */
  user?: string;
  password?: string;
  /** mTLS: the client certificate and key (default the admin's); `null` offers none. */
  cert?: { certFile: string; keyFile: string } | null;
  /** The CA Loupe trusts (default the one that signed the broker's certificate). */
  ca?: string;
  /** Another `host:port` to bootstrap from (default the listener's own address). */
  bootstrap?: string;
  /** The cluster's name in Loupe (default "secured"). */
  name?: string;
}

/** A `kafka.clusters[]` entry of Loupe's configuration for the secured broker (default cluster). */
export function secureClusterSettings(opts: SecureClusterOptions = {}): KafkaClusterConfig {
  const env = secureKafkaEnv();
  const ca = opts.ca ?? env.caFile;
  const base = { name: opts.name ?? "secured", clientId: "loupe-test", default: true };
  if (opts.via === "mtls") {
    const cert = opts.cert === undefined ? env.admin : opts.cert;
    return {
      ...base,
      bootstrapServers: [opts.bootstrap ?? env.mtlsBootstrap],
      tls: { enabled: true, ca, ...(cert ? { cert: cert.certFile, key: cert.keyFile } : {}) },
    };
  }
  const user = opts.user ?? env.admin.user;
  const password = opts.password ?? (user === env.admin.user ? env.admin.password : env.users[user]);
  if (password === undefined) throw new Error(`the secured broker has no user '${user}' (users: ${Object.keys(env.users).join(", ")})`);
  return {
    ...base,
    bootstrapServers: [opts.bootstrap ?? env.saslBootstrap],
    sasl: { mechanism: "SCRAM-SHA-512", username: user, password },
    tls: { enabled: true, ca },
  };
}

/** Loupe's Kafka client on the secured broker as `opts` says (by default the admin over SCRAM); close it after. */
export function secureKafka(opts: SecureClusterOptions = {}): { kafka: KafkaCluster; close(): Promise<void> } {
  const pool = createKafkaPool([{ ...secureClusterSettings(opts), connectTimeoutMs: 3_000 }]);
  return { kafka: pool.default(), close: () => pool.close() };
}
