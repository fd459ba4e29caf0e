/**
 * One Kafka cluster as Loupe uses it, with domain types and AppErrors. Each concern lives in
 * its own file over the cluster's shared connection (connection.ts) and is reached through
 * its property: `cluster.topics.describe(...)`, `cluster.offsets.list(...)`. Connections open
 * on first use: creating a KafkaCluster (or the pool) touches no network, so Loupe starts
 * while a cluster is down.
 */

import { AclOps } from "./acls.ts";
import { ConfigOps } from "./configs.ts";
import { KafkaConnection } from "./connection.ts";
import { describeCluster } from "./describe-cluster.ts";
import { GroupOps } from "./groups.ts";
import { LogDirOps } from "./log-dirs.ts";
import { OffsetOps } from "./offsets.ts";
import { ProcessingOps } from "./processing.ts";
import { WriteOps } from "./produce.ts";
import { describeQuorum } from "./quorum.ts";
import { QuotaOps } from "./quotas.ts";
import { ReadOps } from "./reads.ts";
import { ScramOps } from "./scram.ts";
import { ShareGroupOps } from "./share-groups.ts";
import { TopicOps } from "./topics.ts";
import type { ClusterDescription, ClusterState, ClusterStats, Health, KafkaClusterConfig, QuorumState } from "./types.ts";

export class KafkaCluster {
  readonly name: string;
  readonly config: KafkaClusterConfig;
  readonly topics: TopicOps;
  readonly configs: ConfigOps;
  readonly offsets: OffsetOps;
  readonly groups: GroupOps;
  /** Kafka 4 share groups (KIP-932). */
  readonly shareGroups: ShareGroupOps;
  readonly reads: ReadOps;
  readonly writes: WriteOps;
  readonly acls: AclOps;
  readonly quotas: QuotaOps;
  /** SCRAM credentials of the cluster's users. */
  readonly scram: ScramOps;
  readonly logDirs: LogDirOps;
  /** Group membership and transactions, for stream processors. */
  readonly processing: ProcessingOps;
  readonly #conn: KafkaConnection;

  constructor(config: KafkaClusterConfig) {
    this.name = config.name;
    this.config = config;
    const conn = new KafkaConnection(config);
    this.#conn = conn;
    this.topics = new TopicOps(conn);
    this.configs = new ConfigOps(conn);
    this.offsets = new OffsetOps(conn, this.topics);
    this.groups = new GroupOps(conn);
    this.shareGroups = new ShareGroupOps(conn, this.offsets);
    this.reads = new ReadOps(conn);
    this.writes = new WriteOps(conn);
    this.acls = new AclOps(conn);
    this.quotas = new QuotaOps(conn);
    this.scram = new ScramOps(conn);
    this.logDirs = new LogDirOps(conn);
    this.processing = new ProcessingOps(conn);
  }

  // -------------------------------------------------------------------------------------------
  // The cluster as a whole

  /** Requests sent to this cluster so far, by every connection Loupe opened to it. */
  requestCount(): number {
    return this.#conn.requestCount();
  }

  /** Round trip of the last answered request in ms; null before the first. */
  get lastRoundTripMs(): number | null {
    return this.#conn.lastRoundTripMs;
  }

  stats(): ClusterStats {
    return this.#conn.stats();
  }

  /** One cheap Metadata round trip; never throws. */
  health(timeoutMs?: number): Promise<Health> {
    return this.#conn.health(timeoutMs);
  }

  /** The brokers and the controller Metadata names (a Metadata request of no topic). */
  brokers(): Promise<ClusterDescription> {
    return this.#conn.call("Cannot describe the brokers", async () => {
      const md = await this.#conn.metadata([]);
      return {
        clusterId: md.clusterId ?? null,
        controllerId: md.controllerId,
        brokers: md.brokers.map((b) => ({ id: b.nodeId, host: b.host, port: b.port, rack: b.rack ?? null })).sort((a, b) => a.id - b.id),
      };
    });
  }

  /** The KRaft controller quorum (DescribeQuorum); null for a cluster without one (ZooKeeper). */
  quorum(): Promise<QuorumState | null> {
    return describeQuorum(this.#conn);
  }

  /** Brokers, controller, counts and unhealthy partitions, from one Metadata request (of the `visible` topics when given). */
  describe(isInternal?: (topic: string) => boolean, visible?: ((topic: string) => boolean) | null): Promise<ClusterState> {
    return describeCluster(this.#conn, isInternal, visible);
  }

  /** Whether the brokers speak the named Kafka API ("DeleteRecords" needs 0.11 or later). */
  supportsApi(apiName: string): Promise<boolean> {
    return this.#conn.supportsApi(apiName);
  }

  close(): Promise<void> {
    return this.#conn.close();
  }
}
