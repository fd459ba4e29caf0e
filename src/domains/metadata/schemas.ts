/**
 * The answer shapes of the topic metadata routes. Imports only zod: the UI takes its types and
 * the list of types from here (the parsing in types.ts pulls in the Avro library).
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
/** The list holds stored metadata only, every field a string (clients decode them as strings). */
export const storedMetadata = topicMetadata.omit({ inferred: true });

export type TopicMetadata = z.output<typeof topicMetadata>;
export type StoredMetadata = z.output<typeof storedMetadata>;
