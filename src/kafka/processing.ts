/**
 * What a stream processor's runner needs of Kafka beyond reading: membership of a consumer
 * group (Kafka spreads the input partitions over the members), the group's committed offsets
 * read stable (never past a transaction still open), and a transactional producer that writes
 * output and commits the input offsets in one transaction, fenced by the group's generation
 * (KIP-447): a member that lost its partitions cannot commit for them any more, and a runner
 * restarted under the same transactional id aborts what its dead predecessor left open.
 */

import { type ClusterMetadata, Consumer, type MessageRecord, Producer } from "@platformatic/kafka";
import { AppError } from "../errors.ts";
import { byTopic, callApi, clientOptions, num } from "./client.ts";
import type { KafkaConnection } from "./connection.ts";
import { kafkaErrorName, toAppError } from "./errors.ts";
import { negotiatedProduce, type ProduceApi, type ProduceTopic, rawProduce } from "./raw-produce.ts";
import { type PartitionOutput, TxnOutput } from "./txn-output.ts";

export interface GroupMemberOptions {
  groupId: string;
  /** Static membership: a member restarted under the same id takes its place without a rebalance. */
  instanceId: string;
  topics: string[];
  sessionTimeoutMs?: number;
  rebalanceTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  /** Told each time the member (re)joins: the partitions it now owns, by topic. */
  onAssigned?(assignment: Assignment): void;
  /** Told when the member must rejoin (a rebalance began): what it owns is no longer certain. */
  onRevoking?(): void;
}

/**
 * The generation a runner read its offsets under: its commits carry it, so that once the group
 * moves on (even when this member rejoined) they are refused instead of committing offsets of
 * partitions another member now owns.
 */
export interface Fencing {
  groupId: string;
  generationId: number;
  memberId: string;
  /** The static member's instance id (GroupMemberOptions.instanceId). */
  instanceId: string;
  coordinatorId: number;
}

export interface Assignment {
  generation: number;
  partitions: Map<string, number[]>;
}

/** A member of a consumer group that never consumes through the client: the runner reads itself. */
export class GroupMember {
  readonly #consumer: Consumer;
  readonly #opts: GroupMemberOptions;
  readonly #conn: KafkaConnection;
  #closed = false;

