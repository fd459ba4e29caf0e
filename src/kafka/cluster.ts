/**
 * One Kafka cluster as Loupe uses it: admin operations, produce, and raw reads, all with
 * domain types and AppErrors. Connections open on first use: creating a KafkaCluster (or the
 * pool) touches no network, so Loupe starts while a cluster is down.
 */

import {
  Admin,
  ConfigResourceTypes,
  ConfigSources,
  ConfigTypes,
  Consumer,
  type describeConfigsV4,
  FindCoordinatorKeyTypes,
  IncrementalAlterConfigOperationTypes,
  kGetApi,
  legacyConsumerGroupStates,
  type metadataV12,
  Producer,
  UnsupportedApiError,
} from "@platformatic/kafka";
import { AppError } from "../errors.ts";
import { alterQuotas, describeAcls, describeQuotas, fromClientAcl, toClientAcl, toClientAclFilter } from "./acls.ts";
import { callApi, clientOptions, num, withTimeout } from "./client.ts";
import { type ConsumeDeps, consumeBatches, consumeRecords } from "./consume.ts";
import { toAppError } from "./errors.ts";
import { createGroupMember, type GroupMember, type GroupMemberOptions } from "./group-member.ts";
import { RequestCounter, watchRequests } from "./metrics.ts";
import { produceRecords } from "./produce.ts";
import type {
  AclBinding,
  AclBindingFilter,
  AlterConfigOp,
  BrokerInfo,
  ClusterDescription,
  ClusterStats,
  CommittedOffset,
  ConfigEntry,
  ConfigSource,
  ConfigType,
  ConsumeRequest,
  CreatedTopic,
  CreateTopicRequest,
  DeletedRecords,
  GroupDescription,
  GroupState,
  GroupSummary,
  Health,
  KafkaClusterConfig,
  ListedOffset,
  OffsetSpec,
  ProducedRecord,
  ProduceRecord,
  QuotaAlteration,
  QuotaEntry,
  QuotaFilter,
  RawRecord,
  TopicDescription,
  TopicPartitionRef,
  TopicSummary,
} from "./types.ts";

type MetadataResponse = metadataV12.MetadataResponse;
type DescribeConfigsResponseConfig = describeConfigsV4.DescribeConfigsResponseConfig;

const configSourceNames = new Map<number, ConfigSource>(
  Object.entries(ConfigSources)
    .filter(([k]) => k !== "TOPIC_CONFIG")
    .map(([k, v]) => [v as number, k as ConfigSource]),
);
const configTypeNames = new Map<number, ConfigType>(Object.entries(ConfigTypes).map(([k, v]) => [v as number, k as ConfigType]));

const GROUP_STATES: Record<string, GroupState> = {
  ...Object.fromEntries(Object.entries(legacyConsumerGroupStates).map(([k, v]) => [k, v as GroupState])),
};

function groupState(state: string): GroupState {
  return GROUP_STATES[state] ?? (state as GroupState);
}

function offsetTimestamp(spec: OffsetSpec): bigint {
  if (spec === "earliest") return -2n;
  if (spec === "latest") return -1n;
  if (!Number.isSafeInteger(spec) || spec < 0) throw new AppError("BAD_REQUEST", `Invalid offset timestamp ${spec}`);
  return BigInt(spec);
}

function byTopic<T extends TopicPartitionRef>(refs: T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of refs) out.set(r.topic, [...(out.get(r.topic) ?? []), r]);
  return out;
}

function topicSummary(t: MetadataResponse["topics"][number]): TopicDescription {
  const partitions = [...t.partitions].sort((a, b) => a.partitionIndex - b.partitionIndex);
  return {
    name: t.name ?? "",
    topicId: t.topicId,
    internal: t.isInternal,
    partitions: partitions.length,
    replicationFactor: partitions[0]?.replicaNodes.length ?? -1,
    partitionDetails: partitions.map((p) => ({
      partition: p.partitionIndex,
      leader: p.leaderId,
      leaderEpoch: p.leaderEpoch,
      replicas: p.replicaNodes,
      isr: p.isrNodes,
      offlineReplicas: p.offlineReplicas,
    })),
  };
}

/** Kafka's own internal topics (the client's metadata cache does not hold them). */
export const KAFKA_INTERNAL_TOPICS: ReadonlySet<string> = new Set(["__consumer_offsets", "__transaction_state", "__share_group_state"]);

