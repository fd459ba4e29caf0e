import avro from "avsc";
import { descriptorMessage, ProtoSchemaError } from "../../engine/index.ts";
import { badRequest } from "../../errors.ts";
import { JsonDepthError, MAX_SCHEMA_DEPTH, parseJson } from "../../util/json.ts";
import { DATA_TYPES, type DataType } from "../shared/topic-types.ts";

export type { DataType, TopicMetadata } from "../shared/topic-types.ts";

/** Case-insensitive in, upper case out; anything else is a 400 naming the allowed values. */
export function parseDataType(value: string, field: string): DataType {
  const upper = value.trim().toUpperCase();
  if ((DATA_TYPES as readonly string[]).includes(upper)) return upper as DataType;
  throw badRequest(`Invalid ${field} '${value}': expected one of ${DATA_TYPES.join(", ")}`, {
    errors: [{ field, message: `expected one of ${DATA_TYPES.join(", ")}` }],
  });
}

/**
 * An AVRO schema must parse, a JSON schema must be JSON, a PROTOBUF schema must be a descriptor
 * set naming one of its messages (descriptorMessage); the parser's message says why not.
 */
export function checkSchema(type: DataType, schema: string | undefined, field: string): void {
  if (schema === undefined) return;
  if (type === "AVRO") {
    let parsed: unknown;
    try {
      parsed = parseJson(schema, MAX_SCHEMA_DEPTH);
    } catch (e) {
      if (e instanceof JsonDepthError) throw badRequest(`Invalid ${field}: ${e.message}`, { errors: [{ field, message: e.message }] });
      // Avro also accepts a bare type name such as "string".
      parsed = schema;
    }
    try {
      avro.Type.forSchema(parsed as avro.Schema);
    } catch (e) {
      throw badRequest(`Invalid ${field}: not an Avro schema: ${(e as Error).message}`, {
        errors: [{ field, message: (e as Error).message }],
      });
    }
  } else if (type === "PROTOBUF") {
    try {
      descriptorMessage(schema);
    } catch (e) {
      if (!(e instanceof ProtoSchemaError)) throw e;
      throw badRequest(`Invalid ${field}: ${e.message}`, { errors: [{ field, message: e.message }] });
    }
  } else if (type === "JSON") {
    try {
      parseJson(schema, MAX_SCHEMA_DEPTH);
    } catch (e) {
      throw badRequest(`Invalid ${field}: not valid JSON: ${(e as Error).message}`, { errors: [{ field, message: (e as Error).message }] });
    }
  }
}
