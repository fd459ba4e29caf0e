/**
 * The answer shapes of the topic metadata routes. Imports only zod: the UI takes its types and
 * the list of types from here (the parsing in types.ts pulls in the Avro library).
 */
import { z } from "zod";
import { DATA_TYPES, type DataType, type TopicMetadata, topicMetadata } from "../shared/topic-types.ts";

export { DATA_TYPES, type DataType, type TopicMetadata, topicMetadata };

/** The list holds stored metadata only, every field a string (clients decode them as strings). */
export const storedMetadata = topicMetadata.omit({ inferred: true });

/** A descriptor set uploaded as JSON: the message the records hold, and the FileDescriptorSet in base64. */
export const descriptorBody = z.object({
  messageType: z.string().min(1).max(512).describe("the message the records hold: `shop.Order` (package and name)"),
  descriptorSet: z.string().min(1).describe("a FileDescriptorSet (protoc --descriptor_set_out, --include_imports) in base64"),
});

/** What storing a descriptor set answers: the side, its message's full name, and the topic's types now. */
export const descriptorStored = z.object({
  topicName: z.string(),
  side: z.enum(["key", "value"]),
  messageType: z.string(),
  keyType: z.enum(DATA_TYPES),
  valueType: z.enum(DATA_TYPES),
});
