import { notFound } from "../../errors.ts";
import type { KafkaPool, RawRecord } from "../../kafka/index.ts";
import { readTail } from "../topics/sample.ts";
import { inferType } from "./infer.ts";
import type { MetadataRepo } from "./repo.ts";
import { checkSchema, type DataType, parseDataType, type TopicMetadata } from "./types.ts";

export interface MetadataInput {
  keyType: string;
  valueType: string;
  keySchema?: string;
  valueSchema?: string;
}

/** Records sampled per partition, and partitions sampled, to guess types. */
const SAMPLE_PER_PARTITION = 3;
const SAMPLE_PARTITIONS = 10;
/** A guess answers the topic's page this long; then the page reads the topic and guesses again. */
const INFERRED_TTL_MS = 60_000;
/**
 * Guesses remembered for the topic list, which reads no records: the latest guess of each topic,
 * whatever its age, up to this many topics (the oldest guesses go first beyond it).
 */
const REMEMBERED_GUESSES = 100_000;

export class MetadataService {
  /** Latest guess per cluster and topic, oldest first (a new guess moves its topic to the end). */
  readonly #inferred = new Map<string, { at: number; value: TopicMetadata }>();

  constructor(
    private readonly repo: MetadataRepo,
    private readonly pool: KafkaPool,
  ) {}

  list(cluster: string): Promise<TopicMetadata[]> {
    return this.repo.list(cluster);
  }

  /** Stored metadata, else types guessed from the topic's records (`inferred: true`). */
  async get(cluster: string, topic: string): Promise<TopicMetadata> {
    const stored = await this.repo.get(cluster, topic);
    if (stored) return stored;
    const kafka = this.pool.get(cluster);
    const [described] = await kafka.topics.describe([topic]).catch((e: { code?: string }) => {
      throw e.code === "NOT_FOUND" ? notFound(`No metadata for topic '${topic}': the topic does not exist`) : e;
    });
    // Internal topics hold Kafka's own binary records (and cannot be read by offset here).
    if (described!.internal) return { topicName: topic, keyType: "BYTES", valueType: "BYTES", inferred: true };
    const offsets = await kafka.offsets.bounds([topic]);
    const cached = this.#cachedGuess(cluster, topic);
    if (cached) return cached;
    const records = await readTail(
      kafka,
      topic,
      offsets.map((o) => ({ partition: o.partition, begin: o.earliest, end: o.latest })),
      { perPartition: SAMPLE_PER_PARTITION, maxPartitions: SAMPLE_PARTITIONS },
    );
    return this.guess(cluster, topic, records);
  }

  /** Stored metadata, or a guess from records the caller already read (GET topic). */
  async typesFor(cluster: string, topic: string, records: RawRecord[]): Promise<TopicMetadata> {
    return (await this.repo.get(cluster, topic)) ?? this.#cachedGuess(cluster, topic) ?? this.guess(cluster, topic, records);
  }

  guess(cluster: string, topic: string, records: RawRecord[]): TopicMetadata {
    // An empty topic (or one with only null keys) gives no clue: BYTES says "uninterpreted".
    const value: TopicMetadata = {
      topicName: topic,
      keyType: inferType(records.map((r) => r.key)) ?? "BYTES",
      valueType: inferType(records.map((r) => r.value)) ?? "BYTES",
      inferred: true,
    };
    if (records.length > 0) {
      const key = `${cluster}\u0000${topic}`;
      this.#inferred.delete(key);
      this.#inferred.set(key, { at: Date.now(), value });
      if (this.#inferred.size > REMEMBERED_GUESSES) this.#inferred.delete(this.#inferred.keys().next().value!);
    }
    return value;
  }

  /**
   * The types last guessed for a topic, however old: the topic list reads no records itself and
   * shows what the topic's page (or any other guess) last found, until the next guess replaces it.
   */
  lastGuess(cluster: string, topic: string): TopicMetadata | undefined {
    return this.#inferred.get(`${cluster}\u0000${topic}`)?.value;
  }

  #cachedGuess(cluster: string, topic: string): TopicMetadata | undefined {
    const hit = this.#inferred.get(`${cluster}\u0000${topic}`);
    return hit && Date.now() - hit.at < INFERRED_TTL_MS ? hit.value : undefined;
  }

  /** Validates types and schemas, checks the topic exists, then stores. */
  async set(cluster: string, topic: string, input: MetadataInput, user: string): Promise<TopicMetadata> {
    const keyType: DataType = parseDataType(input.keyType, "keyType");
    const valueType: DataType = parseDataType(input.valueType, "valueType");
    checkSchema(keyType, input.keySchema, "keySchema");
    checkSchema(valueType, input.valueSchema, "valueSchema");
    await this.pool.get(cluster).topics.describe([topic]);
    const m = {
      topicName: topic,
      keyType,
      valueType,
      ...(input.keySchema !== undefined ? { keySchema: input.keySchema } : {}),
      ...(input.valueSchema !== undefined ? { valueSchema: input.valueSchema } : {}),
    };
    await this.repo.put(cluster, m, user);
    this.#inferred.delete(`${cluster}\u0000${topic}`);
    return { ...m, inferred: false };
  }

  async delete(cluster: string, topic: string): Promise<void> {
    if (!(await this.repo.delete(cluster, topic))) throw notFound(`No metadata stored for topic '${topic}'`);
    this.#inferred.delete(`${cluster}\u0000${topic}`);
  }

  /** Forgets a deleted topic's metadata; quiet when there was none. */
  async forget(cluster: string, topic: string): Promise<void> {
    await this.repo.delete(cluster, topic);
    this.#inferred.delete(`${cluster}\u0000${topic}`);
  }
}
