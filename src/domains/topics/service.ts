import { randomBytes } from "node:crypto";
import { AppError, badRequest, notFound } from "../../errors.ts";
import type { BrokerInfo, GroupSummary, KafkaCluster, KafkaPool, RawRecord, TopicSummary } from "../../kafka/index.ts";
import type { LagEngine, LagSnapshot, PartitionLag } from "../../lag/engine.ts";
import type { Inventory } from "../../lag/inventory.ts";
import type { OffsetSampler } from "../../lag/sampler.ts";
import type { Logger } from "../../log/logger.ts";
import type { SchemaRegistryClient } from "../../registry/client.ts";
import { latestSchema, subjectOf } from "../../registry/subjects.ts";
import type { InternalTopics } from "../access/internal-topics.ts";
import { type NotificationService, TOPIC_ALERTS } from "../alerts/notifications.ts";
import type { AuditService } from "../audit/service.ts";
import { matches, pageOf } from "../shared/paging.ts";
import type { DataType, TopicMetadata } from "../shared/topic-types.ts";
import { readTail } from "./sample.ts";
import type {
  ClientGroupState,
  CreateTopicInput,
  PartitionMessages,
  TopicConfigEntry,
  TopicConsumerGroup,
  TopicConsumerPartition,
  TopicListItemShape,
  TopicListQuery,
  TopicShape,
} from "./schemas.ts";
import { shareConsumers, topicConsumer } from "./share-consumers.ts";
import type { TopicFilter } from "./visibility.ts";

/** How long creating or deleting a topic waits for the brokers' metadata to follow. */
const SETTLE_MS = 15_000;
/** How long a config change's answer waits for the brokers to describe it (a value they normalise never matches). */
const CONFIG_SETTLE_MS = 3_000;
/** Listings of the topics tried while topics are deleted under them (see list). */
const LIST_ATTEMPTS = 3;

/** How long a topic's page waits for the registry's schemas before it answers without them. */
const REGISTRY_WAIT_MS = 3_000;

/** How long the configs a new topic would get are kept before the brokers are asked again. */
const DEFAULTS_TTL_MS = 5 * 60_000;

/** Polls `check` (a failure counts as not yet) until it holds or `ms` pass; answers whether it held. */
async function settles(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() >= deadline) return false;
    await Bun.sleep(50);
  }
  return true;
}

/** Kafka's group states in the clients' names; a state Kafka adds later is Unknown. */
const CLIENT_STATES: Record<string, ClientGroupState> = {
  Stable: "Stable",
  PreparingRebalance: "Rebalancing",
  CompletingRebalance: "Rebalancing",
  Assigning: "Rebalancing",
  Reconciling: "Rebalancing",
  Empty: "NoActiveMembers",
  Dead: "Dead",
};

/** The SPEC's topic resource; `access` is the caller's, added by the route. */
export type Topic = Omit<TopicShape, "access">;
export type TopicListItem = TopicListItemShape;
export type { ClientGroupState, CreateTopicInput, PartitionMessages, TopicConfigEntry, TopicConsumerGroup, TopicConsumerPartition };

/**
 * Topics whose offsets can be listed. The Kafka client's ListOffsets looks partitions up in
 * its metadata cache, which leaves internal topics out (and then fails outside any promise),
 * so internal topics (`__consumer_offsets`, ...) are shown without offsets.
 */
function withOffsets<T extends { internal: boolean }>(topics: T[]): T[] {
  return topics.filter((t) => !t.internal);
}

/** A page of the topic list, with the counts its headers tell. */
export interface TopicPage {
  items: TopicListItem[];
  /** Topics that match the search and the internal filter. */
  total: number;
  /** Topics the caller may see, before the search and the filter. */
  unfiltered: number;
  /** Control topics among those the caller may see. */
  controlTopics: number;
}

/** Messages and sizes of every topic, as the list sorts by them. */
interface Estimates {
  messages: Map<string, number>;
  sizes: Map<string, number> | null;
}

/** Records per topic: the sum over its partitions of the latest offset less the earliest (ListOffsets answers in the order asked). */
function messageCounts(
  refs: Array<{ topic: string }>,
  earliest: Array<{ offset: number }>,
  latest: Array<{ offset: number }>,
): Map<string, number> {
  const totals = new Map<string, number>();
  for (const [i, r] of refs.entries())
    totals.set(r.topic, (totals.get(r.topic) ?? 0) + Math.max(0, latest[i]!.offset - earliest[i]!.offset));
  return totals;
}

