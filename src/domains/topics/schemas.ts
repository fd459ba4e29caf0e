/**
 * The request and answer shapes of the topic routes. Imports only zod and plain lists: the UI
 * takes its types from here (`import type`), so the page and the server cannot drift apart.
 */
import { z } from "zod";
import { listQueryFields } from "../shared/list-query.ts";
import { partitionLag } from "../shared/schemas.ts";
import { DATA_TYPES } from "../shared/topic-types.ts";
import { topicName } from "./names.ts";

/** Counts, offsets, rates and times are integers: the Go client decodes them as int64. */
const int = () => z.number().int();

/** Config values arrive as strings, and from some clients as numbers or booleans. */
const configValue = z.union([z.string(), z.number(), z.boolean()]).transform(String);
const configKey = z.string().min(1).max(255);

export const createTopicBody = z.object({
  topicName,
  partitions: z.number().int().min(1).max(100_000).optional(),
  replication: z.number().int().min(1).max(32_767).optional(),
  /** The Go client sends `"configs": null` when it has none (a nil map). */
  configs: z
    .record(configKey, configValue)
    .nullish()
    .transform((v) => v ?? undefined),
});

/**
 * A `null` entry in the list is skipped (a client may build the list with holes); a `null` value
 * resets the key to its default.
 */
export const topicConfigBody = z.object({
  configs: z
    .array(z.union([z.object({ key: configKey, value: z.union([configValue, z.null()]) }), z.null()]))
    .max(1_000)
    .transform((list) => list.filter((x) => x !== null))
    .refine((list) => list.length > 0, "at least one config is needed"),
});

export const topicParam = z.object({ topicName });

/** Most partitions a topic may be given (as at creation). */
export const MAX_PARTITIONS = 100_000;

export const partitionsBody = z.object({
  partitions: z
    .number()
    .int("partitions must be a whole number")
    .min(1, "partitions must be at least 1")
    .max(MAX_PARTITIONS, `partitions must be at most ${MAX_PARTITIONS}`),
});

export const partitionsAnswer = z.object({
  topicName: z.string(),
  partitions: int().describe("the partition count now"),
  previous: int().describe("the partition count before"),
});

export const topicConfigEntry = z.object({
  configuration: z.string(),
  value: z.string().nullable(),
  defaultValue: z.string().nullable(),
  documentation: z.string().nullable(),
});

/** One partition of a group reading the topic (COMPAT.md: topic consumers). */
export const topicConsumerPartition = partitionLag.extend({
  consumerId: z.string().nullable(),
  clientId: z.string().nullable(),
  host: z.string().nullable(),
});

/** The states the clients know a group by (the Go client decodes these names). */
export const CLIENT_GROUP_STATES = [
  "Unknown",
  "Stable",
  "Rebalancing",
  "Dead",
  "NoActiveMembers",
  "ExistsNot",
  "CoordinatorNotFound",
] as const;

/**
 * One group reading the topic, in the shape the clients decode (COMPAT.md, CLIENTS.md 5.3):
 * `consumers` holds the ids of the members reading the topic, as strings (member objects make
 * the Go client fail on the whole topic); what each partition's reader is and how far behind
 * it is lies under `partitions`.
 */
export const topicConsumerGroup = z.object({
  id: z.string(),
  type: z
    .enum(["classic", "consumer", "share"])
    .optional()
    .describe("the group's protocol: classic, consumer (KIP-848) or share (KIP-932); a share group's currentOffset is its start offset"),
  coordinator: z
    .object({ id: int(), host: z.string(), port: int(), rack: z.string().nullable() })
    .nullable()
    .describe("the group's coordinator broker; null when it cannot be found (a group being removed)"),
  active: z.boolean(),
  state: z.enum(CLIENT_GROUP_STATES),
  kafkaState: z.string().describe("Kafka's name of the state"),
  consumers: z.array(z.string()).describe("ids of the members reading the topic"),
  consumersCount: int(),
  topicPartitionsCount: int().describe("partitions of this topic the group has committed offsets for"),
  lag: int(),
  minLag: int(),
  maxLag: int(),
  partitions: z.array(topicConsumerPartition),
});