export class KafkaCluster {
  readonly name: string;
  readonly config: KafkaClusterConfig;
  readonly #counter = new RequestCounter();
  #admin: Admin | null = null;
  #producer: Producer | null = null;
  #openReads = 0;
  #closed = false;

  constructor(config: KafkaClusterConfig) {
    this.name = config.name;
    this.config = config;
    watchRequests();
  }

  // -------------------------------------------------------------------------------------------
  // Connections and statistics

  get #adminClient(): Admin {
    this.#checkOpen();
    this.#admin ??= new Admin(clientOptions(this.config, this.#counter));
    return this.#admin;
  }

  get #producerClient(): Producer {
    this.#checkOpen();
    // Idempotent: the client resends a whole Produce request when one partition of it fails
    // (a fresh topic whose partitions are not all led yet); without sequence numbers the
    // partitions that had succeeded would get their records twice.
    this.#producer ??= new Producer({ ...clientOptions(this.config, this.#counter), acks: -1, idempotent: true });
    return this.#producer;
  }

  #checkOpen(): void {
    if (this.#closed) throw new AppError("UNAVAILABLE", `Kafka cluster '${this.name}' is closed`);
  }

  /** Runs `fn`, turning whatever the client throws into an AppError naming `context`. */
  async #call<T>(context: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toAppError(err, context, this.name);
    }
  }

  /** Requests sent to this cluster so far, by every connection Loupe opened to it. */
  requestCount(): number {
    return this.#counter.requests;
  }

  /** Round trip of the last answered request in ms; null before the first. */
  get lastRoundTripMs(): number | null {
    return this.#counter.lastRoundTripMs;
  }

  stats(): ClusterStats {
    return { ...this.#counter.snapshot(), openReads: this.#openReads, byApi: Object.fromEntries(this.#counter.byApi) };
  }

  /** consume() calls whose connections are still open. */
  openReads(): number {
    return this.#openReads;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const closing: Promise<unknown>[] = [];
    if (this.#admin) closing.push(this.#admin.close());
    if (this.#producer) closing.push(this.#producer.close(true));
    this.#admin = null;
    this.#producer = null;
    await Promise.race([Promise.allSettled(closing), Bun.sleep(2_000)]);
  }

  // -------------------------------------------------------------------------------------------
  // Cluster

  /** One cheap Metadata round trip; never throws. */
  async health(timeoutMs = 3_000): Promise<Health> {
    const t0 = performance.now();
    const latency = () => Math.round((performance.now() - t0) * 100) / 100;
    try {
      const md = await withTimeout(callApi<MetadataResponse>(this.#adminClient, "Metadata", null, [], false, false), timeoutMs);
      return { connected: true, brokers: md.brokers.length, controllerId: md.controllerId, latencyMs: latency() };
    } catch (err) {
      const error = toAppError(err, `Kafka cluster '${this.name}'`, this.name).message;
      return { connected: false, brokers: 0, controllerId: null, latencyMs: latency(), error };
    }
  }

  /** Same as health(). */
  ping(timeoutMs?: number): Promise<Health> {
    return this.health(timeoutMs);
  }

  describeCluster(): Promise<ClusterDescription> {
    return this.#call("Cannot describe the cluster", async () => {
      const md = await callApi<MetadataResponse>(this.#adminClient, "Metadata", null, [], false, false);
      return {
        clusterId: md.clusterId ?? null,
        controllerId: md.controllerId,
        brokers: md.brokers.map((b) => ({ id: b.nodeId, host: b.host, port: b.port, rack: b.rack ?? null })).sort((a, b) => a.id - b.id),
      };
    });
  }

  // -------------------------------------------------------------------------------------------
  // Topics

  listTopics(opts: { includeInternal?: boolean } = {}): Promise<TopicSummary[]> {
    return this.#call("Cannot list topics", async () => {
      const md = await callApi<MetadataResponse>(this.#adminClient, "Metadata", null, null, false, false);
      return md.topics
        .filter((t) => opts.includeInternal || !t.isInternal)
        .map((t) => {
          const { partitionDetails: _, ...summary } = topicSummary(t);
          return summary;
        })
        .sort((a, b) => a.name.localeCompare(b.name));
    });
  }

  /** In the order asked; an unknown topic is NOT_FOUND. */
  describeTopics(names: string[]): Promise<TopicDescription[]> {
    const list = names.map((n) => `'${n}'`).join(", ");
    const context = `Cannot describe topic${names.length === 1 ? "" : "s"} ${list}`;
    const notFound = (name: string) => new AppError("NOT_FOUND", `${context}: Topic '${name}' does not exist.`);
    return this.#call(context, async () => {
      if (names.length === 0) return [];
      let md: MetadataResponse;
      try {
        md = await callApi<MetadataResponse>(this.#adminClient, "Metadata", null, names, false, false);
      } catch (err) {
        // The error names the topic by its place in the request only: find which one is missing.
        const missing = await this.#missingTopics(names);
        if (missing.length > 0) throw notFound(missing[0]!);
        throw err;
      }
      const byName = new Map(md.topics.map((t) => [t.name, topicSummary(t)]));
      return names.map((n) => {
        const t = byName.get(n);
        if (!t) throw notFound(n);
        return t;
      });
    });
  }

  async #missingTopics(names: string[]): Promise<string[]> {
    try {
      const md = await callApi<MetadataResponse>(this.#adminClient, "Metadata", null, null, false, false);
      const known = new Set(md.topics.map((t) => t.name));
      return names.filter((n) => !known.has(n));
    } catch {
      return [];
    }
  }

  createTopic(req: CreateTopicRequest): Promise<CreatedTopic> {
    return this.#call(`Cannot create topic '${req.name}'`, async () => {
      const admin = this.#adminClient;
      // Topic changes go to the controller (KRaft brokers forward; older clusters need it).
      const md = await callApi<MetadataResponse>(admin, "Metadata", null, [], false, false);
      const controller = md.brokers.find((b) => b.nodeId === md.controllerId) ?? null;
      const response = await callApi<{
        topics: Array<{
          name: string;
          topicId: string;
          numPartitions: number;
          replicationFactor: number;
          configs: Array<{ name: string; value: string | null }> | null;
        }>;
      }>(
        admin,
        "CreateTopics",
        controller,
        [
          {
            name: req.name,
            numPartitions: req.partitions ?? -1,
            replicationFactor: req.replication ?? -1,
            assignments: [],
            configs: Object.entries(req.configs ?? {}).map(([name, value]) => ({ name, value })),
          },
        ],
        this.config.requestTimeoutMs ?? 30_000,
        req.validateOnly ?? false,
      );
      const t = response.topics[0]!;
      return {
        name: t.name,
        topicId: t.topicId,
        partitions: t.numPartitions,
        replication: t.replicationFactor,
        configs: Object.fromEntries((t.configs ?? []).map((c) => [c.name, c.value])),
      };
    });
  }

  deleteTopic(name: string): Promise<void> {
    return this.#call(`Cannot delete topic '${name}'`, () => this.#adminClient.deleteTopics({ topics: [name] }));
  }

  /** Adds partitions: `count` is the new total. */
  createPartitions(topic: string, count: number, opts: { validateOnly?: boolean } = {}): Promise<void> {
    return this.#call(`Cannot add partitions to topic '${topic}'`, () =>
      this.#adminClient.createPartitions({ topics: [{ name: topic, count, assignments: null }], validateOnly: opts.validateOnly ?? false }),
    );
  }

  // -------------------------------------------------------------------------------------------
  // Configs

  describeTopicConfigs(name: string): Promise<ConfigEntry[]> {
    return this.#call(`Cannot describe the configs of topic '${name}'`, () => this.#describeConfigs(ConfigResourceTypes.TOPIC, name));
  }

  describeBrokerConfigs(brokerId: number): Promise<ConfigEntry[]> {
    return this.#call(`Cannot describe the configs of broker ${brokerId}`, () =>
      this.#describeConfigs(ConfigResourceTypes.BROKER, String(brokerId)),
    );
  }

  async #describeConfigs(
    resourceType: (typeof ConfigResourceTypes)[keyof typeof ConfigResourceTypes],
    name: string,
  ): Promise<ConfigEntry[]> {
    const [result] = await this.#adminClient.describeConfigs({
      resources: [{ resourceType, resourceName: name }],
      includeSynonyms: true,
      includeDocumentation: true,
    });
    // A resource's own setting: a topic's override, a broker's per-broker dynamic value.
    const own: number =
      resourceType === ConfigResourceTypes.TOPIC ? ConfigSources.DYNAMIC_TOPIC_CONFIG : ConfigSources.DYNAMIC_BROKER_CONFIG;
    return (result?.configs ?? [])
      .map((c: DescribeConfigsResponseConfig) => {
        const inherited = c.synonyms.find((s) => s.source !== own);
        const source = configSourceNames.get(c.configSource) ?? "UNKNOWN";
        return {
          name: c.name,
          value: c.value ?? null,
          defaultValue: inherited?.value ?? null,
          isDefault: c.configSource !== own,
          source,
          type: configTypeNames.get(c.configType) ?? "UNKNOWN",
          readOnly: c.readOnly,
          sensitive: c.isSensitive,
          documentation: c.documentation ?? null,
          synonyms: c.synonyms.map((s) => ({ name: s.name, value: s.value ?? null, source: configSourceNames.get(s.source) ?? "UNKNOWN" })),
        };
      })
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** IncrementalAlterConfigs: only the named keys change; a null value removes the override. */
  alterTopicConfigs(name: string, ops: AlterConfigOp[], opts: { validateOnly?: boolean } = {}): Promise<void> {
    return this.#call(`Cannot change the configs of topic '${name}'`, async () => {
      if (ops.length === 0) return;
      await this.#adminClient.incrementalAlterConfigs({
        validateOnly: opts.validateOnly ?? false,
        resources: [
          {
            resourceType: ConfigResourceTypes.TOPIC,
            resourceName: name,
            configs: ops.map((o) => {
              const op = o.op ?? (o.value === null ? "DELETE" : "SET");
              if (op === "DELETE") return { name: o.key, configOperation: IncrementalAlterConfigOperationTypes.DELETE };
              if (o.value === null) throw new AppError("BAD_REQUEST", `Config '${o.key}': ${op} needs a value`);
              return { name: o.key, configOperation: IncrementalAlterConfigOperationTypes[op], value: o.value };
            }),
          },
        ],
      });
    });
  }

  // -------------------------------------------------------------------------------------------
  // Offsets and records

  /** One ListOffsets request per partition leader, whatever the number of partitions. */
  listOffsets(partitions: TopicPartitionRef[], spec: OffsetSpec): Promise<ListedOffset[]> {
    return this.#call("Cannot list offsets", async () => {
      // The client's metadata cache leaves out Kafka's internal topics, and its listOffsets
      // then throws outside any promise (the process dies). Never hand it one: they answer -1.
      const askable = partitions.filter((p) => !KAFKA_INTERNAL_TOPICS.has(p.topic));
      if (askable.length === 0) return partitions.map((r) => ({ ...r, offset: -1, timestamp: -1 }));
      const timestamp = offsetTimestamp(spec);
      const result = await this.#adminClient.listOffsets({
        topics: [...byTopic(askable)].map(([name, refs]) => ({
          name,
          partitions: refs.map((r) => ({ partitionIndex: r.partition, timestamp })),
        })),
      });
      const found = new Map<string, ListedOffset>();
      for (const t of result) {
        for (const p of t.partitions) {
          found.set(`${t.name}\u0000${p.partitionIndex}`, {
            topic: t.name,
            partition: p.partitionIndex,
            offset: num(p.offset),
            timestamp: typeof spec === "number" ? num(p.timestamp) : -1,
          });
        }
      }
      return partitions.map((r) => found.get(`${r.topic}\u0000${r.partition}`) ?? { ...r, offset: -1, timestamp: -1 });
    });
  }

  /** Earliest and latest offsets of every partition of the topics. */
  partitionOffsets(topics: string[]): Promise<Array<TopicPartitionRef & { earliest: number; latest: number }>> {
    return this.#call("Cannot list offsets", async () => {
      const described = await this.describeTopics(topics);
      const refs = described.flatMap((t) => t.partitionDetails.map((p) => ({ topic: t.name, partition: p.partition })));
      const [earliest, latest] = await Promise.all([this.listOffsets(refs, "earliest"), this.listOffsets(refs, "latest")]);
      return refs.map((r, i) => ({ ...r, earliest: earliest[i]!.offset, latest: latest[i]!.offset }));
    });
  }

  /** Deletes the records before `offset` (-1: all); answers the new log start. */
  deleteRecords(topic: string, partition: number, offset: number): Promise<DeletedRecords> {
    return this.#call(`Cannot delete records of topic '${topic}' partition ${partition}`, async () => {
      if (!Number.isInteger(partition) || partition < 0) throw new AppError("BAD_REQUEST", `Invalid partition ${partition}`);
      if (!Number.isSafeInteger(offset) || offset < -1) throw new AppError("BAD_REQUEST", `Invalid offset ${offset}`);
      const [result] = await this.#adminClient.deleteRecords({
        topics: [{ name: topic, partitions: [{ partition, offset: BigInt(offset) }] }],
      });
      const p = result?.partitions.find((x) => x.partition === partition);
      return { topic, partition, lowWatermark: p ? num(p.lowWatermark) : -1 };
    });
  }

  produce(topic: string, records: ProduceRecord[]): Promise<ProducedRecord[]> {
    return produceRecords(this.#producerClient, this.name, topic, records);
  }

  /**
   * Reads the given offset ranges without a consumer group (see consume.ts). Aborting the
   * signal ends the iteration and closes its connections.
   */
  consume(req: ConsumeRequest): AsyncIterable<RawRecord> {
    this.#checkOpen();
    return consumeRecords(this.#consumeDeps(), req);
  }

  /** As consume(), a fetched partition's records at a time: the fast form for long reads. */
  consumeBatches(req: ConsumeRequest): AsyncIterable<RawRecord[]> {
    this.#checkOpen();
    return consumeBatches(this.#consumeDeps(), req);
  }

  #consumeDeps(): ConsumeDeps {
    return {
      cluster: this.name,
      createConsumer: () =>
        new Consumer({
          ...clientOptions(this.config, this.#counter),
          // Required by the client; never joined: reads use Fetch directly.
          groupId: `${this.config.clientId}-reader`,
        }),
      onOpen: () => this.#openReads++,
      onClose: () => this.#openReads--,
    };
  }

  // -------------------------------------------------------------------------------------------
  // Consumer groups

  /** A live member of a consumer group (see group-member.ts); the caller closes it. */
  joinGroup(opts: GroupMemberOptions): GroupMember {
    return createGroupMember(this.config, this.#counter, opts);
  }

  listGroups(): Promise<GroupSummary[]> {
    return this.#call("Cannot list consumer groups", async () => {
      const groups = await this.#adminClient.listGroups();
      return [...groups.values()]
        .map((g) => ({ groupId: g.id, state: groupState(g.state), type: g.groupType ?? null, protocolType: g.protocolType }))
        .sort((a, b) => a.groupId.localeCompare(b.groupId));
    });
  }

  /** In the order asked. A group the broker does not know comes back in state "Dead". */
  describeGroups(ids: string[]): Promise<GroupDescription[]> {
    return this.#call("Cannot describe consumer groups", async () => {
      if (ids.length === 0) return [];
      const groups = await this.#adminClient.describeGroups({ groups: ids });
      return ids.map((id) => {
        const g = groups.get(id);
        if (!g) return { groupId: id, state: "Dead" as GroupState, protocolType: "", protocol: "", members: [] };
        return {
          groupId: g.id,
          state: groupState(g.state),
          protocolType: g.protocolType,
          protocol: g.protocol,
          members: [...g.members.values()].map((m) => ({
            memberId: m.id,
            groupInstanceId: m.groupInstanceId ?? null,
            clientId: m.clientId,
            host: m.clientHost,
            assignments: [...(m.assignments?.values() ?? [])].flatMap((a) =>
              a.partitions.map((partition) => ({ topic: a.topic, partition })),
            ),
          })),
        };
      });
    });
  }

  /**
   * Committed offsets of many groups: one OffsetFetch request per group coordinator (brokers
   * from Kafka 3.0 take many groups in one request). Partitions without a commit are left out.
   */
  fetchCommittedOffsets(groupIds: string[]): Promise<Map<string, CommittedOffset[]>> {
    return this.#call("Cannot fetch committed offsets", async () => {
      const out = new Map<string, CommittedOffset[]>(groupIds.map((g) => [g, []]));
      if (groupIds.length === 0) return out;
      const groups = await this.#adminClient.listConsumerGroupOffsets({ groups: groupIds });
      for (const g of groups) {
        const list = out.get(g.groupId) ?? [];
        for (const t of g.topics) {
          for (const p of t.partitions) {
            if (p.committedOffset < 0n) continue;
            list.push({ topic: t.name, partition: p.partitionIndex, offset: num(p.committedOffset), metadata: p.metadata ?? null });
          }
        }
        list.sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition);
        out.set(g.groupId, list);
      }
      return out;
    });
  }

  /** The coordinator broker of each group, from one batched FindCoordinator request. */
  findGroupCoordinators(groupIds: string[]): Promise<Map<string, BrokerInfo>> {
    return this.#call("Cannot find group coordinators", async () => {
      const out = new Map<string, BrokerInfo>();
      if (groupIds.length === 0) return out;
      const found = await this.#adminClient.findCoordinator({ keyType: FindCoordinatorKeyTypes.GROUP, keys: groupIds });
      for (const c of found) out.set(c.key, { id: c.nodeId, host: c.host, port: c.port, rack: null });
      return out;
    });
  }

  /**
   * Whether the brokers speak the named Kafka API ("DeleteRecords" needs 0.11 or later). Sends
   * at most one ApiVersions request, whose answer the client keeps.
   */
  supportsApi(apiName: string): Promise<boolean> {
    return this.#call(`Cannot check support of ${apiName}`, () => {
      const admin = this.#adminClient;
      return new Promise<boolean>((resolve, reject) =>
        admin[kGetApi](apiName, (err: Error | null) => {
          if (!err) resolve(true);
          else if (err instanceof UnsupportedApiError) resolve(false);
          else reject(err);
        }),
      );
    });
  }

  /** Only for groups without live members (the broker answers CONFLICT otherwise). */
  alterGroupOffsets(groupId: string, offsets: Array<TopicPartitionRef & { offset: number }>): Promise<void> {
    return this.#call(`Cannot change the offsets of group '${groupId}'`, async () => {
      if (offsets.length === 0) return;
      for (const o of offsets) {
        if (!Number.isSafeInteger(o.offset) || o.offset < 0) throw new AppError("BAD_REQUEST", `Invalid offset ${o.offset}`);
      }
      await this.#adminClient.alterConsumerGroupOffsets({
        groupId,
        topics: [...byTopic(offsets)].map(([name, list]) => ({
          name,
          partitionOffsets: list.map((o) => ({ partition: o.partition, offset: BigInt(o.offset) })),
        })),
      });
    });
  }

  deleteGroupOffsets(groupId: string, partitions: TopicPartitionRef[]): Promise<void> {
    return this.#call(`Cannot delete the offsets of group '${groupId}'`, async () => {
      if (partitions.length === 0) return;
      await this.#adminClient.deleteConsumerGroupOffsets({
        groupId,
        topics: [...byTopic(partitions)].map(([name, list]) => ({ name, partitionIndexes: list.map((p) => p.partition) })),
      });
    });
  }

  deleteGroups(ids: string[]): Promise<void> {
    const list = ids.map((n) => `'${n}'`).join(", ");
    return this.#call(`Cannot delete consumer group${ids.length === 1 ? "" : "s"} ${list}`, async () => {
      if (ids.length > 0) await this.#adminClient.deleteGroups({ groups: ids });
    });
  }

  // -------------------------------------------------------------------------------------------
  // ACLs and quotas

  /** A cluster without an authorizer answers BAD_REQUEST (SECURITY_DISABLED). */
  describeAcls(filter: AclBindingFilter = {}): Promise<AclBinding[]> {
    return this.#call("Cannot list ACLs", () => describeAcls(this.#adminClient, filter));
  }

  createAcls(bindings: AclBinding[]): Promise<void> {
    return this.#call("Cannot create ACLs", async () => {
      if (bindings.length > 0) await this.#adminClient.createAcls({ creations: bindings.map(toClientAcl) });
    });
  }

  /** Answers the ACLs that were deleted. */
  deleteAcls(filters: AclBindingFilter[]): Promise<AclBinding[]> {
    return this.#call("Cannot delete ACLs", async () => {
      if (filters.length === 0) return [];
      const deleted = await this.#adminClient.deleteAcls({ filters: filters.map(toClientAclFilter) });
      return deleted.map(fromClientAcl);
    });
  }

  /** No filter: every quota. */
  describeQuotas(filters: QuotaFilter[] = [], opts: { strict?: boolean } = {}): Promise<QuotaEntry[]> {
    return this.#call("Cannot list quotas", () => describeQuotas(this.#adminClient, filters, opts.strict ?? false));
  }

  alterQuotas(alterations: QuotaAlteration[], opts: { validateOnly?: boolean } = {}): Promise<void> {
    return this.#call("Cannot change quotas", async () => {
      if (alterations.length > 0) await alterQuotas(this.#adminClient, alterations, opts.validateOnly ?? false);
    });
  }
}
