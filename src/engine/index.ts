/**
 * The query engine: runs a planned query against Kafka and renders its records. It sits between
 * the SQL language (src/sql: lexer, parser, analyzer, planner, evaluator) and the routes that
 * answer with it (SQL over HTTP and websocket, JDBC, INSERT, processors, the message browser),
 * which use it only through this index.
 *
 * - executor: plans the partition reads, applies the WHERE, the caps and the stop rules.
 * - decoders / avro-text / json-fields: turn key and value bytes into values and JSON text.
 * - encoders: the other way, for INSERT, produce and processor output (JSON, Avro, Protobuf, text).
 * - protobuf: Protobuf schemas (registry text with references, descriptor sets) and the wire format.
 * - record-text: one record as the line the answers stream.
 * - mask: a viewer's masking policies applied where records are decoded.
 * - prefilter: the byte-level test that skips records before decoding.
 * - queries: the registry of running queries (list, cancel).
 * - resume / schemas: resume tokens, read ranges and stop limits as the API spells them.
 */
export * from "./decoders.ts";
export * from "./encoders.ts";
export * from "./executor.ts";
export { type MaskHow, type MaskRule, RecordMask } from "./mask.ts";
export * from "./prefilter.ts";
export { descriptorMessage, descriptorSchemaText, ProtoSchemaError, protoTemplate, registryProto } from "./protobuf.ts";
export * from "./queries.ts";
export * from "./record-source.ts";
export * from "./record-text.ts";
export * from "./resume.ts";
export * from "./schemas.ts";