export const partitionMessages = z.object({
  partition: int(),
  messages: int(),
  begin: int(),
  end: int(),
  leader: int().describe("Broker id of the partition's leader; -1 when it has none (offline)"),
  replicas: z.array(int()).describe("Broker ids holding a replica"),
  isr: z.array(int()).describe("Broker ids of the in-sync replicas"),
});

export const topicShape = z.object({
  topicName: z.string(),
  keyType: z.enum(DATA_TYPES),
  valueType: z.enum(DATA_TYPES),
  keySchema: z.string().nullable(),
  valueSchema: z.string().nullable(),
  inferred: z.boolean(),
  partitions: int(),
  replication: int(),
  isControlTopic: z.boolean(),
  internalTo: z
    .string()
    .nullable()
    .describe("whose machinery an internal topic is (Kafka, Kafka Connect, the schema registry, Loupe, MirrorMaker); null for others"),
  isMarkedForDeletion: z.boolean(),
  messagesPerSecond: int().describe("whole messages per second"),
  totalMessages: int(),
  timestamp: int().describe("epoch ms of the newest record; 0 when empty"),
  config: z.array(topicConfigEntry),
  consumers: z.array(topicConsumerGroup),
  messagesPerPartition: z.array(partitionMessages),
  access: z
    .object({
      read: z.boolean().describe("the caller may read the topic's records"),
      write: z.boolean().describe("the caller may write records and change the topic"),
    })
    .describe("what the caller's groups allow on this topic (internal topics: an unrestricted admin's only)"),
});

export const topicListItem = z.object({
  topicName: z.string(),
  partitions: int(),
  replication: int(),
  isControlTopic: z.boolean(),
  isMarkedForDeletion: z.boolean(),
  keyType: z.enum(DATA_TYPES),
  valueType: z.enum(DATA_TYPES),
  inferred: z.boolean(),
  typesKnown: z
    .boolean()
    .describe("false when no types are stored and none was guessed yet from records: keyType and valueType then mean not known yet"),
  totalMessages: int(),
  messagesPerSecond: int().describe("whole messages per second"),
  sizeBytes: int().nullable().describe("bytes of one copy of the topic on disk; null when the brokers do not say"),
  lag: int().nullable().describe("records not yet read by the groups that committed on the topic; null when unknown"),
});

/** What the topic list sorts by (`orderBy`). */
export const TOPIC_ORDER = ["name", "partitions", "messages", "size", "rate", "lag"] as const;

/** `GET /api/topics`: every topic without parameters; searched, sorted and paged with them. */
export const topicListQuery = z.object({
  ...listQueryFields,
  orderBy: z
    .enum(TOPIC_ORDER)
    .optional()
    .describe("name (the default), partitions, messages, size, rate or lag: messages, size and lag up to one inventory interval old"),
  internal: z
    .enum(["0", "1"])
    .optional()
    .describe("0 leaves out control topics (Kafka's, Connect's, the registry's, Loupe's); 1, the default, shows them"),
});
export type TopicListQuery = z.output<typeof topicListQuery>;

// ---------------------------------------------------------------------------------------------
// Reading records: the message browser

/** Bounds of one read of the message browser (GET /api/topics/{t}/records). */
export const BROWSE_LIMITS = Object.freeze({
  /** Most records one answer holds (`limit`), and its default. */
  records: 500,
  defaultRecords: 50,
  /** Most bytes of keys, values and headers one answer holds; the record that would pass it is left out. */
  answerBytes: 4 * 1024 * 1024,
  /** Longest shown text of one key or value, and most raw bytes of one sent (base64). */
  textChars: 64 * 1024,
  rawBytes: 64 * 1024,
  /** Most time one read takes before it answers with what it has. */
  timeMs: 5_000,
  /** Reads of one user at once (a live tail asks every second or two). */
  perUser: 4,
});

/** `p:o,p:o`: a position (offset) per partition. */
const positions = z
  .string()
  .max(20_000)
  .regex(/^(\d{1,9}:\d{1,18})(,\d{1,9}:\d{1,18})*$/, "positions are partition:offset pairs separated by commas (0:120,1:98)")
  .transform((text) => {
    const out = new Map<number, number>();
    for (const pair of text.split(",")) {
      const [p, o] = pair.split(":").map(Number) as [number, number];
      out.set(p, o);
    }
    return out;
  })
  .refine((m) => [...m.values()].every(Number.isSafeInteger), "an offset is too large");

