/**
 * The domain types of src/kafka: what the rest of Loupe sees of a Kafka cluster. No type of
 * the Kafka client appears here, so the client can change without touching services.
 *
 * Offsets and timestamps are plain numbers: Kafka's int64 offsets stay far below 2^53 in
 * practice, and numbers serialise to JSON as they are.
 */

import type { AppError } from "../errors.ts";

export interface KafkaClusterConfig {
  name: string;
  bootstrapServers: string[];
  clientId: string;
  /** The cluster `pool.default()` returns; else the first. */
  default?: boolean;
  sasl?: { mechanism: "PLAIN" | "SCRAM-SHA-256" | "SCRAM-SHA-512"; username: string; password: string };
  /** ca, cert, key: PEM text, or the path of a PEM file. */
  tls?: { enabled: boolean; ca?: string; cert?: string; key?: string; rejectUnauthorized?: boolean };
  /** Connect timeout per broker (default 5 s) and per request (default 30 s). */
  connectTimeoutMs?: number;
  requestTimeoutMs?: number;
}

export interface Health {
  connected: boolean;
  brokers: number;
  controllerId: number | null;
  latencyMs: number;
  error?: string;
}

export interface BrokerInfo {
  id: number;
  host: string;
  port: number;
  rack: string | null;
}

/** A broker's log dirs (DescribeLogDirs). */
export interface BrokerLogDirs {
  brokerId: number;
  dirs: Array<{
    path: string;
    /** Bytes of the partition replicas held there (future replicas of a move included). */
    bytes: number;
    partitions: number;
    /** The disk's size and free space; null when the broker does not say (before Kafka 3.3). */
    totalBytes: number | null;
    usableBytes: number | null;
    /** null when the dir is online. */
    error: string | null;
  }>;
}

/** One replica of the KRaft metadata log, as the active controller sees it. */
export interface QuorumReplica {
  id: number;
  logEndOffset: number;
  /** Records behind the quorum's high watermark (0: caught up). */
  lag: number;
  /** Epoch ms; null when the controller does not know (yet). */
  lastFetchTimestamp: number | null;
  lastCaughtUpTimestamp: number | null;
}

/** The KRaft controller quorum: its leader (the active controller), epoch and replicas. */
export interface QuorumState {
  leaderId: number;
  leaderEpoch: number;
  highWatermark: number;
  voters: QuorumReplica[];
  /** Brokers (and controllers not voting) that follow the metadata log. */
  observers: QuorumReplica[];
}

export interface ClusterDescription {
  clusterId: string | null;
  controllerId: number;
  brokers: BrokerInfo[];
}

/** A partition as the cluster's health sees it: where it is led and which replicas keep up. */
export interface PartitionHealth {
  topic: string;
  partition: number;
  /** -1 when the partition has no leader (offline). */
  leader: number;
  replicas: number[];
  isr: number[];
  offlineReplicas: number[];
}

/** The cluster as a whole, from one Metadata answer (describe-cluster.ts). */
export interface ClusterState extends ClusterDescription {
  /** Each broker with the partitions it leads and the replicas it holds. */
  brokers: Array<BrokerInfo & { leaders: number; replicas: number }>;
  /** Topics, internal ones apart; partitions of every topic, internal ones included. */
  topics: number;
  internalTopics: number;
  partitions: number;
  /** Partitions with fewer in-sync replicas than replicas, by topic and partition. */
  underReplicated: PartitionHealth[];
  /** Partitions without a leader, by topic and partition. */
  offline: PartitionHealth[];
  /**
   * Per broker listed, the partitions of more than one replica whose preferred leader (first
   * replica) it is, and how many of those it leads: Kafka's own measure of leader imbalance.
   */
  preferredLeaders: Array<{ broker: number; preferred: number; led: number }>;
}

export interface TopicSummary {
  name: string;
  topicId: string;
  internal: boolean;
  partitions: number;
  /** Replicas of partition 0; -1 for a topic without partitions. */
  replicationFactor: number;
}