/** The stored (or guessed) key and value types of topics, as the metadata area's service answers them. */
export interface TopicTypes {
  list(cluster: string): Promise<TopicMetadata[]>;
  lastGuess(cluster: string, topic: string): TopicMetadata | undefined;
  typesFor(cluster: string, topic: string, records: RawRecord[]): Promise<TopicMetadata>;
  /** Drops a deleted topic's stored types. */
  forget(cluster: string, topic: string): Promise<void>;
}

export class TopicService {
  /** Background deletions under way; close() waits for them. */
  readonly #pending = new Set<Promise<unknown>>();
  /** Per cluster: the configs a new topic gets, and when they were asked. */
  readonly #defaults = new Map<string, { at: number; configs: Promise<Record<string, string | null>> }>();
  /** Per cluster: messages and sizes of every topic for sorting the list, and when they were asked (null: under way). */
  readonly #estimates = new Map<string, { at: number | null; figures: Promise<Estimates> }>();
  /** Per cluster: bytes per topic on disk, and when they were asked (null: under way). */
  readonly #sizes = new Map<string, { at: number | null; sizes: Promise<Map<string, number> | null> }>();

  constructor(
    private readonly deps: {
      pool: KafkaPool;
      /** The topics and groups, listed on a cadence: the list reads them there. */
      inventory: Inventory;
      lag: LagEngine;
      sampler: OffsetSampler;
      metadata: TopicTypes;
      audit: AuditService;
      notifications: NotificationService;
      log: Logger;
      /** Kafka's, Connect's, the registry's and Loupe's topics: marked `isControlTopic`. */
      internalTopics: InternalTopics;
      /** The schema registry, when configured: a topic's `<topic>-key` / `<topic>-value` schemas. */
      registry?: SchemaRegistryClient | null;
    },
  ) {}

