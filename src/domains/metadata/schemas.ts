/**
 * The answer shapes of the topic metadata routes. Imports only zod: the UI takes its types and
 * the list of types from here (the parsing in types.ts pulls in the Avro library).
 */
import { DATA_TYPES, type DataType, type TopicMetadata, topicMetadata } from "../shared/topic-types.ts";

export { DATA_TYPES, type DataType, type TopicMetadata, topicMetadata };

/** The list holds stored metadata only, every field a string (clients decode them as strings). */
export const storedMetadata = topicMetadata.omit({ inferred: true });
