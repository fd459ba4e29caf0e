/**
 * A topic's key and value types as Loupe stores them (the metadata area) and shows them (the
 * topic list and page): here, below both, so that neither area imports the other for them.
 */

export const DATA_TYPES = ["AVRO", "JSON", "STRING", "INT", "LONG", "DOUBLE", "FLOAT", "BYTES", "PROTOBUF"] as const;
export type DataType = (typeof DATA_TYPES)[number];

/** The SPEC's topic metadata, plus `inferred` when the types were guessed from records. */
export interface TopicMetadata {
  topicName: string;
  keyType: DataType;
  valueType: DataType;
  keySchema?: string;
  valueSchema?: string;
  inferred: boolean;
}