  constructor(conn: KafkaConnection, opts: GroupMemberOptions) {
    this.#conn = conn;
    this.#opts = opts;
    this.#consumer = new Consumer({
      ...clientOptions(conn.config, conn.counter),
      groupId: opts.groupId,
      groupInstanceId: opts.instanceId,
      autocommit: false,
      sessionTimeout: opts.sessionTimeoutMs ?? 10_000,
      rebalanceTimeout: opts.rebalanceTimeoutMs ?? 15_000,
      heartbeatInterval: opts.heartbeatIntervalMs ?? 1_000,
    });
    this.#consumer.on("consumer:group:join", () => {
      if (!this.#closed) this.#opts.onAssigned?.(this.assignment());
    });
    this.#consumer.on("consumer:group:rebalance", () => this.#opts.onRevoking?.());
    this.#consumer.on("consumer:group:rejoin", () => this.#opts.onRevoking?.());
    // Heartbeat and rejoin failures come as events; the runner sees their effect as a failed commit.
    this.#consumer.on("error", () => {});
  }

  get groupId(): string {
    return this.#opts.groupId;
  }

  get generation(): number {
    return this.#consumer.generationId;
  }

  get memberId(): string | null {
    return this.#consumer.memberId;
  }

  assignment(): Assignment {
    const partitions = new Map<string, number[]>();
    for (const a of this.#consumer.assignments ?? []) {
      if (this.#opts.topics.includes(a.topic))
        partitions.set(
          a.topic,
          [...a.partitions].sort((x, y) => x - y),
        );
    }
    return { generation: this.#consumer.generationId, partitions };
  }

  async join(): Promise<Assignment> {
    try {
      this.#consumer.topics.trackAll(...this.#opts.topics);
      await this.#consumer.joinGroup({});
      return this.assignment();
    } catch (err) {
      throw toAppError(err, `Cannot join consumer group '${this.#opts.groupId}'`, this.#conn.name, this.#conn.facts());
    }
  }

  /**
   * The offsets the group committed for `partitions` of `topic` (null where none), read stable:
   * while a transaction that commits offsets for one of them is open, the broker answers
   * UNSTABLE_OFFSET_COMMIT, and this waits (up to `waitMs`) for it to end.
   */
  async committed(topic: string, partitions: number[], waitMs = 30_000): Promise<Map<number, number | null>> {
    const entries = await this.committedEntries(topic, partitions, waitMs);
    return new Map([...entries].map(([p, e]) => [p, e?.offset ?? null]));
  }

  /** As `committed`, with the metadata each offset was committed with (a redrive keeps its counts there). */
  async committedEntries(topic: string, partitions: number[], waitMs = 30_000): Promise<Map<number, CommittedEntry | null>> {
    const deadline = Date.now() + waitMs;
    for (let delay = 50; ; delay = Math.min(delay * 2, 1_000)) {
      try {
        return await this.#committedOnce(topic, partitions);
      } catch (err) {
        if (kafkaErrorName(err) !== "UNSTABLE_OFFSET_COMMIT" || Date.now() + delay > deadline) {
          throw toAppError(err, `Cannot read the offsets of consumer group '${this.#opts.groupId}'`, this.#conn.name, this.#conn.facts());
        }
        await Bun.sleep(delay);
      }
    }
  }

  async #committedOnce(topic: string, partitions: number[]): Promise<Map<number, CommittedEntry | null>> {
    const consumer = this.#consumer;
    const coordinator = await consumer.findGroupCoordinator();
    const md = await consumer.metadata({ topics: [] });
    const broker = md.brokers.get(coordinator) ?? null;
    type Answer = {
      groups?: Array<{
        errorCode: number;
        topics: Array<{ name: string; partitions: Array<{ partitionIndex: number; committedOffset: bigint; metadata?: string | null }> }>;
      }>;
    };
    const answer = await callApi<Answer>(
      consumer,
      "OffsetFetch",
      broker,
      [{ groupId: this.#opts.groupId, memberId: null, memberEpoch: -1, topics: [{ name: topic, partitionIndexes: partitions }] }],
      true,
    );
    const out = new Map<number, CommittedEntry | null>(partitions.map((p) => [p, null]));
    for (const g of answer.groups ?? []) {
      for (const t of g.topics) {
        if (t.name !== topic) continue;
        for (const p of t.partitions)
          if (p.committedOffset >= 0n) out.set(p.partitionIndex, { offset: num(p.committedOffset), metadata: p.metadata ?? null });
      }
    }
    return out;
  }

  /** The metadata a transaction's offset commit carries to be fenced by this generation. */
  fencing(): Fencing {
    return {
      groupId: this.#opts.groupId,
      generationId: this.#consumer.generationId,
      memberId: this.#consumer.memberId ?? "",
      instanceId: this.#opts.instanceId,
      coordinatorId: this.#consumer.coordinatorId ?? -1,
    };
  }

  /** The client's consumer, for a transaction's AddOffsetsToTxn (it reads only the group id). */
  get consumer(): Consumer {
    return this.#consumer;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.race([this.#consumer.close(true).catch(() => {}), Bun.sleep(5_000)]);
  }
}

export interface TxnRecord {
  topic: string;
  partition: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
  timestamp?: number;
  headers?: Array<[string, Uint8Array]>;
}

export interface TxnOffset {
  topic: string;
  partition: number;
  /** The next offset to read (one past the last record processed). */
  offset: number;
  /** Committed with the offset, in the same transaction (at most the broker's offset.metadata.max.bytes, 4096 by default). */
  metadata?: string;
}

/** A committed offset and the metadata it was committed with. */
export interface CommittedEntry {
  offset: number;
  metadata: string | null;
}

/** Kafka errors after which the producer's identity is gone: a new producer must be made. */
const FENCED = new Set([
  "PRODUCER_FENCED",
  "INVALID_PRODUCER_EPOCH",
  "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
  "INVALID_PRODUCER_ID_MAPPING",
]);

/** Kafka errors that mean the group moved on: the runner must rejoin and re-read its offsets. */
const GROUP_MOVED = new Set(["ILLEGAL_GENERATION", "UNKNOWN_MEMBER_ID", "REBALANCE_IN_PROGRESS", "FENCED_INSTANCE_ID"]);

export type TxnFailure = "fenced" | "group" | "other";

/** What a failed transaction means for the runner (see FENCED and GROUP_MOVED). */
export function txnFailure(err: unknown): TxnFailure {
  const details = err instanceof AppError ? (err.details as { txnFailure?: TxnFailure } | undefined) : undefined;
  if (details?.txnFailure) return details.txnFailure;
  const name = kafkaErrorName(err);
  if (name !== null && FENCED.has(name)) return "fenced";
  if (name !== null && GROUP_MOVED.has(name)) return "group";
  return "other";
}

/** The sequence after `count` records from `sequence` (Kafka's wraps past 2^31 - 1 to 0). */
export function nextSequence(sequence: number, count: number): number {
  const max = 0x7fffffff;
  return sequence > max - count ? count - (max - sequence) - 1 : sequence + count;
}

/** Records given as a list, as one transaction's output. */
export function outputOf(records: readonly TxnRecord[]): TxnOutput {
  const out = new TxnOutput();
  for (const r of records) out.add(r.topic, r.partition, r.key, r.value, r.timestamp, r.headers ?? null);
  return out;
}

/**
 * A transactional producer: each `commit` is one Kafka transaction holding output records and
 * input offsets. The transactional id is the runner's: a producer made under the same id fences
 * this one and aborts its open transaction.
 */
export class TransactionalWriter {
  readonly #producer: Producer;
  readonly #conn: KafkaConnection;
  readonly transactionalId: string;
  readonly #deadlineMs: number;
  readonly #timeoutMs: number;
  /** The next sequence of each partition written to, for the producer identity `#identity`. */
  readonly #sequences = new Map<string, number>();
  #identity: string | null = null;
  /** Set when a Produce failed: the broker's sequences may be ahead of ours, so this producer writes no more. */
  #sequencesLost = false;
  /** The raw Produce at the version negotiated, once known. */
  #produceApi: ProduceApi | null = null;

  constructor(conn: KafkaConnection, transactionalId: string, transactionTimeoutMs = 10_000) {
    this.#conn = conn;
    this.transactionalId = transactionalId;
    this.#timeoutMs = transactionTimeoutMs;
    this.#deadlineMs = Math.max(30_000, 3 * transactionTimeoutMs);
    this.#producer = new Producer({
      ...clientOptions(conn.config, conn.counter),
      idempotent: true,
      transactionalId,
      acks: -1,
      // The client sends its request timeout as the transaction timeout: a transaction left
      // open by a runner that died is aborted by the broker after this.
      timeout: transactionTimeoutMs,
      // A new producer says so (-1, -1): the client's default (0, 0) reads to the broker as an
      // old producer's identity, fenced when another producer used the transactional id before.
      producerId: -1n,
      producerEpoch: -1,
    });
  }

  /**
   * Takes the transactional id (InitProducerId) before the runner reads its offsets: this fences
   * a predecessor and has the broker abort the transaction it left open, whose offsets would
   * otherwise keep the group's committed offsets unstable until that transaction timed out.
   */
  async init(): Promise<void> {
    try {
      const txn = await this.#producer.beginTransaction();
      // Nothing was sent: the transaction ends here, without a word to the broker.
      await txn.cancel();
    } catch (err) {
      throw toAppError(err, `Cannot start the transactional producer '${this.transactionalId}'`, this.#conn.name, this.#conn.facts());
    }
  }

  /**
   * Writes `records` and commits `offsets` for `member`'s group, fenced by `generation`, in one transaction. On failure
   * the transaction is aborted (when the broker still knows it) and the error thrown; see
   * txnFailure for what the runner does next.
   */
  async commit(
    records: TxnOutput | readonly TxnRecord[],
    offsets: TxnOffset[],
    member: GroupMember,
    generation: Fencing = member.fencing(),
  ): Promise<void> {
    const step = { name: "BeginTransaction" };
    let timer: ReturnType<typeof setTimeout> | undefined;
    // A request the client never answers would hold the runner for good: after the deadline
    // the transaction counts as failed and the producer as lost (the broker aborts what it
    // holds once the transaction timeout passes).
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(
          new AppError(
            "UNAVAILABLE",
            `A transaction of '${this.transactionalId}' did not end within ${this.#deadlineMs} ms (at ${step.name})`,
            {
              details: { txnFailure: "fenced" satisfies TxnFailure, step: step.name },
            },
          ),
        );
      }, this.#deadlineMs);
    });
    const work = this.#transaction(records, offsets, member, generation, step);
    work.catch(() => {});
    try {
      await Promise.race([work, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  async #transaction(
    records: TxnOutput | readonly TxnRecord[],
    offsets: TxnOffset[],
    member: GroupMember,
    generation: Fencing,
    step: { name: string },
  ): Promise<void> {
    const txn = await this.#producer.beginTransaction();
    try {
      const output = records instanceof TxnOutput ? records : outputOf(records);
      if (!output.empty) {
        step.name = "AddPartitionsToTxn";
        const partitions = output.partitions();
        const md = await this.#producer.metadata({ topics: [...new Set(partitions.map((p) => p.topic))] });
        for (const p of partitions) {
          const count = md.topics.get(p.topic)?.partitionsCount ?? 0;
          if (p.partition >= count) throw new AppError("NOT_FOUND", `Topic '${p.topic}' has no partition ${p.partition}`);
        }
        await txn.addPartitions(md, partitions.map((p) => ({ topic: p.topic, partition: p.partition })) as MessageRecord[]);
        step.name = "Produce";
        await this.#produce(partitions, md);
      }
      if (offsets.length > 0) {
        step.name = "AddOffsetsToTxn";
        await txn.addConsumer(member.consumer);
        step.name = "TxnOffsetCommit";
        await this.#commitOffsets(offsets, generation);
      }
      step.name = "EndTxn";
      await txn.commit();
    } catch (err) {
      if (!txn.completed) await txn.abort().catch(() => txn.cancel().catch(() => {}));
      const failure = txnFailure(err);
      const mapped = toAppError(
        err,
        `Cannot commit a transaction of '${this.transactionalId}' (at ${step.name})`,
        this.#conn.name,
        this.#conn.facts(),
      );
      throw new AppError(mapped.code, mapped.message, { details: { ...(mapped.details as object), txnFailure: failure }, cause: err });
    }
  }

  /**
   * Sends the batches of a transaction: each partition's first batch to its leader (one request
   * per leader, leaders in parallel), then each partition's second, and so on, with the
   * producer's id, epoch and the partition's next sequence in each batch header. A failed send
   * leaves the broker's sequences unknown: this producer then writes no more (the runner makes a
   * new one, with a new epoch).
   */
  async #produce(partitions: PartitionOutput[], md: ClusterMetadata): Promise<void> {
    const producer = this.#producer;
    if (this.#sequencesLost) {
      throw new AppError("UNAVAILABLE", `The producer '${this.transactionalId}' lost a send; a new one must take over`, {
        details: { txnFailure: "fenced" satisfies TxnFailure },
      });
    }
    const api = (this.#produceApi ??= await negotiatedProduce(producer));
    const producerId = producer.producerId ?? -1n;
    const epoch = producer.producerEpoch ?? -1;
    const identity = `${producerId}:${epoch}`;
    if (identity !== this.#identity) {
      this.#sequences.clear();
      this.#identity = identity;
    }
    const rounds = Math.max(...partitions.map((p) => p.batches.length));
    try {
      for (let round = 0; round < rounds; round++) {
        const byLeader = new Map<number, Map<string, ProduceTopic>>();
        const sent: Array<[string, number, number]> = [];
        for (const p of partitions) {
          const batch = p.batches[round];
          if (batch === undefined) continue;
          const at = `${p.topic}:${p.partition}`;
          const sequence = this.#sequences.get(at) ?? 0;
          const leader = md.topics.get(p.topic)!.partitions[p.partition]!.leader;
          let topics = byLeader.get(leader);
          if (!topics) byLeader.set(leader, (topics = new Map()));
          let topic = topics.get(p.topic);
          if (!topic) topics.set(p.topic, (topic = { name: p.topic, partitions: [] }));
          topic.partitions.push({ partition: p.partition, batch: batch.finish(producerId, epoch, sequence, true) });
          sent.push([at, sequence, batch.count]);
        }
        await Promise.all(
          [...byLeader].map(([leader, topics]) => {
            const broker = md.brokers.get(leader);
            if (!broker) throw new AppError("UNAVAILABLE", `The leader ${leader} is not among the brokers known`);
            return rawProduce(producer, api, broker, this.transactionalId, -1, this.#timeoutMs, [...topics.values()]);
          }),
        );
        for (const [at, sequence, count] of sent) this.#sequences.set(at, nextSequence(sequence, count));
      }
    } catch (err) {
      this.#sequencesLost = true;
      throw err;
    }
  }

  /**
   * One TxnOffsetCommit for every partition (the client sends one request per partition, one
   * after another), to the group's coordinator, fenced by the generation, the member and its
   * static instance id.
   */
  async #commitOffsets(offsets: TxnOffset[], generation: Fencing): Promise<void> {
    const producer = this.#producer;
    const md = await producer.metadata({ topics: [] });
    const broker = md.brokers.get(generation.coordinatorId) ?? null;
    if (broker === null) throw new AppError("UNAVAILABLE", `The coordinator of group '${generation.groupId}' is not known`);
    const topics = [...byTopic(offsets)].map(([name, list]) => ({
      name,
      partitions: list.map((o) => ({
        partitionIndex: o.partition,
        committedOffset: BigInt(o.offset),
        committedLeaderEpoch: -1,
        committedMetadata: o.metadata ?? null,
      })),
    }));
    await callApi(
      producer,
      "TxnOffsetCommit",
      broker,
      this.transactionalId,
      generation.groupId,
      producer.producerId,
      producer.producerEpoch,
      generation.generationId,
      generation.memberId,
      generation.instanceId,
      topics,
    );
  }

  async close(): Promise<void> {
    await Promise.race([this.#producer.close(true).catch(() => {}), Bun.sleep(5_000)]);
  }
}

export { partitionForKey } from "./murmur2.ts";

/** A cluster's door to group membership and transactions (KafkaCluster.processing). */
export class ProcessingOps {
  readonly #conn: KafkaConnection;

  constructor(conn: KafkaConnection) {
    this.#conn = conn;
  }

  member(opts: GroupMemberOptions): GroupMember {
    this.#conn.checkOpen();
    return new GroupMember(this.#conn, opts);
  }

  writer(transactionalId: string, transactionTimeoutMs?: number): TransactionalWriter {
    this.#conn.checkOpen();
    return new TransactionalWriter(this.#conn, transactionalId, transactionTimeoutMs);
  }
}