const wholeNumber = (what: string, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .regex(/^\d{1,18}$/, `${what} must be a non-negative whole number`)
    .transform(Number)
    .refine((n) => Number.isSafeInteger(n) && n <= max, `${what} is too large`);

export const SEEKS = ["newest", "oldest", "offset", "time"] as const;

export const browseQuery = z
  .object({
    partition: wholeNumber("partition", 1_000_000).optional(),
    seek: z.enum(SEEKS).default("newest").describe("newest first (default), oldest first, from an offset, or from a time"),
    offset: wholeNumber("offset").optional().describe("seek=offset: the first offset read in each partition read"),
    time: wholeNumber("time").optional().describe("seek=time: epoch ms; each partition from its first record at or after it"),
    after: positions.optional().describe("the next offset per partition, to read on forward from (a live tail, 'load more')"),
    before: positions.optional().describe("offsets per partition below which to read newest first ('load older')"),
    limit: wholeNumber("limit", BROWSE_LIMITS.records)
      .refine((n) => n >= 1, "limit must be at least 1")
      .default(BROWSE_LIMITS.defaultRecords),
  })
  .superRefine((q, ctx) => {
    if (q.seek === "offset" && q.offset === undefined)
      ctx.addIssue({ code: "custom", path: ["offset"], message: "seek=offset needs offset" });
    if (q.seek === "time" && q.time === undefined) ctx.addIssue({ code: "custom", path: ["time"], message: "seek=time needs time" });
    if (q.after && q.before) ctx.addIssue({ code: "custom", path: ["before"], message: "give after or before, not both" });
  });

const bytesShape = z
  .object({
    size: int().describe("bytes in the record"),
    format: z.string().describe("how it was read: AVRO, PROTOBUF, JSON, STRING, INT, LONG, FLOAT, DOUBLE or BYTES"),
    text: z.string().describe("the decoded value: JSON text for JSON and Avro, the text itself for STRING, base64 for BYTES"),
    textCut: z.boolean().describe("the text is cut at BROWSE_LIMITS.textChars"),
    base64: z.string().describe("the raw bytes, base64, at most BROWSE_LIMITS.rawBytes of them"),
    rawCut: z.boolean().describe("base64 holds only the first BROWSE_LIMITS.rawBytes bytes"),
    error: z.string().optional().describe("why it could not be decoded as its format says (then text is base64)"),
    masked: z
      .boolean()
      .optional()
      .describe("true when masking policies hide fields of the record from the caller: text is masked, base64 empty (docs/masking.md)"),
  })
  .nullable();

export const browsedRecord = z.object({
  partition: int(),
  offset: int(),
  timestamp: int(),
  timestampType: z.enum(["CreateTime", "LogAppendTime"]),
  key: bytesShape,
  value: bytesShape,
  headers: z.array(
    z.object({
      key: z.string(),
      value: z.string().nullable().describe("UTF-8 text, or base64 when the bytes are no text"),
      base64: z.boolean().describe("value is base64 (the bytes are no UTF-8 text)"),
    }),
  ),
});

export const STOP_REASONS = ["END", "LIMIT", "MAX_BYTES", "TIME"] as const;

export const browseAnswer = z.object({
  topicName: z.string(),
  order: z.enum(["newest", "oldest"]).describe("newest first, or oldest first"),
  records: z.array(browsedRecord),
  partitions: z
    .array(
      z.object({
        partition: int(),
        begin: int().describe("first offset in the log now"),
        end: int().describe("end offset when the read began"),
        from: int().describe("first offset read"),
        next: int().describe("the offset after the newest record read or skipped: where a tail goes on"),
        first: int().describe("the lowest offset answered (from when none): where 'load older' goes on"),
      }),
    )
    .describe("each partition read"),
  stopReason: z.enum(STOP_REASONS).describe("END: everything asked for was read; otherwise the bound that cut the answer"),
  message: z.string().nullable().describe("what was left out and why, in words; null for END"),
});

// ---------------------------------------------------------------------------------------------
// Writing records: the produce dialog

/** The formats records are written in (those of INSERT). */
export const WRITE_FORMATS = ["AVRO", "BYTES", "DOUBLE", "FLOAT", "INT", "JSON", "LONG", "PROTOBUF", "STRING"] as const;

/** Bounds of one produce request (also the request body's, server.bodyLimit). */
export const PRODUCE_LIMITS = Object.freeze({
  records: 1_000,
  headersPerRecord: 64,
  headerKeyChars: 255,
  /** Encoded bytes of keys, values and headers in one request. */
  bytes: 1024 * 1024,
});

const header = z.object({
  key: z.string().min(1, "a header needs a key").max(PRODUCE_LIMITS.headerKeyChars),
  value: z.string(),
});

export const produceRecord = z.object({
  key: z
    .string()
    .nullish()
    .describe("the key as text in its format (JSON text, Avro and Protobuf as JSON, base64 for BYTES); absent or null: no key"),
  value: z.string().nullish().describe("the value as text in its format; absent or null: no value (a tombstone)"),
  headers: z
    .union([z.array(header), z.record(z.string().min(1).max(PRODUCE_LIMITS.headerKeyChars), z.string())])
    .optional()
    .transform(
      (h): Array<{ key: string; value: string }> =>
        h === undefined ? [] : Array.isArray(h) ? h : Object.entries(h).map(([key, value]) => ({ key, value })),
    )
    .refine((h) => h.length <= PRODUCE_LIMITS.headersPerRecord, `at most ${PRODUCE_LIMITS.headersPerRecord} headers per record`),
  partition: z.number().int().min(0).optional().describe("absent: by the key (Kafka's partitioner), round robin without one"),
});

export const produceBody = z.object({
  keyFormat: z.enum(WRITE_FORMATS).optional().describe("absent: the topic's metadata, else its registry subject, else STRING"),
  valueFormat: z.enum(WRITE_FORMATS).optional().describe("absent: the topic's metadata, else its registry subject, else JSON"),
  records: z
    .array(produceRecord)
    .min(1, "at least one record is needed")
    .max(PRODUCE_LIMITS.records, `at most ${PRODUCE_LIMITS.records} records per request`),
});

export const produceAnswer = z.object({
  topicName: z.string(),
  records: int(),
  keyFormat: z.enum(WRITE_FORMATS),
  valueFormat: z.enum(WRITE_FORMATS),
  offsets: z.array(z.object({ partition: int(), offset: int() })).describe("where each record went, in the order sent"),
});

const sideFormat = z.object({
  format: z.enum(WRITE_FORMATS).nullable().describe("null when the side cannot be written as the topic says (see problems)"),
  source: z
    .enum(["chosen", "metadata", "registry", "default"])
    .describe(
      "where the format comes from: the request's keyFormat/valueFormat, the topic's metadata, its registry subject, or the default",
    ),
  schema: z
    .string()
    .nullable()
    .describe("the schema values are written in: Avro schema text (AVRO), the registered .proto text (PROTOBUF)"),
  subject: z.string().nullable().describe("the registry subject of that schema; null without one"),
  template: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe(
      "PROTOBUF: a value to start from, every field of the message with its default (the produce dialog's template); null otherwise",
    ),
});

export const writeFormatsAnswer = z.object({
  topicName: z.string(),
  partitions: int(),
  key: sideFormat,
  value: sideFormat,
  /** When a side cannot be written as its source says (an Avro type without a schema). */
  problems: z.array(z.string()),
});

export type TopicShape = z.output<typeof topicShape>;
export type TopicConfigEntry = z.output<typeof topicConfigEntry>;
export type TopicConsumerPartition = z.output<typeof topicConsumerPartition>;
export type TopicConsumerGroup = z.output<typeof topicConsumerGroup>;
export type ClientGroupState = (typeof CLIENT_GROUP_STATES)[number];
export type PartitionMessages = z.output<typeof partitionMessages>;
export type CreateTopicInput = z.output<typeof createTopicBody>;
export type TopicListItemShape = z.output<typeof topicListItem>;
export type BrowseAnswer = z.output<typeof browseAnswer>;
export type BrowsedRecord = z.output<typeof browsedRecord>;
export type ProduceBody = z.input<typeof produceBody>;
export type CreateTopicBody = z.input<typeof createTopicBody>;
export type PartitionsAnswer = z.output<typeof partitionsAnswer>;
export type ProduceAnswer = z.output<typeof produceAnswer>;
export type WriteFormats = z.output<typeof writeFormatsAnswer>;
export type WriteFormat = (typeof WRITE_FORMATS)[number];
export type Seek = (typeof SEEKS)[number];
