import type { ClusterConfig, Config } from "../../config/schema.ts";
import type { ClientConfig, License } from "./schemas.ts";

/**
 * What `GET /api/config` answers: the settings the real clients read, under the literal
 * `lenses.*` keys and with exactly the JSON types they decode (CLIENTS.md 5.1). The Go client
 * decodes the whole object into a typed struct, so a key is left out rather than given a value
 * of another type; the keys Loupe has nothing for (JMX, Kubernetes, the product's own topics)
 * are left out. Built from a closed list of fields: no secret of the config can reach it.
 */
export type { ClientConfig, License };

/**
 * Loupe needs no license. The answer reads as valid and unlimited: the limits are 2^31-1, the
 * largest int32, which the Go CLI's table printer still scales (it panics above 10^15), and the expiry is the last millisecond of
 * 2199, far enough to be "never" and near enough that every client can turn it into a date
 * (Go's nanosecond time ends in 2262, Python's datetime in 9999).
 */
export const LICENSE: Readonly<License> = Object.freeze({
  clientId: "loupe",
  isRespected: true,
  maxBrokers: 2147483647,
  maxMessages: 2147483647,
  expiry: Date.UTC(2199, 11, 31, 23, 59, 59, 999),
});

/** Kafka's name for how a client connects, as bootstrap strings write it (`SASL_SSL://host:port`). */
function securityProtocol(cluster: ClusterConfig): string {
  const tls = cluster.tls?.enabled === true;
  if (cluster.sasl) return tls ? "SASL_SSL" : "SASL_PLAINTEXT";
  return tls ? "SSL" : "PLAINTEXT";
}

/**
 * A URL as clients may see it: without user info, query or fragment, where credentials and
 * API keys are put.
 */
export function publicUrl(raw: string): string {
  try {
    const u = new URL(raw);
    u.username = "";
    u.password = "";
    u.search = "";
    u.hash = "";
    return u.toString().replace(/\/$/, "");
  } catch {
    return "";
  }
}

const urlEntries = (urls: string[]) =>
  urls
    .map(publicUrl)
    .filter(Boolean)
    .map((url) => ({ url, jmx: "" }));

export class ServerInfoService {
  constructor(
    private readonly config: Config,
    private readonly version: string,
  ) {}

  /** The settings of `cluster` (the request's), and the port Loupe really listens on when known. */
  clientConfig(cluster: string, listeningPort?: number): ClientConfig {
    const c = this.config.kafka.clusters.find((x) => x.name === cluster) ?? this.config.kafka.clusters[0]!;
    const protocol = securityProtocol(c);
    return {
      "lenses.version": this.version,
      "lenses.ip": this.config.server.host,
      "lenses.port": listeningPort ?? this.config.server.port,
      "lenses.kafka.brokers": c.bootstrapServers.map((b) => `${protocol}://${b}`).join(","),
      // How users log in: passwords of Loupe's own users, and the directory's when one is set.
      "lenses.security.mode": this.config.ldap ? "LDAP" : "BASIC",
      // Queries run inside Loupe.
      "lenses.sql.execution.mode": "IN_PROC",
      "lenses.schema.registry.urls": urlEntries(this.config.schemaRegistry?.urls ?? []),
      // Loupe talks to Kafka only, never to ZooKeeper.
      "lenses.zookeeper.hosts": [],
      // The aliases of the Connect proxy (`/api/proxy-connect/{alias}`) and their workers.
      "lenses.connect.clusters": this.config.connect.clusters.map((k) => ({
        name: k.alias,
        urls: urlEntries(k.urls),
        statuses: k.topics.statuses,
        configs: k.topics.configs,
        offsets: k.topics.offsets,
      })),
    };
  }

  license(): License {
    return { ...LICENSE };
  }
}
