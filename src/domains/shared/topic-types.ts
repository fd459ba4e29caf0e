/**
 * A topic's key and value types as Loupe stores them (the metadata area) and shows them (the
 * topic list and page): here, below both, so that neither area imports the other for them.
 * Imports only zod: the UI takes the list and the types from here.
 */
import { z } from "zod";

export const DATA_TYPES = ["AVRO", "JSON", "STRING", "INT", "LONG", "DOUBLE", "FLOAT", "BYTES", "PROTOBUF"] as const;
export type DataType = (typeof DATA_TYPES)[number];

/** The SPEC's topic metadata, plus `inferred` when the types were guessed from records. */
export const topicMetadata = z.object({
  topicName: z.string(),
  keyType: z.enum(DATA_TYPES),
  valueType: z.enum(DATA_TYPES),
  keySchema: z.string().optional(),
  valueSchema: z.string().optional(),
  inferred: z.boolean(),
});
export type TopicMetadata = z.output<typeof topicMetadata>;