export interface PartitionInfo {
  partition: number;
  /** -1 when the partition has no leader. */
  leader: number;
  leaderEpoch: number;
  replicas: number[];
  isr: number[];
  offlineReplicas: number[];
}

export interface TopicDescription extends TopicSummary {
  partitionDetails: PartitionInfo[];
}

export interface CreateTopicRequest {
  name: string;
  /** Broker default (num.partitions) when absent. */
  partitions?: number;
  /** Broker default (default.replication.factor) when absent. */
  replication?: number;
  configs?: Record<string, string>;
  validateOnly?: boolean;
}

export interface CreatedTopic {
  name: string;
  topicId: string;
  partitions: number;
  replication: number;
  configs: Record<string, string | null>;
}

export type ConfigSource =
  | "DYNAMIC_TOPIC_CONFIG"
  | "DYNAMIC_BROKER_CONFIG"
  | "DYNAMIC_DEFAULT_BROKER_CONFIG"
  | "STATIC_BROKER_CONFIG"
  | "DEFAULT_CONFIG"
  | "DYNAMIC_BROKER_LOGGER_CONFIG"
  | "CLIENT_METRICS_CONFIG"
  | "GROUP_CONFIG"
  | "UNKNOWN";

export type ConfigType = "BOOLEAN" | "STRING" | "INT" | "SHORT" | "LONG" | "DOUBLE" | "LIST" | "CLASS" | "PASSWORD" | "UNKNOWN";

export interface ConfigEntry {
  name: string;
  /** null for sensitive values and for unset values without default. */
  value: string | null;
  /** The value the topic would have without its own override: the next synonym down. */
  defaultValue: string | null;
  isDefault: boolean;
  source: ConfigSource;
  type: ConfigType;
  readOnly: boolean;
  sensitive: boolean;
  documentation: string | null;
  /** Where the value comes from, most specific first (the entry's own source included). */
  synonyms: Array<{ name: string; value: string | null; source: ConfigSource }>;
}

export interface AlterConfigOp {
  key: string;
  /** null deletes the override (back to the default). */
  value: string | null;
  /** SET (default) or DELETE; APPEND and SUBTRACT for list configs. */
  op?: "SET" | "DELETE" | "APPEND" | "SUBTRACT";
}

export type OffsetSpec = "earliest" | "latest" | number;

export interface TopicPartitionRef {
  topic: string;
  partition: number;
}

export interface ListedOffset extends TopicPartitionRef {
  offset: number;
  /** The record's timestamp for a timestamp lookup; -1 otherwise or when not found. */
  timestamp: number;
}

export interface DeletedRecords {
  topic: string;
  partition: number;
  lowWatermark: number;
}

export type GroupState =
  | "Unknown"
  | "PreparingRebalance"
  | "CompletingRebalance"
  | "Stable"
  | "Dead"
  | "Empty"
  | "Assigning"
  | "Reconciling"
  | "NotReady";

export interface GroupSummary {
  groupId: string;
  state: GroupState;
  /** "classic", "consumer", "share", "streams"; null when the broker does not say. */
  type: string | null;
  protocolType: string;
}

export interface GroupMemberInfo {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  host: string;
  assignments: TopicPartitionRef[];
}

export interface GroupDescription {
  groupId: string;
  state: GroupState;
  protocolType: string;
  protocol: string;
  members: GroupMemberInfo[];
}

export interface CommittedOffset extends TopicPartitionRef {
  offset: number;
  metadata: string | null;
}

export interface ProduceRecord {
  key?: string | Uint8Array | null;
  value: string | Uint8Array | null;
  partition?: number;
  /** As a map, or as a list when a key repeats (Kafka allows that; order is kept either way). */
  headers?: Record<string, string | Uint8Array> | Array<[string, string | Uint8Array | null]>;
  /** Milliseconds since the epoch; the broker's or producer's time when absent. */
  timestamp?: number;
}

export interface ProducedRecord extends TopicPartitionRef {
  offset: number;
}

export interface RecordHeader {
  key: string;
  value: Uint8Array | null;
}