  /** Internal to Kafka (its metadata says so) or to Loupe and its companions: the list's marking. */
  #isControlTopic(name: string, internal: boolean): boolean {
    return internal || this.deps.internalTopics.has(name);
  }

  #kafka(cluster: string): KafkaCluster {
    return this.deps.pool.get(cluster);
  }

  /**
   * The topics `visible` lets through (every one without a filter), from the inventory, searched,
   * sorted and cut to the page `q` asks (every match without `page`). Only the page's topics get
   * their offsets asked: a scoped caller's or a paged list costs less, never more.
   */
  async list(cluster: string, visible: TopicFilter = null, q: TopicListQuery = {}): Promise<TopicPage> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#listOnce(cluster, visible, q);
      } catch (err) {
        // A topic deleted between the listing and its offsets fails the offsets' request: list
        // again (the new listing no longer has it). A cluster whose topics keep going that fast
        // gets its error after a few tries.
        if (attempt >= LIST_ATTEMPTS || !(err instanceof AppError) || err.code !== "NOT_FOUND") throw err;
        this.deps.inventory.invalidate(cluster);
        this.#estimates.delete(cluster);
      }
    }
  }

  async #listOnce(cluster: string, visible: TopicFilter, q: TopicListQuery): Promise<TopicPage> {
    const all = await this.deps.inventory.topics(cluster, { includeInternal: true });
    const topics = visible ? all.filter((t) => visible(t.name)) : all;
    const control = (t: TopicSummary) => this.#isControlTopic(t.name, t.internal);
    let controlTopics = 0;
    const matched = topics.filter((t) => {
      const isControl = control(t);
      if (isControl) controlTopics++;
      return matches(q.search, t.name) && (q.internal !== "0" || !isControl);
    });
    const page = pageOf(matched, q, await this.#sortKey(cluster, q.orderBy));
    return { items: await this.#withFigures(cluster, page), total: matched.length, unfiltered: topics.length, controlTopics };
  }

  /**
   * The key `orderBy` sorts by. Figures that need offsets come from the estimates (at most one
   * inventory interval old) and the shared lag snapshot; unknown figures sort as -1.
   */
  async #sortKey(cluster: string, orderBy: TopicListQuery["orderBy"]): Promise<((t: TopicSummary) => number) | undefined> {
    switch (orderBy) {
      case undefined:
      case "name":
        return undefined;
      case "partitions":
        return (t) => t.partitions;
      case "rate":
        return (t) => this.deps.sampler.rate(cluster, t.name);
      case "lag": {
        const lags = await this.#lagByTopic(cluster);
        return (t) => (lags ? (lags.get(t.name) ?? 0) : -1);
      }
      case "messages":
      case "size": {
        const e = await this.#estimate(cluster);
        if (orderBy === "messages") return (t) => e.messages.get(t.name) ?? 0;
        return (t) => (e.sizes ? (e.sizes.get(t.name) ?? 0) : -1);
      }
    }
  }

  /**
   * Messages and sizes of every topic, for sorting: asked (one ListOffsets per leader and side,
   * one DescribeLogDirs per broker) at most once per inventory interval, concurrent askers joined.
   */
  #estimate(cluster: string): Promise<Estimates> {
    const kept = this.#estimates.get(cluster);
    const maxAge = this.deps.inventory.intervalMs;
    if (kept && (kept.at === null || Date.now() - kept.at < maxAge)) return kept.figures;
    const entry: { at: number | null; figures: Promise<Estimates> } = {
      at: null,
      figures: Promise.resolve({ messages: new Map(), sizes: null }),
    };
    entry.figures = (async () => {
      const kafka = this.#kafka(cluster);
      const topics = await this.deps.inventory.topics(cluster);
      const refs = topics.flatMap((t) => Array.from({ length: t.partitions }, (_, partition) => ({ topic: t.name, partition })));
      const [earliest, latest, sizes] = await Promise.all([
        kafka.offsets.list(refs, "earliest"),
        kafka.offsets.list(refs, "latest"),
        this.#topicSizes(cluster),
      ]);
      return { messages: messageCounts(refs, earliest, latest), sizes };
    })().then(
      (figures) => {
        entry.at = Date.now();
        return figures;
      },
      (err: unknown) => {
        if (this.#estimates.get(cluster) === entry) this.#estimates.delete(cluster);
        throw err;
      },
    );
    this.#estimates.set(cluster, entry);
    return entry.figures;
  }

  /**
   * Bytes per topic on disk: one DescribeLogDirs per broker, whose answer names every partition
   * (at 20,000 partitions the largest part of a page's cost), asked at most once per inventory
   * interval, concurrent askers joined; null when the brokers cannot say.
   */
  #topicSizes(cluster: string): Promise<Map<string, number> | null> {
    const kept = this.#sizes.get(cluster);
    if (kept && (kept.at === null || Date.now() - kept.at < this.deps.inventory.intervalMs)) return kept.sizes;
    const entry: { at: number | null; sizes: Promise<Map<string, number> | null> } = { at: null, sizes: Promise.resolve(null) };
    entry.sizes = this.#kafka(cluster)
      .logDirs.topicSizes()
      .then(
        (sizes) => {
          entry.at = Date.now();
          return sizes;
        },
        () => {
          if (this.#sizes.get(cluster) === entry) this.#sizes.delete(cluster);
          return null;
        },
      );
    this.#sizes.set(cluster, entry);
    return entry.sizes;
  }

  /** Lag per topic from the shared snapshot; null when it cannot be read. */
  #lagByTopic(cluster: string): Promise<Map<string, number> | null> {
    return this.deps.lag.snapshot(cluster).then(
      (snapshot) => {
        const byTopic = new Map<string, number>();
        for (const p of snapshot.partitions) byTopic.set(p.topic, (byTopic.get(p.topic) ?? 0) + p.lag);
        return byTopic;
      },
      () => null,
    );
  }

  /** The list's rows of `topics`, with fresh offsets (of these topics' partitions only), size (one interval old at most) and lag. */
  async #withFigures(cluster: string, topics: TopicSummary[]): Promise<TopicListItem[]> {
    if (topics.length === 0) return [];
    const kafka = this.#kafka(cluster);
    const refs = withOffsets(topics).flatMap((t) => Array.from({ length: t.partitions }, (_, partition) => ({ topic: t.name, partition })));
    // Size and lag cost one request per broker (kept an interval) and the shared (cached) lag
    // snapshot, whatever the number of topics; either failing leaves its column empty, not the list.
    const [earliest, latest, stored, sizes, lags] = await Promise.all([
      kafka.offsets.list(refs, "earliest"),
      kafka.offsets.list(refs, "latest"),
      this.deps.metadata.list(cluster),
      this.#topicSizes(cluster),
      this.#lagByTopic(cluster),
    ]);
    const totals = messageCounts(refs, earliest, latest);
    this.deps.sampler.record(cluster, Date.now(), latest);
    const meta = new Map(stored.map((m) => [m.topicName, m]));
    return topics.map((tp) => {
      // The list reads no records: a topic without stored types shows the last guess made for it
      // (by its page, whatever the guess's age), so the list and the page say the same. An empty
      // topic is BYTES on its page too; one with records and no guess yet is not known.
      const types = meta.get(tp.name) ?? this.deps.metadata.lastGuess(cluster, tp.name);
      const messages = totals.get(tp.name) ?? 0;
      return {
        topicName: tp.name,
        partitions: tp.partitions,
        replication: tp.replicationFactor,
        isControlTopic: this.#isControlTopic(tp.name, tp.internal),
        isMarkedForDeletion: false,
        keyType: types?.keyType ?? "BYTES",
        valueType: types?.valueType ?? "BYTES",
        inferred: types?.inferred ?? true,
        typesKnown: types !== undefined || messages === 0,
        totalMessages: messages,
        messagesPerSecond: Math.round(this.deps.sampler.rate(cluster, tp.name)),
        sizeBytes: sizes ? (sizes.get(tp.name) ?? 0) : null,
        lag: lags ? (lags.get(tp.name) ?? 0) : null,
      };
    });
  }

  /** The topic's partition count; NOT_FOUND for a topic the cluster does not have. */
  async partitionCount(cluster: string, name: string): Promise<number> {
    const [described] = await this.#kafka(cluster).topics.describe([name]);
    return described!.partitions;
  }

  async get(cluster: string, name: string): Promise<Topic> {
    const kafka = this.#kafka(cluster);
    const [described] = await kafka.topics.describe([name]);
    const topic = described!;
    const refs = withOffsets([topic]).flatMap((t) => t.partitionDetails.map((p) => ({ topic: name, partition: p.partition })));
    const [earliest, latest, configs, lag] = await Promise.all([
      kafka.offsets.list(refs, "earliest"),
      kafka.offsets.list(refs, "latest"),
      kafka.configs.describeTopic(name),
      this.deps.lag.snapshot(cluster),
    ]);
    const now = Date.now();
    const details = new Map(topic.partitionDetails.map((p) => [p.partition, p]));
    const perPartition = refs.map((r, i) => {
      const begin = earliest[i]!.offset;
      const end = latest[i]!.offset;
      const d = details.get(r.partition);
      return {
        partition: r.partition,
        messages: Math.max(0, end - begin),
        begin,
        end,
        leader: d?.leader ?? -1,
        replicas: d?.replicas ?? [],
        isr: d?.isr ?? [],
      };
    });
    this.deps.sampler.record(cluster, now, latest);

    // One read of the newest record of each partition: the topic's timestamp, and the sample
    // for guessing types when no metadata is stored.
    const [records, consumers, keyRegistered, valueRegistered] = await Promise.all([
      readTail(kafka, name, perPartition, { perPartition: 1 }).catch((e: unknown) => {
        this.deps.log.warn("cannot read the newest records", { cluster, topic: name, error: (e as Error).message });
        return [];
      }),
      this.#readers(kafka, name, lag, perPartition),
      this.#registered(cluster, name, "key"),
      this.#registered(cluster, name, "value"),
    ]);
    const types = withRegistered(await this.deps.metadata.typesFor(cluster, name, records), keyRegistered, valueRegistered);
    // A topic's override whose default the broker lists under another name (`log.retention.hours`
    // for `retention.ms`) has no default among its synonyms: the configs a new topic would get say it.
    const overridden = configs.filter((c) => !c.isDefault && (c.defaultValue ?? null) === null);
    const fresh = overridden.length > 0 ? await this.#newTopicConfigs(cluster) : {};
    return {
      topicName: name,
      keyType: types.keyType,
      valueType: types.valueType,
      keySchema: types.keySchema ?? null,
      valueSchema: types.valueSchema ?? null,
      inferred: types.inferred,
      partitions: topic.partitions,
      replication: topic.replicationFactor,
      isControlTopic: this.#isControlTopic(name, topic.internal),
      internalTo: this.deps.internalTopics.ownerOf(name) ?? (topic.internal ? "Kafka" : null),
      // KRaft removes a deleted topic from metadata at once; a listed topic is not being deleted.
      isMarkedForDeletion: false,
      messagesPerSecond: Math.round(this.deps.sampler.rate(cluster, name, { t: now, ends: latest })),
      totalMessages: perPartition.reduce((s, p) => s + p.messages, 0),
      timestamp: records.reduce((m, r) => Math.max(m, r.timestamp), 0),
      config: configs.map((c) => ({
        configuration: c.name,
        value: c.value,
        // A value nobody overrode is its own default (the broker lists no synonym for it).
        defaultValue: c.defaultValue ?? (c.isDefault ? c.value : (fresh[c.name] ?? null)),
        documentation: c.documentation,
      })),
      consumers,
      messagesPerPartition: perPartition,
    };
  }

  /**
   * The latest Avro or Protobuf schema of the topic's key or value subject (`<topic>-key`,
   * `<topic>-value`), with its type. Undefined without a registry, a subject or such a schema,
   * and when the registry cannot answer within REGISTRY_WAIT_MS: the topic's page stays useful
   * (and quick) without it.
   */
  async #registered(cluster: string, topic: string, side: "key" | "value"): Promise<Registered | undefined> {
    const registry = this.deps.registry;
    if (!registry) return undefined;
    try {
      const latest = await latestSchema(registry, subjectOf(topic, side), AbortSignal.timeout(REGISTRY_WAIT_MS));
      const type = latest?.schemaType.toUpperCase();
      return latest && (type === "AVRO" || type === "PROTOBUF") ? { type, schema: latest.schema } : undefined;
    } catch (e) {
      this.deps.log.warn("cannot read the topic's registry subject", { cluster, topic, side, error: (e as Error).message });
      return undefined;
    }
  }

  /**
   * The configs a topic created now would get (a creation the brokers only validate): the
   * cluster's defaults in each topic config's own name and unit. Kept a few minutes; none when
   * the brokers cannot say.
   */
  async #newTopicConfigs(cluster: string): Promise<Record<string, string | null>> {
    const kept = this.#defaults.get(cluster);
    if (kept && Date.now() - kept.at < DEFAULTS_TTL_MS) return kept.configs;
    const configs = this.#kafka(cluster)
      .topics.create({ name: `loupe-config-probe-${randomBytes(8).toString("hex")}`, validateOnly: true })
      .then((t) => t.configs)
      .catch((e: unknown) => {
        this.deps.log.warn("cannot ask the brokers for a new topic's configs", { cluster, error: (e as Error).message });
        this.#defaults.delete(cluster);
        return {};
      });
    this.#defaults.set(cluster, { at: Date.now(), configs });
    return configs;
  }

  /** The consumer groups reading the topic, then its Kafka 4 share groups. */
  async #readers(
    kafka: KafkaCluster,
    topic: string,
    lag: LagSnapshot,
    partitions: Array<{ partition: number; end: number }>,
  ): Promise<TopicConsumerGroup[]> {
    const [groups, shares] = await Promise.all([
      this.#consumers(
        kafka,
        topic,
        lag.partitions.filter((p) => p.topic === topic),
        lag.groups,
      ),
      // A cluster without share groups, or one failing to say, has none.
      shareConsumers(
        kafka,
        topic,
        lag.shares.filter((s) => s.topic === topic),
        new Map(partitions.map((p) => [p.partition, p.end])),
      ).catch(() => []),
    ]);
    return [...groups, ...shares];
  }

  async #consumers(kafka: KafkaCluster, topic: string, lags: PartitionLag[], groups: GroupSummary[]): Promise<TopicConsumerGroup[]> {
    const ids = [...new Set(lags.map((l) => l.group))];
    if (ids.length === 0) return [];
    const [described, coordinators] = await Promise.all([
      // The snapshot's groups (the inventory's listing) give their protocols: none is listed again.
      kafka.groups.describe(ids, groups),
      kafka.groups.coordinators(ids).catch(() => new Map<string, BrokerInfo>()),
    ]);
    const stateOf = new Map(groups.map((g) => [g.groupId, g.state]));
    const typeOf = new Map(groups.map((g) => [g.groupId, g.type]));
    return described.map((g): TopicConsumerGroup => {
      const owner = new Map<number, { consumerId: string; clientId: string; host: string }>();
      const readers = new Set<string>();
      for (const m of g.members) {
        for (const a of m.assignments)
          if (a.topic === topic) {
            owner.set(a.partition, { consumerId: m.memberId, clientId: m.clientId, host: m.host });
            readers.add(m.memberId);
          }
      }
      const partitions = lags
        .filter((l) => l.group === g.groupId)
        .map((l) => {
          const o = owner.get(l.partition);
          return {
            topic,
            partition: l.partition,
            currentOffset: l.committed,
            logEndOffset: l.end,
            lag: l.lag,
            consumerId: o?.consumerId ?? null,
            clientId: o?.clientId ?? null,
            host: o?.host ?? null,
          };
        });
      const kafkaState = g.state === "Dead" ? (stateOf.get(g.groupId) ?? "Dead") : g.state;
      const type = typeOf.get(g.groupId);
      return topicConsumer({
        id: g.groupId,
        type: type === "classic" || type === "consumer" ? type : null,
        coordinator: coordinators.get(g.groupId),
        active: g.members.length > 0,
        state: CLIENT_STATES[kafkaState] ?? "Unknown",
        kafkaState,
        members: [...readers],
        partitions,
      });
    });
  }

  async create(cluster: string, input: CreateTopicInput, user: string): Promise<void> {
    const kafka = this.#kafka(cluster);
    await kafka.topics.create({
      name: input.topicName,
      ...(input.partitions !== undefined ? { partitions: input.partitions } : {}),
      ...(input.replication !== undefined ? { replication: input.replication } : {}),
      ...(input.configs ? { configs: input.configs } : {}),
    });
    // Answer once the topic is usable. Kafka answers CreateTopics when its controller has
    // committed the topic; the broker's metadata then shows the partitions and their leader,
    // and only after that does the leader open their logs. A client that writes at once would
    // meet LEADER_NOT_AVAILABLE or NOT_LEADER_OR_FOLLOWER, so wait (bounded) until every
    // partition is led and answers ListOffsets, as it will answer Produce.
    const name = input.topicName;
    const ready = async () => {
      const [t] = await kafka.topics.describe([name]);
      if (!t || t.partitions === 0 || (input.partitions !== undefined && t.partitions !== input.partitions)) return false;
      if (t.partitionDetails.some((p) => p.leader < 0)) return false;
      const ends = await kafka.offsets.list(
        t.partitionDetails.map((p) => ({ topic: name, partition: p.partition })),
        "latest",
      );
      return ends.length === t.partitions && ends.every((e) => e.offset >= 0);
    };
    if (!(await settles(ready, SETTLE_MS))) {
      // The topic exists either way: 201 is true, and a client's retry would only get 409.
      this.deps.log.warn("created topic is not yet served by its leaders", { cluster, topic: name });
    }
    // Its creator lists the topics next: the inventory lists them again rather than wait a cadence.
    this.deps.inventory.invalidate(cluster);
    await this.deps.notifications.raise({
      alertId: TOPIC_ALERTS.TOPIC_CREATED.id,
      cluster,
      summary: `Topic '${input.topicName}' has been created by ${user}`,
      category: "Topics",
      instance: input.topicName,
      source: user,
    });
  }

  async delete(cluster: string, name: string, user: string): Promise<void> {
    const kafka = this.#kafka(cluster);
    await kafka.topics.delete(name);
    // Answer once the topic is gone from the metadata clients see. Kafka answers DeleteTopics
    // when its controller has committed the deletion; the brokers' metadata drops the topic a
    // moment later, and a listing in between still shows it (DELETE then GET saw it back).
    const gone = async () => !(await kafka.topics.list({ includeInternal: true })).some((t) => t.name === name);
    if (!(await settles(gone, SETTLE_MS))) {
      // The deletion is committed either way: 200 is true, and a client's retry would only get 404.
      this.deps.log.warn("deleted topic is still in the cluster's metadata", { cluster, topic: name });
    }
    await this.deps.metadata.forget(cluster, name);
    this.deps.inventory.invalidate(cluster);
    this.deps.lag.invalidate(cluster);
    await this.deps.notifications.raise({
      alertId: TOPIC_ALERTS.TOPIC_DELETED.id,
      cluster,
      summary: `Topic '${name}' has been deleted by ${user}`,
      category: "Topics",
      instance: name,
      source: user,
    });
  }

  /**
   * Grows the topic to `count` partitions. Kafka never removes a partition, so a count that is
   * not larger is a 400 saying so; Kafka's own internal topics are not changed by hand. Answers
   * once every new partition is led (bounded, as creation waits).
   */
  async addPartitions(cluster: string, name: string, count: number): Promise<{ previous: number; partitions: number }> {
    const kafka = this.#kafka(cluster);
    const [described] = await kafka.topics.describe([name]);
    const t = described!;
    if (t.internal) throw badRequest(`Topic '${name}' is internal to Kafka: its partitions are not changed by hand`);
    if (count < t.partitions)
      throw badRequest(`Topic '${name}' has ${t.partitions} partitions: Kafka cannot remove partitions, so the count can only grow`, {
        partitions: t.partitions,
      });
    if (count === t.partitions)
      throw badRequest(`Topic '${name}' has ${t.partitions} partitions already: give a larger count`, { partitions: t.partitions });
    await kafka.topics.createPartitions(name, count);
    const ready = async () => {
      const [now] = await kafka.topics.describe([name]);
      return now !== undefined && now.partitions >= count && now.partitionDetails.every((p) => p.leader >= 0);
    };
    if (!(await settles(ready, SETTLE_MS)))
      this.deps.log.warn("added partitions are not yet led", { cluster, topic: name, partitions: count });
    this.deps.inventory.invalidate(cluster);
    this.deps.lag.invalidate(cluster);
    return { previous: t.partitions, partitions: count };
  }

  /** Validated as a whole first (validateOnly), so a bad entry changes nothing. */
  async alterConfigs(cluster: string, name: string, configs: Array<{ key: string; value: string | null }>): Promise<void> {
    const kafka = this.#kafka(cluster);
    const keys = new Set<string>();
    for (const c of configs) {
      if (keys.has(c.key)) throw badRequest(`Config '${c.key}' is given twice`);
      keys.add(c.key);
    }
    await kafka.topics.describe([name]);
    // Incremental alter-configs accepts any name on some brokers: check against what the topic has.
    const known = new Set((await kafka.configs.describeTopic(name)).map((c) => c.name));
    const unknown = configs.filter((c) => !known.has(c.key)).map((c) => c.key);
    if (unknown.length) throw badRequest(`Unknown topic config${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}`, { unknown });
    const ops = configs.map((c) => ({ key: c.key, value: c.value }));
    await kafka.configs.alterTopic(name, ops, { validateOnly: true });
    await kafka.configs.alterTopic(name, ops);
    // A broker applies the change once the controller's metadata reaches it: until then it still
    // describes the old values, and a page read right after the answer showed them. The answer
    // waits (bounded) until the topic is described as changed.
    const applied = async () => {
      const now = new Map((await kafka.configs.describeTopic(name)).map((c) => [c.name, c]));
      return ops.every((o) => {
        const c = now.get(o.key);
        const own = c !== undefined && c.source === "DYNAMIC_TOPIC_CONFIG";
        return o.value === null ? !own : own && (c.sensitive || c.value === o.value);
      });
    };
    if (!(await settles(applied, CONFIG_SETTLE_MS)))
      this.deps.log.warn("a topic's changed configs are not yet described as changed", {
        cluster,
        topic: name,
        configs: ops.map((o) => o.key),
      });
  }

  /**
   * Checks the request, starts the deletion, and answers without waiting for it. The outcome
   * is written to the audit log, with a notification of alert 4002 on success.
   */
  async deleteRecords(cluster: string, name: string, partition: number, offset: number, user: string): Promise<void> {
    const kafka = this.#kafka(cluster);
    const [described] = await kafka.topics.describe([name]);
    if (described!.internal) throw badRequest(`Topic '${name}' is internal to Kafka: its records are not deleted by hand`);
    if (!(await kafka.supportsApi("DeleteRecords")))
      throw new AppError(
        "UNSUPPORTED",
        `Cannot delete records of topic '${name}': the cluster does not offer the DeleteRecords API (it needs Kafka 0.11 or later)`,
      );
    const offsets = await kafka.offsets.bounds([name]);
    const p = offsets.find((o) => o.partition === partition);
    if (!p) throw notFound(`Topic '${name}' has no partition ${partition} (it has ${offsets.length})`);
    // "Up to offset o" deletes every record below o. Past the end, that is every record there
    // is: Kafka would refuse the offset itself (OFFSET_OUT_OF_RANGE), so the deletion goes up to
    // the end. Clients send offsets past the end and expect the usual answer.
    const upTo = Math.min(offset, p.latest);

    const content = {
      topicName: name,
      partition: String(partition),
      offset: String(offset),
      ...(upTo !== offset ? { endOffset: String(upTo) } : {}),
    };
    // The intent is stored before the deletion starts (UNAVAILABLE, and nothing deleted, when it
    // cannot be) and completed when the deletion ends; a stop in between leaves it for the next
    // start to close as outcome UNKNOWN.
    const pending = await this.deps.audit.begin({ type: "TOPIC_DATA", change: "REMOVE", user, content });
    const job = kafka.offsets.deleteRecords(name, partition, upTo).then(
      async (res) => {
        await pending.complete({ content: { lowWatermark: String(res.lowWatermark) } });
        await this.deps.notifications.raise({
          alertId: TOPIC_ALERTS.TOPIC_DATA_DELETED.id,
          cluster,
          summary: `Records of topic '${name}' partition ${partition} up to offset ${offset} have been deleted by ${user}`,
          category: "Topics",
          instance: name,
          source: user,
        });
        this.deps.lag.invalidate(cluster);
        return { ok: true as const };
      },
      async (err: unknown) => {
        const e = err instanceof AppError ? err : new AppError("INTERNAL", "Record deletion failed");
        this.deps.log.warn("record deletion failed", { cluster, topic: name, partition, offset, error: e.message });
        await pending.complete({ failure: `${e.code}: ${e.message}` });
        return { ok: false as const, error: e };
      },
    );
    const tracked = job.finally(() => this.#pending.delete(tracked));
    this.#pending.add(tracked);
  }

  /** Audits a delete-records request refused before any deletion started. */
  async auditRefusedDeletion(params: Record<string, string>, user: string, err: unknown): Promise<void> {
    const reason = err instanceof AppError ? `${err.code}: ${err.message}` : "INTERNAL: unexpected error";
    await this.deps.audit.record({
      type: "TOPIC_DATA",
      change: "REMOVE",
      user,
      content: { topicName: params.topicName, partition: params.partition, offset: params.offset },
      failure: reason,
    });
  }

  /** Waits (bounded) for background deletions, so their audit entries are written before shutdown. */
  async drain(timeoutMs = 5_000): Promise<void> {
    await Promise.race([Promise.allSettled([...this.#pending]), Bun.sleep(timeoutMs)]);
  }
}

/** A registry subject's latest schema, as the topic's page shows it. */
interface Registered {
  type: "AVRO" | "PROTOBUF";
  schema: string;
}

/**
 * What the registry adds to a topic's types. Stored metadata keeps its types; an AVRO (PROTOBUF)
 * side without a stored schema gets the subject's Avro (Protobuf) schema. A guessed side that is
 * in the registry's wire format (guessed AVRO) or has no clue (an empty topic: BYTES) takes the
 * subject's type and schema; a guess the records contradict stays.
 */
function withRegistered(types: TopicMetadata, key: Registered | undefined, value: Registered | undefined): TopicMetadata {
  const side = (type: DataType, schema: string | undefined, registered: Registered | undefined) => {
    if (registered === undefined) return { type, schema };
    if (!types.inferred) return { type, schema: schema ?? (type === registered.type ? registered.schema : undefined) };
    return type === "AVRO" || type === "BYTES" ? { type: registered.type, schema: registered.schema } : { type, schema };
  };
  const k = side(types.keyType, types.keySchema, key);
  const v = side(types.valueType, types.valueSchema, value);
  return {
    ...types,
    keyType: k.type,
    valueType: v.type,
    ...(k.schema !== undefined ? { keySchema: k.schema } : {}),
    ...(v.schema !== undefined ? { valueSchema: v.schema } : {}),
  };
}
