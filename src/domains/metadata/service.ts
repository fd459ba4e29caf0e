import { descriptorMessage, descriptorSchemaText, ProtoSchemaError } from "../../engine/index.ts";
import { badRequest, notFound } from "../../errors.ts";
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

/** What a stored descriptor set answers (see MetadataService.setDescriptor). */
interface DescriptorStored {
  topicName: string;
  side: "key" | "value";
  messageType: string;
  keyType: DataType;
  valueType: DataType;
}

/** The largest descriptor set stored for a topic (its base64 text must fit a metadata schema). */
const MAX_DESCRIPTOR_BYTES = 512 * 1024;

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

  /**
   * Stores a descriptor set (binary FileDescriptorSet) and the message one side of the topic's
   * records holds: the side's type becomes PROTOBUF, its schema the set and the name (see
   * descriptorMessage). The other side keeps its stored type and schema, else the type guessed
   * from the topic's records. A set that does not parse, or has no such message, is a 400.
   */
  async setDescriptor(
    cluster: string,
    topic: string,
    input: { side: "key" | "value"; messageType: string; descriptorSet: Uint8Array },
    user: string,
  ): Promise<DescriptorStored> {
    if (input.descriptorSet.byteLength > MAX_DESCRIPTOR_BYTES)
      throw badRequest(`The descriptor set is ${input.descriptorSet.byteLength} bytes: at most ${MAX_DESCRIPTOR_BYTES} are stored`);
    const text = descriptorSchemaText(input.messageType, input.descriptorSet);
    let fullName: string;
    try {
      fullName = descriptorMessage(text).fullName.slice(1);
    } catch (e) {
      if (!(e instanceof ProtoSchemaError)) throw e;
      throw badRequest(`Invalid descriptor set: ${e.message}`, { errors: [{ field: "descriptorSet", message: e.message }] });
    }
    // The other side as the topic has it now (stored, else guessed); the topic must exist.
    const current = await this.get(cluster, topic);
    const keep = (side: "key" | "value") => {
      const type = side === "key" ? current.keyType : current.valueType;
      const schema = current.inferred ? undefined : side === "key" ? current.keySchema : current.valueSchema;
      return { type, schema };
    };
    const key = input.side === "key" ? { type: "PROTOBUF" as const, schema: text } : keep("key");
    const value = input.side === "value" ? { type: "PROTOBUF" as const, schema: text } : keep("value");
    const m = {
      topicName: topic,
      keyType: key.type,
      valueType: value.type,
      ...(key.schema !== undefined ? { keySchema: key.schema } : {}),
      ...(value.schema !== undefined ? { valueSchema: value.schema } : {}),
    };
    await this.repo.put(cluster, m, user);
    this.#inferred.delete(`${cluster}\u0000${topic}`);
    return { topicName: topic, side: input.side, messageType: fullName, keyType: m.keyType, valueType: m.valueType };
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