/** A record as stored: bytes, not decoded. */
export interface RawRecord {
  topic: string;
  partition: number;
  offset: number;
  timestamp: number;
  timestampType: "CreateTime" | "LogAppendTime";
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: RecordHeader[];
}

export interface ConsumeRange {
  partition: number;
  /** First offset to read. Below the log start it starts at the log start. */
  from: number;
  /**
   * First offset NOT read (exclusive). Absent: no upper bound. Without `follow` a partition
   * also ends when it reaches its high watermark, so a range past the end never hangs.
   */
  to?: number;
}

/** How long one Fetch waits at most for new data at a partition's end, by default (ms). */
export const FETCH_MAX_WAIT_MS = 500;

export interface ConsumeRequest {
  topic: string;
  partitions: ConsumeRange[];
  /** Ends the iteration and closes the connection. */
  signal?: AbortSignal;
  /** Bytes per fetch request (default 4 MiB); per partition at most 1 MiB or this. */
  maxBytes?: number;
  /** Wait for new records at the end of a partition instead of ending (tailing). */
  follow?: boolean;
  /** Longest wait of one fetch for new data, in ms (default FETCH_MAX_WAIT_MS). */
  maxWaitMs?: number;
  /** Told how the read goes (what it fetched, where it is, what fails): see ReadObserver. */
  observer?: ReadObserver;
  /**
   * What decodes the fetched record batches: Loupe's own decoder (the default, with brokers
   * that speak Fetch v13 or later) or the Kafka client's, which older brokers get anyway.
   */
  recordDecoder?: "loupe" | "client";
  /**
   * The caller is done with a batch's records (keys, values, header values) before it pulls the
   * next batch: their bytes may then live in a buffer the read reuses, sparing a fresh buffer
   * (and its page faults) per fetched partition. Only for consumeBatches.
   */
  reuseBuffers?: boolean;
  /**
   * Date.now() until which a lost broker or leader is retried, with backoff (100 ms doubling to
   * 2 s): a broker that restarts is read on from where the read was. Past it the read fails
   * with an error naming the broker and partitions. Without it, a few quick retries.
   */
  retryUntil?: number;
}

/**
 * What a read reports as it goes, to one listener (the query executor keeps its statistics, idle
 * clock and warnings with it; a processor its commit positions). Every method is optional.
 */
export interface ReadObserver {
  /**
   * Told Date.now() when a round of Fetch requests is sent and null once it is answered (or
   * failed): a round out longer than its max wait is a slow broker, not a quiet topic.
   */
  fetching?(since: number | null): void;
  /**
   * Told what each Fetch answer carried for a partition, before its records are yielded: the
   * records and offsets of every batch, including those outside the range asked for. Lets a
   * caller prove how much a read fetched (query push-down), not only what it yielded.
   */
  fetched?(fetched: FetchedBatches): void;
  /**
   * Told a partition's read position (the next offset) after each fetched record set, once
   * what it yielded has been taken: it moves past transaction markers and aborted records too,
   * which yield nothing. A consumer that commits this position shows no lag when caught up on
   * a topic written in transactions (the commit marker is the log's last offset).
   */
  position?(partition: number, next: number): void;
  /**
   * Told when the read starts retrying after a failure (with what failed), and with null once it
   * reads again. Only on errors: nothing per record.
   */
  outage?(outage: ReadOutage | null): void;
  /**
   * Told of each partition the read leaves out because it has no leader (after a short grace)
   * while other partitions of the topic have one. Without it, such a partition is retried like a
   * lost broker: a read never leaves a partition out silently.
   */
  skipped?(skipped: SkippedPartition): void;
}

/** A partition a read left out, and why. */
export interface SkippedPartition {
  partition: number;
  reason: string;
}

/** A read that cannot reach what it reads and is retrying. */
export interface ReadOutage {
  /** Date.now() of the first failure in a row. */
  since: number;
  /** What fails, e.g. "Kafka broker 127.0.0.1:9092 unreachable" or "partition 2 has no leader". */
  what: string;
  /** The partitions waiting for it. */
  partitions: number[];
  /** The last error's reason. */
  reason: string;
  /** The error the read fails with when it gives up now. */
  toError(): AppError;
}

export interface FetchedBatches {
  partition: number;
  /** Records in the batches of this answer (control batches excluded). */
  records: number;
  /** First and last offset the batches cover. */
  firstOffset: number;
  lastOffset: number;
}

export type AclResourceType = "ANY" | "TOPIC" | "GROUP" | "CLUSTER" | "TRANSACTIONAL_ID" | "DELEGATION_TOKEN" | "USER";
export type AclPatternType = "ANY" | "MATCH" | "LITERAL" | "PREFIXED";
export type AclOperation =
  | "ANY"
  | "ALL"
  | "READ"
  | "WRITE"
  | "CREATE"
  | "DELETE"
  | "ALTER"
  | "DESCRIBE"
  | "CLUSTER_ACTION"
  | "DESCRIBE_CONFIGS"
  | "ALTER_CONFIGS"
  | "IDEMPOTENT_WRITE"
  | "CREATE_TOKENS"
  | "DESCRIBE_TOKENS"
  | "TWO_PHASE_COMMIT";
export type AclPermission = "ANY" | "ALLOW" | "DENY";

export interface AclBinding {
  resourceType: Exclude<AclResourceType, "ANY">;
  resourceName: string;
  patternType: Exclude<AclPatternType, "ANY" | "MATCH">;
  principal: string;
  host: string;
  operation: Exclude<AclOperation, "ANY">;
  permission: Exclude<AclPermission, "ANY">;
}

/** null (or absent) matches anything. */
export interface AclBindingFilter {
  resourceType?: AclResourceType;
  resourceName?: string | null;
  patternType?: AclPatternType;
  principal?: string | null;
  host?: string | null;
  operation?: AclOperation;
  permission?: AclPermission;
}

export type QuotaEntityType = "user" | "client-id" | "ip";

/** name null: the default entity of that type. */
export interface QuotaEntity {
  type: QuotaEntityType;
  name: string | null;
}

export interface QuotaEntry {
  entity: QuotaEntity[];
  values: Record<string, number>;
}

export interface QuotaFilter {
  type: QuotaEntityType;
  /** "exact" needs a name; "default" matches the default entity; "any" matches all. */
  match: "exact" | "default" | "any";
  name?: string;
}

export interface QuotaAlteration {
  entity: QuotaEntity[];
  /** A number sets the quota, null removes it. */
  values: Record<string, number | null>;
}

export interface RequestStats {
  /** Requests sent to brokers since the cluster object was created (all its connections). */
  requests: number;
  /** Round trip of the last answered request, in ms; null before the first. */
  lastRoundTripMs: number | null;
  /** Requests that ended in an error (network or protocol). */
  errors: number;
  /** Milliseconds the brokers asked the clients to wait under quotas (ProduceResponse and others' `throttle_time_ms`), summed. */
  throttleTimeMs: number;
  /** Answers that carried a throttle time. */
  throttled: number;
}

export interface ClusterStats extends RequestStats {
  /** consume() calls whose connections are open. */
  openReads: number;
  /** Requests per Kafka API name ("Metadata", "Fetch", ...). */
  byApi: Record<string, number>;
}

/** A share group (KIP-932) as ListGroups gives it. */
export interface ShareGroupSummary {
  groupId: string;
  /** "Empty", "Stable", "Dead" or "Unknown". */
  state: string;
}

export interface ShareGroupMember {
  memberId: string;
  rackId: string | null;
  memberEpoch: number;
  clientId: string;
  host: string;
  subscribedTopics: string[];
  assignments: TopicPartitionRef[];
}

/** ShareGroupDescribe's answer for one group; state "Dead" with no members when it does not exist. */
export interface ShareGroupDescription {
  groupId: string;
  state: string;
  groupEpoch: number;
  assignmentEpoch: number;
  assignor: string;
  members: ShareGroupMember[];
}

/** A share-partition's start offset (null: not initialised yet) and lag (null: unknown). */
export interface ShareStartOffset extends TopicPartitionRef {
  startOffset: number | null;
  lag: number | null;
}
